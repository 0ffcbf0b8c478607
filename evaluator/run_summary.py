"""The numbers of a run folder's report: counts, metrics, breakdowns, tests and comparison.

``summarize(run_dir, compare=other)`` gives every number (what ``elderbench report --json``
prints); ``evaluator.report`` renders them. Human verdicts from overrides.json apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluator.agreement import agreement
from evaluator.asking import asking_summary
from evaluator.bounds import sr_bounds
from evaluator.farm.log import farm_summary
from evaluator.language.attribution import correlations, feature_matrix, observations
from evaluator.language.failures import failure_analysis
from evaluator.matching import PROFILES
from evaluator.metrics import (
    breakdowns,
    compare_runs,
    effective_status,
    group_metrics,
    judge_agreement,
    judge_disagreements,
)
from evaluator.prices import PriceTable, load_prices
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import RunStore
from evaluator.sensitivity import profile_sensitivity


@dataclass(frozen=True, slots=True)
class _Loaded:
    store: RunStore
    info: dict[str, Any]
    results: list[TaskResult]


def _load(run_dir: Path) -> _Loaded:
    store = RunStore.open(run_dir)
    return _Loaded(store, store.info(), store.results())


@dataclass(frozen=True, slots=True)
class Counts:
    tasks: int
    success: int
    failure: int
    error: int
    overridden: int  # tasks with a human verdict
    judge_errors: int  # errors of kind judge (within error)
    dirty_starts: int  # errors of kind dirty_start (within error)
    user_simulator_errors: int  # errors of kind user_simulator (within error)
    unreadable_lines: int  # result lines that could not be read


@dataclass(frozen=True, slots=True)
class TaskError:
    task_id: str
    kind: str | None  # an ErrorKind, or None
    reason: str | None


@dataclass(frozen=True, slots=True)
class MappedSteps:
    """Online steps (of evaluated tasks with a graph) whose screen mapped to a node."""

    mapped: int
    steps: int


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Every number of a run's report; ``to_json()`` is what ``elderbench report --json``
    prints. The overall metrics are those of ``metrics.group_metrics`` over every task; the
    nested parts (breakdowns, correlations, judge agreement, failure analysis, matching
    profiles, comparison) hold the JSON of the records that computed them."""

    run: str
    agent: str | None
    model: str | None
    suite: str | None
    variant: str | None
    mode: str | None
    matching: str
    started: float | None
    counts: Counts
    sr: float | None
    sr_line: str  # "SR 66.7% (4 of 6 evaluated; 2 other errors excluded) · SR with errors ..."
    sr_ci: tuple[float | None, float | None] | None
    bases: dict[str, Any]  # what each rate counts (metrics.GroupMetrics.bases)
    cr: float | None
    da: float | None
    ra: float | None
    ail: float | None
    cost: float | None  # agent, judges and simulated user
    agent_cost: float | None
    judge_cost: float | None
    user_cost: float | None  # the simulated user's (evaluator.users)
    retry_seconds: float  # failed calls and backoff, beside AIL
    judge_retry_seconds: float  # the same for the judges' calls
    judge_calls: int  # judge calls that used a model, re-judging included
    currency: str
    unpriced_models: tuple[str, ...]
    input_tokens: int
    output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
    user_input_tokens: int
    user_output_tokens: int
    steps: int
    mapped_steps: MappedSteps
    errors: tuple[TaskError, ...]
    breakdowns: Mapping[str, Mapping[str, dict[str, Any]]]
    correlations: tuple[dict[str, Any], ...]
    judge_agreement: Mapping[str, dict[str, Any]]
    judge_disagreements: tuple[dict[str, Any], ...]  # the review queue
    failure_analysis: dict[str, Any]
    profile_sensitivity: Mapping[str, dict[str, Any]] | None
    devices: tuple[dict[str, Any], ...]  # one entry per device (evaluator.farm)
    comparison: dict[str, Any] | None
    asking: dict[str, Any]  # who asked the user, how often, with what SR (evaluator.asking)
    bounds: dict[str, Any] | None = None  # SR bounds from audit marks (evaluator.bounds)
    agreement: dict[str, Any] | None = None  # offline against online (evaluator.agreement)
    # what the numbers were computed with: the price table, bootstrap seed and resamples
    basis: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "agent": self.agent,
            "model": self.model,
            "suite": self.suite,
            "variant": self.variant,
            "mode": self.mode,
            "matching": self.matching,
            "started": self.started,
            "counts": asdict(self.counts),
            "sr": self.sr,
            "sr_line": self.sr_line,
            "sr_ci": list(self.sr_ci) if self.sr_ci is not None else None,
            "sr_errors_as_failures": self.bases["sr_errors_as_failures"]["value"],
            "bases": self.bases,
            "cr": self.cr,
            "da": self.da,
            "ra": self.ra,
            "ail": self.ail,
            "cost": self.cost,
            "agent_cost": self.agent_cost,
            "judge_cost": self.judge_cost,
            "user_cost": self.user_cost,
            "retry_seconds": self.retry_seconds,
            "judge_retry_seconds": self.judge_retry_seconds,
            "judge_calls": self.judge_calls,
            "currency": self.currency,
            "unpriced_models": list(self.unpriced_models),
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "judge_input": self.judge_input_tokens,
                "judge_output": self.judge_output_tokens,
                "user_input": self.user_input_tokens,
                "user_output": self.user_output_tokens,
            },
            "steps": self.steps,
            "mapped_steps": asdict(self.mapped_steps),
            "errors": [asdict(e) for e in self.errors],
            "breakdowns": {d: dict(groups) for d, groups in self.breakdowns.items()},
            "correlations": list(self.correlations),
            "judge_agreement": dict(self.judge_agreement),
            "judge_disagreements": list(self.judge_disagreements),
            "failure_analysis": self.failure_analysis,
            "profile_sensitivity": (
                dict(self.profile_sensitivity) if self.profile_sensitivity is not None else None
            ),
            "devices": list(self.devices),
            "comparison": self.comparison,
            "asking": self.asking,
            "bounds": self.bounds,
            "agreement": self.agreement,
            "basis": self.basis,
        }


