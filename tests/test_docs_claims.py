"""What the README and the docs claim is checked here, so the pages cannot drift from the code.

The quickstart in the README and the getting-started page runs, and does what they say (what it
prints, that the three sub-agents overlap, how many model turns the run waits for). Every
``pip install`` line a user may copy installs our distribution, ``jupyter-nbagents``, with extras
it has, never the unrelated ``nbagents`` from PyPI. docs/README.md lists every file of the site.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = ["README.md", "docs/getting-started.md"]


def first_python_block(page: str) -> str:
    text = (REPO / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has no python code block"
    return str(blocks[0])


def run_block(code: str) -> tuple[dict[str, Any], str]:
    namespace: dict[str, Any] = {"__name__": "quickstart"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "quickstart", "exec"), namespace)
    return namespace, out.getvalue()


def test_both_pages_show_the_same_quickstart() -> None:
    readme, guide = (first_python_block(p) for p in PAGES)

    def program(block: str) -> list[str]:
        """The code up to the printed answer; the pages differ only in the exports after it."""
        lines = [line.split("#")[0].rstrip() for line in block.splitlines()]
        code = [line for line in lines if line]
        end = next(i for i, line in enumerate(code) if line.startswith("print("))
        return code[: end + 1]

    assert program(readme) == program(guide)


@pytest.mark.parametrize("page", PAGES)
def test_quickstart_prints_what_the_page_says(page: str) -> None:
    namespace, printed = run_block(first_python_block(page))
    assert printed.splitlines()[0] == "Done: A and B are fine, C is written."
    assert "Done: A and B are fine, C is written." in (REPO / page).read_text(encoding="utf-8")
    usage = namespace["t"].token_usage().set_index("agent")
    assert usage.loc["researcher", "spawns"] == 2
    assert usage.loc["writer", "spawns"] == 1


@pytest.mark.slow  # a fresh Python process
def test_the_quickstart_as_a_script_prints_what_the_readme_shows() -> None:
    """``python examples/quickstart.py``: the README's code, and in a terminal it shows the run."""
    script = REPO / "examples" / "quickstart.py"
    assert script.read_text(encoding="utf-8").endswith(first_python_block("README.md"))
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"`python examples/quickstart.py` prints:\n\n```text\n(.*?)```", readme, re.S)
    assert shown, "the README shows what the quickstart script prints"
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout == shown.group(1)
    # What it shows: the answer, the run in one line, tokens per agent.
    lines = done.stdout.splitlines()
    assert lines[0] == "Done: A and B are fine, C is written."
    assert lines[1].startswith("<Trace ok: main; 3 sub-agent spawn(s);")
    assert [line.split()[:3] for line in lines[3:]] == [
        ["main", "main", "0"],
        ["researcher", "subagent", "2"],
        ["writer", "subagent", "1"],
    ]


def test_getting_started_turn_counts() -> None:
    """Four turns in a row (main 2 + the longest sub-agent 2) instead of six one after another."""
    namespace, _ = run_block(first_python_block("docs/getting-started.md"))
    trace = namespace["t"]
    subagents = [s for s in trace.spans if s.kind == "subagent"]
    assert len(subagents) == 3
    # The sub-agents ran at the same time: one after another, their durations could not add up
    # to more than the stretch from the first start to the last end. (Not "each starts before
    # any ends": on a loaded machine one thread may start a few hundred ms late.)
    window = max(s.end for s in subagents) - min(s.start for s in subagents)
    assert sum(s.end - s.start for s in subagents) > window * 1.2

    def model_turns(agent_span_id: str) -> int:
        own = [s for s in trace.spans if s.kind == "model"]
        return sum(1 for s in own if nearest_agent(trace, s) == agent_span_id)

    main = next(s for s in trace.spans if s.kind == "agent")
    per_subagent = {s.attributes["description"]: model_turns(s.id) for s in subagents}
    assert model_turns(main.id) == 2
    assert per_subagent == {"Research A": 2, "Research B": 1, "Write C": 1}
    in_a_row = model_turns(main.id) + max(per_subagent.values())
    one_after_another = model_turns(main.id) + sum(per_subagent.values())
    guide = (REPO / "docs/getting-started.md").read_text(encoding="utf-8")
    latency = namespace["model"].latency
    assert f"takes four model turns of latency (about {in_a_row * latency:.1f} s" in guide
    assert in_a_row == 4
    assert f"take six turns ({one_after_another * latency:.1f} s)" in guide
    assert one_after_another == 6


