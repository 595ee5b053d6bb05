"""Cases run on a real ``langgraph dev`` server on loopback, traced into the experiment: the
graph's steps (and its own sub-agents) show in each run's trace, so scorers see them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from remote_graph.serve import LANGGRAPH, Server

import nbagents
from nbagents import scorers

pytestmark = pytest.mark.server

if not Path(LANGGRAPH).exists():
    pytest.skip("langgraph-cli[inmem] is not installed (the test extra)", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("langgraph-server"), graphs=("worker", "lead"))
    yield running
    running.stop()


def test_cases_run_on_the_server_and_their_steps_are_traced(server: Server, tmp_path: Path) -> None:
    cases = [{"id": f"job {n}", "inputs": f"job {n}", "expected": f"job {n}"} for n in range(6)]
    worker = {"url": server.url, "graph_id": "worker"}
    exp = nbagents.evaluate(
        worker,
        cases,
        repeats=2,
        max_concurrency=4,
        store=tmp_path / "runs.sqlite",
        scorers=[scorers.answer_contains(), scorers.tool_called("work", min=1, max=1)],
    )
    assert exp.status == "done"
    frame = exp.to_dataframe()
    assert len(frame) == 12 and set(frame["status"]) == {"ok"}
    assert frame["answer_contains"].tolist() == [1.0] * 12
    assert frame["called_work"].tolist() == [1.0] * 12
    trace = nbagents.load_experiment(exp.id, store=tmp_path / "runs.sqlite").trace("job 3", 1)
    assert [s.name for s in trace.walk() if s.kind == "tool"] == ["work"]
    assert trace.total_usage().total > 0


def test_a_server_graph_with_sub_agents_is_scored_per_sub_agent(server: Server) -> None:
    lead = {"url": server.url, "graph_id": "lead", "trace": "events"}
    exp = nbagents.evaluate(
        lead,
        [{"id": "j", "inputs": "build"}],
        store=False,
        scorers=[scorers.spawned("worker", min=2, max=2)],
    )
    assert exp.to_dataframe()["spawned_worker"].tolist() == [1.0]
    by_type = exp.summary(by="subagent").set_index("type")
    assert by_type.loc["worker", "spawns_per_run"] == 2


def test_a_server_that_is_not_running_fails_each_case_with_its_url(tmp_path: Path) -> None:
    gone = {"url": "http://127.0.0.1:9", "graph_id": "worker", "connect_retries": 0}
    exp = nbagents.evaluate(gone, [{"id": "x", "inputs": "job"}], store=False)
    assert exp.results[0].status == "error"
    assert "127.0.0.1:9" in (exp.results[0].error or "")
