
import re
import time

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from nbagents import create_deep_agent
from nbagents.models import ScriptedChatModel, call, delegate, parallel, say


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    if "explode" in topic:
        raise ValueError(f"no sources for {topic!r}")
    found = re.search(r"sleep=([0-9.]+)", topic)
    time.sleep(float(found.group(1)) if found else 0)
    return f"3 sources on {topic.split(' sleep=')[0]}"


def reply(agent, messages):
    asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    since = messages[asked + 1:]
    if not any(isinstance(m, AIMessage) for m in since):
        return call("lookup", topic=messages[asked].text)
    found = [m.text for m in since if isinstance(m, ToolMessage)][-1]
    return say(f"Found {found}.")


graph = create_agent(ScriptedChatModel(responder=reply), tools=[lookup], name="researcher")


@tool
def deploy(target: str) -> str:
    """Deploy the release to a target."""
    return f"deployed to {target}"


def ship(agent, messages):
    asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    since = messages[asked + 1:]
    if not any(isinstance(m, AIMessage) for m in since):
        return call("deploy", target=messages[asked].text)
    return say([m.text for m in since if isinstance(m, ToolMessage)][-1])


# Every deploy waits for a person's decision.
deployer = create_agent(
    ScriptedChatModel(responder=ship), tools=[deploy], name="deployer",
    middleware=[HumanInTheLoopMiddleware({"deploy": True})],
)


def lead(agent, messages):
    asked = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    since = messages[asked + 1:]
    if not any(isinstance(m, AIMessage) for m in since):
        return parallel(delegate("staging", "deployer"), delegate("production", "deployer"))
    return say(" / ".join(m.text for m in since if isinstance(m, ToolMessage)))


# A deep agent on the server: two deployers at once, each waiting for a person.
release_lead = create_deep_agent(
    ScriptedChatModel(responder=lead),
    subagents=[{"name": "deployer", "description": "Deploys.", "runnable": deployer}],
    name="release_lead",
)
