"""``evaluate`` and ``aevaluate``: every case run ``repeats`` times, concurrently, each run traced,
scored and saved as it ends, so that Ctrl-C or a crash loses only the runs in flight."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

from nbagents import history
from nbagents.evaluation._cases import Case, read_cases
from nbagents.evaluation._experiment import Experiment, arguments, load_experiment
from nbagents.evaluation._progress import Progress
from nbagents.evaluation._results import Result, TypeFigures
from nbagents.evaluation._scoring import Scorer, as_scorers
from nbagents.tracing import Tracer
from nbagents.tracing.cost import cost_of_spans, total_cost
from nbagents.tracing.model import Trace

__all__ = ["aevaluate", "evaluate", "run_coroutine"]

T = TypeVar("T")
FAILED = ("error", "limit")


@dataclass
class _Plan:
    agent: Runnable[Any, Any]
    experiment: Experiment
    todo: list[tuple[Case, int]]
    scorers: list[Scorer]
    max_concurrency: int
    config: RunnableConfig
    progress: Progress


def evaluate(
    agent: Any,
    cases: Any,
    *,
    scorers: Any = (),
    repeats: int = 1,
    max_concurrency: int = 8,
    name: str | None = None,
    tags: Sequence[str] = (),
    resume: Experiment | str | None = None,
    store: history.StoreLike = None,
    config: RunnableConfig | None = None,
    progress: bool | None = None,
) -> Experiment:
    """Run ``agent`` over ``cases``, ``repeats`` times each, and score every run.

    ``agent`` is any LangChain runnable (an agent ``create_deep_agent`` or upstream deepagents
    builds, a LangGraph graph, a chain), a plain function of the inputs, or a graph on a
    LangGraph server given as a :class:`~nbagents.RemoteSubAgent` spec (``{"url": ...,
    "graph_id": ...}``): each case then runs on the server, its steps traced here. ``cases``
    is a list of ``{"id"?, "inputs": ..., "expected"?: ...}`` (LangSmith's example shape), a
    DataFrame, or a ``.jsonl``/``.csv`` path; a case's ``inputs`` text becomes a user message.
    ``scorers``
    are plain functions that ask by parameter name for ``inputs``, ``outputs``, ``expected``
    (or ``reference_outputs``), ``answer`` and ``trace``, and return a bool, a number or
    ``{"score", "comment"}`` (see :mod:`nbagents.evaluation.scorers`).

    At most ``max_concurrency`` runs go at once. Every run is traced and kept in the run
    history under the experiment's ``name`` with the tag ``experiment:<id>``. A run that
    raises is recorded with its error, and a scorer that raises with its; the rest go on.
    In a notebook a live progress view shows what is done; elsewhere ``progress=True`` prints
    a progress line. Ctrl-C stops at once and returns the experiment with the runs finished;
    ``evaluate(agent, cases, resume=exp)`` runs only those still missing.

    Works in a notebook cell (whose event loop is running) as anywhere else; inside a
    coroutine, ``await nbagents.aevaluate(...)`` does the same without a thread.
    """
    plan = _plan(
        agent, cases, scorers, repeats, max_concurrency, name, tags, resume, store, config, progress
    )
    plan.progress.start()
    try:
        return run_coroutine(lambda: _execute(plan), plan.progress)
    finally:
        plan.progress.finish()


async def aevaluate(
    agent: Any,
    cases: Any,
    *,
    scorers: Any = (),
    repeats: int = 1,
    max_concurrency: int = 8,
    name: str | None = None,
    tags: Sequence[str] = (),
    resume: Experiment | str | None = None,
    store: history.StoreLike = None,
    config: RunnableConfig | None = None,
    progress: bool | None = None,
) -> Experiment:
    """:func:`evaluate` for a running event loop: ``exp = await nbagents.aevaluate(...)``."""
    plan = _plan(
        agent, cases, scorers, repeats, max_concurrency, name, tags, resume, store, config, progress
    )
    plan.progress.start()
    ticker = asyncio.create_task(_tick(plan.progress))
    try:
        return await _execute(plan)
    finally:
        ticker.cancel()
        plan.progress.finish()


def run_coroutine(
    make: Callable[[], Coroutine[Any, Any, T]], progress: Progress | None = None
) -> T:
    """Run a coroutine to its end from synchronous code, also under a running loop (a notebook
    cell): then it runs on a loop of its own in a worker thread while this thread draws the
    progress. Ctrl-C cancels it; what it returns after cancelling is returned."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if progress is None:
            return asyncio.run(make())
    box: dict[str, Any] = {}
    started, finished = threading.Event(), threading.Event()

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await make()

    def work() -> None:
        try:
            box["value"] = asyncio.run(main())
        except BaseException as error:  # handed to the caller's thread
            box["error"] = error
        finally:
            started.set()
            finished.set()

    # Waited on with an Event, not Thread.join: a join that Ctrl-C interrupts may leave the
    # thread looking finished while it still runs.
    threading.Thread(target=work, name="nbagents-evaluate", daemon=True).start()
    try:
        while not finished.wait(0.2):
            if progress is not None:
                progress.draw()
    except KeyboardInterrupt:
        started.wait()
        if "loop" in box:
            box["loop"].call_soon_threadsafe(box["task"].cancel)
        finished.wait()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


async def _tick(progress: Progress) -> None:
    while True:
        progress.draw()
        await asyncio.sleep(0.25)


def _plan(
    agent: Any,
    cases: Any,
    scorers: Any,
    repeats: int,
    max_concurrency: int,
    name: str | None,
    tags: Sequence[str],
    resume: Experiment | str | None,
    store: history.StoreLike,
    config: RunnableConfig | None,
    progress: bool | None,
) -> _Plan:
    if type(repeats) is not int or repeats < 1:
        raise ValueError(f"repeats must be a whole number of at least 1, not {repeats!r}")
    if type(max_concurrency) is not int or max_concurrency < 1:  # a bool is no count
        raise ValueError(f"max_concurrency must be at least 1, not {max_concurrency!r}")
    if isinstance(tags, str) or not all(isinstance(tag, str) for tag in tags):
        raise TypeError("tags must be a list of strings")
    runnable = _runnable(agent)
    read = read_cases(cases)
    made = as_scorers(scorers)
    if resume is not None:
        experiment = load_experiment(resume, store=store) if isinstance(resume, str) else resume
        if not isinstance(experiment, Experiment):
            raise TypeError(f"resume takes an Experiment or its id, not {type(resume).__name__}")
        names = [s.name for s in made]
        if experiment.results and names != experiment.scorers:
            raise ValueError(
                f"resume with the experiment's scorers {experiment.scorers} (got {names}); to "
                "score its runs with others, use exp.rescore(...)."
            )
        known = {case.id for case in experiment.cases}
        experiment.cases += [case for case in read if case.id not in known]
        experiment.repeats = max(experiment.repeats, repeats)
        experiment.status = "running"
    else:
        experiment = Experiment(
            id=uuid.uuid4().hex[:12],
            name=name or str(getattr(agent, "name", None) or "experiment"),
            cases=read,
            repeats=repeats,
            scorers=[s.name for s in made],
            tags=tags,
            created_at=time.time(),
            agent=str(
                getattr(agent, "name", None)
                or getattr(agent, "__name__", None)
                or type(agent).__name__
            ),
            store=history.resolve_store(store),
        )
    todo = experiment.missing()
    experiment.save()
    return _Plan(
        agent=runnable,
        experiment=experiment,
        todo=todo,
        scorers=made,
        max_concurrency=max_concurrency,
        config=config or {},
        progress=Progress(experiment, len(todo), progress),
    )


def _runnable(agent: Any) -> Runnable[Any, Any]:
    if isinstance(agent, Runnable):
        return agent
    if isinstance(agent, Mapping) and "url" in agent and "graph_id" in agent:
        # A graph on a LangGraph server, given as a RemoteSubAgent spec: its steps are relayed
        # into each run's trace as a remote sub-agent's are.
        from nbagents.subagents import RemoteGraphRunnable

        spec: Any = {"name": agent["graph_id"], "description": "", **agent}
        return RemoteGraphRunnable(spec)
    if callable(agent):
        return RunnableLambda(agent)
    raise TypeError(
        f"agent must be a LangChain runnable (an agent, a graph, a chain) or a function, not "
        f"{type(agent).__name__}"
    )


def _agent_input(agent: Runnable[Any, Any], inputs: Any) -> Any:
    """A case's text as a user message for an agent; other inputs as they are."""
    if isinstance(inputs, str) and not isinstance(agent, RunnableLambda):
        return {"messages": [{"role": "user", "content": inputs}]}
    return inputs


async def _execute(plan: _Plan) -> Experiment:
    experiment, progress = plan.experiment, plan.progress
    gate = asyncio.Semaphore(plan.max_concurrency)

    async def one(case: Case, repeat: int) -> None:
        async with gate:
            progress.begin()
            try:
                result = await _run_once(plan, case, repeat)
            finally:
                progress.end()
            progress.count(result)

    tasks = [asyncio.ensure_future(one(case, repeat)) for case, repeat in plan.todo]
    try:
        await asyncio.gather(*tasks)
        experiment.status = "done"
    except (asyncio.CancelledError, KeyboardInterrupt):
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        experiment.status = "interrupted"
    finally:
        await asyncio.to_thread(experiment.save)
    return experiment


async def _run_once(plan: _Plan, case: Case, repeat: int) -> Result:
    experiment = plan.experiment
    tracer = Tracer(title=f"{experiment.name} · {case.id} #{repeat}")
    trace = tracer.trace
    run_id = history.keep_trace(
        trace,
        store=experiment.store if experiment.store is not None else False,
        name=experiment.name,
        tags=[*experiment.tags, f"experiment:{experiment.id}"],
    )
    config = _config(plan.config, tracer, experiment, case, repeat)
    started = time.perf_counter()
    outputs, error = None, None
    try:
        outputs = await plan.agent.ainvoke(_agent_input(plan.agent, case.inputs), config)
    except Exception as failure:
        error = f"{type(failure).__name__}: {failure}"
    finally:
        tracer.finish()
    seconds = time.perf_counter() - started
    scores = {}
    if error is None and plan.scorers:
        given = arguments(case, outputs, trace)
        said = await asyncio.gather(*(s.score(given) for s in plan.scorers))
        scores = {s.name: score for s, score in zip(plan.scorers, said, strict=True)}
    tokens, cost, types = _figures(trace)
    result = Result(
        case_id=case.id,
        repeat=repeat,
        status="ok" if error is None else "error",
        outputs=outputs,
        error=error,
        scores=scores,
        tokens=tokens,
        cost=cost,
        seconds=seconds,
        run_id=run_id,
        types=types,
    )
    experiment.add(result, trace)
    await asyncio.to_thread(_keep, experiment, trace, result)
    return result


def _keep(experiment: Experiment, trace: Trace, result: Result) -> None:
    history.save(trace)
    if experiment.store is not None:
        experiment.store.save_results(
            experiment.id, [(result.case_id, result.repeat, result.to_json())]
        )


def _config(
    given: RunnableConfig, tracer: Tracer, experiment: Experiment, case: Case, repeat: int
) -> RunnableConfig:
    callbacks = given.get("callbacks")
    if callbacks is not None and not isinstance(callbacks, list):
        raise TypeError("config['callbacks'] must be a list of handlers for evaluate")
    metadata = {
        **(given.get("metadata") or {}),
        "nbagents_experiment": experiment.id,
        "nbagents_case": case.id,
        "nbagents_repeat": repeat,
    }
    return {
        **given,
        "callbacks": [*(callbacks or []), tracer],
        "configurable": {"thread_id": uuid.uuid4().hex, **(given.get("configurable") or {})},
        "metadata": metadata,
    }


def _figures(trace: Trace) -> tuple[int, float | None, dict[str, TypeFigures]]:
    """A run's tokens and cost, and per sub-agent type its spawns, failures, tokens and cost
    (each spawn's own model calls, so nested spawns are not counted twice)."""
    with trace.lock:
        tokens = trace.total_usage().total
        cost = total_cost(trace).value()
        found: dict[str, TypeFigures] = {}
        for record in trace.subagents:
            own = cost_of_spans(trace.own_model_spans(trace.get(record.span_id))).value()
            was = found.get(record.type, TypeFigures())
            found[record.type] = TypeFigures(
                spawns=was.spawns + 1,
                failures=was.failures + (record.status in FAILED),
                tokens=was.tokens + record.tokens_own.total,
                cost=None if was.cost is None or own is None else was.cost + own,
            )
    return tokens, cost, found
