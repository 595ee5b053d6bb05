"""Issue 6 end to end: the quickstart notebook in real JupyterLab (Debian's Chromium) shows the
live call tree while the agent runs, the right token numbers after it, and hostile trace content
only as text.

``test_quickstart_tree_is_live_and_tokens_match``
    runs a copy of ``notebooks/01_quickstart.ipynb`` whose scripted latency is raised so the
    run lasts several seconds, and polls the widget (bounded) while the traced cell is busy:
    sub-agent nodes must show up *running* before they finish, and some must finish while
    others still run. Screenshots ``…--during.png`` / ``…--after.png`` go to ``test-artifacts/``.
    The expected token table is computed here, in-process, from the notebook's own source
    (``ScriptedChatModel`` token counts depend on the texts only, not on latency or timing).
``test_hostile_trace_content_stays_text``
    script tags, event-handler attributes, ``javascript:`` URLs and closing tags in messages,
    tool arguments and results, sub-agent descriptions and system prompts, a sub-agent type,
    the model name, state keys and values; asserts that nothing runs (``window.__pwned`` stays
    unset, no dialog opens, no injected element exists) in the widget, in the static HTML shown
    in JupyterLab and in the snapshot saved in the notebook, and that the payloads read as text.

Negative check: ``NBAGENTS_BROWSER_BREAK_LIVE=1`` makes the notebook copy disable the live
view's background updates (the widget then only gets its first and its final state, as with a
broken live path); the first test must then fail.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from labharness import CURRENT_NOTEBOOK, NOTEBOOKS, RUN_TIMEOUT_MS, LabPage, LabServer

pytestmark = pytest.mark.browser

QUICKSTART = NOTEBOOKS / "01_quickstart.ipynb"
NOTEBOOK_LATENCY = "latency=0.2"
LIVE_LATENCY = 1.5
"""Seconds per scripted reply in the browser run: each phase of the run lasts this long."""
POLL_TIMEOUT_S = 60.0
CELLS = f"{CURRENT_NOTEBOOK} .jp-Notebook .jp-Cell"
LIVE = ".nba-root.nba-live"
SECTIONS = ":scope > details.nba-sec, :scope > .nba-rich > details.nba-sec"
"""The four sections (tree, tokens, tools, timeline) of a view drawn by live.js, or of a snapshot,
whose rich part is a box of its own (see ``_plain`` in nbagents/display/_html.py)."""
STATIC = ".nba-root.nba-trace"
DISPLAYED = '.nba-saved[data-nba-uid=""]'
"""A displayed trace (``t``): saved HTML like a finished live view's, of no widget."""
BREAK_LIVE = os.environ.get("NBAGENTS_BROWSER_BREAK_LIVE", "").strip() not in ("", "0")

# One poll of the traced cell: is it still busy, and what does its widget show?
_SAMPLE = """([sel, idx]) => {
    const cell = document.querySelectorAll(sel)[idx];
    if (!cell) return null;
    const prompt = cell.querySelector('.jp-InputPrompt');
    const root = cell.querySelector('.nba-root.nba-live');
    const status = el => {
        const c = [...el.classList].find(c => c.startsWith('nba-s-'));
        return c ? c.slice(6) : '?';
    };
    return {
        busy: !!prompt && prompt.textContent.includes('[*]'),
        widget: !!root,
        subagents: root ? [...root.querySelectorAll('li.nba-node.nba-k-subagent')].map(status)
                        : [],
        badge: root && root.querySelector('.nba-badge')
            ? root.querySelector('.nba-badge').textContent : null,
    };
}"""

# Rows of a token table as lists of cell texts.
_TABLE_ROWS = "trs => trs.map(tr => [...tr.cells].map(td => td.textContent))"


# --------------------------------------------------------------------------------------------------
# The quickstart: notebook copy, expected numbers
# --------------------------------------------------------------------------------------------------


