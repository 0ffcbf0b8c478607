"""Reports of a run folder: a JSON summary, report.md and report.html with inline SVG charts.

``summarize(run_dir, compare=other)`` gives the numbers (what ``elderbench report --json``
prints); ``write_report(run_dir, compare=other)`` writes report.md (charts as SVG files
beside it) and report.html (charts inline). Human verdicts from overrides.json apply.
"""

from __future__ import annotations

import html
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluator.farm.log import farm_summary
from evaluator.language.attribution import correlations, feature_matrix, observations
from evaluator.language.failures import failure_analysis
from evaluator.matching import PROFILES
from evaluator.metrics import (
    DIMENSIONS,
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
from evaluator.svg import bar_chart, scatter_chart

CHART_DIMENSIONS = ("scenario", "syntax", "semantics", "app")


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
    sr_line: str  # "SR 55.6% of 18; 1 judge error excluded"
    sr_ci: tuple[float | None, float | None] | None
    cr: float | None
    da: float | None
    ra: float | None
    ail: float | None
    cost: float | None  # agent and judges
    agent_cost: float | None
    judge_cost: float | None
    retry_seconds: float  # failed calls and backoff, beside AIL
    currency: str
    unpriced_models: tuple[str, ...]
    input_tokens: int
    output_tokens: int
    judge_input_tokens: int
    judge_output_tokens: int
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
            "cr": self.cr,
            "da": self.da,
            "ra": self.ra,
            "ail": self.ail,
            "cost": self.cost,
            "agent_cost": self.agent_cost,
            "judge_cost": self.judge_cost,
            "retry_seconds": self.retry_seconds,
            "currency": self.currency,
            "unpriced_models": list(self.unpriced_models),
            "tokens": {
                "input": self.input_tokens,
                "output": self.output_tokens,
                "judge_input": self.judge_input_tokens,
                "judge_output": self.judge_output_tokens,
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
        }


def summarize(
    run_dir: Path,
    *,
    compare: Path | None = None,
    prices: PriceTable | None = None,
    seed: int = 0,
    resamples: int = 10_000,
) -> RunSummary:
    """Every number of the report."""
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
        comparison = {
            "other_run": str(Path(compare)),
            "other_agent": other.info.get("agent", {}).get("name"),
            "other_variant": other.info.get("config", {}).get("variant"),
            **paired.to_json(),
            "other_breakdowns": {
                d: {g: m.sr for g, m in groups.items()}
                for d, groups in breakdowns(other.results, other.store.overrides()).items()
            },
            "side_by_side": [
                _overall_column(run.results, overrides, prices),
                _overall_column(other.results, other.store.overrides(), prices),
            ],
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
            unreadable_lines=run.store.skipped_lines,
        ),
        sr=overall.sr,
        sr_line=overall.sr_line,
        sr_ci=(overall.sr_low, overall.sr_high) if overall.sr is not None else None,
        cr=overall.cr,
        da=overall.da,
        ra=overall.ra,
        ail=overall.ail,
        cost=overall.cost,
        agent_cost=overall.agent_cost,
        judge_cost=overall.judge_cost,
        retry_seconds=overall.retry_seconds,
        currency=prices.currency,
        unpriced_models=tuple(overall.unpriced_models),
        input_tokens=overall.input_tokens,
        output_tokens=overall.output_tokens,
        judge_input_tokens=overall.judge_input_tokens,
        judge_output_tokens=overall.judge_output_tokens,
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
    )