# The paired bootstrap's seed and resamples when a report names none; verify recomputes a
# report that recorded no basis with these.
DEFAULT_SEED = 0
DEFAULT_RESAMPLES = 10_000


def summarize(
    run_dir: Path,
    *,
    compare: Path | None = None,
    agreement_with: Path | None = None,
    prices: PriceTable | None = None,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> RunSummary:
    """Every number of the report; ``agreement_with`` names an online run to pair this
    (offline) run with."""
    prices = prices or load_prices()
    run = _load(run_dir)
    overrides = run.store.overrides()
    overall = group_metrics(run.results, overrides, prices)
    statuses = [effective_status(r, overrides) for r in run.results]
    config = run.info.get("config", {})
    comparison: dict[str, Any] | None = None
    if compare is not None:
        other = _load(compare)
        paired = compare_runs(
            run.results,
            other.results,
            overrides,
            other.store.overrides(),
            seed=seed,
            resamples=resamples,
        )
        other_groups = breakdowns(other.results, other.store.overrides())
        comparison = {
            "other_run": str(Path(compare)),
            "other_agent": other.info.get("agent", {}).get("name"),
            "other_variant": other.info.get("config", {}).get("variant"),
            **paired.to_json(),
            "other_breakdowns": {
                d: {g: m.sr for g, m in groups.items()} for d, groups in other_groups.items()
            },
            "other_breakdown_n": {  # the evaluated tasks behind each of those SRs
                d: {g: m.n for g, m in groups.items()} for d, groups in other_groups.items()
            },
            # both runs on the tasks both evaluated: the base of the paired test
            "side_by_side": [
                _overall_column(run.results, overrides, prices, paired.paired_tasks),
                _overall_column(
                    other.results, other.store.overrides(), prices, paired.paired_tasks
                ),
            ],
            # each run on its own tasks, errors named
            "own": [overall.sr_line, group_metrics(other.results, other.store.overrides()).sr_line],
        }
    return RunSummary(
        run=str(Path(run_dir)),
        agent=run.info.get("agent", {}).get("name"),
        model=run.info.get("model"),
        suite=run.info.get("suite", {}).get("name"),
        variant=config.get("variant"),
        mode=config.get("mode"),
        matching=config.get("matching", "elderbench"),
        started=run.info.get("started"),
        counts=Counts(
            tasks=len(run.results),
            success=statuses.count(TaskStatus.SUCCESS),
            failure=statuses.count(TaskStatus.FAILURE),
            error=statuses.count(TaskStatus.ERROR),
            overridden=sum(1 for r in run.results if r.task_id in overrides),
            judge_errors=overall.judge_errors,
            dirty_starts=overall.dirty_starts,
            user_simulator_errors=overall.user_simulator_errors,
            unreadable_lines=run.store.skipped_lines,
        ),
        sr=overall.sr,
        sr_line=overall.sr_line,
        sr_ci=(overall.sr_low, overall.sr_high) if overall.sr is not None else None,
        bases=overall.bases(),
        cr=overall.cr,
        da=overall.da,
        ra=overall.ra,
        ail=overall.ail,
        cost=overall.cost,
        agent_cost=overall.agent_cost,
        judge_cost=overall.judge_cost,
        user_cost=overall.user_cost,
        retry_seconds=overall.retry_seconds,
        judge_retry_seconds=overall.judge_retry_seconds,
        judge_calls=overall.judge_calls,
        currency=prices.currency,
        unpriced_models=tuple(overall.unpriced_models),
        input_tokens=overall.input_tokens,
        output_tokens=overall.output_tokens,
        judge_input_tokens=overall.judge_input_tokens,
        judge_output_tokens=overall.judge_output_tokens,
        user_input_tokens=overall.user_input_tokens,
        user_output_tokens=overall.user_output_tokens,
        steps=overall.steps,
        mapped_steps=_mapped_steps(run.results, statuses),
        errors=tuple(
            TaskError(r.task_id, r.error_kind, r.reason)
            for r, s in zip(run.results, statuses, strict=True)
            if s is TaskStatus.ERROR
        ),
        breakdowns={
            d: {g: m.to_json() for g, m in groups.items()}
            for d, groups in breakdowns(run.results, overrides, prices).items()
        },
        correlations=tuple(_correlations(run_dir, run.results, overrides)),
        judge_agreement={
            j: a.to_json() for j, a in judge_agreement(run.results, overrides).items()
        },
        judge_disagreements=tuple(asdict(d) for d in judge_disagreements(run.results, overrides)),
        failure_analysis=failure_analysis(run.store).to_json(),
        profile_sensitivity=_sensitivity(run, config.get("matching", "elderbench")),
        devices=tuple(farm_summary(run_dir)),
        comparison=comparison,
        asking=asking_summary(run.results, overrides),
        bounds=_bounds(run, overrides),
        agreement=_agreement(run, overrides, agreement_with),
        basis={"prices": prices.to_json(), "seed": seed, "resamples": resamples},
    )


def _bounds(run: _Loaded, overrides: Any) -> dict[str, Any] | None:
    """Strict and upper SR under the suite's audit marks (None: no offline task, or the
    suite is not there)."""
    suite = run.info.get("suite", {}).get("path")
    if not suite or not Path(suite).is_dir():
        return None
    if not any(r.protocol == "offline" for r in run.results):
        return None
    return sr_bounds(run.store, run.results, overrides, Path(suite)).to_json()


def _agreement(run: _Loaded, overrides: Any, online: Path | None) -> dict[str, Any] | None:
    if online is None:
        return None
    other = _load(online)
    found = agreement(run.results, other.results, overrides, other.store.overrides())
    return {"online_run": str(Path(online)), **found.to_json()}


def _overall_column(
    results: Sequence[TaskResult], overrides: Any, prices: PriceTable, tasks: Sequence[str]
) -> dict[str, Any]:
    """One run's headline numbers on ``tasks`` (those both runs evaluated), for the
    side-by-side table of a comparison: the same base as the paired test."""
    shared = set(tasks)
    m = group_metrics([r for r in results if r.task_id in shared], overrides, prices)
    return {
        "sr": m.sr,
        "sr_ci": [m.sr_low, m.sr_high] if m.sr is not None else None,
        "successes": m.successes,
        "n": m.n,
        "cr": m.cr,
        "da": m.da,
        "bases": m.bases(),
    }


def _sensitivity(run: _Loaded, used: str) -> dict[str, Any] | None:
    """What each other matching profile would have judged differently (None: no suite)."""
    suite = run.info.get("suite", {}).get("path")
    if not suite or not Path(suite).is_dir() or used not in PROFILES:
        return None
    found = profile_sensitivity(run.store, Path(suite), used, run.results)
    return {
        p: {"steps": d.steps, "scored_steps": d.scored_steps, "tasks": d.tasks, "first": d.first}
        for p, d in found.items()
    }


def _mapped_steps(results: Sequence[TaskResult], statuses: Sequence[TaskStatus]) -> MappedSteps:
    online = [
        r
        for r, s in zip(results, statuses, strict=True)
        if r.mapped_steps is not None and s is not TaskStatus.ERROR
    ]
    return MappedSteps(
        mapped=sum(r.mapped_steps or 0 for r in online), steps=sum(r.steps for r in online)
    )


def _correlations(
    run_dir: Path, results: list[TaskResult], overrides: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each feature against success, with minimum group sizes and corrections
    (evaluator.language.attribution); empty when no task was evaluated."""
    obs = observations([(Path(run_dir).name, results, overrides)])
    return [c.to_json() for c in correlations(feature_matrix(obs))] if obs else []
