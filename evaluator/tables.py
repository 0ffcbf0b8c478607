"""The tables of a paper from N runs: headline metrics, paired tests, SR per label.

``build_tables(runs)`` reads every number from ``run_summary.summarize`` (what ``report
--json`` prints) and the paired tests from ``metrics.compare_runs`` (what ``report
--compare`` prints), so a table never computes a rate of its own;
``evaluator.table_formats`` writes them as Markdown, LaTeX, CSV or JSON.

- ``main``: one row per run: SR over all tasks, offline and online tasks (95% Wilson
  interval, successes of evaluated), CR, DA, AIL, agent tokens, cost; ``best`` names the
  columns where the run has the best value.
- ``pairs``: every two runs on the tasks both evaluated: SRs, their difference with its
  paired-bootstrap CI, the discordant counts, the exact McNemar p and the p adjusted
  (Holm) across all pairs of the table.
- ``labels``: SR per scenario, syntax and semantics label and run, with each group's size.

Runs on different suites (by ``evaluator.manifest.suite_hash``) or different task sets are refused
unless ``allow_different_tasks``; then each difference becomes a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from evaluator.errors import EvaluatorError
from evaluator.manifest import (
    ManifestError,
    essentials_json,
    read_manifest,
    short_hash,
    suite_hash,
)
from evaluator.metrics import compare_runs, group_rate, paired_outcomes
from evaluator.prices import PriceTable, load_prices
from evaluator.run_store import RunStore
from evaluator.run_summary import summarize
from evaluator.stats import holm

LABEL_DIMENSIONS = ("syntax", "semantics", "scenario")

# Column of the main table -> True when a higher value is better.
HIGHER_IS_BETTER: dict[str, bool] = {
    "sr": True,
    "sr_offline": True,
    "sr_online": True,
    "cr": True,
    "da": True,
    "ail": False,
    "tokens_in": False,
    "tokens_out": False,
    "cost": False,
}


class TableError(EvaluatorError):
    """The runs cannot share a table (other suites, other tasks, duplicate names)."""


def _read_manifest(run: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The run's manifest, or None and why not (none yet, or unreadable)."""
    try:
        manifest = read_manifest(run)
    except ManifestError as exc:
        return None, str(exc)
    if manifest is None:
        return None, f"{run} has no manifest.json (made by an older version)"
    return manifest, None


def _suite_hash(manifest: Mapping[str, Any] | None, suite: str | None) -> str | None:
    """The suite's content hash as the run's manifest recorded it, else as it is now
    (``evaluator.manifest.suite_hash``); None when neither can be had."""
    recorded = (manifest or {}).get("suite", {})
    if isinstance(recorded, dict) and isinstance(recorded.get("hash"), str):
        return str(recorded["hash"])
    return suite_hash(Path(suite)) if suite is not None and Path(suite).is_dir() else None


@dataclass(frozen=True, slots=True)
class RunColumn:
    """One run of the table: its label, folder, suite and the summary's JSON."""

    label: str
    path: str
    suite_path: str | None
    suite_hash: str | None  # None: the suite folder is not there to hash
    task_ids: tuple[str, ...]
    summary: dict[str, Any]
    manifest: dict[str, Any] | None  # evaluator.manifest.essentials_json; None: see below
    manifest_problem: str | None  # why there is no manifest to show


@dataclass(frozen=True, slots=True)
class Tables:
    runs: tuple[RunColumn, ...]
    main: tuple[dict[str, Any], ...]
    pairs: tuple[dict[str, Any], ...]
    labels: tuple[dict[str, Any], ...]
    notes: tuple[str, ...]  # differences between the runs, allowed by the caller
    currency: str

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [
                {
                    "label": r.label,
                    "path": r.path,
                    "suite": r.suite_path,
                    "suite_hash": r.suite_hash,
                    "variant": r.summary["variant"],
                    "mode": r.summary["mode"],
                    "matching": r.summary["matching"],
                    "tasks": len(r.task_ids),
                    "manifest_problem": r.manifest_problem,
                }
                for r in self.runs
            ],
            "main": list(self.main),
            "pairs": list(self.pairs),
            "labels": list(self.labels),
            "notes": list(self.notes),
            "manifests": {r.label: r.manifest for r in self.runs},
            "currency": self.currency,
        }


