"""What the live widget's front end holds: the whole view, then every patch applied in order.

A second, independent reader of the live protocol (``static/live/`` is the first), so tests
can check that the patches the widget receives add up to the view a fresh build gives.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nbagents.display._saved import unpacked
from nbagents.display.live import LiveView


class Mirror:
    def __init__(self) -> None:
        self.base: dict[str, Any] | None = None
        self.nodes: dict[str, dict[str, Any]] = {}
        self.agent_rows: dict[str, dict[str, Any]] = {}
        self.timeline: dict[str, dict[str, Any]] = {}
        self.tools: dict[str, Any] = {}
        self.tool_rows: dict[str, dict[str, Any]] = {}
        self.patches = 0
        self.patch_bytes: list[int] = []

    def reset(self, text: str) -> None:
        view = json.loads(text)
        if view is None:
            return
        self.base = view
        self.nodes = {n["id"]: n for n in view["nodes"]}
        self.agent_rows = {r["id"]: r for r in view["agent_rows"]}
        self.timeline = {r["id"]: r for r in view["timeline"]}
        self._take_tools(view["tools"], whole=True)

    def patch(self, text: str) -> None:
        patch = json.loads(text)
        if patch is None or self.base is None or patch["rev"] <= self.base["rev"]:
            return
        self.patches += 1
        self.patch_bytes.append(len(text))
        base = self.base
        for key in ("rev", "status", "finished", "waiting", "errors", "cost", "duration"):
            base[key] = patch[key]
        for key in ("header", "totals"):
            base[key] = patch[key]
        for key in ("roots", "agents", "columns"):
            if key in patch:
                base[key] = patch[key]
        for node in patch["nodes"]:
            old = self.nodes.get(node["id"], {"children": [], "details": []})
            self.nodes[node["id"]] = {**old, **node}
        for row in patch["agent_rows"]:
            self.agent_rows[row["id"]] = row
        for row in patch["timeline"]:
            self.timeline[row["id"]] = row
        if "tools" in patch:
            self._take_tools(patch["tools"], whole=False)

    def _take_tools(self, tools: dict[str, Any], whole: bool) -> None:
        # a patch carries the rows that changed; the rest of the table whole
        rows = {r["id"]: r for r in tools["rows"]}
        self.tool_rows = rows if whole else {**self.tool_rows, **rows}
        self.tools = {k: v for k, v in tools.items() if k != "rows"}

    def view(self) -> dict[str, Any]:
        """The whole view as the front end has it, in the shape ``build_view`` returns."""
        assert self.base is not None, "no view was sent"
        out = dict(self.base)
        order: list[dict[str, Any]] = []
        stack = list(reversed(out["roots"]))
        while stack:
            node = self.nodes[stack.pop()]
            order.append(node)
            stack.extend(reversed(node["children"]))
        out["nodes"] = order
        out["agent_rows"] = [self.agent_rows[a] for a in out["agents"]]
        out["timeline"] = [self.timeline[a] for a in out["agents"]]
        out["tools"] = {**self.tools, "rows": [self.tool_rows[t] for t in self.tools["order"]]}
        return out


def follow(view: LiveView) -> Mirror:
    """A mirror of ``view``'s widget, kept up to date as the widget's state changes."""
    mirror = Mirror()
    mirror.reset(view.widget.view_json)
    view.widget.observe(lambda change: mirror.reset(change["new"]), names="view_json")
    view.widget.observe(lambda change: mirror.patch(change["new"]), names="patch_json")
    return mirror


def stat(view: dict[str, Any], label: str) -> str | None:
    """A header figure by its label (``agents``, ``tokens``, …), or None when not shown."""
    for item in view["header"]["stats"]:
        if item["label"] == label:
            return str(item["value"])
    return None


SAVED_VIEW = re.compile(r"<!--nba-view:(.*?)-->", re.S)


def saved_view(html: str) -> dict[str, Any]:
    """The view a finished live output draws where it is trusted (``nbagents/display/_saved``)."""
    found = SAVED_VIEW.search(html)
    assert found, "the output holds no saved view"
    return json.loads(unpacked(found.group(1)))


def final_view(view: LiveView) -> dict[str, Any]:
    """What ``view`` shows once finished: its saved view (the widget is closed by then)."""
    return saved_view(view._bundle()["text/html"])
