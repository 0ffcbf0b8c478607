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
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluator.prices import PriceTable
from evaluator.records import ErrorKind, TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict
from evaluator.stats import (
    BootstrapCI,
    cohen_kappa,
    mcnemar_exact,
    paired_bootstrap_ci,
    wilson_interval,
)


def effective_status(result: TaskResult, overrides: Mapping[str, HumanVerdict]) -> TaskStatus:
    """The status after a human verdict. It overrides verification, not termination: an
    episode that did not terminate keeps its status (a failure, or a harness error);
    a terminated one, a judge error included, becomes what the human says."""
    verdict = overrides.get(result.task_id)
    if verdict is None or not result.terminated:
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
    input_tokens: int  # the agent's, errored tasks included
    output_tokens: int
    cost: float | None  # agent, judges and simulated user; None when some tokens have no price
    unpriced_models: tuple[str, ...] = ()
    judge_errors: int = 0  # errors of kind judge (within ``errors``)
    dirty_starts: int = 0  # errors of kind dirty_start (within ``errors``)
    user_simulator_errors: int = 0  # errors of kind user_simulator (within ``errors``)
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    agent_cost: float | None = None
    judge_cost: float | None = None
    user_input_tokens: int = 0  # the simulated user's (evaluator.users)
    user_output_tokens: int = 0
    user_cost: float | None = None
    retry_seconds: float = 0.0  # waiting on failed calls and backoff, beside AIL
    judge_retry_seconds: float = 0.0  # the same for the judges' calls
    judge_calls: int = 0  # judge calls that used a model (the base of judge_retry_seconds)
    # The bases of the rates: what each one counts (evaluated tasks only).
    cr_tasks: tuple[tuple[str, int], ...] = ()  # protocol -> tasks with a CR (a graph)
    da_tasks: tuple[tuple[str, int], ...] = ()  # protocol -> tasks with a scored decision
    decisions: int = 0
    correct_decisions: int = 0
    reflections: int = 0
    correct_reflections: int = 0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["unpriced_models"] = list(self.unpriced_models)
        out["cr_tasks"] = dict(self.cr_tasks)
        out["da_tasks"] = dict(self.da_tasks)
        out["sr_errors_as_failures"] = self.sr_errors_as_failures
        return out

    @property
    def sr_errors_as_failures(self) -> float | None:
        """Successes over every task, an error counted as a failure."""
        return _ratio(self.successes, self.n + self.errors)

    @property
    def unscored_steps(self) -> int:
        """Steps of evaluated tasks that are not decisions: answer, ask_user and give_up
        steps, and online steps of tasks without a graph."""
        return self.steps - self.decisions

    def bases(self) -> dict[str, Any]:
        """What every rate counts, for ``report --json`` and the report's sentences."""
        return {
            "sr": {"successes": self.successes, "evaluated": self.n, "errors": self.errors},
            "sr_errors_as_failures": {
                "value": self.sr_errors_as_failures,
                "successes": self.successes,
                "tasks": self.n + self.errors,
            },
            "cr": {"tasks": sum(n for _, n in self.cr_tasks), "by_protocol": dict(self.cr_tasks)},
            "da": {
                "correct": self.correct_decisions,
                "decisions": self.decisions,
                "tasks": sum(n for _, n in self.da_tasks),
                "by_protocol": dict(self.da_tasks),
                "unscored_steps": self.unscored_steps,
            },
            "ra": {"correct": self.correct_reflections, "reflections": self.reflections},
            "ail": {"steps": self.steps},
        }

    @property
    def sr_line(self) -> str:
        """``SR 66.7% (4 of 6 evaluated; 2 other errors excluded) · SR with errors as
        failures 50.0% (4 of 8)`` (errors named by kind; the second SR only with errors)."""
        other = self.errors - self.judge_errors - self.dirty_starts - self.user_simulator_errors
        parts = [
            f"{count} {what}{'s' if count != 1 else ''} excluded"
            for count, what in (
                (self.judge_errors, "judge error"),
                (self.dirty_starts, "dirty start"),
                (self.user_simulator_errors, "user simulator error"),
                (other, "other error"),
            )
            if count
        ]
        counted = f"{self.successes} of {self.n} evaluated" if self.n else "0 evaluated"
        line = f"SR {pct(self.sr)} ({'; '.join([counted, *parts])})"
        if self.errors:
            line += (
                f" · SR with errors as failures {pct(self.sr_errors_as_failures)} "
                f"({self.successes} of {self.n + self.errors})"
            )
        return line


