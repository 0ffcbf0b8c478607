"""Every hand-written test statistic against scipy's, on hand-picked and seeded random cases.

scipy is in the ``test`` extra, so these run on every test run (no skip).
"""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats

from evaluator.stats import (
    benjamini_hochberg,
    chi_square,
    chi_square_sf,
    cohen_kappa,
    fisher_exact,
    holm,
    mcnemar_exact,
    point_biserial,
    wilson_interval,
)
from evaluator.trials import pass_at_k, pass_hat_k, t_quantile

RNG = random.Random(27)


def _tables(count: int, high: int) -> list[list[list[int]]]:
    return [[[RNG.randint(0, high) for _ in range(2)] for _ in range(2)] for _ in range(count)]


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 5), (5, 1), (3, 3), (0, 12), (17, 30), (2, 40)])
def test_mcnemar_exact_is_scipys_two_sided_binomial_test(b, c):
    expected = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_fisher_exact_is_scipys_on_hand_picked_and_random_tables():
    tables = [[[8, 2], [1, 5]], [[0, 5], [5, 0]], [[3, 3], [3, 3]], [[1, 0], [0, 0]]]
    for table in tables + _tables(40, 12):
        if sum(map(sum, table)) == 0:
            continue
        assert fisher_exact(table) == pytest.approx(
            stats.fisher_exact(table).pvalue, rel=1e-9, abs=1e-12
        ), table


def test_chi_square_is_scipys_without_continuity_correction():
    tables = [
        [[10, 20], [20, 10]],
        [[12, 5, 9, 3, 1], [4, 8, 10, 7, 6]],  # 2 x 5, like the length bins
        [[30, 1, 4], [22, 9, 2], [5, 5, 5]],
    ]
    tables += [[[RNG.randint(1, 40) for _ in range(4)] for _ in range(2)] for _ in range(20)]
    for table in tables:
        ours = chi_square(table)
        theirs = stats.chi2_contingency(table, correction=False)
        assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12), table
        assert ours.dof == theirs.dof
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9, abs=1e-15), table


@pytest.mark.parametrize("dof", [1, 2, 3, 4, 7, 20])
def test_chi_square_survival_function_is_scipys(dof):
    for x in (0.01, 0.5, 1.0, 3.84, 9.5, 30.0, 80.0):
        assert chi_square_sf(x, dof) == pytest.approx(stats.chi2.sf(x, dof), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("successes", "n"), [(0, 1), (0, 10), (10, 10), (4, 6), (37, 100), (1, 249)]
)
def test_wilson_interval_is_scipys(successes, n):
    theirs = stats.binomtest(successes, n).proportion_ci(0.95, method="wilson")
    low, high = wilson_interval(successes, n)
    assert (low, high) == pytest.approx((theirs.low, theirs.high), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 29])
def test_t_quantile_behind_the_trials_interval_is_scipys(df):
    assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)


def test_point_biserial_is_scipys():
    for n in (5, 12, 40):
        outcome = [RNG.random() < 0.5 for _ in range(n)]
        outcome[0], outcome[1] = True, False  # both groups present
        values = [RNG.randint(1, 60) for _ in range(n)]
        ours = point_biserial(outcome, values)
        theirs = stats.pointbiserialr(outcome, values)
        assert ours is not None
        assert ours.r == pytest.approx(theirs.statistic, rel=1e-9)
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-7)


def test_benjamini_hochberg_is_scipys_false_discovery_control():
    for m in (1, 3, 8, 15):
        ps = [RNG.random() ** 2 for _ in range(m)]
        assert benjamini_hochberg(ps) == pytest.approx(
            list(stats.false_discovery_control(ps, method="bh")), abs=1e-14
        )


def test_holm_is_the_step_down_bonferroni_of_its_definition():
    """scipy has no Holm; check against the definition computed another way: the adjusted
    p of the i-th smallest is the running maximum of (m - j) p_(j) for j <= i."""
    for m in (1, 4, 9):
        ps = [RNG.random() for _ in range(m)]
        order = sorted(range(m), key=ps.__getitem__)
        expected = [0.0] * m
        for rank, i in enumerate(order):
            expected[i] = min(1.0, max((m - j) * ps[order[j]] for j in range(rank + 1)))
        assert holm(ps) == pytest.approx(expected, abs=1e-14)


def test_cohen_kappa_is_the_closed_form_of_a_two_by_two_table():
    """scipy has no kappa; for two answers it is 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))."""
    for (a, b), (c, d) in _tables(30, 9):
        first = [True] * (a + b) + [False] * (c + d)
        second = [True] * a + [False] * b + [True] * c + [False] * d
        den = (a + b) * (b + d) + (a + c) * (c + d)
        ours = cohen_kappa(first, second).kappa
        if not first or den == 0:
            assert ours is None
        else:
            assert ours == pytest.approx(2 * (a * d - b * c) / den, abs=1e-12)


@pytest.mark.parametrize(("n", "c"), [(5, 0), (5, 2), (5, 5), (10, 3), (4, 1)])
def test_pass_at_k_and_pass_hat_k_are_hypergeometric(n, c):
    for k in range(1, n + 1):
        draw = stats.hypergeom(n, c, k)  # k trials drawn from n, c of them successes
        assert pass_at_k(n, c, k) == pytest.approx(1 - draw.pmf(0), abs=1e-12)
        assert pass_hat_k(n, c, k) == pytest.approx(draw.pmf(k), abs=1e-12)
        assert math.isfinite(pass_at_k(n, c, k))


def test_scipy_is_in_the_test_extra_so_these_checks_never_skip():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    extra = project["project"]["optional-dependencies"]["test"]
    assert any(req.split(">")[0].split("=")[0].strip() == "scipy" for req in extra)


def _exact_two_row_p(table: list[list[int]]) -> float:
    """P(chi-square >= observed) over every 2 x k table with the observed margins, each
    weighted by its multivariate hypergeometric probability (scipy's)."""
    import itertools

    cols = [a + b for a, b in zip(*table, strict=True)]
    n_first = sum(table[0])
    observed = chi_square(table).statistic
    total = 0.0
    for first in itertools.product(*(range(c + 1) for c in cols)):
        if sum(first) != n_first:
            continue
        candidate = [list(first), [c - f for c, f in zip(cols, first, strict=True)]]
        if chi_square(candidate).statistic >= observed - 1e-9:
            total += stats.multivariate_hypergeom.pmf(first, cols, n_first)
    return total


@pytest.mark.parametrize(
    "table", [[[3, 8, 2, 1, 0], [1, 2, 9, 6, 4]], [[2, 1, 4], [5, 0, 1]], [[0, 4, 1], [6, 1, 2]]]
)
def test_the_monte_carlo_contingency_test_matches_exact_enumeration(table):
    from evaluator.stats import contingency_test

    ours = contingency_test(table, resamples=20_000, seed=5)
    assert ours.test == "monte-carlo"
    exact = _exact_two_row_p(table)
    # 20,000 resamples: the standard error is at most 0.0036
    assert ours.p_value == pytest.approx(exact, abs=0.015)
    theirs = stats.chi2_contingency(table, correction=False)
    assert ours.chi_square_p == pytest.approx(theirs.pvalue, rel=1e-9)
