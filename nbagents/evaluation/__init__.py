"""Experiments: an agent run over many cases, scored, summarised and compared.

::

    exp = nbagents.evaluate(agent, cases, scorers=[correct, scorers.no_failures()], repeats=3)
    exp.summary()                      # per scorer: pass rate or mean, interval, pass@k
    exp.summary(by="subagent")         # per sub-agent type: spawns, tokens, cost, failures
    nbagents.compare(exp, other)       # paired by case: wins, losses, ties, per-type deltas
"""

from nbagents.evaluation import scorers
from nbagents.evaluation._cases import Case
from nbagents.evaluation._compare import ExperimentComparison, compare
from nbagents.evaluation._experiment import Experiment, experiments, load_experiment
from nbagents.evaluation._results import Result
from nbagents.evaluation._run import aevaluate, evaluate
from nbagents.evaluation._scoring import Score

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
