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


# --------------------------------------------------------------------------- contingency tables


def fisher_exact(table: Sequence[Sequence[int]]) -> float:
    """Two-sided Fisher exact p-value of a 2x2 table ``[[a, b], [c, d]]``.

    Sums the hypergeometric probabilities of every table with the same margins that is no
    more likely than the observed one (the usual two-sided definition).

    >>> round(fisher_exact([[8, 2], [1, 5]]), 4)
    0.035
    """
    (a, b), (c, d) = table
    if min(a, b, c, d) < 0:
        raise ValueError("counts must not be negative")
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0

    def log_p(x: int) -> float:
        return _log_comb(col1, x) + _log_comb(n - col1, row1 - x) - _log_comb(n, row1)

    low, high = max(0, row1 + col1 - n), min(row1, col1)
    observed = log_p(a)
    total = sum(math.exp(lp) for x in range(low, high + 1) if (lp := log_p(x)) <= observed + 1e-9)
    return min(1.0, total)


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


@dataclass(frozen=True, slots=True)
class ChiSquare:
    statistic: float
    dof: int
    p_value: float


def chi_square(table: Sequence[Sequence[int]]) -> ChiSquare:
    """Pearson's chi-square test of independence of an r x k table (no continuity
    correction). Rows or columns that are all zero are dropped first.

    >>> round(chi_square([[10, 20], [20, 10]]).p_value, 4)
    0.0098
    """
    rows = _nonzero(table)
    if not rows:
        return ChiSquare(0.0, 0, 1.0)
    dof = (len(rows) - 1) * (len(rows[0]) - 1)
    if dof == 0:
        return ChiSquare(0.0, 0, 1.0)
    n = sum(map(sum, rows))
    col = [sum(r[j] for r in rows) for j in range(len(rows[0]))]
    stat = 0.0
    for r in rows:
        row_total = sum(r)
        for j, observed in enumerate(r):
            expected = row_total * col[j] / n
            stat += (observed - expected) ** 2 / expected
    return ChiSquare(stat, dof, chi_square_sf(stat, dof))


@dataclass(frozen=True, slots=True)
class ContingencyTest:
    """A test of independence of an r x k table, and why that test.

    ``test`` is ``chi-square`` when every expected count is at least 5 (Cochran's rule, the
    rule the 2x2 share tests use), else ``fisher`` (2x2) or ``monte-carlo`` (larger tables:
    the share of ``resamples`` random tables with the same margins whose chi-square
    statistic is at least the observed one, seeded). ``small_expected`` of ``cells``
    expected counts were under 5; ``chi_square_p`` is what the approximation would say.
    """

    test: str
    p_value: float
    statistic: float
    dof: int
    small_expected: int
    cells: int
    chi_square_p: float
    resamples: int | None = None
    seed: int | None = None


def contingency_test(
    table: Sequence[Sequence[int]], *, resamples: int = 10_000, seed: int = 0
) -> ContingencyTest:
    """Chi-square when its approximation holds, else an exact test (see ContingencyTest).
    Rows and columns that are all zero are dropped first, as ``chi_square`` does."""
    rows = _nonzero(table)
    approx = chi_square(rows)
    expected = expected_counts(rows) if rows else []
    cells = sum(len(r) for r in expected)
    small = sum(1 for r in expected for e in r if e < 5)
    if approx.dof == 0 or small == 0:
        test, p, runs = "chi-square", approx.p_value, None
    elif len(rows) == 2 and len(rows[0]) == 2:
        test, p, runs = "fisher", fisher_exact(rows), None
    else:
        test, p, runs = (
            "monte-carlo",
            _monte_carlo_p(rows, approx.statistic, resamples, seed),
            resamples,
        )
    return ContingencyTest(
        test,
        p,
        approx.statistic,
        approx.dof,
        small,
        cells,
        approx.p_value,
        resamples=runs,
        seed=seed if runs is not None else None,
    )


