"""Long texts of a view go once: the wire format refers to them, every reader gets them back."""

from __future__ import annotations

import json

from nbagents import ScriptedChatModel, SubAgent, Tracer, create_deep_agent
from nbagents.display._html import render_view
from nbagents.display._sharedtext import SHARED_CHARS
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


def test_a_system_prompt_of_every_sub_agent_goes_once_and_readers_get_it_back() -> None:
    builder = ViewBuilder(_run(workers=6))
    builder.update()
    text = builder.view_json()
    sent = json.loads(text)
    prompts = _system_prompts(builder.view())
    assert len(prompts) == 6 and len(set(prompts)) == 1 and PROMPT.strip() in prompts[0]
    # once in the table, referred to by each conversation and each model call's input
    assert text.count(json.dumps(prompts[0])) == 1
    assert prompts[0] in sent["texts"].values()
    assert text.count('"content_ref"') >= 12
    # the static snapshot draws the conversation it refers to
    assert "thoroughly thoroughly" in render_view(builder.snapshot_view())


def test_a_patch_carries_only_the_texts_first_seen_since_the_last_update() -> None:
    whole = _run(workers=2)
    trace = Trace()
    builder = ViewBuilder(trace)
    first = next(s for s in whole.spans if s.kind == "subagent")
    for span in whole.spans:
        if span.start <= first.start:
            trace.add(span)
    builder.update()
    before = set(json.loads(builder.view_json())["texts"])
    for span in whole.spans:
        if span.start > first.start:
            trace.add(span)
    patch = json.loads(builder.patch_json(builder.update()))
    assert patch["texts"] and not set(patch["texts"]) & before
    assert all(len(t) >= SHARED_CHARS for t in patch["texts"].values())
    nothing = json.loads(builder.patch_json(builder.update()))
    assert "texts" not in nothing