def _overall_column(
    results: Sequence[TaskResult], overrides: Any, prices: PriceTable
) -> dict[str, Any]:
    """One run's headline numbers, for the side-by-side table of a comparison."""
    m = group_metrics(results, overrides, prices)
    return {
        "sr": m.sr,
        "sr_ci": [m.sr_low, m.sr_high] if m.sr is not None else None,
        "successes": m.successes,
        "n": m.n,
        "cr": m.cr,
        "da": m.da,
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


# --------------------------------------------------------------------------- rendering


def _correlations(
    run_dir: Path, results: list[TaskResult], overrides: dict[str, Any]
) -> list[dict[str, Any]]:
    """Each feature against success, with minimum group sizes and corrections
    (evaluator.language.attribution); empty when no task was evaluated."""
    obs = observations([(Path(run_dir).name, results, overrides)])
    return [c.to_json() for c in correlations(feature_matrix(obs))] if obs else []


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cost(value: float | None, currency: str) -> str:
    return "n/a (unpriced model)" if value is None else f"{value:.4f} {currency}"


@dataclass(frozen=True, slots=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True, slots=True)
class Chart:
    name: str
    title: str
    svg: str


Block = tuple[str, str] | Table | Chart  # ("h2"/"p", text)


def _side_by_side(summary: RunSummary, comparison: dict[str, Any]) -> Table:
    """The two runs' SR (with its CI), CR and DA in adjacent columns, each over its own
    evaluated tasks. Columns are named by instruction variant when the variants differ
    (original vs normalized), else by agent, else as this run and the other."""
    names = [summary.variant, comparison.get("other_variant")]
    if not all(names) or names[0] == names[1]:
        names = [summary.agent, comparison.get("other_agent")]
    if not all(names) or names[0] == names[1]:
        names = ["this run", "other run"]
    columns = comparison["side_by_side"]

    def sr(m: dict[str, Any]) -> str:
        if m["sr"] is None:
            return "n/a"
        low, high = m["sr_ci"]
        return f"{_pct(m['sr'])} ({_pct(low)}-{_pct(high)}), {m['successes']} of {m['n']}"

    return Table(
        ("", *(str(n).capitalize() for n in names)),
        [
            ["SR (95% CI)", *(sr(m) for m in columns)],
            ["CR", *(_pct(m["cr"]) for m in columns)],
            ["DA", *(_pct(m["da"]) for m in columns)],
        ],
    )


def _metrics_row(label: str, m: dict[str, Any], currency: str) -> list[str]:
    ci = f" ({_pct(m['sr_low'])}-{_pct(m['sr_high'])})" if m["sr"] is not None else ""
    return [
        label,
        str(m["n"]),
        str(m["errors"]),
        _pct(m["sr"]) + ci,
        _pct(m["cr"]),
        _pct(m["da"]),
        _pct(m["ra"]),
        _num(m["ail"]),
        f"{m['input_tokens']}/{m['output_tokens']}",
        _cost(m["cost"], currency),
    ]


_METRIC_HEADERS = (
    "Group",
    "Evaluated",
    "Errors",
    "SR (95% CI)",
    "CR",
    "DA",
    "RA",
    "AIL (s/step)",
    "Tokens in/out",
    "Cost",
)


def _blocks(summary: RunSummary, results: list[TaskResult], store: RunStore) -> list[Block]:
    currency = summary.currency
    counts = summary.counts
    blocks: list[Block] = [
        (
            "h1",
            f"Evaluation report: {summary.agent} ({summary.model or 'no model'}) "
            f"on {summary.suite}",
        ),
        (
            "p",
            f"Run folder {summary.run}; instruction variant {summary.variant}, offline "
            f"mode {summary.mode}; started "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(summary.started or 0))}.",
        ),
        ("h2", "Overview"),
        Table(
            (
                "Tasks",
                "Success",
                "Failure",
                "Error",
                "Human verdicts",
                "SR (95% CI)",
                "CR",
                "DA",
                "RA",
                "AIL (s/step)",
                "Tokens in/out",
                "Cost",
            ),
            [
                [
                    str(counts.tasks),
                    str(counts.success),
                    str(counts.failure),
                    str(counts.error),
                    str(counts.overridden),
                    _pct(summary.sr)
                    + (
                        f" ({_pct(summary.sr_ci[0])}-{_pct(summary.sr_ci[1])})"
                        if summary.sr_ci
                        else ""
                    ),
                    _pct(summary.cr),
                    _pct(summary.da),
                    _pct(summary.ra),
                    _num(summary.ail),
                    f"{summary.input_tokens}/{summary.output_tokens}",
                    _cost(summary.cost, currency),
                ]
            ],
        ),
        ("p", summary.sr_line + "."),
        (
            "p",
            "SR counts successes among evaluated tasks (errors are listed apart). CR: the "
            "share of the shortest ground-truth path (plus done) that the agent's best state "
            "covered; 100% only when it said done on a DONE node. DA: decisions that reached "
            "a new node from which DONE is still reachable (loops, detours and no-ops are "
            "wrong). RA: correct reflections. AIL: inference and parsing seconds per step "
            f"(retries and backoff apart: {_num(summary.retry_seconds)} s in all).",
        ),
    ]
    mapped = summary.mapped_steps
    if mapped.steps:
        blocks.append(
            (
                "p",
                f"Online steps on screens mapped to a graph node: {mapped.mapped} of "
                f"{mapped.steps} ({_pct(mapped.mapped / mapped.steps)}); the others "
                "were off the graph and count as wrong decisions unless they landed on a new node.",
            )
        )
    comparison = summary.comparison
    for dimension in CHART_DIMENSIONS:
        groups = summary.breakdowns.get(dimension, {})
        if not groups:
            continue
        other = comparison["other_breakdowns"].get(dimension, {}) if comparison else None
        bars = [(g, m["sr"], f"{_pct(m['sr'])} (n={m['n']})") for g, m in groups.items()]
        title = f"Success rate by {dimension}"
        if other is not None:
            title += " (blue: this run, orange: compared run)"
        blocks.append(
            Chart(
                f"sr_by_{dimension}",
                title,
                bar_chart(
                    title,
                    bars,
                    alt=[other.get(g) for g in groups] if other is not None else None,
                    alt_notes=[_pct(other.get(g)) for g in groups] if other is not None else None,
                ),
            )
        )
    blocks.append(("h2", "Breakdowns"))
    for dimension in DIMENSIONS:
        groups = summary.breakdowns.get(dimension, {})
        if groups:
            blocks.append(("h3", f"By {dimension}"))
            blocks.append(
                Table(_METRIC_HEADERS, [_metrics_row(g, m, currency) for g, m in groups.items()])
            )
    apps = summary.breakdowns.get("app", {})
    points = [
        (g, m["ail"], m["sr"])
        for g, m in apps.items()
        if m["ail"] is not None and m["sr"] is not None
    ]
    if points:
        blocks.append(("h2", "Latency and success"))
        blocks.append(
            Chart(
                "latency_vs_sr",
                "AIL (s/step) vs SR by app",
                scatter_chart(
                    "AIL (s/step) vs SR by app",
                    points,
                    x_label="AIL (seconds per step)",
                    y_label="SR",
                ),
            )
        )
    blocks.append(("h2", "Cost"))
    blocks.append(
        Table(
            (
                "Group",
                "Agent tokens in/out",
                "Agent cost",
                "Judge tokens in/out",
                "Judge cost",
                "Cost",
            ),
            [
                [
                    g,
                    f"{m['input_tokens']}/{m['output_tokens']}",
                    _cost(m["agent_cost"], currency),
                    f"{m['judge_input_tokens']}/{m['judge_output_tokens']}",
                    _cost(m["judge_cost"], currency),
                    _cost(m["cost"], currency),
                ]
                for g, m in apps.items()
            ]
            + [
                [
                    "all",
                    f"{summary.input_tokens}/{summary.output_tokens}",
                    _cost(summary.agent_cost, currency),
                    f"{summary.judge_input_tokens}/{summary.judge_output_tokens}",
                    _cost(summary.judge_cost, currency),
                    _cost(summary.cost, currency),
                ]
            ],
        )
    )
    blocks.append(
        (
            "p",
            "Agent tokens include errored tasks and replies that failed to parse; judge "
            "tokens include re-judging and judge calls that gave no verdict.",
        )
    )
    if summary.unpriced_models:
        blocks.append(
            (
                "p",
                "No price for: "
                + ", ".join(summary.unpriced_models)
                + ". Add them to resources/prices.json.",
            )
        )
    tested = [c for c in summary.correlations if c["r"] is not None]
    if tested:
        blocks.append(("h2", "What goes with success (point-biserial correlation)"))
        blocks.append(
            Table(
                ("Feature", "r", "p", "p (Holm)", "q (BH)", "Holders"),
                [
                    [
                        c["feature"],
                        f"{c['r']:+.3f}",
                        f"{c['p_value']:.3g}",
                        f"{c['p_holm']:.3g}",
                        f"{c['q_bh']:.3g}",
                        "continuous" if c["holders"] is None else str(c["holders"]),
                    ]
                    for c in sorted(tested, key=lambda c: c["p_value"])
                ],
            )
        )
    untested = [c for c in summary.correlations if c["r"] is None]
    if untested:
        blocks.append(
            ("p", "Not tested: " + "; ".join(f"{c['feature']} ({c['note']})" for c in untested))
        )
    if summary.judge_agreement:
        blocks.append(("h2", "Judges against human verdicts"))
        blocks.append(
            Table(
                (
                    "Judge",
                    "Tasks",
                    "Agreement",
                    "Cohen's kappa",
                    "Both pass",
                    "Judge pass, human fail",
                    "Judge fail, human pass",
                    "Both fail",
                ),
                [
                    [
                        j,
                        str(a["n"]),
                        f"{_pct(a['rate'])} ({a['agree']}/{a['n']})",
                        "undefined (one answer only)"
                        if a["kappa"] is None
                        else f"{a['kappa']:.3f}",
                        *(str(v) for v in a["confusion"].values()),
                    ]
                    for j, a in summary.judge_agreement.items()
                ],
            )
        )
        if summary.judge_disagreements:
            blocks.append(("h3", "Review queue: judge and human disagree"))
            blocks.append(
                Table(
                    ("Task", "Judge", "Judge said", "Human said", "Judge's reason"),
                    [
                        [
                            d["task_id"],
                            d["judge"],
                            "pass" if d["judge_passed"] else "fail",
                            "success" if d["human_success"] else "failure",
                            d["reason"],
                        ]
                        for d in summary.judge_disagreements
                    ],
                )
            )
    sensitivity = summary.profile_sensitivity
    if sensitivity:
        scored = next(iter(sensitivity.values()))["scored_steps"]
        blocks.append(("h2", "Matching profiles"))
        blocks.append(
            (
                "p",
                f"Matched under {summary.matching}. The {scored} recorded steps on graph "
                "nodes matched again under each other tap-tolerance convention: the steps it "
                "would judge otherwise, and the tasks whose episode would have gone another "
                "way (at the first such step).",
            )
        )
        blocks.append(
            Table(
                ("Profile", "Steps judged otherwise", "Tasks", "First divergence (task@step)"),
                [
                    [
                        p,
                        str(d["steps"]),
                        str(d["tasks"]),
                        ", ".join(f"{t}@{i}" for t, i in sorted(d["first"].items())) or "none",
                    ]
                    for p, d in sensitivity.items()
                ],
            )
        )
    devices = summary.devices
    if any(d["unhealthy"] or d["retries"] or d["quarantined"] for d in devices) or len(devices) > 1:
        blocks.append(("h2", "Devices"))
        blocks.append(
            Table(
                (
                    "Device",
                    "Tasks",
                    "Unhealthy checks",
                    "Restarts",
                    "Tasks given back",
                    "Quarantined",
                ),
                [
                    [
                        d["device"],
                        str(d["tasks"]),
                        str(d["unhealthy"]),
                        str(d["restarts"]),
                        str(d["retries"]),
                        "yes" if d["quarantined"] else "no",
                    ]
                    for d in devices
                ],
            )
        )
        blocks.append(("p", "Every health check, restart and retry is in farm.jsonl."))
    failures = summary.failure_analysis
    if failures["analysed"]:
        blocks.append(("h2", "Failure analysis"))
        blocks.append(
            (
                "p",
                f"{failures['analysed']} of {failures['failures']} failures analysed (tagged by "
                "a person); each counts once, under its first tag.",
            )
        )
        rows = failures["categories"]
        blocks.append(
            Table(
                ("Category", "Primary cause", "Share of analysed failures", "Tagged at all"),
                [[c["category"], str(c["primary"]), _pct(c["share"]), str(c["any"])] for c in rows],
            )
        )
        blocks.append(
            Chart(
                "failure_analysis",
                "Share of analysed failures by primary cause",
                bar_chart(
                    "Share of analysed failures by primary cause",
                    [(c["category"], c["share"], _pct(c["share"])) for c in rows],
                ),
            )
        )
    if comparison:
        ci = comparison["ci"]
        blocks.append(("h2", "Paired comparison"))
        blocks.append(
            (
                "p",
                f"This run against {comparison['other_run']} "
                f"({comparison['other_agent']}, {comparison['other_variant']}) on "
                f"{comparison['pairs']} tasks evaluated by both.",
            )
        )
        blocks.append(_side_by_side(summary, comparison))
        blocks.append(
            Table(
                (
                    "SR this run",
                    "SR other",
                    "Difference",
                    "95% CI (paired bootstrap)",
                    "Only this run",
                    "Only other",
                    "McNemar exact p",
                ),
                [
                    [
                        _pct(comparison["sr_a"]),
                        _pct(comparison["sr_b"]),
                        _pct(comparison["sr_difference"]),
                        (
                            f"{_pct(ci['low'])} to {_pct(ci['high'])}"
                            + (" (degenerate: every task alike)" if ci["degenerate"] else "")
                        )
                        if ci
                        else "n/a",
                        str(comparison["only_a"]),
                        str(comparison["only_b"]),
                        f"{comparison['mcnemar_p']:.4g}",
                    ]
                ],
            )
        )
    if summary.errors:
        blocks.append(("h2", "Errors (not evaluated)"))
        blocks.append(
            Table(
                ("Task", "Kind", "Reason"),
                [[e.task_id, e.kind or "", e.reason or ""] for e in summary.errors],
            )
        )
    overrides = store.overrides()
    tags = store.tags()
    blocks.append(("h2", "Tasks"))
    blocks.append(
        Table(
            ("Task", "Status", "Steps", "CR", "Failure tags", "Reason"),
            [
                [
                    r.task_id,
                    effective_status(r, overrides).value
                    + (" (human)" if r.task_id in overrides else ""),
                    str(r.steps),
                    _pct(r.completion_rate),
                    ", ".join(t.title for t in tags.get(r.task_id, ())),
                    r.reason or "",
                ]
                for r in results
            ],
        )
    )
    return blocks


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(blocks: Sequence[Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        if isinstance(block, Table):
            lines.append("| " + " | ".join(_md_cell(h) for h in block.headers) + " |")
            lines.append("|" + "---|" * len(block.headers))
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
        elif isinstance(block, Chart):
            lines.append(f"![{block.title}](report_{block.name}.svg)")
        else:
            kind, text = block
            prefix = {"h1": "# ", "h2": "## ", "h3": "### "}.get(kind, "")
            lines.append(prefix + text)
        lines.append("")
    return "\n".join(lines)


def render_html(blocks: Sequence[Block], title: str) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em;max-width:1100px}"
        "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #bbb;"
        "padding:3px 8px;text-align:left}th{background:#eef}figure{margin:1em 0}</style>",
        "</head><body>",
    ]
    for block in blocks:
        if isinstance(block, Table):
            parts.append(
                "<table><tr>"
                + "".join(f"<th>{html.escape(h)}</th>" for h in block.headers)
                + "</tr>"
            )
            parts += [
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in block.rows
            ]
            parts.append("</table>")
        elif isinstance(block, Chart):
            parts.append(f"<figure>{block.svg}</figure>")
        else:
            kind, text = block
            tag = kind if kind in ("h1", "h2", "h3") else "p"
            parts.append(f"<{tag}>{html.escape(text)}</{tag}>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    run_dir: Path,
    compare: Path | None = None,
    *,
    prices: PriceTable | None = None,
    seed: int = 0,
    summary: RunSummary | None = None,
) -> tuple[Path, Path]:
    """Write report.md (+ its SVG files) and report.html into the run folder.

    ``summary`` is ``summarize(...)``'s result when the caller already has it.
    """
    run_dir = Path(run_dir)
    if summary is None:
        summary = summarize(run_dir, compare=compare, prices=prices, seed=seed)
    store = RunStore.open(run_dir)
    blocks = _blocks(summary, store.results(), store)
    for block in blocks:
        if isinstance(block, Chart):
            store.write_text(f"report_{block.name}.svg", block.svg)
    md = store.write_text("report.md", render_markdown(blocks))
    title = str(blocks[0][1]) if isinstance(blocks[0], tuple) else "Evaluation report"
    page = store.write_text("report.html", render_html(blocks, title))
    return md, page
