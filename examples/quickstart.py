"""The README's quickstart: a main agent delegates to three sub-agents at once, traced.

Runs on the scripted model (no key, no network): python examples/quickstart.py. In Jupyter the
same code shows the live call tree under the cell.
"""

from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


# What each agent says, turn by turn: no key, same answer every run.
model = ScriptedChatModel(
    script={
        "main": [
            parallel(  # one AI message, three task calls: three sub-agents at once
                delegate("Research A", "researcher"),
                delegate("Research B", "researcher"),
                delegate("Write C", "writer"),
            ),
            say("Done: A and B are fine, C is written."),
        ],
        "researcher": {  # same sub-agent type, its own script per task
            "Research A": [call("search", query="A"), say("A is fine")],
            "Research B": ["B is fine"],
        },
        "writer": ["C written"],
    },
    latency=0.2,
)

agent = create_deep_agent(
    model,
    [search],
    subagents=[
        {"name": "researcher", "description": "Researches one topic", "system_prompt": "Research."},
        {"name": "writer", "description": "Writes text", "system_prompt": "Write.", "tools": []},
    ],
)

with nbagents.trace() as t:  # in Jupyter the live call tree appears here at once
    result = agent.invoke({"messages": [("user", "Research A and B, write C")]})

print(result["messages"][-1].content)  # Done: A and B are fine, C is written.
print(t)  # the run in one line
print(t.token_usage().to_string(index=False))  # tokens per agent (t.token_usage() is a DataFrame)
# Also: t.to_graphviz() (the call graph; in a script .render("run", format="svg")),
# t.save("run.json") / nbagents.Trace.load("run.json").
