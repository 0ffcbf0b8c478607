"""``elderbench figures``: the figures of a paper from N run folders, as PDF and SVG.

``build_figures(runs)`` loads the runs as ``elderbench table`` does (the same labels, the
same refusal of runs on other suites or task sets unless ``allow_different_tasks``) and
makes the plots of ``evaluator.run_figures`` from each run's summary, plus the language
distributions of the runs' suite (beside ``against``: another suite or instruction file,
as ``analyze --against`` reads it). ``write_figures`` writes ``<name>.pdf`` and
``<name>.svg`` of each and ``figures.json``: every plot's data exactly as drawn, its
caption, the runs and the notes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError
from evaluator.language.distribution_figures import distribution_plots
from evaluator.language.instructions import (
    instruction_stats,
    read_instruction_set,
    suite_instructions,
)
from evaluator.plots import Plot, svg_and_pdf
from evaluator.prices import PriceTable, load_prices
from evaluator.run_figures import run_plots
from evaluator.tables import load_columns
from graph_builder.io import atomic_write_bytes, atomic_write_text

FIGURES_JSON = "figures.json"
FIGURES_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class FigureSet:
    runs: tuple[dict[str, Any], ...]  # label, path, suite, suite hash of each run
    plots: tuple[Plot, ...]
    notes: tuple[str, ...]  # differences between the runs, allowed by the caller

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": FIGURES_SCHEMA_VERSION,
            "runs": list(self.runs),
            "plots": [p.to_json() for p in self.plots],
            "notes": list(self.notes),
        }


def _language(suite: str | None, against: Path | None) -> list[Plot]:
    if suite is None or not Path(suite).is_dir():
        if against is not None:
            raise ConfigError(
                f"--against {against}: the runs' suite folder {suite or '(not recorded)'} is "
                "not there, so its language cannot be compared"
            )
        return []
    own = suite_instructions(Path(suite))
    other = read_instruction_set(against) if against is not None else None
    return distribution_plots(
        (own.name, instruction_stats(own.items)),
        (other.name, instruction_stats(other.items)) if other is not None else None,
        other_labelled=other.labelled if other is not None else True,
    )


def build_figures(
    runs: Sequence[Path],
    *,
    names: Mapping[Path, str] | None = None,
    against: Path | None = None,
    allow_different_tasks: bool = False,
    prices: PriceTable | None = None,
) -> FigureSet:
    prices = prices or load_prices()
    columns, notes = load_columns(
        runs, names=names, allow_different_tasks=allow_different_tasks, prices=prices
    )
    plots = run_plots([(c.label, c.summary) for c in columns], prices.currency)
    plots += _language(columns[0].suite_path, against)
    return FigureSet(
        runs=tuple(
            {"label": c.label, "path": c.path, "suite": c.suite_path, "suite_hash": c.suite_hash}
            for c in columns
        ),
        plots=tuple(plots),
        notes=tuple(notes),
    )


def write_figures(figures: FigureSet, out_dir: Path) -> list[Path]:
    """Each plot as PDF and SVG, and figures.json, into ``out_dir``; the written paths."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{out_dir}: exists and is not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for plot in figures.plots:
        pdf, svg = out_dir / f"{plot.name}.pdf", out_dir / f"{plot.name}.svg"
        svg_data, pdf_data = svg_and_pdf(plot)
        atomic_write_bytes(pdf, pdf_data)
        atomic_write_text(svg, svg_data)
        written += [pdf, svg]
    data = out_dir / FIGURES_JSON
    atomic_write_text(data, json.dumps(figures.to_json(), indent=2, ensure_ascii=False) + "\n")
    return [*written, data]
