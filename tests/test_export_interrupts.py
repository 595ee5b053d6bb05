"""Export of a run paused for a human inside a parallel sub-agent and then resumed.

The resumption continues the paused spans (one root, one spawn of the paused sub-agent);
exported, it is one OpenTelemetry trace in which the spans that waited for the person carry
``nbagents.paused`` and ``nbagents.resumed`` events and no error, and every parent is still the
nearest exported ancestor. A run that is still paused exports its waiting spans with an
``nbagents.interrupted`` event. Also: cost works without the ``otel``
extra, and the export names say how to install it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from opentelemetry.trace import StatusCode
from support.export_scenario import assert_nearest_exported_parents

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.export import to_otel_spans
from nbagents.models import call, delegate, parallel, say

ROOT = Path(__file__).resolve().parent.parent


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    return f"deployed to {target}"


def paused_and_resumed(*, resume: bool = True) -> Any:
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
    if resume:
        agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    tracer.finish()
    return tracer.trace


def test_a_paused_and_resumed_run_is_one_trace_with_pause_events() -> None:
    trace = paused_and_resumed()
    (root,) = trace.roots
    assert root.status == "ok"
    assert sorted(r.type for r in trace.subagents) == ["general-purpose", "ops"]
    assert len(trace.subagents) == 2  # the paused sub-agent continued, it was not spawned again

    spans = to_otel_spans(trace)
    exported = {str(s.attributes["nbagents.span_id"]): s for s in spans}  # type: ignore[index]
    assert len({s.context.trace_id for s in spans}) == 1
    assert sum(1 for s in spans if s.parent is None) == 1

    waited = [s for s in trace.spans if s.attributes.get("paused")]
    assert {s.kind for s in waited} == {"agent", "subagent", "task"}
    for span in waited:
        otel = exported[span.id]
        assert otel.status.status_code is StatusCode.UNSET
        names = [e.name for e in otel.events]
        assert names == ["nbagents.paused", "nbagents.resumed"]
        paused_at, resumed_at = (e.timestamp for e in otel.events)
        assert otel.start_time <= paused_at <= resumed_at <= otel.end_time
    assert not any(s.status.status_code is StatusCode.ERROR for s in spans)
    assert_nearest_exported_parents(trace, spans)
    # The deploy tool ran once, after the approval, inside the continued sub-agent.
    (deploy_span,) = [s for s in spans if s.name == "execute_tool deploy"]
    (ops,) = [s for s in waited if s.kind == "subagent"]
    assert deploy_span.parent is not None
    assert deploy_span.parent.span_id == exported[ops.id].context.span_id


def test_a_run_still_paused_exports_its_waiting_spans_as_interrupted() -> None:
    trace = paused_and_resumed(resume=False)
    spans = to_otel_spans(trace)
    exported = {str(s.attributes["nbagents.span_id"]): s for s in spans}  # type: ignore[index]
    interrupted = [s for s in trace.spans if s.status == "interrupted" and not s.hidden]
    assert {s.kind for s in interrupted} >= {"agent", "subagent", "task"}
    for span in interrupted:
        otel = exported[span.id]
        assert otel.status.status_code is StatusCode.UNSET
        assert [e.name for e in otel.events] == ["nbagents.interrupted"]
        assert otel.attributes["nbagents.status"] == "interrupted"  # type: ignore[index]
    assert_nearest_exported_parents(trace, spans)


@pytest.mark.slow  # a fresh Python process
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
    assert "pip install 'jupyter-nbagents[otel]'" in lines[1]
