"""The static HTML snapshot: structure, escaping, determinism (with the sanitize rules nbval
applies in this repository: nbagents' own, then notebooks/sanitize.cfg)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from support.display_fixtures import XSS_PAYLOADS, build_trace, make_agent

import nbagents._notebook
from nbagents.display._format import LABEL_LIMIT
from nbagents.display._html import MINUS, STYLE_OPEN, trace_html
from nbagents.display._records import GLYPHS as STATUS_GLYPHS
from nbagents.display._viewmodel import build_view
from nbagents.display.live import LIVE_HTML_END, LIVE_HTML_START, LIVE_TEXT_PREFIX
from nbagents.tracing import Span, Trace, recording

SANITIZE = Path(__file__).parent.parent / "notebooks" / "sanitize.cfg"


class Doc(HTMLParser):
    """Every element with its attributes, every text, and whether tags balance."""

    VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "source"})

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.texts: list[str] = []
        self.stack: list[str] = []
        self.unbalanced: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.unbalanced.append(tag)

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "style":
            return
        self.texts.append(data)

    def with_class(self, cls: str) -> list[dict[str, str | None]]:
        return [a for _, a, _ in self.elements if cls in (a.get("class") or "").split()]

    @property
    def text(self) -> str:
        return "".join(self.texts)


def sanitize_rules() -> list[tuple[str, str]]:
    # What nbval applies here: nbagents' shipped rules (nbagents_ci = true), then the
    # tutorials' own file, read with nbval's own parser
    from nbval.plugin import get_sanitize_patterns

    from pytest_nbagents import sanitize_file_text

    text = sanitize_file_text() + SANITIZE.read_text(encoding="utf-8")
    return list(get_sanitize_patterns(text))


def sanitize(text: str) -> str:
    for regex, replace in sanitize_rules():
        text = re.sub(regex, replace, text)
    return text


# -- structure ----------------------------------------------------------------------------------


def test_tree_has_every_visible_span_nested_in_call_order() -> None:
    doc = Doc(build_trace().to_html())
    assert not doc.unbalanced and not doc.stack
    nodes = {
        a["data-node"]: a["class"] for tag, a, _ in doc.elements if tag == "li" and a["data-node"]
    }
    # main → model, 3 tasks (call order A, B, C) → sub-agents → their calls; final model
    assert nodes["0"] == "nba-node nba-k-agent nba-s-ok"
    assert "nba-k-model" in nodes["0.0"]
    assert [nodes[f"0.{i}"].split()[1] for i in range(5)] == [
        "nba-k-model",
        "nba-k-task",
        "nba-k-task",
        "nba-k-task",
        "nba-k-model",
    ]
    assert "nba-k-subagent" in nodes["0.1.0"]
    assert [nodes[f"0.1.0.{i}"].split()[1] for i in range(3)] == [
        "nba-k-model",
        "nba-k-tool",
        "nba-k-model",
    ]
    # nested spawn: researcher B → task → general-purpose → model
    assert "nba-k-task" in nodes["0.2.0.1"] and "nba-k-subagent" in nodes["0.2.0.1.0"]
    assert "nba-k-model" in nodes["0.2.0.1.0.0"]
    # the failed writer: task, sub-agent and its model call in red
    assert "nba-s-error" in nodes["0.3"] and "nba-s-error" in nodes["0.3.0"]
    assert "nba-s-error" in nodes["0.3.0.0"]
    # hidden plumbing is folded away: 18 visible spans, no chain nodes
    assert len(nodes) == 18
    assert not any("nba-k-chain" in c for c in nodes.values())


def test_tree_text_order_follows_the_calls_not_thread_start_order() -> None:
    for variant in (0, 1):
        text = Doc(build_trace(variant=variant).to_html()).text
        assert text.index("Research A") < text.index("Research B") < text.index("Write C")


def test_header_and_token_table_numbers() -> None:
    trace = build_trace()
    doc = Doc(trace.to_html())
    header = Doc(trace.to_html().split('<div class="nba-header">')[1].split("</div>")[0]).text
    assert "ok" in header and "agents 4" in header and "sub-agent spawns 4" in header
    assert "tokens 645 (560 in, 85 out)" in header
    table = trace.to_html().split('<table class="nba-table nba-tokens">')[1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, flags=re.S)
    cells = [
        [Doc(c).text.strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)] for r in rows
    ]
    glyphs = "".join(STATUS_GLYPHS.values()) + "\u2003 "
    body = {(r[0].lstrip(glyphs), r[1]): r[4:] for r in cells[1:]}
    assert body[("main", "")] == ["320", "35", "355", "645"]
    assert body[("researcher", "Research A")] == ["100", "22", "122", "122"]
    # own tokens exclude the nested spawn, the total includes it
    assert body[("researcher", "Research B")] == ["110", "20", "130", "168"]
    assert body[("general-purpose", "Dig deeper")] == ["30", "8", "38", "38"]
    assert body[("writer", "Write C")] == ["0", "0", "0", "0"]
    assert cells[-1][0] == "all" and cells[-1][4:] == ["560", "85", "645", "645"]
    assert len(doc.with_class("nba-tokens")) == 1


def test_state_diff_marks_withheld_passed_and_returned_keys() -> None:
    html = build_trace().to_html()
    first = html.split('data-node="0.1.0"')[1].split('data-node="0.1.0.0"')[0]
    doc = Doc("<div " + first)
    deleted = [
        Doc(f"<b>{m}</b>").text
        for m in re.findall(r'<div class="nba-diff-row nba-diff-del">(.*?)</div>', first)
    ]
    assert deleted == [
        f"{MINUS} messages 3 items · withheld",
        f"{MINUS} secret 12 chars · withheld",
        f"{MINUS} todos 2 items · withheld",
    ]
    assert re.search(r'nba-diff-ctx">\s*files <span class="nba-diff-note">2 items · passed', first)
    assert re.search(r'nba-diff-add">\+ files <span class="nba-diff-note">returned', first)
    assert doc.with_class("nba-diff")


def test_details_hold_description_result_messages_arguments_and_errors() -> None:
    text = Doc(build_trace().to_html()).text
    assert "Description" in text and "Research A" in text
    assert "Result" in text and "A is fine" in text
    assert '{"query": "A", "url": "javascript:alert(1)"}' in text  # tool args, as text
    assert "RuntimeError: writer crashed" in text
    assert "Done: combined." in text


def test_long_texts_are_truncated_in_the_tree_and_full_in_the_details() -> None:
    trace = Trace()
    long = "word " * 200
    trace.add(
        Span(
            id="a",
            parent_id=None,
            kind="agent",
            name="main",
            agent="main",
            depth=0,
            start=0.0,
            end=1.0,
            status="ok",
        )
    )
    trace.add(
        Span(
            id="t",
            parent_id="a",
            kind="task",
            name="task",
            agent="main",
            depth=0,
            start=0.1,
            end=0.9,
            status="ok",
            attributes={"description": long, "subagent_type": "general-purpose"},
        )
    )
    html = trace.to_html()
    preview = re.search(r'<span class="nba-preview">(.*?)</span>', html)
    assert preview is not None
    assert len(preview.group(1)) <= LABEL_LIMIT and preview.group(1).endswith("…")
    assert long.strip() in Doc(html).text


def test_a_tool_called_with_no_arguments_previews_nothing() -> None:
    step = {"agent": "main", "depth": 0, "start": 0.0, "end": 0.1, "status": "ok"}
    trace = Trace([Span(id="a", parent_id=None, kind="agent", name="main", **step)])
    for sid, inputs in (("none", {}), ("some", {"target": "alpha"})):
        trace.add(Span(id=sid, parent_id="a", kind="tool", name=sid, inputs=inputs, **step))
    previews = {n["name"]: n["preview"] for n in build_view(trace)["nodes"]}
    assert previews["none"] == ""
    assert previews["some"] == '{"target": "alpha"}'


def test_empty_and_running_traces_render() -> None:
    empty = Doc(Trace().to_html())
    assert "No spans recorded yet." in empty.text and "running" in empty.text
    running = build_trace(finished=False)
    doc = Doc(running.to_html())
    assert doc.with_class("nba-badge")[0]["class"] == "nba-badge nba-s-running"
    assert build_view(running)["status"] == "running"


def test_snapshot_is_self_contained_and_scoped() -> None:
    html = build_trace().to_html()
    doc = Doc(html)
    assert doc.elements[0][0] == "div" and "nba-root" in (doc.elements[0][1]["class"] or "")
    tags = {tag for tag, _, _ in doc.elements}
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert "http://" not in html and "https://" not in html and "@import" not in html
    css = re.sub(r"/\*.*?\*/", "", html.split(STYLE_OPEN)[1].split("</style>")[0], flags=re.S)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", css) for s in block.split(",")]
    assert len(selectors) > 50  # the stylesheet is there to check
    assert all(
        s.startswith(".nba-root") or s.startswith(("from", "to", "@keyframes"))
        for s in selectors
        if s
    ), selectors
    assert "details" in tags and "summary" in tags  # collapse/expand without script


# -- escaping -----------------------------------------------------------------------------------


OUR_STYLE = (
    r"((display|width|height|vertical-align|background-color|white-space|font-size|line-height"
    r"|overflow|overflow-wrap|word-break|text-align):[a-z0-9.%#-]+( !important)?;?)+"
)


TREE_LINK = r"#nba-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}-[0-9]+(\.[0-9]+)*"


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_untrusted_text_is_escaped_everywhere(payload: str) -> None:
    trace = build_trace(payload)
    html = trace.to_html()
    doc = Doc(html)
    clean = Doc(build_trace().to_html())
    for tag, attrs, _ in doc.elements:
        assert tag not in ("script", "img", "iframe"), tag
        if tag == "a":  # only the Tools pane's links to steps of the call tree
            assert attrs.get("class") == "nba-tree-link", attrs
            assert re.fullmatch(TREE_LINK, attrs.get("href") or ""), attrs
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)
        if "style" in attrs:  # only our layout, numbers and colours in style attributes
            assert re.fullmatch(OUR_STYLE, attrs["style"] or ""), attrs["style"]
    # same structure as without the payload: nothing closed or opened early
    assert [t for t, _, _ in doc.elements] == [t for t, _, _ in clean.elements]
    assert [s for _, _, s in doc.elements] == [s for _, _, s in clean.elements]
    assert not doc.unbalanced and not doc.stack
    # and the payload is shown as text, in names, descriptions, args, messages, keys, errors
    assert doc.text.count(payload) >= 15
    for where in (
        "writer" + payload,
        "Research A" + payload,
        "secret" + payload,
        "RuntimeError: writer crashed" + payload,
        "search" + payload,
        "results for A" + payload,
        "demo" + payload,
    ):
        assert where[:38] in doc.text, where  # names are cut at 40 characters


def test_no_raw_angle_brackets_or_quotes_from_data() -> None:
    html = build_trace('<x y="1">').to_html()
    assert '<x y="1">' not in html and "&lt;x y=&quot;1&quot;&gt;" in html


# -- determinism --------------------------------------------------------------------------------


def test_equal_traces_render_identically_after_sanitizing() -> None:
    a, b = build_trace().to_html(), build_trace(variant=1).to_html()
    assert a != b  # timings and span ids differ…
    assert sanitize(a) == sanitize(b)  # …and only in what the sanitize file normalises
    assert "nba-t" in a and "width:" in a
    assert "span-" not in a and "id-1" not in b  # span ids never reach the HTML


def test_times_and_positions_are_wrapped_for_the_sanitizer() -> None:
    html = build_trace().to_html()
    # every "N.NN s" text is inside an nba-t span
    outside = re.sub(r'<span class="nba-t">[^<]*</span>', "", html)
    assert not re.search(r"\d\.\d\d s\b", Doc(outside).text)
    assert not re.search(r"\d+\.\d+%", re.sub(r"width:[0-9.]+%", "", outside))


def test_sanitize_file_covers_the_live_output() -> None:
    live_a = LIVE_HTML_START + build_trace(finished=False).to_html() + LIVE_HTML_END
    live_b = LIVE_HTML_START + build_trace().to_html() + LIVE_HTML_END
    assert sanitize(live_a) == sanitize(live_b) == LIVE_HTML_START + LIVE_HTML_END
    assert sanitize(LIVE_TEXT_PREFIX + "<Trace running: …>") == sanitize(
        LIVE_TEXT_PREFIX + "<Trace ok: main; 3 sub-agent spawn(s); 10 tokens; 9 spans>"
    )
    assert sanitize("<object at 0x7f3a2b1c9d40>") == "<object at 0xADDRESS>"
    # but a plain trace's HTML keeps its content; only the stylesheet is blanked
    clean = sanitize(build_trace().to_html())
    assert "Research A" in clean and f"{STYLE_OPEN}</style>" in clean and ".nba-root" not in clean
    assert sanitize("<style scoped>.x{}</style>") == "<style scoped>.x{}</style>"  # pandas


def _run_html(**kwargs: Any) -> str:
    agent = make_agent(latency=0.01, **kwargs)
    with recording() as tracer:
        agent.invoke({"messages": [("user", "go")]})
    return trace_html(tracer.trace)


def test_real_runs_render_identically_after_sanitizing() -> None:
    first, second = _run_html(fail_writer=True), _run_html(fail_writer=True)
    assert sanitize(first) == sanitize(second)
    doc = Doc(first)
    assert not doc.unbalanced
    text = doc.text
    assert text.index("Research A") < text.index("Research B") < text.index("Write C")
    assert "Dig deeper" in text and "deep result" in text and "writer crashed" in text
    assert doc.with_class("nba-diff-del")  # the tracer's withheld keys
    assert not re.search(r"call_[0-9a-f]{8}", first)  # no tool call ids


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.214, "0.21 s"),
        (9.996, "10.0 s"),
        (12.34, "12.3 s"),
        (59.97, "1 min 00 s"),
        (119.6, "2 min 00 s"),
        (125.2, "2 min 05 s"),
        (None, "…"),
    ],
)
def test_durations_never_show_60_seconds(seconds: float | None, shown: str) -> None:
    from nbagents.display._format import format_duration

    assert format_duration(seconds) == shown


def test_the_mimebundle_builds_only_what_ipython_asks_for(monkeypatch: pytest.MonkeyPatch) -> None:
    trace = build_trace()
    bundle = trace._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == trace.summary()
    assert trace.to_html() in bundle["text/html"]  # the snapshot, in its saved view

    def no_html(trace: Trace) -> str:
        raise AssertionError("text/html was built although excluded")

    monkeypatch.setattr(nbagents._notebook, "trace_saved_html", no_html)
    assert trace._repr_mimebundle_(exclude={"text/html"}) == {"text/plain": trace.summary()}
    assert trace._repr_mimebundle_(include={"text/plain"}) == {"text/plain": trace.summary()}
