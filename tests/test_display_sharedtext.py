"""Long texts of a view reach every reader whole: the view sent, the parsed view, the snapshot."""

from __future__ import annotations

import json

from nbagents import ScriptedChatModel, SubAgent, Tracer, create_deep_agent
from nbagents.display._html import render_view
from nbagents.display._viewmodel import ViewBuilder
from nbagents.models import delegate, parallel, say
from nbagents.tracing import Trace

PROMPT = "You look things up, carefully and " + "thoroughly " * 30


def _run(workers: int) -> Trace:
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(*(delegate(f"job {i}", "worker") for i in range(workers))),
                say("ok"),
            ],
            "worker": [say("found it")],
        }
    )
    worker: SubAgent = {"name": "worker", "description": "Looks.", "system_prompt": PROMPT}
    tracer = Tracer(Trace())
    create_deep_agent(model, subagents=[worker]).invoke(
        {"messages": [("user", "go")]}, {"callbacks": [tracer]}
    )
    return tracer.trace


def _system_prompts(view: dict) -> list[str]:
    return [
        n["conversation"]["turns"][0]["content"] for n in view["nodes"] if n["kind"] == "subagent"
    ]


def test_a_system_prompt_of_every_sub_agent_reaches_every_reader() -> None:
    builder = ViewBuilder(_run(workers=6))
    builder.update()
    text = builder.view_json()
    sent = json.loads(text)
    prompts = _system_prompts(builder.view())
    assert len(prompts) == 6 and len(set(prompts)) == 1 and PROMPT.strip() in prompts[0]
    # in each conversation, as sent
    assert _system_prompts(sent) == prompts and text.count(json.dumps(prompts[0])) >= 6
    # the static snapshot draws the conversation
    assert "thoroughly thoroughly" in render_view(builder.snapshot_view())