def group_rate(group: Mapping[str, Any] | None, base: str = "evaluated") -> dict[str, Any] | None:
    """A breakdown group's SR (a ``GroupMetrics.to_json()``) with its 95% interval and its
    base, as the tables and figures give it; ``base`` is the key of the evaluated tasks'
    count (the tables say ``evaluated``, figures.json ``n``). None: no such group."""
    if group is None:
        return None
    return {
        "value": group["sr"],
        "low": group["sr_low"],
        "high": group["sr_high"],
        "successes": group["successes"],
        base: group["n"],
        "errors": group["errors"],
    }


def pct(value: float | None) -> str:
    """A rate as printed beside its base: ``66.7%``, or ``n/a``."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def tasks_phrase(by_protocol: Mapping[str, int]) -> str:
    """``3 offline tasks``, ``5 tasks: 3 offline, 2 online``, ``0 tasks``."""
    total = sum(by_protocol.values())
    noun = "task" if total == 1 else "tasks"
    kinds = sorted((p, n) for p, n in by_protocol.items() if n)
    if len(kinds) == 1:
        return f"{total} {kinds[0][0]} {noun}"
    if not kinds:
        return f"0 {noun}"
    return f"{total} {noun}: " + ", ".join(f"{n} {p}" for p, n in kinds)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _priced(
    prices: PriceTable | None, uses: Iterable[tuple[str | None, int, int]], unpriced: set[str]
) -> float | None:
    if prices is None:
        return None
    total: float | None = 0.0
    for model, tokens_in, tokens_out in uses:
        c = prices.cost(model, tokens_in, tokens_out)
        if c is None:
            unpriced.add(model or "(unknown model)")
            total = None
        elif total is not None:
            total += c
    return total


def group_metrics(
    results: Sequence[TaskResult],
    overrides: Mapping[str, HumanVerdict] | None = None,
    prices: PriceTable | None = None,
) -> GroupMetrics:
    overrides = overrides or {}
    statuses = [effective_status(r, overrides) for r in results]
    evaluated = [r for r, s in zip(results, statuses, strict=True) if s is not TaskStatus.ERROR]
    errored = [r for r, s in zip(results, statuses, strict=True) if s is TaskStatus.ERROR]
    successes = sum(1 for s in statuses if s is TaskStatus.SUCCESS)
    n = len(evaluated)
    crs = [cr for r in evaluated if (cr := r.completion_rate) is not None]
    steps = sum(r.steps for r in evaluated)
    low, high = wilson_interval(successes, n) if n else (None, None)
    unpriced: set[str] = set()
    agent_cost = _priced(
        prices, ((r.model, r.input_tokens, r.output_tokens) for r in results), unpriced
    )
    judge_cost = _priced(
        prices,
        ((u.model, u.input_tokens, u.output_tokens) for r in results for u in r.judge_usage),
        unpriced,
    )
    user_cost = _priced(
        prices,
        ((u.model, u.input_tokens, u.output_tokens) for r in results for u in r.user_usage),
        unpriced,
    )
    parts = (agent_cost, judge_cost, user_cost)
    cost = None if any(c is None for c in parts) else sum(c for c in parts if c is not None)
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
        judge_errors=sum(1 for r in errored if r.error_kind == ErrorKind.JUDGE),
        dirty_starts=sum(1 for r in errored if r.error_kind == ErrorKind.DIRTY_START),
        user_simulator_errors=sum(1 for r in errored if r.error_kind == ErrorKind.USER_SIMULATOR),
        judge_input_tokens=sum(r.judge_input_tokens for r in results),
        judge_output_tokens=sum(r.judge_output_tokens for r in results),
        agent_cost=agent_cost,
        judge_cost=judge_cost,
        user_input_tokens=sum(u.input_tokens for r in results for u in r.user_usage),
        user_output_tokens=sum(u.output_tokens for r in results for u in r.user_usage),
        user_cost=user_cost,
        retry_seconds=sum(r.retry_seconds for r in results),
        judge_retry_seconds=sum(r.judge_retry_seconds for r in results),
        judge_calls=sum(len(r.judge_usage) for r in results),
        cr_tasks=_by_protocol(r for r in evaluated if r.completion_rate is not None),
        da_tasks=_by_protocol(r for r in evaluated if r.decisions),
        decisions=sum(r.decisions for r in evaluated),
        correct_decisions=sum(r.correct_decisions for r in evaluated),
        reflections=sum(r.reflections for r in evaluated),
        correct_reflections=sum(r.correct_reflections for r in evaluated),
    )


def _by_protocol(results: Iterable[TaskResult]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = defaultdict(int)
    for r in results:
        counts[r.protocol] += 1
    return tuple(sorted(counts.items()))


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
    """One judge against the human verdicts: the confusion matrix (judge x human) and
    Cohen's kappa. ``kappa`` is None when it is undefined (chance agreement is 1: judge
    and humans each gave one answer only)."""

    both_pass: int = 0
    judge_pass_human_fail: int = 0
    judge_fail_human_pass: int = 0
    both_fail: int = 0

    @property
    def n(self) -> int:
        return (
            self.both_pass
            + self.judge_pass_human_fail
            + self.judge_fail_human_pass
            + self.both_fail
        )

    @property
    def agree(self) -> int:
        return self.both_pass + self.both_fail

    @property
    def rate(self) -> float | None:
        return _ratio(self.agree, self.n)

    @property
    def kappa(self) -> float | None:
        counts = (self.both_pass, self.judge_pass_human_fail, self.judge_fail_human_pass)
        judge = [True] * (counts[0] + counts[1]) + [False] * (counts[2] + self.both_fail)
        human = [True] * counts[0] + [False] * counts[1] + [True] * counts[2]
        human += [False] * self.both_fail
        return cohen_kappa(judge, human).kappa

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "agree": self.agree,
            "rate": self.rate,
            "kappa": self.kappa,
            "confusion": {
                "both_pass": self.both_pass,
                "judge_pass_human_fail": self.judge_pass_human_fail,
                "judge_fail_human_pass": self.judge_fail_human_pass,
                "both_fail": self.both_fail,
            },
        }


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A task where a judge and the human verdict differ: an item of the review queue."""

    task_id: str
    judge: str
    judge_passed: bool
    human_success: bool
    reason: str


