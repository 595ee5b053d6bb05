"""``assert_experiment``: an experiment's pass rate or mean as a test's verdict, in CI."""

from __future__ import annotations

from nbagents.evaluation import Experiment
from nbagents.testing._assertions import TraceAssertionError

__all__ = ["assert_experiment"]


def assert_experiment(
    experiment: Experiment,
    *,
    min_pass_rate: float | None = None,
    min_mean: float | None = None,
    scorer: str | None = None,
    max_failed: int | None = 0,
) -> None:
    """Check that ``scorer`` (every scorer when ``None``) reached ``min_pass_rate`` (a yes/no
    scorer) or ``min_mean`` (a numeric one), and that at most ``max_failed`` runs raised
    (``None``: any number). Raises :class:`TraceAssertionError` naming the scorer, its figure
    with its interval, and the cases that failed it."""
    __tracebackhide__ = True
    if not isinstance(experiment, Experiment):
        raise TypeError(f"assert_experiment takes an Experiment, not {type(experiment).__name__}")
    if min_pass_rate is None and min_mean is None and max_failed is None:
        raise TypeError("assert_experiment needs min_pass_rate=, min_mean= or max_failed=")
    problems: list[str] = []
    if experiment.missing():
        problems.append(f"{len(experiment.missing())} runs never ran ({experiment.status})")
    failed = [r for r in experiment.results if r.status != "ok"]
    if max_failed is not None and len(failed) > max_failed:
        problems.append(
            f"{len(failed)} runs failed (at most {max_failed} allowed): "
            + "; ".join(f"{r.case_id}#{r.repeat}: {r.error}" for r in failed[:5])
        )
    names = [scorer] if scorer is not None else experiment.scorers
    for name in names:
        if name not in experiment.scorers:
            raise KeyError(f"no scorer {name!r}; the scorers are {experiment.scorers}")
        row = experiment.summary().set_index("scorer").loc[name]
        wanted = min_pass_rate if row["kind"] == "pass rate" else min_mean
        if wanted is None:
            if scorer is not None:
                other = "min_mean" if row["kind"] == "mean" else "min_pass_rate"
                raise TypeError(f"{name} gives a {row['kind']}: check it with {other}=")
            continue
        if row["value"] >= wanted:
            continue
        low = sorted(case for (case, _), value in experiment.values(name).items() if value < 1.0)
        problems.append(
            f"{name}: {row['kind']} {row['value']:.3g} is below {wanted:.3g} (95% interval "
            f"{row['ci_low']:.3g} to {row['ci_high']:.3g}, {row['n']} runs); cases below 1: "
            f"{', '.join(dict.fromkeys(low)) or 'none'}"
        )
    if problems:
        raise TraceAssertionError(
            f"experiment {experiment.name!r} failed:\n  " + "\n  ".join(problems)
        )
