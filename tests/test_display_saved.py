"""The live view's output once its run is over (``nbagents/display/_saved.py``): the snapshot
plus the final view in a comment, which nothing from the run can break out of.

The browser half (drawn where trusted, the snapshot where not) is in
tests/browser/test_display_jupyterlab_saved.py.
"""

from __future__ import annotations

import json
import re

import pytest
from support.view_mirror import saved_view

from nbagents._trace_facts import FACTS_START, TRACE_END
from nbagents.display import _saved
from nbagents.display._html import NODE_LIMIT, render_view
from nbagents.display._saved import saved_html, unpacked
from nbagents.display._viewmodel import ViewBuilder
from nbagents.display.live import LIVE_HTML_END, LIVE_HTML_START, LiveView
from nbagents.tracing import Span, Trace
from pytest_nbagents import sanitize

HOSTILE = "--> <!-- /nba-live --> </script><script>alert(1)</script> --!> <b>&amp;"


def hostile_trace() -> Trace:
    step = {"agent": "main", "depth": 0, "start": 0.0, "end": 0.2, "status": "ok"}
    return Trace(
        [
            Span(id="main", parent_id=None, kind="agent", name=HOSTILE, **step),
            Span(
                id="t",
                parent_id="main",
                kind="tool",
                name="tool",
                inputs={"q": HOSTILE},
                outputs={"content": HOSTILE},
                **step,
            ),
        ]
    )


def finished_output(trace: Trace) -> str:
    view = LiveView(trace)
    view.finish()
    html: str = view._repr_mimebundle_()["text/html"]
    return html


def test_text_from_the_run_cannot_end_the_comments_the_script_or_the_output() -> None:
    html = finished_output(hostile_trace())
    assert html.startswith(LIVE_HTML_START) and html.endswith(LIVE_HTML_END)
    inner = html[len(LIVE_HTML_START) : -len(LIVE_HTML_END)]
    # every comment in the output is one of ours, ending where we end it
    comments = re.findall(r"<!--(.*?)-->", inner, re.S)
    assert [c[:9] for c in comments] == ["nba-code:", "nba-view:"]
    assert all(re.fullmatch(r"[0-9a-f]{16}:[A-Za-z0-9+/=]+", c[9:]) for c in comments[:1])
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", comments[1][9:])
    assert inner.count("<script>") == inner.count("</script>") == 1
    assert LIVE_HTML_END not in inner
    # what the page draws holds the text as it was
    name = saved_view(html)["nodes"][0]["name"]  # names are cut short in the view
    assert "</script>" in name and HOSTILE.startswith(name.rstrip("…"))
    code = json.loads(unpacked(comments[0].split(":", 2)[2]))
    assert "function showSaved" in code["js"] and ".nba-live" in code["css"]


def test_nbval_sees_the_saved_output_as_one_blank_live_region() -> None:
    html = finished_output(hostile_trace())
    assert sanitize(html) == LIVE_HTML_START + LIVE_HTML_END


def test_the_snapshot_in_the_output_is_the_static_view() -> None:
    trace = hostile_trace()
    builder = ViewBuilder(trace)
    builder.update()
    snapshot = render_view(builder.view())
    html = finished_output(trace)
    assert snapshot in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in snapshot


def test_past_the_limit_only_the_snapshot_is_saved(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = hostile_trace()
    builder = ViewBuilder(trace)
    builder.update()
    text = builder.view_json()
    snapshot = render_view(builder.view())
    monkeypatch.setattr(_saved, "SAVED_VIEW_LIMIT", len(text) - 1)
    too_large = saved_html(builder, "ab12")
    assert too_large.startswith(snapshot) and "too large" in too_large
    assert "<script" not in too_large and "nba-view" not in too_large
    monkeypatch.setattr(_saved, "SAVED_VIEW_LIMIT", len(text))
    assert saved_html(builder, "ab12").startswith('<div class="nba-saved" data-nba-uid="ab12">')


def test_a_uid_must_be_hexadecimal() -> None:
    with pytest.raises(ValueError, match="hexadecimal"):
        saved_html(ViewBuilder(Trace()), '"><script>')


def test_a_displayed_trace_is_its_saved_view_after_its_facts() -> None:
    trace = hostile_trace()
    html = trace._repr_mimebundle_()["text/html"]
    assert html.startswith(FACTS_START) and html.endswith(TRACE_END)
    assert saved_view(html) == saved_view(finished_output(trace))
    assert '<div class="nba-saved" data-nba-uid="">' in html


def wide_trace(tools: int) -> Trace:
    spans = [
        Span(id="main", parent_id=None, kind="agent", name="main", agent="main", depth=0, start=0.0)
    ]
    for i in range(tools):
        spans.append(
            Span(
                id=f"t{i}",
                parent_id="main",
                kind="tool",
                name="search",
                inputs={"query": f"question {i}"},
                outputs={"content": f"answer {i} " * 20},
                agent="main",
                depth=0,
                start=i * 0.01,
                end=i * 0.01 + 0.5,
                status="ok",
            )
        )
    return Trace(spans)


def test_the_saved_view_takes_a_fraction_of_its_json_in_the_notebook() -> None:
    builder = ViewBuilder(wide_trace(300))
    builder.update()
    view_json = builder.view_json()
    html = saved_html(builder)
    assert saved_view(html) == builder.view()
    comment = re.search(r"<!--nba-view:(.*?)-->", html, re.S)
    assert comment and len(comment.group(1)) < len(view_json) / 4


def test_a_wide_runs_snapshot_from_the_builders_own_records_draws_the_same() -> None:
    builder = ViewBuilder(wide_trace(NODE_LIMIT + 50))
    builder.update()
    kept = builder.snapshot_view()
    assert render_view(kept) == render_view(builder.view())
    assert "… and 51 more steps" in render_view(kept)
    assert list(kept["nodes"]) == builder.view()["nodes"]
