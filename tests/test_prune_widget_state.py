"""``scripts/prune_widget_state.py``: executed tutorials keep the state of the widgets their
outputs show (and of what those contain), not of widgets closed before the notebook was saved."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).parent.parent / "scripts" / "prune_widget_state.py"
spec = importlib.util.spec_from_file_location("prune_widget_state", SCRIPT)
assert spec and spec.loader
prune_widget_state = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prune_widget_state)


def notebook(shown: list[str], states: dict[str, Any]) -> dict[str, Any]:
    outputs = [
        {"output_type": "display_data", "data": {prune_widget_state.WIDGET_VIEW: {"model_id": m}}}
        for m in shown
    ]
    return {
        "cells": [{"cell_type": "code", "outputs": outputs}],
        "metadata": {"widgets": {prune_widget_state.WIDGET_STATE: {"state": states}}},
    }


def test_shown_widgets_and_their_children_stay_closed_ones_go(tmp_path: Path) -> None:
    states = {
        "box": {"state": {"children": ["IPY_MODEL_child"]}},
        "child": {"state": {"value": 1}},
        "closed": {"state": {"view_json": "{}"}},
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(notebook(["box"], states)))
    prune_widget_state.main([str(path)])
    kept = json.loads(path.read_text())["metadata"]["widgets"][prune_widget_state.WIDGET_STATE]
    assert set(kept["state"]) == {"box", "child"}


def test_a_notebook_showing_no_widget_loses_its_widget_metadata() -> None:
    nb = notebook([], {"closed": {"state": {}}})
    assert prune_widget_state.prune(nb) == 1
    assert "widgets" not in nb["metadata"]