def nearest_agent(trace: Any, span: Any) -> str:
    by_id = {s.id: s for s in trace.spans}
    current = by_id.get(span.parent_id)
    while current is not None and current.kind not in ("agent", "subagent"):
        current = by_id.get(current.parent_id)
    assert current is not None
    return str(current.id)


# --- install lines -------------------------------------------------------------------------------

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
OURS = PYPROJECT["project"]["name"]
# The unrelated PyPI project whose name is also our import name: a line naming it installs theirs.
NOT_OURS = "nbagents"
# An install command ends where the line, its code span, a comment or a sentence's bracket ends.
INSTALL = re.compile(r"pip install ([^`\n#;)]*)")
REQUIREMENT = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?")


def install_requirements(text: str) -> list[tuple[str, list[str]]]:
    """(name, extras) of every requirement in the ``pip install`` commands of ``text``."""
    found = []
    for command in INSTALL.findall(text):
        options_taking_a_value = ("-r", "-c", "-e", "--requirement", "--constraint", "--editable")
        words = command.replace("\\", " ").split()
        for before, word in zip(["", *words], words, strict=False):
            word = word.strip("\"'.,")
            if not word or word.startswith("-") or before in options_taking_a_value:
                continue
            match = REQUIREMENT.match(word)
            if match:
                extras = [e.strip() for e in (match.group(2) or "").split(",") if e.strip()]
                found.append((match.group(1), extras))
    return found


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def user_facing_texts() -> dict[str, str]:
    """README, docs pages, tutorials' cells and the library's messages, by path."""
    texts = {}
    paths = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    paths += sorted((REPO / "nbagents").rglob("*.py"))
    for path in paths:
        texts[str(path.relative_to(REPO))] = path.read_text(encoding="utf-8")
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[str(path.relative_to(REPO))] = "\n".join("".join(c["source"]) for c in cells)
    return texts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('`pip install "nbagents[otel,cost]"`, then', [("nbagents", ["otel", "cost"])]),
        (
            "pip install 'nbagents[remote]' 'langgraph-cli[inmem]'",
            [
                ("nbagents", ["remote"]),
                ("langgraph-cli", ["inmem"]),
            ],
        ),
        ("(`pip install arize-phoenix`, then `phoenix serve`)", [("arize-phoenix", [])]),
        ('pip install -e ".[lab,providers]"   # from the clone', []),
        (
            "needs genai-prices: pip install 'jupyter-nbagents[cost]' \"",
            [
                ("jupyter-nbagents", ["cost"]),
            ],
        ),
        ("(pip install deepagents; make lab installs it)", [("deepagents", [])]),
    ],
)
def test_install_lines_are_read_as_pip_reads_them(
    text: str, expected: list[tuple[str, list[str]]]
) -> None:
    assert install_requirements(text) == expected


def test_install_lines_name_our_distribution_and_its_extras() -> None:
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    ours, wrong = [], []
    for path, text in user_facing_texts().items():
        for name, wanted in install_requirements(text):
            if normalized(name) == NOT_OURS:
                wrong.append(
                    f"{path}: installs {name!r}, the unrelated PyPI project; ours is {OURS}"
                )
            elif normalized(name) == OURS:
                ours.append(path)
                wrong += [f"{path}: {OURS} has no extra {e!r}" for e in wanted if e not in extras]
    assert not wrong, "\n".join(wrong)
    # The pages that tell a user how to install the extras still do.
    assert {"README.md", "docs/providers.md", "docs/opentelemetry-and-cost.md"} <= set(ours)


# --- the docs site's own README ------------------------------------------------------------------


def test_the_docs_readme_lists_every_page() -> None:
    docs = REPO / "docs"
    notes = (docs / "README.md").read_text(encoding="utf-8")
    table = re.search(r"\| file \| what it is \|\n\|---\|---\|\n((?:\|.*\n)+)", notes)
    assert table, "docs/README.md has its table of files"
    listed = re.findall(r"^\| `([^`]+)` \|", table.group(1), flags=re.M)
    # What the build writes, and the notes themselves, are not pages.
    skipped = {"README.md", "_build", "jupyter_execute", "__pycache__"}
    present = sorted(p.name for p in docs.iterdir() if p.name not in skipped and p.name[0] != ".")
    assert sorted(listed) == present


def test_the_readme_links_every_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)\)", section))
    pages = {p.name for p in (REPO / "docs").glob("*.md")} - {"README.md", "index.md"}
    assert pages - linked == set()
