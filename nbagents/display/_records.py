"""The records a view is made of: what the static HTML and the live widget both draw.

Every label, glyph, number format and duration is decided here, in Python, once; the HTML
renderer and ``static/live/`` draw these records and format nothing. Texts are *not* escaped
(each renderer escapes for its own context). ``kind`` and ``status`` are always one of
:data:`KINDS` / :data:`STATUSES`, so renderers may put them in class names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired, TypedDict, get_args

from nbagents.tracing.model import SpanKind, SpanStatus

__all__ = [
    "GLYPHS",
    "KINDS",
    "STATUSES",
    "TURN_KINDS",
    "VIEW_VERSION",
    "AgentRow",
    "ConversationPage",
    "ConversationView",
    "DetailField",
    "FieldType",
    "Header",
    "MessageView",
    "PendingView",
    "PlanItemView",
    "PlanMark",
    "Segment",
    "Stat",
    "StateDiffView",
    "TimelineRow",
    "ToolCallRef",
    "ToolCallView",
    "ToolRow",
    "ToolsView",
    "TurnView",
    "View",
    "ViewNode",
    "ViewPatch",
    "ViewSummary",
]

VIEW_VERSION = 2
KINDS: tuple[str, ...] = get_args(SpanKind)
STATUSES: tuple[str, ...] = get_args(SpanStatus)
TURN_KINDS: tuple[str, ...] = ("system", "input", "reply", "tool", "approval", "error", "note")
GLYPHS = {
    "ok": "\u2713",
    "error": "\u2717",
    "running": "\u25cc",
    "interrupted": "\u2016",
    "limit": "\u2298",
}
"""A status as a character: readable where colours are stripped (GitHub, untrusted output)."""

FieldType = Literal["text", "code", "error", "messages", "kv", "checklist"]


class PlanItemView(TypedDict):
    """One item of an agent's plan in a ``checklist`` field."""

    status: str
    """``pending``, ``in_progress`` or ``completed``: renderers may put it in a class name."""
    mark: str
    text: str
    when: str


class ToolCallView(TypedDict):
    name: str
    args: str


class MessageView(TypedDict):
    role: str
    name: str
    content: str
    tool_calls: list[ToolCallView]
    error: NotRequired[bool]


class DetailField(TypedDict):
    """One labelled part of a details pane; ``value``'s shape depends on ``type``: a string
    (text, code, error), a list of :class:`MessageView` (messages), ``[label, value]`` pairs
    (kv), or a list of :class:`PlanItemView` (checklist)."""

    label: str
    type: FieldType
    value: Any


class TurnView(TypedDict):
    """One step of an agent's conversation (a :class:`~nbagents.tracing.TranscriptEntry`)."""

    kind: str
    """One of :data:`TURN_KINDS`: renderers may put it in a class name."""
    turn: int
    label: str
    """``system prompt``, ``task``, ``AI``, ``final answer``, ``tool result · lookup``, …"""
    meta: str
    """``turn 2 · 120 in · 30 out`` for a reply; empty otherwise."""
    content: str
    """The text, cut at :data:`~nbagents.display._format.CONVERSATION_TEXT` with the cut said."""
    fold: bool
    """Long: shown folded, its first line as the summary."""
    tool_calls: list[ToolCallView]
    error: bool
    link: str | None
    """A ``task`` result's: the view node id of the sub-agent whose conversation it ends."""
    link_label: str
    step: str | None
    """The view node id of the model or tool call it came from."""


class ConversationView(TypedDict):
    """An agent's conversation (its transcript), bounded: its first page of
    :data:`CONVERSATION_TURNS` entries; ``left_out`` says how many more there are."""

    turns: list[TurnView]
    left_out: int
    messages: int
    """How many messages the whole transcript has."""
    model_calls: int
    entries: int
    """How many entries the whole transcript has (``turns`` is its first page)."""
    page_size: int
    """Entries per page: page ``n`` holds entries ``n * page_size`` up to the next page's."""


class ConversationPage(TypedDict):
    """One page of an agent's conversation past the first, as the live view asks for it."""

    page: int
    turns: list[TurnView]
    entries: int


class StateDiffView(TypedDict):
    withheld: list[tuple[str, str]]
    passed: list[tuple[str, str]]
    returned: list[str]


class Stat(TypedDict):
    """One figure of the header: ``label`` then ``value`` in bold, then ``note``."""

    label: str
    value: str
    note: str
    emphasis: Literal["", "error", "waiting"]
    varies: bool
    """A wall time: varies between runs (the static HTML marks it for the sanitize file)."""


class Header(TypedDict):
    status: str
    title: str
    stats: list[Stat]


