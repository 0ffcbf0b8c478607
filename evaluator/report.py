"""A run folder's report: report.md and report.html with inline SVG figures.

``write_report(run_dir, compare=other)`` renders the numbers of
``evaluator.run_summary.summarize`` as a document (``evaluator.document``) and writes
report.md (figures as SVG files beside it) and report.html (figures inline). The figures
are drawn by the code of ``elderbench figures`` (``evaluator.run_figures``,
``evaluator.plots``) from the same summary.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from evaluator.asking import asking_blocks
from evaluator.document import Block, Chart, Table, percent, render_html, render_markdown
from evaluator.manifest import (
    ManifestError,
    essentials,
    essentials_json,
    essentials_lines,
    read_manifest,
)
from evaluator.metrics import DIMENSIONS, effective_status, tasks_phrase
from evaluator.plots import Plot, svg_text
from evaluator.prices import PriceTable
from evaluator.records import TaskResult
from evaluator.report_audit import agreement_blocks, bounds_blocks
from evaluator.run_figures import failure_shares, sr_against, sr_by_label
from evaluator.run_store import RunStore
from evaluator.run_summary import RunSummary, summarize

REPORT_JSON = "report.json"  # every number of the report, for `elderbench verify`

CHART_DIMENSIONS = ("scenario", "syntax", "semantics", "app")


def _num(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cost(value: float | None, currency: str) -> str:
    return "n/a (unpriced model)" if value is None else f"{value:.4f} {currency}"


def _side_by_side(summary: RunSummary, comparison: dict[str, Any]) -> Table:
    """The two runs' SR (with its CI), CR and DA in adjacent columns, on the tasks both
    evaluated (the paired test's base). Columns are named by instruction variant when the
    variants differ (original vs normalized), else by agent, else as this run and the other."""
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

    pairs = comparison["pairs"]
    return Table(
        (f"On the {pairs} tasks both evaluated", *(str(n).capitalize() for n in names)),
        [
            ["SR (95% CI)", *(sr(m) for m in columns)],
            ["CR", *(_cr_cell(m["cr"], m["bases"]) for m in columns)],
            ["DA", *(_da_cell(m["da"], m["bases"]) for m in columns)],
        ],
    )


def _cr_cell(cr: float | None, bases: dict[str, Any]) -> str:
    """``55.0% over 3 offline tasks``: CR averages over the tasks with a graph."""
    return f"{percent(cr)} over {tasks_phrase(bases['cr']['by_protocol'])}"


def _da_cell(da: float | None, bases: dict[str, Any]) -> str:
    """``60.0% (12 of 20 decisions; 3 offline tasks)``."""
    d = bases["da"]
    return (
        f"{percent(da)} ({d['correct']} of {d['decisions']} decisions; "
        f"{tasks_phrase(d['by_protocol'])})"
    )


def _sr_cell(m: dict[str, Any]) -> str:
    """``66.7% (38.4-88.2%), 4 of 6``: the SR over evaluated tasks, with its count."""
    if m["sr"] is None:
        return "n/a (0 evaluated)"
    ci = f"{percent(m['sr_low'])}-{percent(m['sr_high'])}"
    return f"{percent(m['sr'])} ({ci}), {m['successes']} of {m['n']}"


def _metrics_row(label: str, m: dict[str, Any], currency: str) -> list[str]:
    bases = _group_bases(m)
    return [
        label,
        str(m["n"]),
        str(m["errors"]),
        _sr_cell(m),
        f"{percent(m['sr_errors_as_failures'])} ({m['successes']} of {m['n'] + m['errors']})",
        _cr_cell(m["cr"], bases),
        _da_cell(m["da"], bases),
        f"{percent(m['ra'])} ({m['correct_reflections']} of {m['reflections']})",
        _num(m["ail"]),
        f"{m['input_tokens']}/{m['output_tokens']}",
        _cost(m["cost"], currency),
    ]


def _group_bases(m: dict[str, Any]) -> dict[str, Any]:
    """The bases of a group's JSON (``GroupMetrics.to_json``) in ``bases()`` form."""
    return {
        "cr": {"by_protocol": m["cr_tasks"]},
        "da": {
            "correct": m["correct_decisions"],
            "decisions": m["decisions"],
            "by_protocol": m["da_tasks"],
        },
    }


_METRIC_HEADERS = (
    "Group",
    "Evaluated",
    "Errors",
    "SR (95% CI), successes of evaluated",
    "SR with errors as failures",
    "CR over tasks with a graph",
    "DA (correct of decisions)",
    "RA (correct of reflections)",
    "AIL (s/step)",
    "Tokens in/out",
    "Cost",
)


def _blocks(
    summary: RunSummary, results: list[TaskResult], store: RunStore, pinned: str
) -> list[Block]:
    """The report's document, section by section; ``pinned`` goes under the headline table."""
    return [
        *_overview(summary, pinned),
        *bounds_blocks(summary.bounds),
        *_success_charts(summary),
        *_breakdown_tables(summary),
        *_latency(summary),
        *_costs(summary),
        *asking_blocks(summary.asking),
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


def _overview(summary: RunSummary, pinned: str) -> list[Block]:
    """The title, the run's headline numbers with their bases, what pins them, and how to
    read them."""
    currency = summary.currency
    counts = summary.counts
    bases = summary.bases
    whole = bases["sr_errors_as_failures"]
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
                "SR (95% CI), successes of evaluated",
                "SR with errors as failures",
                "CR over tasks with a graph",
                "DA (correct of decisions)",
                "RA (correct of reflections)",
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
                    (
                        f"{percent(summary.sr)} ({percent(summary.sr_ci[0])}-"
                        f"{percent(summary.sr_ci[1])}), "
                        f"{bases['sr']['successes']} of {bases['sr']['evaluated']}"
                        if summary.sr_ci
                        else "n/a (0 evaluated)"
                    ),
                    f"{percent(whole['value'])} ({whole['successes']} of {whole['tasks']})",
                    _cr_cell(summary.cr, bases),
                    _da_cell(summary.da, bases),
                    f"{percent(summary.ra)} ({bases['ra']['correct']} of "
                    f"{bases['ra']['reflections']})",
                    _num(summary.ail),
                    f"{summary.input_tokens}/{summary.output_tokens}",
                    _cost(summary.cost, currency),
                ]
            ],
        ),
        ("p", pinned),
        ("p", summary.sr_line + "."),
        ("p", _rate_bases(summary)),
        (
            "p",
            "SR counts successes among evaluated tasks (errors are listed apart; the SR "
            "with errors as failures counts every task). CR: the "
            "share of the shortest ground-truth path (plus done) that the agent's best state "
            "covered; 100% only when it said done on a DONE node. DA: decisions that reached "
            "a new node from which DONE is still reachable (loops, detours and no-ops are "
            "wrong); answer, ask-user and give-up steps are not decisions. RA: correct "
            "reflections. AIL: inference and parsing seconds per step of the evaluated tasks "
            f"({bases['ail']['steps']} steps; retries and backoff apart). Retries and "
            f"backoff, errored tasks and failed calls included: the agent's calls "
            f"{_num(summary.retry_seconds)} s over all {summary.counts.tasks} tasks; the "
            f"judges' calls {_num(summary.judge_retry_seconds)} s over their "
            f"{summary.judge_calls} calls (re-judging included).",
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


def _rate_bases(summary: RunSummary) -> str:
    """Which tasks SR, CR and DA count: the same ones, or, in a suite whose online tasks
    have no graph, which; and the steps DA does not score."""
    bases = summary.bases
    evaluated = bases["sr"]["evaluated"]
    cr, da = bases["cr"], bases["da"]
    if cr["tasks"] == da["tasks"] == evaluated:
        text = f"SR, CR and DA count the same {evaluated} evaluated tasks"
    else:
        text = (
            f"SR counts {evaluated} evaluated tasks; CR only the "
            f"{tasks_phrase(cr['by_protocol'])} with a graph, and DA the {da['decisions']} "
            f"decisions of {tasks_phrase(da['by_protocol'])}"
        )
    if da["unscored_steps"]:
        text += (
            f"; {da['unscored_steps']} step(s) are not decisions (answer, ask user, give up, "
            "or online without a graph) and are not in DA"
        )
    return text + "."


def _chart(plot: Plot | None) -> list[Block]:
    return (
        [] if plot is None else [Chart(plot.name, plot.title, svg_text(plot)), ("p", plot.caption)]
    )


def _run_label(summary: RunSummary) -> str:
    return f"{summary.agent} ({summary.variant})" if summary.variant else str(summary.agent)


def _success_charts(summary: RunSummary) -> list[Block]:
    """SR by scenario, syntax, semantics and app, beside the compared run's."""
    runs = [(_run_label(summary), summary.to_json())]
    if summary.comparison:
        other = summarize(Path(summary.comparison["other_run"]))  # SRs: no prices needed
        label = _run_label(other)
        runs.append((label if label != runs[0][0] else f"{label}, compared", other.to_json()))
    return _chart(sr_by_label(runs, CHART_DIMENSIONS))


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
    plot = sr_against(
        "latency_vs_sr",
        "Latency against success by app",
        summary.breakdowns.get("app", {}),
        "ail",
        "AIL (s per step)",
        "One point per app: AIL (seconds of inference and parsing per step of its evaluated "
        "tasks) against SR over its evaluated tasks, whiskers the 95% Wilson interval.",
    )
    return [] if plot is None else [("h2", "Latency and success"), *_chart(plot)]


def _costs(summary: RunSummary) -> list[Block]:
    """Tokens and cost of the agent and the judges, by app and in all; the simulated
    user's apart."""
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
    if summary.user_input_tokens or summary.user_output_tokens:
        blocks.append(
            (
                "p",
                f"The simulated user (--user-simulator) spent "
                f"{summary.user_input_tokens}/{summary.user_output_tokens} tokens in/out, "
                f"{_cost(summary.user_cost, currency)}, failed calls included; the Cost "
                "column includes it.",
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
                "nodes matched again under each other matching profile: the steps it "
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
        blocks += _chart(failure_shares([(_run_label(summary), summary.to_json())]))
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
                f"({comparison['other_agent']}, {comparison['other_variant']}) on the "
                f"{comparison['pairs']} tasks both evaluated: every number of both tables "
                f"counts these tasks. {_left_out(comparison['left_out'])}",
            )
        )
        blocks.append(_side_by_side(summary, comparison))
        own_this, own_other = comparison["own"]
        blocks.append(
            ("p", f"Each run on its own tasks: this run {own_this}; the other run {own_other}.")
        )
        pairs = comparison["pairs"]
        blocks.append(
            Table(
                (
                    f"SR this run ({pairs} tasks)",
                    f"SR other ({pairs} tasks)",
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


def _left_out(left: dict[str, list[str]]) -> str:
    """The tasks left out of the pairs, and why (``Comparison.left_out``)."""

    def named(tasks: list[str]) -> str:
        shown = ", ".join(tasks[:8]) + (f", ... ({len(tasks)} in all)" if len(tasks) > 8 else "")
        return f"{len(tasks)} ({shown})"

    parts = [
        f"{what}: {named(left[key])}"
        for key, what in (
            ("errors_a", "errors of this run"),
            ("errors_b", "errors of the other run"),
            ("missing_a", "tasks only the other run has"),
            ("missing_b", "tasks only this run has"),
        )
        if left.get(key)
    ]
    return ("Left out: " + "; ".join(parts) + ".") if parts else "No task is left out."


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


def manifest_blocks(run_dir: Path) -> list[Block]:
    """What pins the run (evaluator.manifest), under the report's tables."""
    try:
        data = read_manifest(run_dir)
    except ManifestError as exc:
        return [("h2", "Manifest"), ("p", str(exc))]
    if data is None:
        return []
    return [("h2", "Manifest"), *(("p", line) for line in essentials(data))]


def pinned_line(run_dir: Path) -> str:
    """The manifest's essentials in one line, for under a table."""
    try:
        data = read_manifest(run_dir)
    except ManifestError as exc:
        return f"Manifest: {exc}"
    if data is None:
        return "Manifest: none (a run of an older version); its numbers are not pinned."
    return "Manifest: " + "; ".join(essentials_lines(essentials_json(data), short=True)) + "."


def manifest_json(run_dir: Path) -> dict[str, Any] | None:
    """The manifest's essentials (None: the run has no readable manifest), for --json."""
    try:
        data = read_manifest(run_dir)
    except ManifestError:
        return None
    return essentials_json(data) if data is not None else None


_FIGURE_LINE = re.compile(r"^!\[(?P<title>[^\]]*)\]\((?P<file>report_[\w.-]+\.svg)\)$")


def report_figures(run_dir: Path) -> list[tuple[str, Path]]:
    """The figures of the run's report.md, in its order, as (title, SVG file); the files
    a report of an older version left beside it are not among them."""
    md = Path(run_dir) / "report.md"
    try:
        lines = md.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found = [m for line in lines if (m := _FIGURE_LINE.match(line))]
    return [(m["title"], Path(run_dir) / m["file"]) for m in found]


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
    blocks = [
        *_blocks(summary, store.results(), store, pinned_line(run_dir)),
        *manifest_blocks(run_dir),
    ]
    for block in blocks:
        if isinstance(block, Chart):
            store.write_text(f"report_{block.name}.svg", block.svg)
    md = store.write_text("report.md", render_markdown(blocks))
    title = str(blocks[0][1]) if isinstance(blocks[0], tuple) else "Evaluation report"
    page = store.write_text("report.html", render_html(blocks, title))
    store.write_text(REPORT_JSON, json.dumps(summary.to_json(), indent=2, ensure_ascii=False))
    return md, page
