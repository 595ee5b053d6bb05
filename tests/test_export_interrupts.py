"""Export of a run paused for a human inside a parallel sub-agent and then resumed.

The pause and the resumption are two root runs in one ``Trace``; exported, they are one
OpenTelemetry trace, the paused steps carry an ``nbagents.interrupted`` event and no error, and
every parent is still the nearest exported ancestor. Also: cost works without the ``otel``
extra, and the export names say how to install it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from opentelemetry.trace import StatusCode

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.export import to_otel_spans
from nbagents.models import call, delegate, parallel, say

ROOT = Path(__file__).resolve().parent.parent


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    return f"deployed to {target}"


def paused_and_resumed() -> Any:
    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("Ship it.", "ops"), delegate("Notes.")), say("done")],
            "ops": [call("deploy", target="prod"), say("Shipped.")],
            "general-purpose": ["Release notes written."],
        }
    )
    ops = {
        "name": "ops",
        "description": "Deploys.",
        "system_prompt": "Deploy.",
        "interrupt_on": {"deploy": True},
    }
    agent = create_deep_agent(model, [deploy], subagents=[ops], checkpointer=InMemorySaver())
    tracer = Tracer()
    config: Any = {"configurable": {"thread_id": "t"}, "callbacks": [tracer]}
    paused = agent.invoke({"messages": [("user", "release")]}, config)
    assert paused["__interrupt__"]
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    tracer.finish()
    return tracer.trace


def test_a_paused_and_resumed_run_is_one_trace_with_interrupt_events() -> None:
    trace = paused_and_resumed()
    roots = trace.roots
    assert [r.status for r in roots] == ["interrupted", "ok"]

    spans = to_otel_spans(trace)
    exported = {str(s.attributes["nbagents.span_id"]): s for s in spans}  # type: ignore[index]
    assert len({s.context.trace_id for s in spans}) == 1
    assert sum(1 for s in spans if s.parent is None) == 2  # the pause and the resumption

    interrupted = [s for s in trace.spans if s.status == "interrupted" and not s.hidden]
    assert {s.kind for s in interrupted} >= {"agent", "subagent", "task"}
    for span in interrupted:
        otel = exported[span.id]
        assert otel.status.status_code is StatusCode.UNSET
        assert [e.name for e in otel.events] == ["nbagents.interrupted"]
        assert otel.attributes["nbagents.status"] == "interrupted"  # type: ignore[index]
    assert not any(s.status.status_code is StatusCode.ERROR for s in spans)

    for span in trace.spans:
        if span.hidden:
            continue
        up = trace.parent(span)
        while up is not None and up.hidden:
            up = trace.parent(up)
        parent = exported[span.id].parent
        assert (parent.span_id if parent else None) == (
            exported[up.id].context.span_id if up else None
        )
    # The deploy tool ran once, after the approval, under the resumed run.
    (deploy_span,) = [s for s in spans if s.name == "execute_tool deploy"]
    node = deploy_span
    while node.parent is not None:
        node = next(s for s in spans if s.context.span_id == node.parent.span_id)
    assert node.attributes["nbagents.span_id"] == roots[1].id  # type: ignore[index]


def test_cost_works_without_the_otel_extra_and_export_says_how_to_get_it() -> None:
    # A fresh interpreter in which the OpenTelemetry SDK cannot be imported.
    code = """
import sys
sys.modules["opentelemetry.sdk"] = None
from nbagents.export import PriceTable, trace_cost
print("cost ok")
try:
    from nbagents.export import export_trace
except ImportError as error:
    print(error)
"""
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "cost ok"
    assert "nbagents.export.export_trace needs the OpenTelemetry SDK" in lines[1]
    assert "pip install 'nbagents[otel]'" in lines[1]
