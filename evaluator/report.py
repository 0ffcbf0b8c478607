"""A run folder's report: report.md and report.html with inline SVG charts.

``write_report(run_dir, compare=other)`` renders the numbers of
``evaluator.run_summary.summarize`` as a document (``evaluator.document``) and writes
report.md (charts as SVG files beside it) and report.html (charts inline).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from evaluator.document import Block, Chart, Table, percent, render_html, render_markdown
from evaluator.metrics import DIMENSIONS, effective_status
from evaluator.prices import PriceTable
from evaluator.records import TaskResult
from evaluator.report_audit import agreement_blocks, bounds_blocks
from evaluator.run_store import RunStore
from evaluator.run_summary import RunSummary, summarize
from evaluator.svg import bar_chart, scatter_chart

CHART_DIMENSIONS = ("scenario", "syntax", "semantics", "app")


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cost(value: float | None, currency: str) -> str:
    return "n/a (unpriced model)" if value is None else f"{value:.4f} {currency}"


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
        return f"{percent(m['sr'])} ({percent(low)}-{percent(high)}), {m['successes']} of {m['n']}"

    return Table(
        ("", *(str(n).capitalize() for n in names)),
        [
            ["SR (95% CI)", *(sr(m) for m in columns)],
            ["CR", *(percent(m["cr"]) for m in columns)],
            ["DA", *(percent(m["da"]) for m in columns)],
        ],
    )


def _metrics_row(label: str, m: dict[str, Any], currency: str) -> list[str]:
    ci = f" ({percent(m['sr_low'])}-{percent(m['sr_high'])})" if m["sr"] is not None else ""
    return [
        label,
        str(m["n"]),
        str(m["errors"]),
        percent(m["sr"]) + ci,
        percent(m["cr"]),
        percent(m["da"]),
        percent(m["ra"]),
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
    """The report's document, section by section."""
    return [
        *_overview(summary),
        *bounds_blocks(summary.bounds),
        *_success_charts(summary),
        *_breakdown_tables(summary),
        *_latency(summary),
        *_costs(summary),
        *_feature_tests(summary),
        *_judges(summary),
        *_matching_profiles(summary),
        *_devices(summary),
        *_failure_analysis(summary),
        *_paired_comparison(summary),
        *agreement_blocks(summary.agreement),
        *_errors(summary),
        *_tasks(results, store),
    ]


def _overview(summary: RunSummary) -> list[Block]:
    """The title, the run's headline numbers and how to read them."""
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
                    percent(summary.sr)
                    + (
                        f" ({percent(summary.sr_ci[0])}-{percent(summary.sr_ci[1])})"
                        if summary.sr_ci
                        else ""
                    ),
                    percent(summary.cr),
                    percent(summary.da),
                    percent(summary.ra),
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
                f"{mapped.steps} ({percent(mapped.mapped / mapped.steps)}); the others "
                "were off the graph and count as wrong decisions unless they landed on a new node.",
            )
        )
    return blocks


def _success_charts(summary: RunSummary) -> list[Block]:
    """SR by scenario, syntax, semantics and app (beside the compared run's)."""
    blocks: list[Block] = []
    comparison = summary.comparison
    for dimension in CHART_DIMENSIONS:
        groups = summary.breakdowns.get(dimension, {})
        if not groups:
            continue
        other = comparison["other_breakdowns"].get(dimension, {}) if comparison else None
        bars = [(g, m["sr"], f"{percent(m['sr'])} (n={m['n']})") for g, m in groups.items()]
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
                    alt_notes=[percent(other.get(g)) for g in groups]
                    if other is not None
                    else None,
                ),
            )
        )
    return blocks


def _breakdown_tables(summary: RunSummary) -> list[Block]:
    """Every metric by each dimension's groups."""
    currency = summary.currency
    blocks: list[Block] = []
    blocks.append(("h2", "Breakdowns"))
    for dimension in DIMENSIONS:
        groups = summary.breakdowns.get(dimension, {})
        if groups:
            blocks.append(("h3", f"By {dimension}"))
            blocks.append(
                Table(_METRIC_HEADERS, [_metrics_row(g, m, currency) for g, m in groups.items()])
            )
    return blocks


def _latency(summary: RunSummary) -> list[Block]:
    """AIL against SR by app (when any app has both)."""
    blocks: list[Block] = []
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
    return blocks


def _costs(summary: RunSummary) -> list[Block]:
    """Tokens and cost of the agent and the judges, by app and in all."""
    currency = summary.currency
    apps = summary.breakdowns.get("app", {})
    blocks: list[Block] = []
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
    return blocks


def _feature_tests(summary: RunSummary) -> list[Block]:
    """Each feature against success (tested ones, then the untested)."""
    blocks: list[Block] = []
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
    return blocks


def _judges(summary: RunSummary) -> list[Block]:
    """Each judge against the human verdicts, and the review queue."""
    blocks: list[Block] = []
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
                        f"{percent(a['rate'])} ({a['agree']}/{a['n']})",
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
    return blocks


def _matching_profiles(summary: RunSummary) -> list[Block]:
    """What each other matching profile would have judged otherwise."""
    blocks: list[Block] = []
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
    return blocks


def _devices(summary: RunSummary) -> list[Block]:
    """The farm's devices (when there were several, or any trouble)."""
    blocks: list[Block] = []
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
    return blocks


def _failure_analysis(summary: RunSummary) -> list[Block]:
    """The analysed failures by primary cause."""
    blocks: list[Block] = []
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
                [
                    [c["category"], str(c["primary"]), percent(c["share"]), str(c["any"])]
                    for c in rows
                ],
            )
        )
        blocks.append(
            Chart(
                "failure_analysis",
                "Share of analysed failures by primary cause",
                bar_chart(
                    "Share of analysed failures by primary cause",
                    [(c["category"], c["share"], percent(c["share"])) for c in rows],
                ),
            )
        )
    return blocks


def _paired_comparison(summary: RunSummary) -> list[Block]:
    """The paired comparison with the other run (with --compare)."""
    blocks: list[Block] = []
    comparison = summary.comparison
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
                        percent(comparison["sr_a"]),
                        percent(comparison["sr_b"]),
                        percent(comparison["sr_difference"]),
                        (
                            f"{percent(ci['low'])} to {percent(ci['high'])}"
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
    return blocks


def _errors(summary: RunSummary) -> list[Block]:
    """The tasks that were not evaluated."""
    blocks: list[Block] = []
    if summary.errors:
        blocks.append(("h2", "Errors (not evaluated)"))
        blocks.append(
            Table(
                ("Task", "Kind", "Reason"),
                [[e.task_id, e.kind or "", e.reason or ""] for e in summary.errors],
            )
        )
    return blocks


def _tasks(results: list[TaskResult], store: RunStore) -> list[Block]:
    """Every task's status (a human verdict marked), steps, CR, tags and reason."""
    blocks: list[Block] = []
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
                    percent(r.completion_rate),
                    ", ".join(t.title for t in tags.get(r.task_id, ())),
                    r.reason or "",
                ]
                for r in results
            ],
        )
    )
    return blocks


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
