"""The widget half of the live view (:mod:`nbagents.display.live` drives it)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from nbagents.display._html import live_module, static_text, trace_css

__all__ = ["TraceWidget"]


class TraceWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """The widget half of the live view: draws ``view_json`` and applies ``patch_json``."""

    _esm = live_module()
    _css = trace_css() + "\n" + static_text("live.css")
    uid = traitlets.Unicode().tag(sync=True)
    """Which widget this is, for the front end: all views of one widget draw one store."""
    view_json = traitlets.Unicode("null").tag(sync=True)
    """The whole view (a :class:`~nbagents.display._records.View`) as JSON text."""
    patch_json = traitlets.Unicode("null").tag(sync=True)
    """The latest :class:`~nbagents.display._records.ViewPatch` as JSON text."""
    answerable = traitlets.Bool(False).tag(sync=True)
    """Whether the paused run can be resumed from the view (its agent is known here)."""
    notice = traitlets.Unicode("").tag(sync=True)
    """Why the last decisions sent from the view could not be applied, or ``""``."""
    on_state_request: Callable[[], None] | None = None
    """Called before the whole state is read for a page loaded anew."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not self.uid:
            self.uid = uuid.uuid4().hex

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        # Without a key: the whole state, which a page asks for when it loads.
        if key is None and self.on_state_request is not None:
            self.on_state_request()
        state: dict[str, Any] = super().get_state(key=key, drop_defaults=drop_defaults)
        return state

    def __repr__(self) -> str:
        return "TraceWidget()"