def _nonzero(table: Sequence[Sequence[int]]) -> list[list[int]]:
    rows = [list(r) for r in table if sum(r) > 0]
    if not rows:
        return []
    keep = [j for j in range(len(rows[0])) if sum(r[j] for r in rows) > 0]
    return [[r[j] for j in keep] for r in rows]


def _monte_carlo_p(rows: list[list[int]], observed: float, resamples: int, seed: int) -> float:
    """P(statistic >= observed) over random tables with the observed margins: the pooled
    items' columns are shuffled and dealt to the rows by their sizes. Counts the observed
    table once, so the p-value is never 0: (1 + hits) / (1 + resamples)."""
    cols = np.repeat(np.arange(len(rows[0])), [sum(c) for c in zip(*rows, strict=True)])
    sizes = np.cumsum([0, *(sum(r) for r in rows)])
    n = cols.size
    expected = np.asarray(expected_counts(rows))
    rng = np.random.default_rng(seed)
    hits = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        dealt = rng.permuted(np.broadcast_to(cols, (size, n)), axis=1)
        counts = np.stack(  # (resample, row, column)
            [
                np.stack([(dealt[:, lo:hi] == j).sum(axis=1) for j in range(len(rows[0]))], 1)
                for lo, hi in zip(sizes[:-1], sizes[1:], strict=True)
            ],
            axis=1,
        )
        stats = ((counts - expected) ** 2 / expected).sum(axis=(1, 2))
        hits += int(np.count_nonzero(stats >= observed - 1e-9 * max(1.0, observed)))
    return (1 + hits) / (1 + resamples)


def expected_counts(table: Sequence[Sequence[int]]) -> list[list[float]]:
    n = sum(map(sum, table))
    cols = [sum(r[j] for r in table) for j in range(len(table[0]))]
    return [[sum(r) * c / n if n else 0.0 for c in cols] for r in table]


def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable: the regularized upper incomplete gamma Q(k/2, x/2).

    >>> round(chi_square_sf(3.841458820694124, 1), 6)
    0.05
    """
    if x <= 0:
        return 1.0
    a, z = dof / 2.0, x / 2.0
    if z < a + 1:  # series for the lower function P, then Q = 1 - P
        term = total = 1.0 / a
        k = a
        for _ in range(10_000):
            k += 1
            term *= z / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    tiny = 1e-300  # continued fraction for Q (Lentz)
    b = z + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return min(1.0, math.exp(-z + a * math.log(z) - math.lgamma(a)) * h)


# --------------------------------------------------------------------------- many tests at once


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (family-wise error), in the input order.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 15)
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values, false discovery rate), input order.

    >>> benjamini_hochberg([0.01, 0.04, 0.03])
    [0.03, 0.04, 0.04]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i], reverse=True)
    adjusted = [0.0] * m
    running = 1.0
    for rank_from_top, i in enumerate(order):
        rank = m - rank_from_top
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = round(min(1.0, running), 15)
    return adjusted


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True, slots=True)
class Kappa:
    """Agreement of two raters on the same items: observed share and Cohen's kappa.

    ``kappa`` is None when chance agreement is total (both raters used one category only):
    kappa is undefined there, and printing 0 or 1 would mislead.
    """

    n: int
    observed: float | None
    expected: float | None
    kappa: float | None


def cohen_kappa(first: Sequence[object], second: Sequence[object]) -> Kappa:
    """Cohen's kappa of two raters' categorical labels, item by item.

    >>> k = cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"])
    >>> k.observed, round(k.kappa, 3)
    (0.75, 0.5)
    """
    if len(first) != len(second):
        raise ValueError("both raters must label the same items")
    n = len(first)
    if n == 0:
        return Kappa(0, None, None, None)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    categories = set(first) | set(second)
    expected = sum(
        (sum(a == c for a in first) / n) * (sum(b == c for b in second) / n) for c in categories
    )
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return Kappa(n, observed, expected, kappa)
