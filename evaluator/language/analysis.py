"""``elderbench analyze``: everything about the language of a suite's requests, together.

``analyze(suite, against=..., runs=[...])`` gathers the instruction statistics, the
comparison with another set, the agreement of label proposals with verified labels, the
feature correlations and interactions over the runs, and each run's failure analysis;
``to_json`` is what ``--json`` prints and ``blocks`` feeds the md/html report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.document import Block, Chart, Table, percent, render_html, render_markdown
from evaluator.language.attribution import (
    MIN_GROUP,
    FeatureTest,
    InteractionAnalysis,
    correlations,
    feature_matrix,
    interactions,
    observations,
)
from evaluator.language.distribution_figures import distribution_plots
from evaluator.language.failures import FailureAnalysis, failure_analysis
from evaluator.language.instructions import (
    InstructionSet,
    InstructionStats,
    SetComparison,
    compare_sets,
    instruction_stats,
    read_instruction_set,
    suite_instructions,
)
from evaluator.language.proposals import DimensionAgreement, label_agreement
from evaluator.plots import svg_text
from evaluator.run_store import RunStore
from evaluator.stats import ContingencyTest
from graph_builder.io import atomic_write_text


@dataclass(frozen=True, slots=True)
class Analysis:
    suite: str
    instructions: InstructionStats
    comparison: SetComparison | None
    labelling: tuple[DimensionAgreement, ...]
    runs: tuple[str, ...]
    correlations: tuple[FeatureTest, ...]
    interactions: InteractionAnalysis | None
    failures: dict[str, FailureAnalysis]
    notes: tuple[str, ...]  # what could not be computed, in plain words

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "instructions": self.instructions.to_json(),
            "comparison": self.comparison.to_json() if self.comparison else None,
            "labelling": [a.to_json() for a in self.labelling],
            "runs": list(self.runs),
            "correlations": [c.to_json() for c in self.correlations],
            "interactions": self.interactions.to_json() if self.interactions else None,
            "failures": {run: f.to_json() for run, f in self.failures.items()},
            "notes": list(self.notes),
        }


def analyze(
    suite: Path,
    *,
    against: Path | None = None,
    runs: Sequence[Path] = (),
    min_group: int = MIN_GROUP,
) -> Analysis:
    suite = Path(suite)
    own: InstructionSet = suite_instructions(suite)
    other = read_instruction_set(against) if against else None
    notes: list[str] = []
    if other is not None and not other.labelled:
        notes.append(f"{other.name} carries no labels: only lengths are compared")
    loaded = []
    failures: dict[str, FailureAnalysis] = {}
    for run in runs:
        store = RunStore.open(run)
        loaded.append((Path(run).name, store.results(), store.overrides()))
        failures[Path(run).name] = failure_analysis(store)
    corr: list[FeatureTest] = []
    inter = None
    if loaded:
        obs = observations(loaded)
        if not obs:
            notes.append("the runs hold no evaluated task (only errors): no attribution")
        else:
            matrix = feature_matrix(obs)
            corr = correlations(matrix, min_group=min_group)
            tasks = len({o.task_id for o in obs})
            inter = interactions(matrix, tasks=tasks, min_support=min_group)
            if min(int(matrix.y.sum()), len(obs) - int(matrix.y.sum())) < min_group:
                notes.append(
                    f"fewer than {min_group} successes or failures: interactions are not "
                    "identifiable and are shown for completeness only"
                )
    return Analysis(
        suite=suite.name or str(suite),
        instructions=instruction_stats(own.items),
        comparison=compare_sets(own, other) if other else None,
        labelling=tuple(label_agreement(suite)),
        runs=tuple(Path(r).name for r in runs),
        correlations=tuple(corr),
        interactions=inter,
        failures=failures,
        notes=tuple(notes),
    )


# --------------------------------------------------------------------------- report


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:+.{digits}f}"


def blocks(a: Analysis) -> list[Block]:
    """The analysis as a document (evaluator.document), section by section."""
    return [
        *_instructions(a),
        *_set_comparison(a),
        *_labelling(a),
        *_features(a),
        *_failures(a),
        *(("p", note) for note in a.notes),
    ]


def _instructions(a: Analysis) -> list[Block]:
    """The instruction statistics (beside the other set's) and their charts."""
    s = a.instructions
    out: list[Block] = [
        ("h1", f"Language of the requests: {a.suite}"),
        ("h2", "Instructions"),
        Table(
            ["Statistic", a.suite, *([a.comparison.name_b] if a.comparison else [])],
            _stat_rows(s, a.comparison.stats_b if a.comparison else None),
        ),
    ]
    c = a.comparison
    plots = distribution_plots(
        (a.suite, s),
        (c.name_b, c.stats_b) if c else None,
        other_labelled=bool(c.labels) if c else True,
    )
    for plot in plots:
        out += [Chart(plot.name, plot.title, svg_text(plot)), ("p", plot.caption)]
    return out


def _set_comparison(a: Analysis) -> list[Block]:
    """Each category's share in the two sets, with its test."""
    out: list[Block] = []
    if a.comparison:
        c = a.comparison
        rows = [
            [
                t.category,
                f"{t.count_a}/{t.n_a} ({percent(t.share_a)})",
                f"{t.count_b}/{t.n_b} ({percent(t.share_b)})",
                t.test,
                _p(t.p_value),
            ]
            for t in (c.length, *c.labels)
        ]
        out += [
            ("h2", f"{c.name_a} against {c.name_b}"),
            ("p", _length_bins_line(c.length_bins)),
            Table(["Category", c.name_a, c.name_b, "Test", "p"], rows),
        ]
    return out


def _length_bins_line(t: ContingencyTest) -> str:
    """The length-bin test, and why it is exact when the chi-square approximation fails."""
    head = f"Length distribution ({t.cells // 2} bins with instructions)"
    if t.test == "chi-square":
        return f"{head}, chi-square p = {_p(t.p_value)} (every expected count at least 5)."
    exact = (
        "Fisher's exact test"
        if t.test == "fisher"
        else f"exact test by {t.resamples:,} random tables with the same margins (seed {t.seed})"
    )
    return (
        f"{head}: {t.small_expected} of {t.cells} expected counts are under 5, so the "
        f"chi-square approximation does not hold (it would say p = {_p(t.chi_square_p)}); "
        f"{exact}, p = {_p(t.p_value)}."
    )


def _labelling(a: Analysis) -> list[Block]:
    """How the label proposals agree with the verified labels."""
    out: list[Block] = []
    if any(x.tasks for x in a.labelling):
        out += [
            ("h2", "Label proposals against verified labels"),
            Table(
                ["Dimension", "Tasks", "Exact match", "Label decisions", "Agreement", "Kappa"],
                [
                    [
                        x.dimension,
                        str(x.tasks),
                        percent(x.exact),
                        str(x.decisions.n),
                        percent(x.decisions.observed),
                        "undefined (one category only)"
                        if x.decisions.kappa is None and x.decisions.n
                        else _num(x.decisions.kappa),
                    ]
                    for x in a.labelling
                ],
            ),
        ]
    return out


def _features(a: Analysis) -> list[Block]:
    """Each feature against success over the runs, and the pairwise interactions."""
    out: list[Block] = []
    if a.runs:
        out += [("h2", "Features and success"), ("p", f"Runs: {', '.join(a.runs)}.")]
        tested = [c for c in a.correlations if c.r is not None]
        out.append(
            Table(
                ["Feature", "r", "p", "p (Holm)", "q (BH)", "Holders"],
                [
                    [
                        c.feature,
                        _num(c.r),
                        _p(c.p_value),
                        _p(c.p_holm),
                        _p(c.q_bh),
                        "continuous" if c.holders is None else str(c.holders),
                    ]
                    for c in sorted(tested, key=lambda c: c.p_value or 1.0)
                ],
            )
        )
        skipped = [c for c in a.correlations if c.r is None]
        if skipped:
            out.append(
                ("p", "Not tested: " + "; ".join(f"{c.feature} ({c.note})" for c in skipped))
            )
        if a.interactions:
            i = a.interactions
            out.append(("h3", "Pairwise interactions (factorization machine)"))
            out.append(
                (
                    "p",
                    f"{i.observations} observations of {i.tasks} tasks. Weight: the mean of "
                    f"{len(i.seeds)} seeded fits on all observations. Sign stability: the share "
                    f"of {i.resamples} bootstrap refits whose weight has the same sign. Pairs "
                    f"need {i.min_support} observations holding both features. With few "
                    "observations these weights describe this data; they are no test.",
                )
            )
            out.append(
                Table(
                    ["Interaction", "Weight", "Sign stability", "Support"],
                    [
                        [
                            f"{x.first} × {x.second}",
                            _num(x.weight, 2),
                            percent(x.sign_agreement),
                            str(x.support),
                        ]
                        for x in (*i.positive, *i.negative)
                    ],
                )
            )
    return out


def _failures(a: Analysis) -> list[Block]:
    """Each run's analysed failures."""
    out: list[Block] = []
    for run, f in a.failures.items():
        out.append(("h2", f"Failure analysis: {run}"))
        out.append(
            (
                "p",
                f"{f.analysed} of {f.failures} failures analysed"
                + (
                    f"; {f.proposals_pending} model proposals await review"
                    if f.proposals_pending
                    else ""
                )
                + (
                    f"; {f.set_aside} tags on tasks that did not fail set aside"
                    if f.set_aside
                    else ""
                )
                + ".",
            )
        )
        if f.analysed:
            out.append(
                Table(
                    ["Category", "Primary cause", "Share of analysed failures", "Tagged at all"],
                    [
                        [c.title, str(c.primary), percent(c.share), str(c.any_tag)]
                        for c in f.categories
                    ],
                )
            )
    return out


def _stat_rows(s: InstructionStats, b: InstructionStats | None) -> list[list[str]]:
    def row(name: str, get: Any) -> list[str]:
        return [name, get(s), *([get(b)] if b else [])]

    return [
        row("Instructions", lambda x: str(x.n)),
        row("Characters, mean / median", lambda x: f"{x.mean_chars:.1f} / {x.median_chars:g}"),
        row("Words, mean / median", lambda x: f"{x.mean_words:.1f} / {x.median_words:g}"),
        row(
            "Under 20 characters",
            lambda x: f"{x.count_under_20} ({percent(x.share_under_20)})",
        ),
        row("Verbs, mean", lambda x: f"{x.mean_verbs:.2f}"),
        row("Two or more verbs", lambda x: percent(x.share_multi_verb)),
    ]


def write_analysis(a: Analysis, out_dir: Path) -> tuple[Path, Path]:
    """analysis.md (with its SVG files) and analysis.html into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = blocks(a)
    for block in parts:
        if isinstance(block, Chart):
            atomic_write_text(out_dir / f"report_{block.name}.svg", block.svg)
    md, page = out_dir / "analysis.md", out_dir / "analysis.html"
    atomic_write_text(md, render_markdown(parts))
    atomic_write_text(page, render_html(parts, f"Language of the requests: {a.suite}"))
    return md, page
