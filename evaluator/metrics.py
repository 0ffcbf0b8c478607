"""Metrics over task results, with human overrides applied.

- **SR**: successes / evaluated tasks. Errors are not evaluated and are counted apart,
  unless a human verdict decides them.
- **CR**: per task, ground-truth steps covered / ground-truth steps, as
  ``evaluator.progress`` defines them for multi-path graphs; averaged over tasks with a graph.
- **DA**: correct decisions / decisions, pooled over tasks (``evaluator.progress``).
- **RA**: correct reflections / scored reflections, pooled (agents that reflect).
- **AIL**: inference plus parsing seconds per step, pooled.
- **Cost**: tokens times the price table.

>>> group_metrics([]).n
0
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evaluator.prices import PriceTable
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict
from evaluator.stats import (
    BootstrapCI,
    mcnemar_exact,
    paired_bootstrap_ci,
    wilson_interval,
)


def effective_status(result: TaskResult, overrides: Mapping[str, HumanVerdict]) -> TaskStatus:
    """The status after a human verdict, which overrides judges (and decides errors)."""
    verdict = overrides.get(result.task_id)
    if verdict is None:
        return result.status
    return TaskStatus.SUCCESS if verdict.success else TaskStatus.FAILURE


@dataclass(frozen=True, slots=True)
class GroupMetrics:
    n: int  # evaluated tasks (not errors)
    successes: int
    errors: int
    sr: float | None
    sr_low: float | None
    sr_high: float | None
    cr: float | None
    da: float | None
    ra: float | None
    ail: float | None
    steps: int
    mean_steps: float | None
    input_tokens: int
    output_tokens: int
    cost: float | None  # None when some tokens have no price
    unpriced_models: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["unpriced_models"] = list(self.unpriced_models)
        return out


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def group_metrics(
    results: Sequence[TaskResult],
    overrides: Mapping[str, HumanVerdict] | None = None,
    prices: PriceTable | None = None,
) -> GroupMetrics:
    overrides = overrides or {}
    statuses = [effective_status(r, overrides) for r in results]
    evaluated = [r for r, s in zip(results, statuses, strict=True) if s is not TaskStatus.ERROR]
    successes = sum(1 for s in statuses if s is TaskStatus.SUCCESS)
    n = len(evaluated)
    crs = [cr for r in evaluated if (cr := r.completion_rate) is not None]
    steps = sum(r.steps for r in evaluated)
    low, high = wilson_interval(successes, n) if n else (None, None)
    cost: float | None = 0.0
    unpriced: set[str] = set()
    if prices is not None:
        for r in results:
            c = prices.cost(r.model, r.input_tokens, r.output_tokens)
            if c is None:
                unpriced.add(r.model or "(unknown model)")
            elif cost is not None:
                cost += c
        if unpriced:
            cost = None
    else:
        cost = None
    return GroupMetrics(
        n=n,
        successes=successes,
        errors=len(results) - n,
        sr=_ratio(successes, n),
        sr_low=low,
        sr_high=high,
        cr=sum(crs) / len(crs) if crs else None,
        da=_ratio(sum(r.correct_decisions for r in evaluated), sum(r.decisions for r in evaluated)),
        ra=_ratio(
            sum(r.correct_reflections for r in evaluated), sum(r.reflections for r in evaluated)
        ),
        ail=_ratio(sum(r.inference_seconds for r in evaluated), steps),
        steps=steps,
        mean_steps=_ratio(steps, n),
        input_tokens=sum(r.input_tokens for r in results),
        output_tokens=sum(r.output_tokens for r in results),
        cost=cost,
        unpriced_models=tuple(sorted(unpriced)),
    )


# Each dimension names the groups a result belongs to.
DIMENSIONS: dict[str, Callable[[TaskResult], Iterable[str]]] = {
    "protocol": lambda r: [r.protocol],
    "app": lambda r: [r.app or "(no app)"],
    "scenario": lambda r: [r.labels.scenario] if r.labels.scenario else [],
    "syntax": lambda r: list(r.labels.syntax),
    "semantics": lambda r: list(r.labels.semantics),
}


def breakdowns(
    results: Sequence[TaskResult],
    overrides: Mapping[str, HumanVerdict] | None = None,
    prices: PriceTable | None = None,
) -> dict[str, dict[str, GroupMetrics]]:
    """Metrics per group of every dimension (a task with two syntax labels counts in both)."""
    out: dict[str, dict[str, GroupMetrics]] = {}
    for dimension, groups_of in DIMENSIONS.items():
        groups: dict[str, list[TaskResult]] = defaultdict(list)
        for r in results:
            for g in groups_of(r):
                groups[g].append(r)
        out[dimension] = {
            g: group_metrics(rs, overrides, prices) for g, rs in sorted(groups.items())
        }
    return out


@dataclass(frozen=True, slots=True)
class Agreement:
    n: int
    agree: int

    @property
    def rate(self) -> float | None:
        return _ratio(self.agree, self.n)


def judge_agreement(
    results: Sequence[TaskResult], overrides: Mapping[str, HumanVerdict]
) -> dict[str, Agreement]:
    """Per judge (and ``combined``), how often it agrees with the human verdicts."""
    from evaluator.judges import combine

    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        human = overrides.get(r.task_id)
        if human is None or not r.verification:
            continue
        opinions = [(v.judge, v.passed) for v in r.verification]
        opinions.append(("combined", combine(r.verification)))
        for judge, passed in opinions:
            if passed is None:
                continue
            counts[judge][0] += 1
            counts[judge][1] += int(passed == human.success)
    return {j: Agreement(n, a) for j, (n, a) in sorted(counts.items())}


@dataclass(frozen=True, slots=True)
class Comparison:
    """Paired comparison of run A against run B on the tasks both evaluated."""

    pairs: int
    sr_a: float | None
    sr_b: float | None
    only_a: int  # A succeeded, B failed
    only_b: int
    mcnemar_p: float
    ci: BootstrapCI | None

    def to_json(self) -> dict[str, Any]:
        out = {
            k: getattr(self, k) for k in ("pairs", "sr_a", "sr_b", "only_a", "only_b", "mcnemar_p")
        }
        out["sr_difference"] = self.ci.difference if self.ci else None
        out["ci"] = asdict(self.ci) if self.ci else None
        return out


def paired_outcomes(
    a: Sequence[TaskResult],
    b: Sequence[TaskResult],
    overrides_a: Mapping[str, HumanVerdict] | None = None,
    overrides_b: Mapping[str, HumanVerdict] | None = None,
) -> dict[str, tuple[bool, bool]]:
    """Per task evaluated by both runs (errors left out), in id order: (A succeeded,
    B succeeded), human verdicts applied."""
    status_a = {r.task_id: effective_status(r, overrides_a or {}) for r in a}
    status_b = {r.task_id: effective_status(r, overrides_b or {}) for r in b}
    return {
        t: (status_a[t] is TaskStatus.SUCCESS, status_b[t] is TaskStatus.SUCCESS)
        for t in sorted(status_a.keys() & status_b.keys())
        if TaskStatus.ERROR not in (status_a[t], status_b[t])
    }


def flipped_tasks(
    a: Sequence[TaskResult],
    b: Sequence[TaskResult],
    overrides_a: Mapping[str, HumanVerdict] | None = None,
    overrides_b: Mapping[str, HumanVerdict] | None = None,
) -> dict[str, bool]:
    """The discordant pairs behind McNemar's test: task id -> True when only A succeeded,
    False when only B did."""
    return {
        t: sa for t, (sa, sb) in paired_outcomes(a, b, overrides_a, overrides_b).items() if sa != sb
    }


def compare_runs(
    a: Sequence[TaskResult],
    b: Sequence[TaskResult],
    overrides_a: Mapping[str, HumanVerdict] | None = None,
    overrides_b: Mapping[str, HumanVerdict] | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> Comparison:
    """Exact McNemar p-value and paired-bootstrap CI of SR(A) - SR(B)."""
    pairs = paired_outcomes(a, b, overrides_a, overrides_b)
    shared = list(pairs)
    xa = [pairs[t][0] for t in shared]
    xb = [pairs[t][1] for t in shared]
    only_a = sum(1 for p, q in zip(xa, xb, strict=True) if p and not q)
    only_b = sum(1 for p, q in zip(xa, xb, strict=True) if q and not p)
    return Comparison(
        pairs=len(shared),
        sr_a=_ratio(sum(xa), len(shared)),
        sr_b=_ratio(sum(xb), len(shared)),
        only_a=only_a,
        only_b=only_b,
        mcnemar_p=mcnemar_exact(only_a, only_b),
        ci=paired_bootstrap_ci(xa, xb, resamples=resamples, seed=seed) if shared else None,
    )
