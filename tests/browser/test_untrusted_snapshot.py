"""A saved trace snapshot opened in JupyterLab by someone who did not run it (untrusted).

JupyterLab's sanitizer then strips the ``<style>`` element and every inline style it does not
know. The tree, the token table and the timeline must still read right: bars at the right
place and of the right width, calls inside them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from display_fixtures import build_trace
from labharness import LabPage

from nbagents.display._viewmodel import build_view

pytestmark = pytest.mark.browser

OUTPUT = ".jp-Notebook .jp-Cell .jp-OutputArea-output"


def _write_untrusted(lab: LabPage, name: str, html: str) -> str:
    # No signature in the notebook's metadata: JupyterLab treats its outputs as untrusted.
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "id": "saved",
                "execution_count": 1,
                "metadata": {},
                "outputs": [
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"text/html": html, "text/plain": "<Trace>"},
                    }
                ],
                "source": "t",
            }
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (lab.server.root_dir / name).write_text(json.dumps(nb))
    return name


def _box(locator: Any) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return dict(box)


def test_the_timeline_is_placed_right_in_an_untrusted_notebook(lab: LabPage) -> None:
    trace = build_trace()
    lab.open_notebook(_write_untrusted(lab, "untrusted.ipynb", trace.to_html()))
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-trace")
    root.wait_for(state="visible")
    # the sanitizer did its work: no stylesheet, so only inline layout can place the bars
    assert out.locator("style").count() == 0
    assert root.locator("details").count() > 10  # the tree still folds
    assert root.locator("table.nba-tokens tbody tr").count() == 6

    rows = root.locator(".nba-tl-row")
    assert rows.count() == 5
    expected_rows = build_view(trace)["timeline"]
    horizon = max(s.end or s.start for s in trace.spans)
    track = _box(rows.nth(0).locator(".nba-tl-track"))
    assert track["width"] > 200
    for i, expected in enumerate(expected_rows):
        bar = _box(rows.nth(i).locator(".nba-bar"))
        row_track = _box(rows.nth(i).locator(".nba-tl-track"))
        left = (bar["x"] - row_track["x"]) / row_track["width"]
        width = bar["width"] / row_track["width"]
        assert left == pytest.approx(expected["start"] / horizon, abs=0.02), (i, left)
        end = expected["end"] if expected["end"] is not None else horizon
        assert width == pytest.approx((end - expected["start"]) / horizon, abs=0.02), (i, width)
        # the calls sit inside their agent's bar, each with some width
        for seg in rows.nth(i).locator(".nba-seg").all():
            s = _box(seg)
            assert s["width"] > 0 and bar["x"] - 1 <= s["x"] <= bar["x"] + bar["width"] + 1
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