def default_label(summary: Mapping[str, Any]) -> str:
    """``model (variant)``; the agent's name stands in for a run without a model."""
    who = summary.get("model") or summary.get("agent") or Path(summary["run"]).name
    return f"{who} ({summary['variant']})" if summary.get("variant") else str(who)


def build_tables(
    runs: Sequence[Path],
    *,
    names: Mapping[Path, str] | None = None,
    allow_different_tasks: bool = False,
    prices: PriceTable | None = None,
    seed: int = 0,
    resamples: int = 10_000,
) -> Tables:
    """The three tables of ``runs`` (labels from ``names``, keyed by run folder, else
    ``default_label``). Raises TableError naming every difference between the runs'
    suites and task sets unless ``allow_different_tasks``."""
    prices = prices or load_prices()
    columns, notes = load_columns(
        runs, names=names, allow_different_tasks=allow_different_tasks, prices=prices
    )
    stores = [RunStore.open(Path(r)) for r in runs]
    return Tables(
        runs=tuple(columns),
        main=_mark_best([_main_row(c) for c in columns]),
        pairs=_pairs(columns, stores, seed=seed, resamples=resamples),
        labels=_label_rows(columns),
        notes=tuple(notes),
        currency=prices.currency,
    )


def load_columns(
    runs: Sequence[Path],
    *,
    names: Mapping[Path, str] | None = None,
    allow_different_tasks: bool = False,
    prices: PriceTable | None = None,
) -> tuple[list[RunColumn], list[str]]:
    """Each run's label, suite and summary, and the differences between them; raises
    TableError naming every difference unless ``allow_different_tasks`` (the figures of
    ``elderbench figures`` are refused on the same grounds as a table)."""
    if not runs:
        raise TableError("name at least one run folder")
    prices = prices or load_prices()
    names = {Path(k).resolve(): v for k, v in (names or {}).items()}
    columns = [_column(Path(r), names, prices) for r in runs]
    _check_labels(columns)
    notes = _differences(columns)
    if notes and not allow_different_tasks:
        raise TableError(
            "these runs cannot share one table or figure: "
            + "; ".join(notes)
            + ". Pass --allow-different-tasks to put them together with these differences "
            "as notes."
        )
    return columns, notes


def _column(run: Path, names: Mapping[Path, str], prices: PriceTable) -> RunColumn:
    summary = summarize(run, prices=prices).to_json()
    store = RunStore.open(run)
    info = store.info()
    suite = info.get("suite", {}).get("path")
    manifest, problem = _read_manifest(run)
    return RunColumn(
        label=names.get(run.resolve()) or default_label(summary),
        path=str(run),
        suite_path=suite,
        suite_hash=_suite_hash(manifest, suite),
        task_ids=tuple(sorted(r.task_id for r in store.results())),
        summary=summary,
        manifest=essentials_json(manifest) if manifest is not None else None,
        manifest_problem=problem,
    )


def _check_labels(columns: Sequence[RunColumn]) -> None:
    seen: dict[str, str] = {}
    for c in columns:
        if c.label in seen:
            raise TableError(
                f"{seen[c.label]} and {c.path} would both be named {c.label!r}; "
                f"name one with --name {c.path}=LABEL"
            )
        seen[c.label] = c.path


def _differences(columns: Sequence[RunColumn]) -> list[str]:
    """Each way a run differs from the first: its suite's content, its tasks."""
    first, out = columns[0], []
    for c in columns:
        if c.suite_hash is None:
            out.append(
                f"{c.label}: its suite folder {c.suite_path or '(not recorded)'} is not there, "
                "so its content cannot be compared"
            )
    for c in columns[1:]:
        if c.suite_hash and first.suite_hash and c.suite_hash != first.suite_hash:
            out.append(
                f"{c.label} ran on suite {c.suite_path} (content {short_hash(c.suite_hash)}), "
                f"{first.label} on {first.suite_path} (content {short_hash(first.suite_hash)})"
            )
        extra = sorted(set(c.task_ids) - set(first.task_ids))
        missing = sorted(set(first.task_ids) - set(c.task_ids))
        if extra:
            out.append(f"{c.label} has {len(extra)} task(s) {first.label} lacks: {_few(extra)}")
        if missing:
            out.append(f"{c.label} lacks {len(missing)} task(s) of {first.label}: {_few(missing)}")
    return out


