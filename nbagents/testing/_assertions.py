"""Assertions on a run: what was delegated, how, what failed, which tools ran, what it cost.

Each raises :class:`TraceAssertionError` (an ``AssertionError``, so pytest reports it as a
failed check, not as an error of the test) whose message says what was expected, what the run
did instead, and lists the run's spawns or calls so the reason is readable without a notebook.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from nbagents.cost import Prices
from nbagents.testing._facts import SpawnFact, ToolCall, problems, quoted, spawns, tool_calls
from nbagents.tracing.cost import total_cost
from nbagents.tracing.model import Trace

__all__ = [
    "TraceAssertionError",
    "assert_max_depth",
    "assert_no_failures",
    "assert_spawned",
    "assert_tool_called",
    "assert_within_budget",
    "describe_spawns",
]

LISTED = 30
"""Spawns or calls listed in a failure message; the rest are counted."""


class TraceAssertionError(AssertionError):
    """A trace did not meet an assertion of :mod:`nbagents.testing`."""


def assert_spawned(
    trace: Trace,
    subagent_type: str,
    times: int | None = None,
    *,
    parallel: bool | None = None,
    by: str | None = None,
) -> list[SpawnFact]:
    """Check that sub-agents of ``subagent_type`` were spawned, and return those spawns.

    ``times`` is the exact number of spawns (``0``: never spawned; ``None``: at least once).
    ``parallel=True`` requires every one of them to have run in parallel with another
    sub-agent (called in the same model message), ``parallel=False`` none of them. ``by``
    counts only the spawns of that agent: ``"main"`` or a sub-agent type.
    """
    __tracebackhide__ = True
    _need_trace(trace)
    every = spawns(trace)
    found = [s for s in every if s.type == subagent_type and (by is None or s.parent == by)]
    whose = f"{subagent_type!r}" + (f" by {by!r}" if by is not None else "")
    never = f"expected {whose} to be spawned, it never was."
    _check_times(len(found), times, never, f"{whose} to be spawned", describe_spawns(every))
    if parallel is not None:
        wrong = [s for s in found if s.parallel != parallel]
        if wrong:
            how = "in parallel with another sub-agent" if parallel else "alone (not in parallel)"
            _fail(
                f"expected every spawn of {whose} to run {how}; {len(wrong)} of "
                f"{len(found)} did not.",
                describe_spawns(every),
            )
    return found


def assert_max_depth(trace: Trace, depth: int) -> None:
    """Check that no sub-agent ran deeper than ``depth`` (``1``: only the main agent
    delegates; ``0``: nothing was delegated)."""
    __tracebackhide__ = True
    _need_trace(trace)
    every = spawns(trace)
    deeper = [s for s in every if s.depth > depth]
    if deeper:
        deepest = max(s.depth for s in deeper)
        _fail(
            f"expected sub-agents at most {depth} deep, {len(deeper)} ran deeper "
            f"(down to depth {deepest}).",
            describe_spawns(every),
        )


def assert_no_failures(trace: Trace) -> None:
    """Check that nothing failed: no step ended in an error, no limit was reached (a spec's or
    the run's ``limits``, the sub-agent depth limit, the recursion limit), and the run ended (it
    is neither running nor paused)."""
    __tracebackhide__ = True
    _need_trace(trace)
    found = problems(trace)
    if not trace.roots:
        _fail("expected a run that ended without failures, but the trace recorded no run.")
    if found:
        limits = sum(1 for p in found if p.limit)
        what = f"{len(found)} problem" + ("" if len(found) == 1 else "s")
        what += f", {limits} of them a limit" if limits else ""
        _fail(
            f"expected no failures, found {what}:",
            [f"  {p}" for p in found[:LISTED]] + _more(len(found)),
        )


def assert_tool_called(
    trace: Trace,
    tool: str,
    times: int | None = None,
    *,
    by: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> list[ToolCall]:
    """Check that ``tool`` was called, and return those calls.

    ``times`` is the exact number of calls (``0``: never; ``None``: at least once). ``by``
    counts only the calls of that agent (``"main"`` or a sub-agent type); ``args`` only the
    calls whose arguments include these (``args={"query": "DuckDB"}``).
    """
    __tracebackhide__ = True
    _need_trace(trace)
    every = tool_calls(trace)
    found = [
        c
        for c in every
        if c.tool == tool and (by is None or c.agent == by) and _has_args(c.args, args)
    ]
    which = f"{tool!r}" + (f" by {by!r}" if by is not None else "")
    which += f" with {dict(args)!r}" if args else ""
    never = f"expected a call of {which}, there was none."
    _check_times(len(found), times, never, f"{which} to be called", describe_calls(every))
    return found


def assert_within_budget(
    trace: Trace,
    *,
    tokens: int | None = None,
    cost: float | None = None,
    prices: Prices | None = None,
) -> None:
    """Check that the run used at most ``tokens`` tokens and cost at most ``cost`` (in the
    price table's currency, US dollars by default). ``prices`` is what
    :func:`nbagents.tracing.cost.trace_cost` takes; a model the table lacks fails a cost check,
    since its cost is unknown."""
    __tracebackhide__ = True
    _need_trace(trace)
    if tokens is None and cost is None:
        raise TypeError("assert_within_budget needs tokens=..., cost=... or both.")
    used = trace.total_usage()
    if tokens is not None and used.total > tokens:
        _fail(
            f"expected at most {tokens:,} tokens, the run used {used.total:,} "
            f"({used.input:,} in, {used.output:,} out).",
            [
                "Tokens per agent:",
                *(f"  {line}" for line in trace.token_usage().to_string(index=False).splitlines()),
            ],
        )
    if cost is not None:
        spent = total_cost(trace, prices)
        if not spent.known:
            _fail(
                f"expected a cost of at most {cost}, but the price of "
                f"{', '.join(sorted(spent.unknown))} is unknown: pass prices=... (a mapping "
                f"of model name to (input, output) prices per million tokens)."
            )
        value = float(spent.amount)
        if value > cost:
            _fail(f"expected a cost of at most {cost}, the run cost {value:.6g}.")


def describe_spawns(every: Sequence[SpawnFact]) -> list[str]:
    """The spawns as a failure message lists them, one line each, indented by depth."""
    if not every:
        return ["The run spawned no sub-agent."]
    lines = ["Spawns in this run (parent → type 'task': status, tokens):"]
    for s in every[:LISTED]:
        flags = ", parallel" if s.parallel else ""
        lines.append(
            f"  {'  ' * (s.depth - 1)}{s.parent} → {s.type} {quoted(s.description)}: "
            f"{s.status}{flags}, {s.tokens:,} tokens"
        )
    return lines + _more(len(every))


def describe_calls(every: Sequence[ToolCall]) -> list[str]:
    """The tool calls as a failure message lists them."""
    if not every:
        return ["The run made no tool call."]
    lines = ["Tool calls in this run (agent: tool(arguments) status):"]
    lines += [f"  {c.agent}: {c.tool}({quoted(c.args, 60)}) {c.status}" for c in every[:LISTED]]
    return lines + _more(len(every))


# -- helpers ---------------------------------------------------------------------------------


def _fail(first: str, more: Sequence[str] = ()) -> NoReturn:
    __tracebackhide__ = True
    raise TraceAssertionError("\n".join([first, *more]))


def _need_trace(trace: Any) -> None:
    if not isinstance(trace, Trace):
        raise TypeError(
            f"expected a nbagents.Trace (from `with nbagents.trace() as t:` or Trace.load), "
            f"got {type(trace).__name__}."
        )


def _has_args(actual: Any, wanted: Mapping[str, Any] | None) -> bool:
    if not wanted:
        return True
    return isinstance(actual, Mapping) and all(
        k in actual and actual[k] == v for k, v in wanted.items()
    )


def _check_times(n: int, times: int | None, never: str, what: str, listed: list[str]) -> None:
    """Fail with ``never`` when nothing was found and any number would do, or when ``n`` is not
    the ``times`` asked for (``what`` is "<name> to be <verb>")."""
    __tracebackhide__ = True
    if times is None and not n:
        _fail(never, listed)
    if times is not None and n != times:
        verb = what.rsplit(" ", 1)[1]
        actual = f"it was never {verb}" if n == 0 else f"it was {verb} {_times(n)}"
        _fail(f"expected {what} {_times(times)}, {actual}.", listed)


def _times(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _more(total: int) -> list[str]:
    return [f"  … and {total - LISTED} more"] if total > LISTED else []