class PendingView(TypedDict):
    """A request a paused run waits for at this step (see ``nbagents.tracing.pending``)."""

    key: str
    """``interrupt id:position``: what a decision from the live view names."""
    title: str
    """``deploy(target='a')``, or the value of a plain ``interrupt(...)``."""
    description: str
    allowed: list[str]
    """The decisions the view may offer; empty for a plain interrupt (answered in code)."""
    args_json: str
    """The call's arguments as indented JSON: what an edit starts from."""


class ViewNode(TypedDict):
    """One step of the call tree. ``id`` is stable for the life of a view (selection, collapsed
    state and patches are keyed by it); ``children`` lists ids in call order."""

    id: str
    parent: str | None
    depth: int
    kind: str
    kind_label: str
    status: str
    glyph: str
    name: str
    preview: str
    failed: bool
    time: str
    """Its duration, ``running…`` while it runs."""
    tokens: str
    """``1,234 tok`` (with sub-agents, for agents and tasks), empty when none."""
    token_table: list[tuple[str, str]]
    start: float
    end: float | None
    children: NotRequired[list[str]]
    details: NotRequired[list[DetailField]]
    diff: NotRequired[StateDiffView]
    pending: NotRequired[list[PendingView]]
    """What the paused run waits for here; absent when nothing."""
    conversation: NotRequired[ConversationView]
    """An agent's or sub-agent's transcript; absent from other steps."""


class AgentRow(TypedDict):
    """One row of the token table: the agent, then one formatted text per column."""

    id: str
    depth: int
    status: str
    glyph: str
    cells: list[str]


class ToolCallRef(TypedDict):
    """A call listed under its tool's row: the view node id of its step (whose details hold
    its arguments and result), and the agent that made it."""

    id: str
    agent: str


class ToolRow(TypedDict):
    """One row of the Tools table (``id`` is the tool's name), and its first calls."""

    id: str
    status: str
    glyph: str
    cells: list[str]
    calls: list[ToolCallRef]
    more: int
    """How many more calls it made than ``calls`` lists."""


class ToolsView(TypedDict):
    """The Tools table; in a patch, only when it changed, and ``rows`` only those that did."""

    anchor: str
    """Names this run's steps in the snapshot's links (a UUID, which the sanitize rules mask):
    the outputs of two runs never share one."""
    columns: list[str]
    order: list[str]
    """The tools' ids, most called first."""
    rows: list[ToolRow]
    totals: list[str]


class Segment(TypedDict):
    id: str
    kind: Literal["model", "tool"]
    start: float
    end: float | None


class PlanMark(TypedDict):
    """When an item of an agent's plan started or finished, on the agent's timeline row."""

    at: float
    kind: Literal["started", "finished"]
    label: str


class TimelineRow(TypedDict):
    """An agent's bar and its model and tool calls, in seconds since the trace began (a
    running call's ``end`` is ``None``: it reaches the view's ``duration``)."""

    id: str
    name: str
    depth: int
    status: str
    glyph: str
    time: str
    start: float
    end: float | None
    segments: list[Segment]
    marks: NotRequired[list[PlanMark]]
    """Absent when the agent keeps no plan."""


class ViewSummary(TypedDict):
    """What a whole view and a patch both carry: the revision, the run's state, the header."""

    version: int
    rev: int
    status: str
    finished: bool
    waiting: bool
    errors: int
    cost: str | None
    duration: float
    header: Header
    totals: list[str]


class View(ViewSummary):
    """The whole view of a trace."""

    columns: list[str]
    roots: list[str]
    nodes: list[ViewNode]
    """In tree order (depth first)."""
    agents: list[str]
    """The agent and sub-agent node ids in tree order: the token table's and timeline's rows."""
    agent_rows: list[AgentRow]
    timeline: list[TimelineRow]
    tools: ToolsView
    vocabulary: NotRequired[Mapping[str, Sequence[str]]]
    """As sent: the span ``kinds`` and ``statuses`` there are, and the ``agent_kinds``, so the
    front end holds no copy of them."""


class ViewPatch(ViewSummary):
    """What changed since revision ``rev - 1``: the header always, the rest only when changed.

    Nodes, agent rows and timeline rows replace the records with the same id (a node keeps
    the ``details``, ``diff``, ``conversation`` and ``children`` its patch leaves out: they come
    only when they changed); ``roots``/``agents``/``columns`` are present when their order or
    set changed.
    """

    nodes: list[ViewNode]
    agent_rows: list[AgentRow]
    timeline: list[TimelineRow]
    roots: NotRequired[list[str]]
    agents: NotRequired[list[str]]
    columns: NotRequired[list[str]]
    tools: NotRequired[ToolsView]
