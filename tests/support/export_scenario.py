"""A real nbagents run for the export tests: parallel sub-agents, one nested two deep, tools.

Also an independent token count: LangChain's own ``usage_metadata`` per agent, read from the
callbacks, not from the ``Trace``.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langchain_core.outputs import LLMResult
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Trace, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"facts about {query}"


SCRIPT = {
    "main": [
        parallel(
            delegate("Research alpha", "researcher"),
            delegate("Research beta", "researcher"),
            delegate("Write the summary", "writer"),
        ),
        say("All done."),
    ],
    "researcher": {
        "Research alpha": [call("lookup", query="alpha"), say("alpha is fine")],
        "Research beta": [delegate("Draft beta notes", "general-purpose"), say("beta is fine")],
    },
    "writer": {"Write the summary": [say("summary written")]},
    "general-purpose": {"Draft beta notes": [call("lookup", query="beta"), say("beta draft")]},
}


def tree(label: str, *children: Any) -> tuple[Any, ...]:
    """A node of an expected call tree; children are compared as a sorted list, because
    parallel siblings start in any order."""
    return (label, sorted(children, key=repr))


CHAT = tree("chat scripted-model")

# The OpenTelemetry tree of one run of SCRIPT: tasks and sub-agents labelled with their job.
EXPECTED_TREE = tree(
    "invoke_agent main",
    CHAT,
    tree(
        "execute_tool task [Research alpha]",
        tree(
            "invoke_agent researcher [Research alpha]",
            CHAT,
            tree("execute_tool lookup"),
            CHAT,
        ),
    ),
    tree(
        "execute_tool task [Research beta]",
        tree(
            "invoke_agent researcher [Research beta]",
            CHAT,
            tree(
                "execute_tool task [Draft beta notes]",
                tree(
                    "invoke_agent general-purpose [Draft beta notes]",
                    CHAT,
                    tree("execute_tool lookup"),
                    CHAT,
                ),
            ),
            CHAT,
        ),
    ),
    tree(
        "execute_tool task [Write the summary]",
        tree("invoke_agent writer [Write the summary]", CHAT),
    ),
    CHAT,
)


class ReportedUsage(BaseCallbackHandler):
    """Input/output tokens as the chat model reported them, summed per calling agent."""

    def __init__(self) -> None:
        self.agent_of: dict[Any, str] = {}
        self.input: Counter[str] = Counter()
        self.output: Counter[str] = Counter()
        self._lock = threading.Lock()

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, metadata: Any = None, **kw: Any
    ) -> None:
        with self._lock:
            self.agent_of[run_id] = str((metadata or {}).get("lc_agent_name"))

    def on_llm_end(self, response: LLMResult, *, run_id: Any, **kw: Any) -> None:
        usage = response.generations[0][0].message.usage_metadata  # type: ignore[attr-defined]
        with self._lock:
            agent = self.agent_of.pop(run_id)
            self.input[agent] += usage["input_tokens"]
            self.output[agent] += usage["output_tokens"]


def run(
    *, latency: float = 0.05, extra_callbacks: list[Any] | None = None
) -> tuple[Trace, ReportedUsage]:
    """Run SCRIPT with a tracer; latency makes the parallel sub-agents overlap in time."""
    tracer, usage = Tracer(), ReportedUsage()
    agent(latency).invoke(
        {"messages": [HumanMessage("go")]},
        config={"callbacks": [tracer, usage, *(extra_callbacks or [])]},
    )
    tracer.finish()
    return tracer.trace, usage


async def arun(*, latency: float = 0.05) -> tuple[Trace, ReportedUsage]:
    """``run`` under ``ainvoke``: the sub-agents run as concurrent tasks on one event loop."""
    tracer, usage = Tracer(), ReportedUsage()
    await agent(latency).ainvoke(
        {"messages": [HumanMessage("go")]}, config={"callbacks": [tracer, usage]}
    )
    tracer.finish()
    return tracer.trace, usage


def agent(latency: float = 0.05) -> Any:
    return create_deep_agent(
        ScriptedChatModel(script=SCRIPT, latency=latency),
        [lookup],
        subagents=[
            {
                "name": "researcher",
                "description": "Researches.",
                "system_prompt": "Research.",
                "tools": [lookup],
            },
            {"name": "writer", "description": "Writes.", "system_prompt": "Write.", "tools": []},
        ],
    )


def label(name: str, attributes: dict[str, Any]) -> str:
    description = attributes.get("nbagents.subagent.description")
    return f"{name} [{description}]" if description else name


def build_tree(spans: list[dict[str, Any]]) -> tuple[Any, ...]:
    """The labelled tree of exported spans given as ``{"span_id", "parent_id", "name",
    "attributes"}`` records, from the one root; fails on several roots or dangling parents."""
    ids = {s["span_id"] for s in spans}
    assert len(ids) == len(spans), "span ids are not unique"
    dangling = [s["name"] for s in spans if s["parent_id"] and s["parent_id"] not in ids]
    assert not dangling, f"spans whose parent was not exported: {dangling}"
    roots = [s for s in spans if not s["parent_id"]]
    assert len(roots) == 1, f"expected one root, got {[r['name'] for r in roots]}"

    def node(span: dict[str, Any]) -> tuple[Any, ...]:
        kids = [node(c) for c in spans if c["parent_id"] == span["span_id"]]
        return tree(label(span["name"], span["attributes"]), *kids)

    return node(roots[0])


def tokens_per_agent(spans: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """Input and output tokens of the chat spans, per the agent span they sit under."""
    by_id = {s["span_id"]: s for s in spans}
    inputs: Counter[str] = Counter()
    outputs: Counter[str] = Counter()
    for span in spans:
        if span["attributes"].get("gen_ai.operation.name") != "chat":
            continue
        owner = by_id[span["parent_id"]]
        while owner["attributes"].get("gen_ai.operation.name") != "invoke_agent":
            owner = by_id[owner["parent_id"]]
        agent = owner["attributes"]["gen_ai.agent.name"]
        inputs[agent] += span["attributes"]["gen_ai.usage.input_tokens"]
        outputs[agent] += span["attributes"]["gen_ai.usage.output_tokens"]
    return inputs, outputs


def assert_nearest_exported_parents(trace: Trace, spans: Any) -> None:
    """Every exported span's parent is the exported span of its nearest visible ancestor (hidden
    plumbing is not exported, so its children hang from the next span up)."""
    exported = {str(s.attributes["nbagents.span_id"]): s for s in spans}
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
