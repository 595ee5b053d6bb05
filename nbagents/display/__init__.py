"""Notebook views of a :class:`~nbagents.tracing.model.Trace`: HTML snapshot, live widget, graph.

Views only read traces; they never touch callbacks. Importing this package does not import
ipywidgets: the live view lives in :mod:`nbagents.display.live` (``LiveView``, ``live_view``).
"""

from nbagents.display._graph import trace_graphviz
from nbagents.display._html import MINUS, WRAP_LONG_WORDS, stylesheet, trace_html
from nbagents.display._saved import trace_saved_html

__all__ = [
    "MINUS",
    "WRAP_LONG_WORDS",
    "stylesheet",
    "trace_graphviz",
    "trace_html",
    "trace_saved_html",
]