def _code(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def _trace_cell_index(nb: dict[str, Any]) -> int:
    found = [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and "with nbagents.trace()" in _code(c)
    ]
    assert len(found) == 1, f"expected one `with nbagents.trace()` cell in {QUICKSTART.name}"
    return found[0]


def _quickstart_copy(server: LabServer) -> tuple[str, int]:
    """The quickstart with a longer scripted latency and no outputs, in the served directory."""
    nb = json.loads(QUICKSTART.read_text(encoding="utf-8"))
    sources = [_code(c) for c in nb["cells"]]
    assert sum(s.count(NOTEBOOK_LATENCY) for s in sources) == 1, (
        f"{QUICKSTART.name} no longer sets `{NOTEBOOK_LATENCY}` once; update this test"
    )
    for cell, src in zip(nb["cells"], sources, strict=True):
        cell["source"] = src.replace(NOTEBOOK_LATENCY, f"latency={LIVE_LATENCY}")
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    if BREAK_LIVE:  # the negative check: no widget updates between the first and the last
        nb["cells"].insert(
            0,
            {
                "cell_type": "code",
                "id": "break-live",
                "execution_count": None,
                "metadata": {},
                "outputs": [],
                "source": "from nbagents.display.live import LiveView\n"
                "LiveView._flush_loop = lambda self: None",
            },
        )
    name = "quickstart_live.ipynb"
    (server.root_dir / name).write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return name, _trace_cell_index(nb)


def _fmt(n: int) -> str:
    return f"{n:,}"  # the widget's toLocaleString("en-US")


def _expected_token_table() -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """Run the quickstart's own code in-process (no latency, no display) and derive the table.

    Returns ``{(agent, task): [status, in, out, own total, incl. sub-agents]}`` and the totals
    row. Numbers come from the Trace API (``own_usage``, ``subagents``, ``total_usage``).
    """
    nb = json.loads(QUICKSTART.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {}
    for i, cell in enumerate(nb["cells"][: _trace_cell_index(nb) + 1]):
        if cell["cell_type"] != "code":
            continue
        src = _code(cell).replace(NOTEBOOK_LATENCY, "latency=0.0")
        src = src.replace("nbagents.trace()", "nbagents.trace(display=False)")
        exec(compile(src, f"{QUICKSTART.name} cell {i}", "exec"), namespace)
    t = namespace["t"]
    assert t.status == "ok", t.summary()
    rows: dict[tuple[str, str], list[str]] = {}

    def add(name: str, task: str, status: str, own: Any, total: Any) -> None:
        assert (name, task) not in rows, f"two token rows for {(name, task)}"
        rows[(name, task)] = [status, *map(_fmt, (own.input, own.output, own.total, total.total))]

    (root,) = t.visible_roots()
    add(root.name, "", root.status, t.own_usage(root), t.usage_including_descendants(root))
    for rec in t.subagents:
        add(rec.type, rec.description, rec.status, rec.tokens_own, rec.tokens_total)
    total = t.total_usage()
    assert len(t.subagents) == 3 and total.total > 0
    numbers = (total.input, total.output, total.total, total.total)
    return rows, ["all", "", "", "", *map(_fmt, numbers)]


def _table(rows: list[list[str]]) -> tuple[dict[tuple[str, str], list[str]], list[str]]:
    """A rendered token table as ``_expected_token_table`` returns it (times dropped)."""
    assert rows, "the token table has no rows"
    got: dict[tuple[str, str], list[str]] = {}
    for cells in rows[:-1]:
        assert len(cells) == 8, cells
        # first cell: depth indent (em spaces), a status glyph, a space, the name
        name = cells[0].lstrip("\u2003 ").split(" ", 1)[-1].strip()
        got[(name, cells[1].strip())] = [cells[2].strip(), *(c.strip() for c in cells[4:])]
    return got, [c.strip() for c in rows[-1][:4]] + [c.strip() for c in rows[-1][4:]]


def _assert_saved_view(output: Any) -> None:
    """After the run, ``output`` is the saved HTML, drawn as the live view by its own script
    (``nbagents/display/_saved.py``); the static snapshot in it is hidden."""
    output.locator(f".nba-saved .nba-saved-view {LIVE}").wait_for(state="visible")
    assert output.locator(LIVE).count() == 1
    assert not output.locator(f".nba-saved > {STATIC}").is_visible()


def _assert_widget_view(output: Any) -> None:
    """``output`` shows the anywidget view (rendered by live.js), not the text/html beside it."""
    output.locator(LIVE).wait_for(state="attached")
    assert output.locator(STATIC).count() == 0, "the HTML fallback is shown, not the widget"
    html_renderers = output.evaluate(
        "e => e.matches('.jp-RenderedHTMLCommon') + e.querySelectorAll('.jp-RenderedHTMLCommon')"
        ".length"
    )
    assert html_renderers == 0, "the output is rendered as text/html, not as a widget view"


# --------------------------------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------------------------------


def test_quickstart_tree_is_live_and_tokens_match(lab: LabPage) -> None:
    expected_rows, expected_total = _expected_token_table()
    path, idx = _quickstart_copy(lab.server)
    lab.open_notebook(path)
    lab.run_all(wait=False)

    cell = lab.page.locator(CELLS).nth(idx)
    live = cell.locator(f".jp-OutputArea-output {LIVE}")
    live.wait_for(state="attached", timeout=POLL_TIMEOUT_S * 1000)
    _assert_widget_view(cell.locator(".jp-OutputArea-output").first)  # while the run goes on
    live.scroll_into_view_if_needed()

    # Poll until the traced cell is done; every sample is (time, busy, sub-agent statuses).
    samples: list[tuple[float, bool, tuple[str, ...]]] = []
    shot_during: Path | None = None
    t0 = time.monotonic()
    deadline = t0 + POLL_TIMEOUT_S
    while time.monotonic() < deadline:
        s = lab.page.evaluate(_SAMPLE, [CELLS, idx])
        assert s is not None, "the traced cell is gone"
        subs = tuple(s["subagents"])  # empty while the output re-renders
        samples.append((round(time.monotonic() - t0, 2), s["busy"], subs))
        if s["busy"] and "running" in subs and shot_during is None:
            live.scroll_into_view_if_needed()
            shot_during = lab.screenshot("during")
        if not s["busy"]:
            break
        lab.page.wait_for_timeout(100)
    else:
        pytest.fail(f"the traced cell was still busy after {POLL_TIMEOUT_S:.0f} s: {samples[-5:]}")
    lab.wait_for_idle(timeout=RUN_TIMEOUT_MS)

    busy = [subs for _, b, subs in samples if b]
    running_seen = [subs for subs in busy if "running" in subs]
    assert running_seen, (
        "no sub-agent node was ever shown running while the cell was busy: the widget did not "
        f"update live. Samples (seconds, busy, sub-agent statuses): {samples}"
    )
    assert shot_during is not None and shot_during.is_file()
    # progress shown as it happens: one sub-agent done while a sibling still runs
    mixed = [subs for subs in running_seen if "ok" in subs]
    assert mixed, f"never saw a sub-agent finish while another ran; samples: {samples}"

    # -- after the run --------------------------------------------------------------------------
    out = cell.locator(".jp-OutputArea-output")
    assert out.count() == 1, "the traced cell should have exactly one output"
    _assert_saved_view(out.first)
    assert live.count() == 1
    statuses = lab.page.evaluate(_SAMPLE, [CELLS, idx])
    assert statuses["subagents"] == ["ok", "ok", "ok"], statuses
    assert statuses["badge"] == "ok", statuses
    live.scroll_into_view_if_needed()
    lab.screenshot("after")

    got_rows, got_total = _table(
        live.locator("table.nba-tokens tbody tr").evaluate_all(_TABLE_ROWS)
    )
    assert got_rows == expected_rows
    assert got_total == expected_total
    # the header repeats the totals
    header = live.locator(".nba-header").inner_text()
    assert f"tokens {expected_total[6]} ({expected_total[4]} in, {expected_total[5]} out)" in (
        " ".join(header.split())
    ), header

    # the trace displayed after it (the `t` cell) shows the same numbers
    shown = lab.page.locator(f"{CELLS} {DISPLAYED} .nba-saved-view {LIVE}")
    shown.wait_for(state="visible")
    assert shown.count() == 1
    got_rows, got_total = _table(
        shown.locator("table.nba-tokens tbody tr").evaluate_all(_TABLE_ROWS)
    )
    assert got_rows == expected_rows
    assert got_total == expected_total

    errors = [line for line in lab.console if line.startswith("pageerror")]
    assert not errors, errors
    assert not lab.dialogs, lab.dialogs


# --------------------------------------------------------------------------------------------------
# Hostile content
# --------------------------------------------------------------------------------------------------

PAYLOADS = {
    "script": "<script>window.__pwned=1</script>",
    "img": '<img src=x onerror="window.__pwned=1">',
    "attr": '" onmouseover="window.__pwned=1',
    "js-url": '<a href="javascript:window.__pwned=1">js-link</a>',
    "close": "</details></div></li></ul>",
    "svg": "<svg onload=alert(document.domain)>",
    # not HTML but TeX: JupyterLab's MathJax typesets $...$ in outputs unless told not to
    "math": "costs $5 and $10",
}
P = " ".join(PAYLOADS.values())
# Elements or attributes a payload would create if it were parsed as HTML.
_INJECTED = """root => [...root.querySelectorAll(
    'script, img, svg, iframe, a:not([class="nba-tree-link"][href^="#nba-"]), mjx-container,'
    + '[onerror], [onload], [onmouseover], [href^="javascript"]'
)].map(e => e.outerHTML.slice(0, 120))"""
"""Elements a payload could have made: the only links are the Tools pane's into the tree."""

HOSTILE_SETUP = f"""\
from typing import Annotated, TypedDict, get_type_hints

from langchain.agents import AgentState
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say

P = {P!r}
KEY_A = {PAYLOADS["img"]!r}
KEY_B = {PAYLOADS["script"]!r}


def merge(old, new):
    return {{**(old or {{}}), **new}}


# state keys that are payloads (a TypedDict can have any string keys)
fields = dict(get_type_hints(AgentState, include_extras=True))
fields[KEY_A] = Annotated[dict, merge]
fields[KEY_B] = str
HostileState = TypedDict("HostileState", fields, total=False)


@tool
def lookup(query: str, runtime: ToolRuntime) -> Command:
    \"\"\"Look something up.\"\"\"
    return Command(update={{
        KEY_A: {{"returned " + P: P}},
        "messages": [ToolMessage("result " + P, tool_call_id=runtime.tool_call_id)],
    }})


evil = {{
    "name": "evil-agent_1",
    "description": "desc " + P,
    "system_prompt": "sys " + P,
    "tools": [lookup],
}}
model = ScriptedChatModel(
    model_name="model " + P,
    script={{
        "main": [
            parallel(delegate("task " + P, "evil-agent_1"), delegate("bad type", "type " + P)),
            say("final " + P),
        ],
        "evil-agent_1": [call("lookup", query="args " + P), say("answer " + P)],
    }},
)
agent = create_deep_agent(model, subagents=[evil], state_schema=HostileState)
"""
HOSTILE_RUN = """\
with nbagents.trace() as t:
    result = agent.invoke({"messages": [("user", "user " + P)], KEY_A: {KEY_B: P}, KEY_B: "v " + P})
"""
# Texts the views must show verbatim somewhere (whitespace collapsed), one per place.
HOSTILE_TEXTS = ["user " + P, "task " + P, "args " + P, "result " + P, "final " + P, "sys " + P]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _assert_payloads_are_text(text: str, where: str) -> None:
    flat = _flat(text)
    missing = [
        t[:12]
        for t in HOSTILE_TEXTS
        # verbatim, or as a JSON string (tool arguments are shown as JSON)
        if _flat(t) not in flat and _flat(json.dumps(t, ensure_ascii=False)[1:-1]) not in flat
    ]
    assert not missing, f"{where}: payload texts not shown as text: {missing}"
    for key in (PAYLOADS["img"], PAYLOADS["script"]):  # the state keys
        assert key in flat, f"{where}: state key {key!r} not shown"


def _assert_not_pwned(lab: LabPage, page: Any, where: str) -> None:
    assert page.evaluate("() => window.__pwned") is None, f"{where}: a payload ran"
    assert not lab.dialogs, f"{where}: a dialog opened: {lab.dialogs}"


def test_hostile_trace_content_stays_text(lab: LabPage) -> None:
    # The last cell is the control for the MathJax check: the same text outside a trace view
    # is typeset, so the page can see typesetting where it happens.
    control = 'from IPython.display import HTML\nHTML("<p class=math-control>costs $5 and $10</p>")'
    path = lab.server.add_notebook("hostile.ipynb", [HOSTILE_SETUP, HOSTILE_RUN, "t", control])
    lab.open_notebook(path)
    lab.run_all()
    page = lab.page

    # -- the widget ---------------------------------------------------------------------------
    cell = page.locator(CELLS).nth(1)
    out = cell.locator(".jp-OutputArea-output")
    out.first.wait_for(state="visible")
    _assert_saved_view(out.first)  # the run is over: the live view drawn from the saved output
    live = cell.locator(LIVE)
    live.wait_for(state="visible")
    live.locator(".nba-badge", has_text="ok").wait_for(timeout=30_000)
    root = live.element_handle()
    assert root is not None
    assert live.locator(":scope > details.nba-sec").count() == 4  # tree, tokens, tools, timeline

    # The details pane shows one node at a time: open every agent row and every model/tool
    # call (timeline segments), hovering as we go; collect what the pane shows.
    shown: list[str] = [live.inner_text()]
    n_rows = live.locator("table.nba-tokens tbody tr:not(.nba-total)").count()
    n_segs = live.locator(".nba-seg").count()
    assert n_rows == 2 and n_segs >= 5, (n_rows, n_segs)
    targets = [f"table.nba-tokens tbody tr:not(.nba-total) >> nth={i}" for i in range(n_rows)]
    targets += [f".nba-seg >> nth={i}" for i in range(n_segs)]
    for target in targets:
        el = live.locator(target)
        el.hover()
        el.click()
        details = live.locator(".nba-live-details")
        details.locator(".nba-field").first.wait_for(state="visible", timeout=10_000)
        details.hover()
        shown.append(details.inner_text())
        injected = root.evaluate(_INJECTED)
        assert not injected, f"elements injected into the widget: {injected}"
    _assert_payloads_are_text("\n".join(shown), "widget")
    assert live.locator(":scope > details.nba-sec").count() == 4
    _assert_not_pwned(lab, page, "after Run All and opening every node of the widget")

    # -- `t` displayed, rendered by JupyterLab as trusted output: its view and its snapshot -----
    displayed = page.locator(CELLS).nth(2).locator(DISPLAYED)
    shown = displayed.locator(f".nba-saved-view {LIVE}")
    shown.wait_for(state="visible")
    shown.scroll_into_view_if_needed()
    shown.hover()
    assert shown.evaluate(_INJECTED) == []
    assert shown.locator(SECTIONS).count() == 4
    # Drawn from the saved view, the snapshot left the page (it is checked below where it shows:
    # untrusted in JupyterLab, and as a page of its own).
    assert displayed.locator(f":scope > {STATIC}").count() == 0
    lab.screenshot("hostile")
    _assert_not_pwned(lab, page, "the saved view in JupyterLab")
    typeset = page.locator(".math-control mjx-container")
    typeset.first.wait_for(state="attached", timeout=30_000)  # MathJax is active on this page
    assert live.locator("mjx-container").count() == 0
    assert displayed.locator("mjx-container").count() == 0

    # -- the saved output, opened as a page of its own: drawn by its script, and without it ---
    lab.save()
    html = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        cells = lab.server.api("GET", f"contents/{path}")["content"]["cells"]
        outputs = cells[1]["outputs"]
        html = "".join(outputs[0]["data"].get("text/html", "")) if outputs else ""
        if "final " in html:
            break
        time.sleep(0.5)
    assert "final " in html, "the saved notebook has no final snapshot of the live view"
    without_script = re.sub(r"(?s)<script>.*?</script>", "", html)
    # (The saved view is live.js, as the widget above; its details pane shows one step at a
    # time, so the payloads are read from the snapshot's text.)
    for shown, selector, where in (
        (html, f".nba-saved-view {LIVE}", ""),
        (without_script, STATIC, "saved snapshot"),
    ):
        snap = page.context.new_page()
        snap.on("dialog", lambda d: (lab.dialogs.append(f"{d.type}: {d.message}"), d.dismiss()))
        try:
            snap.set_content(f"<!doctype html><html><body>{shown}</body></html>", timeout=30_000)
            body = snap.locator(selector)
            body.hover()
            assert body.evaluate(_INJECTED) == []
            assert body.locator(SECTIONS).count() == 4
            if where:
                _assert_payloads_are_text(body.evaluate("e => e.textContent"), where)
            snap.wait_for_timeout(300)  # time for an onerror/onload to fire, were there one
            _assert_not_pwned(lab, snap, where or "saved view")
        finally:
            snap.close()
    _assert_not_pwned(lab, page, "end")

    # -- the same output opened by someone who did not run it: JupyterLab shows the snapshot ---
    untrusted = LabPage(page.context.new_page(), lab.server, lab.name)
    untrusted.page.on(
        "dialog", lambda d: (lab.dialogs.append(f"{d.type}: {d.message}"), d.dismiss())
    )
    try:
        untrusted.open_notebook(lab.server.add_saved_output("hostile_untrusted.ipynb", html))
        static = untrusted.page.locator(f"{CURRENT_NOTEBOOK} .jp-OutputArea-output {STATIC}")
        static.first.wait_for(state="visible")
        assert static.count() == 1
        assert untrusted.page.locator(f"{CURRENT_NOTEBOOK} .nba-saved-view").count() == 0
        static.hover()
        assert static.evaluate(_INJECTED) == []
        assert static.locator(SECTIONS).count() == 4
        _assert_payloads_are_text(static.evaluate("e => e.textContent"), "untrusted in JupyterLab")
        untrusted.page.wait_for_timeout(300)
        _assert_not_pwned(lab, untrusted.page, "the snapshot, untrusted in JupyterLab")
    finally:
        untrusted.page.close()
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
