"""Notebook views of a :class:`~nbagents.tracing.model.Trace`: HTML snapshot, live widget, graph.

Views only read traces; they never touch callbacks. Importing this package does not import
ipywidgets: the live view lives in :mod:`nbagents.display.live` (``LiveView``, ``live_view``).
"""

from nbagents.display._graph import trace_graphviz
from nbagents.display._html import trace_html

__all__ = ["trace_graphviz", "trace_html"]
