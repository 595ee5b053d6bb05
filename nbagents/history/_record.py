"""What a saved run says about itself besides its trace: when, where, which code, what it cost."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from nbagents.history._location import project_root
from nbagents.tracing.cost import total_cost
from nbagents.tracing.model import Trace


@dataclass(frozen=True)
class RunInfo:
    """The facts a run is listed and filtered by; the trace itself is stored beside them."""

    run_id: str
    started_at: float
    """Wall-clock start, seconds since the epoch."""
    name: str = ""
    tags: tuple[str, ...] = ()
    notebook: str | None = None
    git_commit: str | None = None
    status: str = "ok"
    duration: float = 0.0
    spans: int = 0
    spawns: int = 0
    failures: int = 0
    agent_types: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost: float | None = None
    """US dollars, when every model called has a known price."""


def describe(trace: Trace, head: RunInfo) -> RunInfo:
    """The listing facts of ``trace`` as it stands now; ``head`` gives those known at its start
    (run id, start, name, tags, notebook, commit)."""
    with trace.lock:
        spans = trace.spans
        spawns = trace.subagents
        usage = trace.total_usage()
        roots = trace.roots
        status = trace.status
        duration = trace.duration
        failures = trace.failures()
    try:
        cost = total_cost(trace).value()
    except Exception:  # a price table that cannot answer must not cost the run its record
        cost = None
    agent_types = [r.name for r in roots if r.kind in ("agent", "subagent")]
    agent_types += [s.type for s in spawns]
    models = [s.model for s in spans if s.kind == "model" and s.model]
    return replace(
        head,
        status=status,
        duration=duration,
        spans=len(spans),
        spawns=len(spawns),
        failures=failures,
        agent_types=tuple(dict.fromkeys(agent_types)),
        models=tuple(dict.fromkeys(models)),
        input_tokens=usage.input,
        output_tokens=usage.output,
        total_tokens=usage.total,
        cost=cost,
    )


def notebook_path(user_ns: dict[str, Any] | None = None) -> str | None:
    """The running notebook's path, where the front end tells the kernel (JupyterLab's
    ``JPY_SESSION_NAME``, VS Code's ``__vsc_ipynb_file__``)."""
    if user_ns and isinstance(user_ns.get("__vsc_ipynb_file__"), str):
        return str(user_ns["__vsc_ipynb_file__"])
    session = os.environ.get("JPY_SESSION_NAME")
    return session if session and session.endswith(".ipynb") else None


_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def git_commit(start: Path | None = None) -> str | None:
    """The commit checked out in the repository around ``start`` (the working directory),
    read from ``.git`` itself: no ``git`` process per run."""
    dot_git = project_root(start) / ".git"
    try:
        if not dot_git.exists():
            return None
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            dot_git = (dot_git.parent / pointer.removeprefix("gitdir:").strip()).resolve()
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA.fullmatch(head):
            return head
        if not head.startswith("ref:"):
            return None
        ref = head.removeprefix("ref:").strip()
        common = dot_git
        if (dot_git / "commondir").is_file():
            common = (dot_git / (dot_git / "commondir").read_text().strip()).resolve()
        for base in (dot_git, common):
            loose = base / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if _SHA.fullmatch(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                sha, _, name = line.partition(" ")
                if name == ref and _SHA.fullmatch(sha):
                    return sha
    except OSError:
        return None
    return None
