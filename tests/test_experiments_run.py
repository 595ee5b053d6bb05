"""nbagents.evaluate: every case form, repeats, failing cases, Ctrl-C and resume, the history,
and running inside an event loop."""

from __future__ import annotations

import _thread
import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from langchain_core.runnables import RunnableLambda

import nbagents
from nbagents.evaluation import Experiment, scorers
from tests.experiments_support import CASES, agent


def correct(answer: str | None, expected: str) -> bool:
    return expected.lower() in (answer or "").lower()


def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite"


# -- cases -----------------------------------------------------------------------------------------


def echo(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"answer": str(inputs["question"]).upper()}


def upper_matches(outputs: dict[str, Any], expected: str) -> bool:
    return bool(outputs["answer"] == expected)


EXPECTED_ROWS = [("q1", "A", 1.0), ("q2", "B", 0.0)]


def check_echo(exp: Experiment) -> None:
    frame = exp.to_dataframe()
    assert list(frame["case_id"]) == ["q1", "q2"]
    assert list(frame["upper_matches"]) == [1.0, 0.0]
    assert list(frame["status"]) == ["ok", "ok"]


def test_cases_as_a_list_of_dicts(tmp_path: Path) -> None:
    cases = [
        {"id": "q1", "inputs": {"question": "a"}, "expected": "A"},
        {"id": "q2", "inputs": {"question": "b"}, "expected": "nope"},
    ]
    check_echo(nbagents.evaluate(echo, cases, scorers=[upper_matches], store=store(tmp_path)))


def test_cases_as_a_dataframe_with_dotted_input_columns(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"id": ["q1", "q2"], "inputs.question": ["a", "b"], "expected": ["A", "nope"]}
    )
    check_echo(nbagents.evaluate(echo, frame, scorers=[upper_matches], store=store(tmp_path)))


def test_cases_from_jsonl_and_csv_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_text(
        '{"id": "q1", "inputs": {"question": "a"}, "expected": "A"}\n\n'
        '{"id": "q2", "inputs": {"question": "b"}, "expected": "nope"}\n'
    )
    check_echo(nbagents.evaluate(echo, jsonl, scorers=[upper_matches], store=store(tmp_path)))
    table = tmp_path / "cases.csv"
    table.write_text(
        'id,inputs,expected\nq1,"{""question"": ""a""}",A\nq2,"{""question"": ""b""}",no\n'
    )
    check_echo(nbagents.evaluate(echo, str(table), scorers=[upper_matches], store=False))


def test_case_ids_come_from_the_inputs_when_not_given() -> None:
    from nbagents.evaluation._cases import read_cases

    first = read_cases([{"inputs": {"q": 1}}, {"inputs": {"q": 2}}])
    again = read_cases([{"inputs": {"q": 2}}, {"inputs": {"q": 1}}])
    assert {c.id for c in first} == {c.id for c in again}
    assert first[0].id == again[1].id


