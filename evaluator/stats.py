"""Statistics for comparing runs and reading breakdowns (no scipy needed).

>>> round(mcnemar_exact(1, 5), 5)  # 6 discordant pairs, 1 vs 5: 2 * (1 + 6) / 2**6
0.21875
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test on the discordant pairs.

    ``b``: pairs where only the first run succeeded; ``c``: only the second.
    """
    if b < 0 or c < 0:
        raise ValueError("discordant counts must not be negative")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    """The difference of success rates (first minus second) and its percentile interval."""

    difference: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int


def paired_bootstrap_ci(
    first: Sequence[bool],
    second: Sequence[bool],
    *,
    resamples: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCI:
    """Percentile bootstrap CI of SR(first) - SR(second), resampling tasks as pairs."""
    if len(first) != len(second):
        raise ValueError("paired samples must have the same length")
    if not first:
        raise ValueError("no paired tasks to compare")
    if not 0 < level < 1:
        raise ValueError("level must be between 0 and 1")
    diffs = np.asarray(first, dtype=np.int8) - np.asarray(second, dtype=np.int8)
    n = diffs.size
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        idx = rng.integers(0, n, size=(size, n))
        means[start : start + size] = diffs[idx].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return BootstrapCI(float(diffs.mean()), float(low), float(high), level, resamples, seed)


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval of a success rate."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class Correlation:
    r: float
    p_value: float
    n: int


def point_biserial(outcome: Sequence[bool], values: Sequence[float]) -> Correlation | None:
    """Point-biserial correlation of a binary outcome with a variable, with its two-sided
    p-value (t-test with n-2 degrees of freedom). None when either side is constant."""
    if len(outcome) != len(values):
        raise ValueError("outcome and values must have the same length")
    n = len(values)
    if n < 3:
        return None
    y = np.asarray(outcome, dtype=np.float64)
    x = np.asarray(values, dtype=np.float64)
    if y.min() == y.max() or x.min() == x.max():
        return None
    r = float(np.corrcoef(y, x)[0, 1])
    r = max(-1.0, min(1.0, r))
    return Correlation(r, correlation_p_value(r, n), n)


def correlation_p_value(r: float, n: int) -> float:
    """Two-sided p-value of a Pearson correlation ``r`` from ``n`` observations."""
    df = n - 2
    if df <= 0:
        return 1.0
    if abs(r) >= 1.0:
        return 0.0
    t2 = r * r * df / (1 - r * r)
    return regularized_beta(df / (df + t2), df / 2, 0.5)


def regularized_beta(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(1 - x, b, a)
    return math.exp(log_front) * _beta_fraction(x, a, b) / a


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h
