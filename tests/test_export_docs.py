"""The export page's first example runs and prints what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "opentelemetry-and-cost.md"


def test_the_first_example_prints_the_tree_the_page_shows() -> None:
    text = PAGE.read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    shown = re.findall(r"```text\n(.*?)```", text, flags=re.S)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(PAGE), "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == shown
