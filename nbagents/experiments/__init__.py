"""Experiments: an agent run over many cases, scored, summarised and compared.

::

    exp = nbagents.evaluate(agent, cases, scorers=[correct, scorers.no_failures()], repeats=3)
    exp.summary()                      # per scorer: pass rate or mean, interval, pass@k
    exp.summary(by="subagent")         # per sub-agent type: spawns, tokens, cost, failures
    nbagents.compare(exp, other)       # paired by case: wins, losses, ties, per-type deltas
"""

from nbagents.experiments import scorers
from nbagents.experiments._cases import Case
from nbagents.experiments._compare import ExperimentComparison, compare
from nbagents.experiments._experiment import Experiment, experiments, load_experiment
from nbagents.experiments._results import Result
from nbagents.experiments._run import aevaluate, evaluate
from nbagents.experiments._scoring import Score

__all__ = [
    "Case",
    "Experiment",
    "ExperimentComparison",
    "Result",
    "Score",
    "aevaluate",
    "compare",
    "evaluate",
    "experiments",
    "load_experiment",
    "scorers",
]
