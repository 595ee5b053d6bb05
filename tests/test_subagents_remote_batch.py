"""How a remote run's several approvals become one request to the parent, and its answer is
split back (the end-to-end cases, on a real server, are in test_subagents_remote_approvals.py)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Interrupt

from nbagents.subagents._remote_pause import _Batch


def batched(key: str, *targets: str, allowed: list[str] | None = None) -> Interrupt:
    config = {"action_name": "deploy", "allowed_decisions": allowed or ["approve", "reject"]}
    actions = [{"name": "deploy", "args": {"target": t}, "description": ""} for t in targets]
    return Interrupt({"action_requests": actions, "review_configs": [config]}, key)


def per_call(key: str, target: str) -> Interrupt:
    value = {"type": "tool_approval", "name": "deploy", "args": {"target": target}}
    return Interrupt(value, key)


def approve(n: int) -> dict[str, Any]:
    return {"decisions": [{"type": "approve"}] * n}


def test_the_answer_is_split_in_the_batchs_order() -> None:
    batch = _Batch.of([batched("i1", "a", "b"), batched("i2", "c")])
    assert batch is not None
    value = batch.value()
    assert [a["args"]["target"] for a in value["action_requests"]] == ["a", "b", "c"]
    assert len(value["review_configs"]) == 1
    decisions = [{"type": "approve"}, {"type": "reject", "message": "no"}, {"type": "approve"}]
    assert batch.split({"decisions": decisions}) == {
        "i1": {"decisions": decisions[:2]},
        "i2": {"decisions": decisions[2:]},
    }


def test_a_per_call_approval_gets_its_one_decision() -> None:
    batch = _Batch.of([per_call("p1", "a"), per_call("p2", "b")])
    assert batch is not None
    assert batch.split(approve(2)) == {"p1": {"type": "approve"}, "p2": {"type": "approve"}}


def test_what_is_not_batched() -> None:
    assert _Batch.of([batched("i1", "a")]) is None  # one approval: asked as it is
    plain = Interrupt("Which colour?", "q")
    assert _Batch.of([batched("i1", "a"), plain]) is None
    # Different review settings for one tool: a batch could offer one graph a decision it
    # refuses, so each is asked for in turn.
    differing = [batched("i1", "a"), batched("i2", "b", allowed=["approve"])]
    assert _Batch.of(differing) is None


def test_an_answer_of_the_wrong_shape_says_what_is_needed() -> None:
    batch = _Batch.of([batched("i1", "a"), batched("i2", "b")])
    assert batch is not None
    with pytest.raises(ValueError, match="one decision for each of its 2 requests"):
        batch.split(approve(1))
    with pytest.raises(ValueError, match="pending_approvals"):
        batch.split({"type": "approve"})
