"""A run checked against a saved one: the same agents, tasks, statuses and results, tokens
within a tolerance; times, ids and costs left out.

Built on :mod:`nbagents.comparison`, which aligns two runs' agent trees (a sub-agent matched by
its path of types and its task, else by order), so a failure shows the two trees side by side
with what changed on each row.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from nbagents.comparison import Pair, align, word_diff
from nbagents.testing._assertions import TraceAssertionError
from nbagents.testing._facts import quoted
from nbagents.tracing.model import AgentRecord, Trace

__all__ = ["UPDATE_ENV", "Difference", "StructuralDiff", "assert_matches", "structural_diff"]

UPDATE_ENV = "NBAGENTS_UPDATE_BASELINES"
"""Set to ``1`` to (re)write every baseline ``assert_matches`` is given instead of checking."""

SAME_CONTEXT = 30
"""Characters kept at each end of an unchanged stretch in a word diff."""
MAX_DIFF_CHARS = 600
"""Characters of one word diff in a failure message."""
MARKS = {"same": "=", "changed": "~", "removed": "-", "added": "+"}


@dataclass(frozen=True)
class Difference:
    """One way the run differs from the baseline, at one agent."""

    path: str
    """The agent, as ``main > researcher 'task…'``."""
    what: str
    """``added``, ``removed``, ``status``, ``task``, ``result`` or ``tokens``."""
    detail: str


class StructuralDiff:
    """The run (B) aligned with the baseline (A): ``differences`` lists what does not match,
    and ``report()`` draws both trees side by side with it."""

    def __init__(
        self,
        trace: Trace,
        baseline: Trace,
        *,
        tokens: float | None = 0.1,
        results: bool = True,
        label: str = "the baseline",
    ) -> None:
        if tokens is not None and tokens < 0:
            raise ValueError(f"tokens is a relative tolerance (0.1 = 10%), not {tokens}.")
        self.tolerance = tokens
        self.results = results
        self.label = label
        self.pairs: list[Pair] = align(baseline.agents(), trace.agents())
        self._rows: list[tuple[Pair, str, list[Difference]]] = []
        names: list[str] = []  # the agents from the root down to the row's
        for pair in (p for top in self.pairs for p in top.walk()):
            names[pair.depth :] = [_name(pair.either, root=not pair.depth)]
            path = " > ".join(names)
            self._rows.append((pair, path, self._compare(pair, path)))
        self.differences = [d for _, _, found in self._rows for d in found]

    def __bool__(self) -> bool:
        """True when the run differs."""
        return bool(self.differences)

    def _compare(self, pair: Pair, path: str) -> list[Difference]:
        a, b = pair.a, pair.b
        if a is None:
            return [Difference(path, "added", "only in this run")]
        if b is None:
            return [Difference(path, "removed", f"only in {self.label}")]
        found: list[Difference] = []
        if a.status != b.status:
            error = f" ({' '.join(b.error.split())})" if b.error else ""
            found.append(Difference(path, "status", f"{a.status} → {b.status}{error}"))
        if a.description != b.description:
            found.append(Difference(path, "task", _diff_text(a.description, b.description)))
        if self.results and (a.result or "") != (b.result or ""):
            found.append(Difference(path, "result", _diff_text(a.result or "", b.result or "")))
        before, after = a.tokens_total.total, b.tokens_total.total
        if self.tolerance is not None and _beyond(before, after, self.tolerance):
            change = (after - before) / before if before else float("inf")
            said = f"{before:,} → {after:,} ({change:+.0%}; tolerance {self.tolerance:.0%})"
            found.append(Difference(path, "tokens", said))
        return found

    def report(self) -> str:
        """Both trees, aligned: one row per agent marked ``=`` same, ``~`` changed, ``-`` only
        in the baseline, ``+`` only in this run, with what changed under each row."""
        if not self.differences:
            return f"The run matches {self.label}."
        changed = sum(1 for _, _, found in self._rows if found)
        lines = [
            f"The run differs from {self.label} at {changed} of {len(self._rows)} agents "
            f"(= same, ~ changed, - only in {self.label}, + only in this run):"
        ]
        for pair, _, found in self._rows:
            mark = "=" if not found else MARKS.get(found[0].what, "~")
            run = pair.b or pair.a
            assert run is not None
            indent = "  " * pair.depth
            lines.append(f"  {mark} {indent}{_name(run, root=pair.depth == 0)}: {_figures(run)}")
            for difference in found:
                if difference.what in ("added", "removed"):
                    continue
                lines.append(f"      {indent}{difference.what}: {difference.detail}")
        return "\n".join(lines)


def structural_diff(
    trace: Trace,
    baseline: Trace | str | os.PathLike[str],
    *,
    tokens: float | None = 0.1,
    results: bool = True,
) -> StructuralDiff:
    """The run aligned with ``baseline`` (a trace, or the file ``Trace.save`` wrote)."""
    if isinstance(baseline, Trace):
        return StructuralDiff(trace, baseline, tokens=tokens, results=results)
    return StructuralDiff(
        trace, Trace.load(baseline), tokens=tokens, results=results, label=_shown(baseline)
    )


def assert_matches(
    trace: Trace,
    baseline: Trace | str | os.PathLike[str],
    *,
    tokens: float | None = 0.1,
    results: bool = True,
    update: bool | None = None,
) -> None:
    """Check that the run has the structure of ``baseline``: the same sub-agents (aligned by
    their types and tasks), with the same tasks, statuses and results, and tokens within
    ``tokens`` (a fraction of the baseline's; ``None`` ignores tokens). Times, ids and costs
    are not compared; ``results=False`` leaves results out too (a live model's wording).

    ``baseline`` is a ``Trace`` or the path of a saved one. With ``update=True``, or
    ``NBAGENTS_UPDATE_BASELINES=1`` in the environment, the run is saved there instead and the
    check passes: review and commit the file. A missing file fails and says how to write it.
    """
    __tracebackhide__ = True
    if not isinstance(trace, Trace):
        raise TypeError(f"expected a nbagents.Trace to check, got {type(trace).__name__}.")
    if update is None:
        update = os.environ.get(UPDATE_ENV, "").strip().lower() in ("1", "true", "yes")
    if not isinstance(baseline, Trace):
        path = Path(baseline)
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            trace.save(path)
            return
        if not path.exists():
            raise TraceAssertionError(
                f"No baseline at {path}. Write it from this run with {UPDATE_ENV}=1 in the "
                f"environment (or update=True), review it and commit it."
            )
    elif update:
        raise ValueError("update=True needs a path to write the baseline to, not a Trace.")
    found = structural_diff(trace, baseline, tokens=tokens, results=results)
    if found:
        hint = f"\nIf the change is intended, rewrite the baseline with {UPDATE_ENV}=1."
        raise TraceAssertionError(found.report() + ("" if isinstance(baseline, Trace) else hint))


# -- helpers ---------------------------------------------------------------------------------


def _shown(path: str | os.PathLike[str]) -> str:
    """The path as a failure message shows it: from the working directory when under it (the
    project's root under pytest), since absolute CI paths drown the tree."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _name(run: AgentRecord, root: bool) -> str:
    if root or not run.description:
        return run.type
    return f"{run.type} {quoted(run.description)}"


def _figures(run: AgentRecord) -> str:
    return f"{run.status}, {run.tokens_total.total:,} tokens"


def _beyond(expected: int, actual: int, tolerance: float) -> bool:
    return abs(actual - expected) > tolerance * expected


def _diff_text(old: str, new: str) -> str:
    """``old`` → ``new`` in git's word-diff notation: ``[-removed-]{+inserted+}``."""
    out: list[str] = []
    for kind, text in word_diff(old, new):
        text = re.sub(r"\s+", " ", text)  # one line, the spaces between words kept
        if kind == "del":
            out.append(f"[-{text}-]")
        elif kind == "ins":
            out.append(f"{{+{text}+}}")
        elif len(text) > 2 * SAME_CONTEXT + 5:
            out.append(f"{text[:SAME_CONTEXT]} … {text[-SAME_CONTEXT:]}")
        else:
            out.append(text)
    joined = "".join(out)
    return joined if len(joined) <= MAX_DIFF_CHARS else joined[:MAX_DIFF_CHARS] + " …"
