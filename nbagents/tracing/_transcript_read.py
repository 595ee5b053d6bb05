"""Transcripts: what one agent saw and said, in order, rebuilt from the spans of a trace.

A transcript belongs to one agent span (the main agent, or one sub-agent spawn). It is read
from what the tracer already records, so it works on a live trace, on a loaded one and on runs
nbagents did not make (upstream deepagents, any ``create_agent`` graph):

- each of the agent's own model calls recorded its whole input (the system prompt and the
  conversation so far) and its reply. The first call's input gives the system prompt and the
  messages the agent started from (a sub-agent's task, or what a forked one inherited); each
  later call's input adds, after what the agent had already seen, the tool results of the
  reply before it;
- the tool calls (``task`` and skill loads included) say what a result was: a ``task`` result
  links to the transcript of the sub-agent it spawned; a tool result the conversation never
  reached (the run failed, paused or was cut off after the tools ran) is taken from the tool
  call itself;
- pauses for a human are on the agent span (``pending``, and once answered ``approvals``).

Where the record is not whole the transcript says so with a ``note`` entry, never silently:
a model input cut by the trace's size bounds, a context rewritten between two calls (a
summarisation middleware), a text cut by the tracer (its text ends ``… [N more chars]``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from nbagents.tracing._attributes import typed_attribute
from nbagents.tracing._records import agents_under
from nbagents.tracing._transcript import EntryKind, Transcript, TranscriptEntry
from nbagents.tracing.messages import (
    compact_json,
    message_text,
    message_type,
    reply,
    stored_messages,
    tool_result,
)
from nbagents.tracing.span import AGENT_KINDS, STREAMED, Span

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["find_agent_span", "transcript_of"]

_CALL_KINDS = ("tool", "task", "skill")


def find_agent_span(trace: Trace, which: Any) -> Span:
    """The agent span ``which`` names: a span (an agent's, or any step of one), a span id, a
    ``SubAgentRecord``, an agent's name when one agent has it, or ``None`` for the main
    agent (the first run's)."""
    if which is None:
        roots = [s for s in trace.visible_roots() if s.kind in AGENT_KINDS]
        if not roots:
            raise LookupError("The trace has no agent run yet.")
        return roots[0]
    span_id = getattr(which, "span_id", None)  # a SubAgentRecord, a Transcript
    if isinstance(span_id, str):
        which = span_id
    if isinstance(which, Span):
        which = which.id
    if not isinstance(which, str):
        raise TypeError(
            "transcript() takes a span, a span id, a SubAgentRecord or an agent's name, "
            f"not {type(which).__name__}."
        )
    if which not in trace:
        named = [s for s in trace.walk() if s.kind in AGENT_KINDS and s.name == which]
        if len(named) == 1:
            return named[0]
        if not named:
            raise LookupError(f"No span and no agent named {which!r} in the trace.")
        raise LookupError(
            f"{len(named)} agents are named {which!r}; pick one from trace.subagents "
            "(or pass its span id)."
        )
    span = trace.get(which)
    agent = next((s for s in (span, *trace.ancestors(span)) if s.kind in AGENT_KINDS), None)
    if agent is None:
        raise LookupError(f"The span {which!r} belongs to no agent.")
    return agent


def transcript_of(trace: Trace, agent: Span) -> Transcript:
    """The transcript of the agent span ``agent`` (see the module docstring)."""
    with trace.lock:
        own = trace.own_spans(agent)
        # A summarization's own model call is not a turn of the agent: the fold is a note.
        folds = sorted((s for s in own if "summarization" in s.attributes), key=lambda s: s.start)
        folding = {d.id for fold in folds for d in trace.descendants(fold)}
        models = sorted(
            (s for s in own if s.kind == "model" and s.id not in folding), key=lambda s: s.start
        )
        calls = [s for s in own if s.kind in _CALL_KINDS]
        entries = _Builder(trace, agent, calls, folds).build(models)
        parent = next((s for s in trace.ancestors(agent) if s.kind in AGENT_KINDS), None)
        attrs = agent.typed_attributes()
        return Transcript(
            span_id=agent.id,
            agent=agent.name,
            kind="subagent" if agent.kind == "subagent" else "agent",
            task=attrs.get("description", "") if agent.kind == "subagent" else "",
            status=agent.status,
            parent_id=parent.id if parent is not None else None,
            depth=agent.depth,
            entries=tuple(entries),
        )


class _Builder:
    """Builds one agent's entries from its model calls, tool calls and pauses."""

    def __init__(self, trace: Trace, agent: Span, calls: list[Span], folds: list[Span]) -> None:
        self.trace = trace
        self.agent = agent
        self.folds = folds
        """The agent's summarization steps, in time order: each is noted before the turn whose
        input it rewrote."""
        self.entries: list[TranscriptEntry] = []
        self.by_call_id = {
            call_id: span
            for span in calls
            if (call_id := typed_attribute(span.attributes, "tool_call_id"))
        }
        self.seen: list[Mapping[str, Any]] = []
        """The conversation as the agent last saw it: the last input and its reply."""
        self.answered: set[str] = set()
        """Tool call ids whose result is in the transcript."""

    def build(self, models: list[Span]) -> list[TranscriptEntry]:
        if not models:
            given = self.agent.inputs
            plain = isinstance(given, str)  # a graph invoked with a plain text
            self._start(
                [{"type": "human", "content": given}] if plain else stored_messages(given)[0], None
            )
        for turn, model in enumerate(models, start=1):
            given, cut = stored_messages(model.inputs)
            if turn == 1:
                self._start(given, model)
            else:
                self._continue(given, cut, turn, model)
            self._reply(turn, model)
        self._unseen_results(len(models))
        for key, answered in (("approvals", True), ("pending", False)):
            for record in self.agent.attributes.get(key) or ():
                if isinstance(record, Mapping):
                    self._approval(record, answered=answered)
        self._ending(len(models))
        return self.entries

    def add(self, kind: EntryKind, turn: int, message: Any = None, **fields: Any) -> None:
        self.entries.append(TranscriptEntry(kind, turn, message, **fields))

    def _start(self, given: list[Mapping[str, Any]], model: Span | None) -> None:
        system = [m for m in given if message_type(m) == "system"]
        rest = [m for m in given if message_type(m) != "system"]
        for message in system[:1]:
            self.add("system", 0, message, span_id=_id(model))
        if self.agent.kind == "subagent" and len(rest) > 1:
            text = f"It started from {len(rest)} messages: inherited from the agent that "
            self.add("note", 0, text=text + "spawned it, then its task.", span_id=self.agent.id)
        for message in rest:
            self._message(message, 0, model)
        self.seen = list(given)

    def _continue(self, given: list[Mapping[str, Any]], cut: int, turn: int, model: Span) -> None:
        before = turn - 1
        if not given or cut:
            # A cut input (the tracer keeps a long list's first and last items) cannot be lined
            # up with the conversation so far; the tool calls recorded their results themselves.
            why = (
                f"was cut in the trace ({cut} messages left out)" if cut else "is not in the trace"
            )
            text = f"This model call's input {why}; the tool results below are taken from the "
            self.add("note", before, text=text + "tool calls.", span_id=model.id)
            self._unseen_results(before)
            return
        fold = self._fold_before(model)
        if fold is not None:
            # The input is [system, summary, *kept]: what the kept part holds that is new came
            # before the fold, the summary after it.
            summary, *kept = [m for m in given if message_type(m) != "system"] or [{}]
            for message in kept:
                if not _held(message, self.seen):
                    self._message(message, before, model)
            self._folded(fold, before)
            new = [summary] if summary else []
        elif _continues(given, self.seen):
            new = given[len(self.seen) :]
        else:
            text = (
                f"The context was rewritten before turn {turn}: the model saw {len(given)} "
                f"messages, not the {len(self.seen)} before plus the new ones. Open that model "
                "call's input to see it whole."
            )
            self.add("note", before, text=text, span_id=model.id)
            new = [m for m in given if message_type(m) != "system" and not _held(m, self.seen)]
        for message in new:
            self._message(message, before, model)
        self.seen = list(given)

    def _fold_before(self, model: Span) -> Span | None:
        """The summarization that ended before ``model`` started and is not noted yet."""
        if self.folds and self.folds[0].end is not None and self.folds[0].end <= model.start:
            return self.folds.pop(0)
        return None

    def _folded(self, fold: Span, turn: int) -> None:
        facts = fold.typed_attributes().get("summarization", {})
        path = facts.get("history_path")
        where = f"saved in full to {path}" if path else "not saved (the backend refused it)"
        text = (
            f"Summarized: {facts.get('messages_folded', 0)} earlier messages folded into the "
            f"summary below ({facts.get('tokens_before', 0):,} → "
            f"{facts.get('tokens_after', 0):,} tokens of context), {where}. The messages above "
            "stay in this transcript; the model saw only the summary and the latest ones."
        )
        self.add("note", turn, text=text, span_id=fold.id)

    def _message(self, message: Mapping[str, Any], turn: int, model: Span | None) -> None:
        kind = message_type(message)
        if kind == "tool":
            self._tool_result(message, turn, self.by_call_id.get(_call_id(message)))
        else:  # an AI message among them was given, not produced (a forked start)
            by = _id(model) if kind in ("ai", "system") else self.agent.id
            self.add("input", turn, message, span_id=by)

    def _tool_result(self, message: Mapping[str, Any], turn: int, span: Span | None) -> None:
        self.answered.add(_call_id(message))
        sub = _spawned(self.trace, span) if span is not None and span.kind == "task" else None
        skill = typed_attribute(span.attributes, "skill") if span and span.kind == "skill" else None
        title = ""
        if sub is not None:
            task = typed_attribute(sub.attributes, "description")
            title = f"{sub.name}: {task}" if task else sub.name
        fields = {"subagent_id": _id(sub), "subagent": title, "skill": skill}
        self.add("tool", turn, message, span_id=_id(span), **fields)

    def _reply(self, turn: int, model: Span) -> None:
        message = reply(model.outputs)
        if message is not None:
            self.add("reply", turn, message, span_id=model.id, usage=model.usage)
            self.seen = [*self.seen, message]
        elif model.status == "error":
            self.add("error", turn, text=model.error or "", span_id=model.id)
        elif model.status == "running":
            streamed = model.typed_attributes().get(STREAMED, "")
            text = "replying…" + (f" so far: {streamed}" if streamed else "")
            self.add("note", turn, text=text, span_id=model.id)
        else:
            reason = model.error or model.status
            self.add("note", turn, text=f"no reply ({reason})", span_id=model.id)

    def _unseen_results(self, turn: int) -> None:
        """Results of the last reply's tool calls that no later model input holds: the run
        ended, failed or paused after them (or the input that held them was cut)."""
        last = next((e for e in reversed(self.entries) if e.kind == "reply"), None)
        for call in last.tool_calls if last is not None else ():
            call_id = str(call.get("id") or "")
            span = self.by_call_id.get(call_id) if call_id not in self.answered else None
            if span is None:
                continue
            message = tool_result(span.outputs, call_id)
            if message is not None:
                self._tool_result(message, turn, span)
            elif span.status == "running":
                task = span.kind == "task"
                what = "runs (its sub-agent is working)" if task else "runs"
                spawned = _id(_spawned(self.trace, span)) if task else None
                self.add(
                    "note", turn, text=f"{span.name} {what}…", span_id=span.id, subagent_id=spawned
                )
            elif span.status in ("error", "interrupted"):
                kind: EntryKind = "error" if span.status == "error" else "note"
                text = span.error or ("paused" if span.status == "interrupted" else "")
                self.add(kind, turn, text=f"{span.name}: {text}", span_id=span.id)

    def _approval(self, record: Mapping[str, Any], *, answered: bool) -> None:
        tool = str(record.get("tool") or "")
        args = record.get("args")
        if record.get("kind") == "approval":
            what = f"{tool}({compact_json(args)})"
        else:
            what = f"interrupt: {compact_json(record.get('value'))}"
        if answered:
            decision = str(record.get("decision") or "answered")
            message = record.get("message")
            text = f"{what}: {decision}" + (f" ({message})" if message else "")
        else:
            allowed = " / ".join(str(a) for a in record.get("allowed") or ())
            text = f"{what}: waits for a decision" + (f" ({allowed})" if allowed else "")
        # After the reply that made the call, else at the end.
        at = len(self.entries)
        turn = self.entries[-1].turn if self.entries else 0
        for i, entry in enumerate(self.entries):
            if entry.kind == "reply" and any(
                c.get("name") == tool and c.get("args") == args for c in entry.tool_calls
            ):
                at, turn = i + 1, entry.turn
        while at < len(self.entries) and self.entries[at].kind == "approval":
            at += 1
        self.entries.insert(at, TranscriptEntry("approval", turn, text=text, span_id=self.agent.id))

    def _ending(self, turns: int) -> None:
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind == "reply" and not last.tool_calls:
            self.entries[-1] = replace(last, final=True)
        agent = self.agent
        already = any(e.kind == "error" and e.text == agent.error for e in self.entries)
        if agent.status == "error" and agent.error and not already:
            self.add("error", turns, text=agent.error, span_id=agent.id)


def _id(span: Span | None) -> str | None:
    return span.id if span is not None else None


def _spawned(trace: Trace, task: Span) -> Span | None:
    """The sub-agent span a ``task`` call spawned: the first agent span under it."""
    return next(agents_under(trace, task), None)


def _call_id(message: Mapping[str, Any]) -> str:
    return str(message.get("tool_call_id") or "")


def _key(message: Mapping[str, Any]) -> tuple[str, str]:
    kind = message_type(message)
    return kind, _call_id(message) if kind == "tool" else ""


def _continues(given: list[Mapping[str, Any]], seen: list[Mapping[str, Any]]) -> bool:
    """Whether ``given`` starts with the conversation the agent had seen (by message type,
    tool results by call id: a reply comes back with the agent's name added)."""
    if len(given) < len(seen):
        return False
    return all(_key(a) == _key(b) for a, b in zip(given, seen, strict=False))


def _held(message: Mapping[str, Any], seen: list[Mapping[str, Any]]) -> bool:
    key, text = _key(message), message_text(message)
    return any(_key(m) == key and message_text(m) == text for m in seen)