@pytest.mark.parametrize(
    ("cases", "error", "words"),
    [
        ([{"inputs": 1}, {"inputs": 1}], ValueError, "same id"),
        ([{"question": "x"}], ValueError, "no 'inputs'"),
        ([], ValueError, "empty"),
        ({"inputs": 1}, TypeError, "not one mapping"),
        (42, TypeError, "list of dicts"),
        ("missing.jsonl", FileNotFoundError, "No cases file"),
    ],
)
def test_bad_cases_say_what_is_wrong(cases: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        nbagents.evaluate(echo, cases, store=False)


@pytest.mark.parametrize(
    ("options", "words"),
    [({"repeats": 0}, "repeats"), ({"max_concurrency": 0}, "max_concurrency")],
)
def test_bad_options_are_refused_before_anything_runs(options: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        nbagents.evaluate(echo, [{"inputs": {"question": "a"}}], store=False, **options)


# -- a deep agent over cases, kept in the history --------------------------------------------------


def test_a_deep_agent_over_cases_every_run_kept_in_the_history(tmp_path: Path) -> None:
    exp = nbagents.evaluate(
        agent(),
        CASES,
        scorers=[correct, scorers.no_failures()],
        name="before",
        tags=["v1"],
        store=store(tmp_path),
    )
    assert exp.status == "done"
    frame = exp.to_dataframe()
    assert list(frame["case_id"]) == ["add", "capital", "hard"]
    assert list(frame["correct"]) == [1.0, 1.0, 0.0]
    assert list(frame["no_failures"]) == [1.0, 1.0, 0.0]
    assert (frame["tokens"] > 0).all()
    runs = nbagents.runs(tag=f"experiment:{exp.id}", store=store(tmp_path))
    assert sorted(runs["run_id"]) == sorted(frame["run_id"])
    assert set(runs["name"]) == {"before"}
    hard = exp.trace("hard")
    assert [s.type for s in hard.subagents] == ["researcher", "writer"]
    # What the agent returned stays in the history, read back on demand, not held in memory.
    assert exp.results[0].outputs is None
    assert exp.outputs("add")["messages"][-1].text == "The answer is 4"


def test_a_failing_case_is_recorded_and_the_others_go_on(tmp_path: Path) -> None:
    def flaky(inputs: dict[str, Any]) -> str:
        if inputs["n"] == 2:
            raise ValueError("case two breaks")
        return "fine"

    cases = [{"id": str(n), "inputs": {"n": n}} for n in range(4)]
    exp = nbagents.evaluate(
        flaky, cases, scorers=[lambda answer: answer == "fine"], store=store(tmp_path)
    )
    frame = exp.to_dataframe().set_index("case_id")
    assert frame.loc["2", "status"] == "error"
    assert frame.loc["2", "error"] == "ValueError: case two breaks"
    assert list(frame["status"]).count("ok") == 3
    # A run that failed counts as a fail in the pass rate.
    assert exp.summary().loc[0, "value"] == pytest.approx(0.75)


def test_repeats_give_pass_at_k(tmp_path: Path) -> None:
    calls: dict[str, int] = {}
    lock = threading.Lock()

    def sometimes(inputs: dict[str, Any]) -> str:
        with lock:
            n = calls[inputs["case"]] = calls.get(inputs["case"], 0) + 1
        # case "a" is right once in three tries, "b" always, "c" never
        return {"a": "yes" if n == 1 else "no", "b": "yes", "c": "no"}[inputs["case"]]

    cases = [{"id": c, "inputs": {"case": c}} for c in "abc"]
    exp = nbagents.evaluate(
        sometimes,
        cases,
        scorers={"ok": lambda answer: answer == "yes"},
        repeats=3,
        max_concurrency=1,
        store=store(tmp_path),
    )
    assert len(exp.to_dataframe()) == 9
    row = exp.summary().iloc[0]
    assert row["kind"] == "pass rate"
    assert row["value"] == pytest.approx(4 / 9)
    assert row["k"] == 3
    assert row["pass_at_k"] == pytest.approx(2 / 3)  # a and b pass at least once in 3
    assert row["ci_low"] < 4 / 9 < row["ci_high"]


def test_concurrency_is_capped(tmp_path: Path) -> None:
    running, most = 0, 0
    lock = threading.Lock()

    async def slow(inputs: dict[str, Any]) -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        await asyncio.sleep(0.02)
        with lock:
            running -= 1
        return "done"

    cases = [{"inputs": {"n": n}} for n in range(12)]
    exp = nbagents.evaluate(slow, cases, max_concurrency=3, store=False)
    assert len(exp.results) == 12
    assert most == 3


# -- Ctrl-C and resume -----------------------------------------------------------------------------


def counting_agent(delay: float) -> tuple[Any, list[int]]:
    seen: list[int] = []

    async def work(inputs: dict[str, Any]) -> str:
        seen.append(inputs["n"])
        await asyncio.sleep(delay)
        return f"answer {inputs['n']}"

    return RunnableLambda(work), seen


def test_ctrl_c_keeps_finished_cases_and_resume_runs_only_the_missing(
    tmp_path: Path, python_sigint: None
) -> None:
    runnable, seen = counting_agent(0.15)
    cases = [{"id": str(n), "inputs": {"n": n}} for n in range(10)]

    def interrupt_later() -> None:
        time.sleep(0.5)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_later, daemon=True).start()
    started = time.monotonic()
    exp = nbagents.evaluate(runnable, cases, max_concurrency=1, store=store(tmp_path))
    assert time.monotonic() - started < 2.0  # it stopped, did not run all ten (1.5 s)
    assert exp.status == "interrupted"
    done = {r.case_id for r in exp.results}
    assert 1 <= len(done) < 10
    assert all(r.status == "ok" for r in exp.results)
    saved = nbagents.load_experiment(exp.id, store=store(tmp_path))
    assert saved.status == "interrupted"
    assert {r.case_id for r in saved.results} == done

    seen.clear()
    again = nbagents.evaluate(runnable, cases, resume=saved, store=store(tmp_path))
    assert again.status == "done"
    assert sorted(map(str, seen)) == sorted(set(map(str, range(10))) - done)
    assert len(nbagents.load_experiment(exp.id, store=store(tmp_path)).results) == 10


async def test_cancelling_aevaluate_keeps_finished_cases(tmp_path: Path) -> None:
    runnable, _ = counting_agent(0.1)
    cases = [{"id": str(n), "inputs": {"n": n}} for n in range(10)]
    task = asyncio.ensure_future(
        nbagents.aevaluate(runnable, cases, max_concurrency=2, store=store(tmp_path))
    )
    await asyncio.sleep(0.35)
    task.cancel()
    exp = await task
    assert exp.status == "interrupted"
    assert 2 <= len(exp.results) < 10
    resumed = await nbagents.aevaluate(runnable, cases, resume=exp.id, store=store(tmp_path))
    assert len(resumed.results) == 10 and resumed.status == "done"


def test_resume_with_other_scorers_is_refused(tmp_path: Path) -> None:
    exp = nbagents.evaluate(
        echo, [{"inputs": {"question": "a"}}], scorers=[upper_matches], store=store(tmp_path)
    )
    with pytest.raises(ValueError, match="rescore"):
        nbagents.evaluate(echo, [{"inputs": {"question": "a"}}], resume=exp, store=store(tmp_path))


# -- event loops, processes, concurrent experiments ------------------------------------------------


async def test_aevaluate_and_evaluate_inside_a_running_loop(tmp_path: Path) -> None:
    exp = await nbagents.aevaluate(agent(), CASES, scorers=[correct], store=store(tmp_path))
    assert list(exp.to_dataframe()["correct"]) == [1.0, 1.0, 0.0]
    # A notebook cell: a loop runs in this thread, and evaluate() is called without await.
    again = nbagents.evaluate(agent(), CASES, scorers=[correct], store=store(tmp_path))
    assert list(again.to_dataframe()["correct"]) == [1.0, 1.0, 0.0]


@pytest.mark.slow  # a fresh Python process
def test_reopened_in_a_new_process(tmp_path: Path) -> None:
    exp = nbagents.evaluate(
        agent(), CASES, scorers=[correct], repeats=2, name="kept", store=store(tmp_path)
    )
    script = f"""
import json, nbagents
exp = nbagents.load_experiment({exp.id!r}, store={str(store(tmp_path))!r})
print(json.dumps({{"name": exp.name, "runs": len(exp.results),
    "correct": exp.summary().loc[0, "value"],
    "spawns": [s.type for s in exp.trace("hard", 1).subagents],
    "listed": list(nbagents.experiments(store={str(store(tmp_path))!r})["id"])}}))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {
        "name": "kept",
        "runs": 6,
        "correct": pytest.approx(2 / 3),
        "spawns": ["researcher", "writer"],
        "listed": [exp.id],
    }


def test_two_experiments_save_at_once_into_one_history(tmp_path: Path) -> None:
    made: dict[str, Experiment] = {}

    def run(name: str, better: bool) -> None:
        made[name] = nbagents.evaluate(
            agent(better=better, latency=0.01),
            CASES,
            scorers=[correct],
            repeats=3,
            name=name,
            store=store(tmp_path),
        )

    threads = [threading.Thread(target=run, args=(n, b)) for n, b in (("a", False), ("b", True))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    listed = nbagents.experiments(store=store(tmp_path))
    assert sorted(listed["name"]) == ["a", "b"]
    assert list(listed["runs"]) == [9, 9]
    for name, exp in made.items():
        loaded = nbagents.load_experiment(exp.id, store=store(tmp_path))
        assert len(loaded.results) == 9, name
    assert len(nbagents.runs(store=store(tmp_path))) == 18


def test_without_a_history_the_traces_stay_in_memory() -> None:
    exp = nbagents.evaluate(agent(), CASES, scorers=[correct], store=False)
    assert exp.store is None
    assert [s.type for s in exp.trace("add").subagents] == ["researcher"]
    assert exp.results[0].run_id is None
    assert exp.outputs("capital")["messages"][-1].text == "Paris"