def _opinions(result: TaskResult) -> list[tuple[str, bool, str]]:
    from evaluator.judges import combine

    out = [(v.judge, v.passed, v.reason) for v in result.verification if v.passed is not None]
    combined = combine(result.verification)
    if combined is not None:
        out.append(("combined", combined, ""))
    return out


def judge_agreement(
    results: Sequence[TaskResult], overrides: Mapping[str, HumanVerdict]
) -> dict[str, Agreement]:
    """Per judge (and ``combined``), its agreement with the human verdicts. Judges that
    did not apply or could not answer are left out."""
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in results:
        human = overrides.get(r.task_id)
        if human is None:
            continue
        for judge, passed, _ in _opinions(r):
            cells[judge][(0 if passed else 2) + (0 if human.success else 1)] += 1
    return {j: Agreement(*c) for j, c in sorted(cells.items())}


def judge_disagreements(
    results: Sequence[TaskResult], overrides: Mapping[str, HumanVerdict]
) -> list[Disagreement]:
    """Every (task, judge) where the judge's verdict differs from the human's, in task
    order: what a reviewer should look at again."""
    out = []
    for r in results:
        human = overrides.get(r.task_id)
        if human is None:
            continue
        out += [
            Disagreement(r.task_id, judge, passed, human.success, reason)
            for judge, passed, reason in _opinions(r)
            if judge != "combined" and passed != human.success
        ]
    return out


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
    # the tasks left out of the pairs, and why: errors_a/errors_b (an error in that run,
    # evaluated or not in the other), missing_a/missing_b (no result in that run)
    left_out: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    paired_tasks: tuple[str, ...] = ()  # the tasks both runs evaluated, in id order

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            k: getattr(self, k) for k in ("pairs", "sr_a", "sr_b", "only_a", "only_b", "mcnemar_p")
        }
        out["left_out"] = {k: list(v) for k, v in self.left_out.items()}
        out["sr_difference"] = self.ci.difference if self.ci else None
        out["ci"] = asdict(self.ci) if self.ci else None
        if out["ci"] is not None:
            # every resample gave one difference (e.g. no discordant pair): not a real spread
            out["ci"]["degenerate"] = self.ci is not None and self.ci.low == self.ci.high
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
    status_a = {r.task_id: effective_status(r, overrides_a or {}) for r in a}
    status_b = {r.task_id: effective_status(r, overrides_b or {}) for r in b}
    left_out = {
        "errors_a": tuple(sorted(t for t, s in status_a.items() if s is TaskStatus.ERROR)),
        "errors_b": tuple(sorted(t for t, s in status_b.items() if s is TaskStatus.ERROR)),
        "missing_a": tuple(sorted(status_b.keys() - status_a.keys())),
        "missing_b": tuple(sorted(status_a.keys() - status_b.keys())),
    }
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
        left_out=left_out,
        paired_tasks=tuple(shared),
    )
