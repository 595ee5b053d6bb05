"""A graphviz call graph of a trace: one node per agent run, one edge per spawn.

Edges carry the task and the tokens the spawn used, including its own sub-agents. Node names
come from the position in the tree, so equal traces give the same DOT source. Without Graphviz's
``dot`` program, a notebook shows how to install it and the DOT source, not a traceback.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

import graphviz

from nbagents.display._format import format_tokens, short

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["INSTALL_HINT", "TraceGraph", "dot_label", "trace_graphviz"]

INSTALL_HINT = (
    "Graphviz's `dot` program was not found on PATH, so the call graph cannot be drawn.\n"
    "Install it, then restart the kernel:\n"
    "  Debian/Ubuntu:  sudo apt-get install graphviz\n"
    "  macOS:          brew install graphviz\n"
    "  conda:          conda install -c conda-forge graphviz\n"
    "  Windows:        winget install graphviz (and add it to PATH)\n"
    "(`pip install graphviz` installs only the Python bindings, not the `dot` program.)"
)

_COLOURS = {
    "ok": "#1a7f37",
    "error": "#cf222e",
    "running": "#0969da",
    "interrupted": "#bf8700",
    "limit": "#9a6700",
}


class TraceGraph(graphviz.Digraph):  # type: ignore[misc]
    """A ``graphviz.Digraph`` that explains a missing ``dot`` instead of raising in a notebook."""

    def __repr__(self) -> str:
        # The default repr carries a memory address, which differs on every run.
        edges = sum("->" in line for line in self.body)
        return f"<TraceGraph: {edges} spawn(s); .source has the dot text>"

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        try:
            bundle: dict[str, Any] = super()._repr_mimebundle_(include, exclude, **kwargs)
            return bundle
        except graphviz.ExecutableNotFound:
            return self.missing_dot_bundle()
        except graphviz.CalledProcessError as error:
            return self._message(f"Graphviz failed to draw the call graph: {error}", "")

    def missing_dot_bundle(self) -> dict[str, str]:
        """What a notebook shows when ``dot`` is missing: how to install it, and the source."""
        return self._message(INSTALL_HINT, "DOT source:\n")

    def _message(self, message: str, source_label: str) -> dict[str, str]:
        """``message`` and the DOT source, as text and as HTML."""
        return {
            "text/plain": f"{message}\n\n{source_label}{self.source}",
            "text/html": (
                '<div class="nba-graph-missing" style="border:1px solid rgba(191,135,0,.6);'
                'border-radius:6px;padding:6px 10px;">'
                f'<pre style="white-space:pre-wrap;margin:0">{escape(message, quote=True)}</pre>'
                "<details><summary>DOT source</summary>"
                f"<pre>{escape(self.source, quote=True)}</pre></details></div>"
            ),
        }


def dot_label(*lines: str) -> str:
    """A safe DOT label: each line escaped (backslashes, quotes), never an HTML label.

    Control characters are shown as their Unicode pictures (NUL as ``␀``): Graphviz rejects a
    NUL byte as a syntax error, and the others would be invisible.
    """
    escaped = [" ".join(x.split()).translate(_PICTURES).replace("\\", "\\\\") for x in lines]
    # ``\n`` is DOT's centred line break; nohtml keeps a label like "<b>" from becoming HTML.
    return graphviz.nohtml("\\n".join(escaped))  # type: ignore[no-any-return]


_PICTURES = {c: 0x2400 + c for c in range(0x20)} | {0x7F: 0x2421}


def trace_graphviz(trace: Trace) -> TraceGraph:
    """Agents and spawns as a ``graphviz.Digraph``; edges labelled with the task and tokens."""
    graph = TraceGraph(name="trace", comment="nbagents call graph")
    graph.attr(rankdir="LR", fontname="Helvetica", fontsize="11")
    graph.attr(
        "node",
        shape="box",
        style="rounded,filled",
        fillcolor="#f6f8fa",
        fontname="Helvetica",
        fontsize="11",
    )
    graph.attr("edge", fontname="Helvetica", fontsize="9", color="#57606a")
    agents = [record for top in trace.agents() for record in top.walk()]
    names = {record.span_id: f"a{i}" for i, record in enumerate(agents)}
    for record in agents:
        own = format_tokens(record.tokens_own.total)
        graph.node(
            names[record.span_id],
            dot_label(short(record.type, 40), f"{record.status} · {own} tok own"),
            color=_COLOURS.get(record.status, "#57606a"),
            penwidth="2" if record.status == "error" else "1",
        )
    parents = {kid.span_id: record.span_id for record in agents for kid in record.children}
    for kid in agents:
        if kid.span_id not in parents:
            continue
        # Its task: its own description, else that of the ``task`` step that spawned it.
        task = kid.description
        if not task and kid.task_span_id is not None:
            task = trace.get(kid.task_span_id).typed_attributes().get("description", "")
        graph.edge(
            names[parents[kid.span_id]],
            names[kid.span_id],
            dot_label(short(task, 40), f"{format_tokens(kid.tokens_total.total)} tok"),
            color=_COLOURS["error"] if kid.status == "error" else "#57606a",
        )
    return graph
