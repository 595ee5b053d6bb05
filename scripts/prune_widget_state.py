"""Drop the saved state of widgets no output shows from executed notebooks.

nbconvert keeps the state of every widget a notebook's kernel ever opened, closed ones too: a
live view whose run ended is saved HTML in its output, and the state of its closed widget (its
code, styles and final view) would only make the committed tutorials larger.

    python scripts/prune_widget_state.py NOTEBOOK...
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REF = re.compile(r"IPY_MODEL_(\w+)")


def shown_models(nb: dict[str, Any]) -> set[str]:
    return {
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    }


def prune(nb: dict[str, Any]) -> int:
    """Remove unshown widget states from ``nb``; how many were removed."""
    widgets = nb.get("metadata", {}).get("widgets", {})
    states: dict[str, Any] = widgets.get(WIDGET_STATE, {}).get("state", {})
    keep = shown_models(nb) & states.keys()
    todo = list(keep)
    while todo:  # a container shows its children: keep what kept states refer to
        for ref in MODEL_REF.findall(json.dumps(states[todo.pop()])):
            if ref in states and ref not in keep:
                keep.add(ref)
                todo.append(ref)
    dropped = len(states) - len(keep)
    for model_id in set(states) - keep:
        del states[model_id]
    if not states and "widgets" in nb.get("metadata", {}):
        del nb["metadata"]["widgets"]
    return dropped


def main(paths: list[str]) -> None:
    for name in paths:
        path = Path(name)
        nb = json.loads(path.read_text(encoding="utf-8"))
        if prune(nb):
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