def _few(ids: Sequence[str], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _main_row(c: RunColumn) -> dict[str, Any]:
    s, bases = c.summary, c.summary["bases"]
    low, high = s["sr_ci"] if s["sr_ci"] is not None else (None, None)
    protocol = s["breakdowns"].get("protocol", {})
    return {
        "run": c.label,
        "sr": {
            "value": s["sr"],
            "low": low,
            "high": high,
            "successes": bases["sr"]["successes"],
            "evaluated": bases["sr"]["evaluated"],
            "errors": bases["sr"]["errors"],
        },
        "sr_errors_as_failures": dict(bases["sr_errors_as_failures"]),
        "sr_offline": group_rate(protocol.get("offline")),
        "sr_online": group_rate(protocol.get("online")),
        "cr": {"value": s["cr"], "tasks": bases["cr"]["tasks"]},
        "da": {
            "value": s["da"],
            "correct": bases["da"]["correct"],
            "decisions": bases["da"]["decisions"],
        },
        "ail": {"value": s["ail"], "steps": bases["ail"]["steps"]},
        "tokens_in": {"value": s["tokens"]["input"]},
        "tokens_out": {"value": s["tokens"]["output"]},
        "cost": {"value": s["cost"], "unpriced_models": list(s["unpriced_models"])},
        "best": [],
    }


def _mark_best(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], ...]:
    """Name in each row the columns where its value is the best; ties are all marked,
    and a column where every run has the same value marks none."""
    for column, higher in HIGHER_IS_BETTER.items():
        values = [v for r in rows if r[column] and (v := r[column]["value"]) is not None]
        if len(set(values)) < 2:
            continue
        best = max(values) if higher else min(values)
        for r in rows:
            if r[column] and r[column]["value"] == best:
                r["best"].append(column)
    return tuple(rows)


def _pairs(
    columns: Sequence[RunColumn], stores: Sequence[RunStore], *, seed: int, resamples: int
) -> tuple[dict[str, Any], ...]:
    rows = []
    loaded = [(s.results(), s.overrides()) for s in stores]
    for (i, a), (j, b) in combinations(enumerate(columns), 2):
        (results_a, overrides_a), (results_b, overrides_b) = loaded[i], loaded[j]
        found = compare_runs(
            results_a, results_b, overrides_a, overrides_b, seed=seed, resamples=resamples
        ).to_json()
        outcomes = paired_outcomes(results_a, results_b, overrides_a, overrides_b).values()
        ci = found["ci"] or {}
        rows.append(
            {
                "a": a.label,
                "b": b.label,
                "pairs": found["pairs"],
                "sr_a": found["sr_a"],
                "sr_b": found["sr_b"],
                "successes_a": sum(1 for won, _ in outcomes if won),
                "successes_b": sum(1 for _, won in outcomes if won),
                "sr_difference": found["sr_difference"],
                "ci_low": ci.get("low"),
                "ci_high": ci.get("high"),
                "only_a": found["only_a"],
                "only_b": found["only_b"],
                "mcnemar_p": found["mcnemar_p"],
                "left_out": found["left_out"],
            }
        )
    for row, adjusted in zip(rows, holm([r["mcnemar_p"] for r in rows]), strict=True):
        row["holm_p"] = adjusted
    return tuple(rows)


def _label_rows(columns: Sequence[RunColumn]) -> tuple[dict[str, Any], ...]:
    rows = []
    for dimension in LABEL_DIMENSIONS:
        groups = sorted({g for c in columns for g in c.summary["breakdowns"].get(dimension, {})})
        for group in groups:
            rows.append(
                {
                    "dimension": dimension,
                    "label": group,
                    "runs": {
                        c.label: group_rate(c.summary["breakdowns"].get(dimension, {}).get(group))
                        for c in columns
                    },
                }
            )
    return tuple(rows)
