"""The statistics of experiments, from ``scipy.stats``: intervals for a pass rate and a mean,
pass@k over repeats, correlations, and the paired tests of a comparison."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

__all__ = ["correlation", "mean_interval", "paired", "pass_at_k", "proportion_interval"]

CONFIDENCE = 0.95
NAN = float("nan")


def proportion_interval(passed: int, n: int) -> tuple[float, float]:
    """Wilson's interval for ``passed`` of ``n``: sound at small n and at 0 % or 100 %."""
    if n == 0:
        return NAN, NAN
    from scipy.stats import binomtest

    found = binomtest(passed, n).proportion_ci(CONFIDENCE, method="wilson")
    return float(found.low), float(found.high)


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """Student's t interval of the mean; a point when every value is the same."""
    n = len(values)
    if n < 2:
        return NAN, NAN
    from scipy import stats

    mean = sum(values) / n
    scale = float(stats.sem(values))
    if scale == 0:
        return mean, mean
    low, high = stats.t.interval(CONFIDENCE, n - 1, loc=mean, scale=scale)
    return float(low), float(high)


def pass_at_k(outcomes: Sequence[Sequence[bool]], k: int) -> float:
    """The chance that at least one of ``k`` tries of a case passes, averaged over cases,
    with the unbiased estimator of Chen et al. (2021) from each case's ``n >= k`` tries."""
    chances = []
    for tries in outcomes:
        n, c = len(tries), sum(tries)
        if n < k:
            continue
        chances.append(1.0 - math.comb(n - c, k) / math.comb(n, k))
    return sum(chances) / len(chances) if chances else NAN


def correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation; NaN where one side never varies."""
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return NAN
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """For paired scores ``a`` and ``b``: the 95 % interval of the mean of ``b - a`` (paired t)
    and the two-sided p-value of the sign test on the pairs that differ."""
    from scipy.stats import binomtest, ttest_rel

    deltas = [y - x for x, y in zip(a, b, strict=True)]
    if not deltas:
        return NAN, NAN, NAN
    wins = sum(d > 0 for d in deltas)
    losses = sum(d < 0 for d in deltas)
    p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else 1.0
    if len(deltas) < 2:
        return NAN, NAN, p
    if len(set(deltas)) == 1:
        return deltas[0], deltas[0], p
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        found = ttest_rel(b, a).confidence_interval(CONFIDENCE)
    return float(found.low), float(found.high), p
