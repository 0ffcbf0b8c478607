"""State identity on real screens, leave one source out: the rules and the calibration.

    .venv/bin/python benchmarks/identity_loso.py [--data DIR ...] [--learn] [--bins 5]

Reads one or more labelled folders (``screens.tsv`` + ``pairs.tsv``, the layout of
``../shared/fixtures/real/dev_screens``; the default is that folder, plus
``../devdata/real_screens`` beside the repository when it exists). Dump-only captures
(no screenshot) are left out. A **source** is a data folder's
sub-folder (one public repository, one phone). For each source in turn it is left out:

- the rules of ``compare()`` decide every labelled pair of the left-out source's screens
  (nothing in them is fitted, so they are the same in every fold; the figure still
  counts only that source's pairs);
- the calibration (``graph_builder.calibration``) is fitted on the pairs whose screens all
  come from the other sources and scores the left-out pairs: Brier score and a
  reliability table over every left-out pair, so the probabilities are measured on
  screens they were not fitted on.

With ``--learn`` each source's screens first teach ambient slots
(``graph_builder.roles.learn_ambient_slots``, from the screens alone, no labels), as a
build does per task. It prints precision and recall per source and their macro average
over sources, and the coefficients fitted on all sources (the defaults of
``SimilaritySettings.calibration``).
Targets (issue 22): precision 1.000, recall >= 0.90, macro over sources.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from real_screens import Counts  # this folder is on the path when a benchmark runs

from graph_builder.calibration import FEATURES, feature_row, fit_logistic, probability
from graph_builder.model import Observation
from graph_builder.roles import learn_ambient_slots
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings, Verdict, compare, screen_features

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared/fixtures/real/dev_screens"
MORE_DATA = ROOT.parent / "devdata/real_screens"


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    positive: bool


def load_pairs(data: Path) -> list[Pair]:
    """The labelled pairs, ambiguous ones left out."""
    with (data / "pairs.tsv").open(encoding="utf-8", newline="") as fh:
        return [
            Pair(row["a"], row["b"], row["kind"] == "positive")
            for row in csv.DictReader(fh, delimiter="\t")
            if row["kind"] != "ambiguous"
        ]


def _source(screen_id: str, data: Path) -> str:
    return f"{data.name}/{screen_id.rpartition('_')[0]}"


def load_screens(data: Path) -> tuple[dict[str, Screen], dict[str, str]]:
    """The screens with a screenshot (lazy files, no activity) and their labels; dump-only
    captures are left out (their pairs are not compared)."""
    states: dict[str, Screen] = {}
    labels: dict[str, str] = {}
    with (data / "screens.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if not row["png"]:
                continue
            with Image.open(data / row["png"]) as image:
                size = image.size
            obs = Observation(screenshot=row["png"], screen=size, hierarchy=row["xml"])
            states[row["id"]] = Screen.from_observation(obs, data)
            labels[row["id"]] = row["label"]
    return states, labels


def _load(
    folders: list[Path],
) -> tuple[dict[str, Screen], dict[str, str], list[Pair], dict[str, str]]:
    states: dict[str, Screen] = {}
    labels: dict[str, str] = {}
    pairs: list[Pair] = []
    sources: dict[str, str] = {}
    for data in folders:
        found, named = load_screens(data)
        prefix = f"{data.name}:"
        for key, state in found.items():
            states[prefix + key] = state
            labels[prefix + key] = named[key]
            sources[prefix + key] = _source(key, data)
        pairs += [
            Pair(prefix + p.a, prefix + p.b, p.positive)
            for p in load_pairs(data)
            if p.a in found and p.b in found
        ]
    return states, labels, pairs, sources


def _learned_settings(
    states: dict[str, Screen], sources: dict[str, str], settings: SimilaritySettings
) -> dict[str, SimilaritySettings]:
    """Per source: the settings with the ambient slots its own screens teach."""
    by_source: dict[str, list[str]] = defaultdict(list)
    for key, source in sources.items():
        by_source[source].append(key)
    out = {}
    for source, keys in by_source.items():
        screens = [
            (key, tokens)  # each screen counts as its own recording
            for key in keys
            if (tokens := screen_features(states[key], settings).tokens) is not None
        ]
        slots = learn_ambient_slots(screens, settings)
        out[source] = dataclasses.replace(settings, ambient_slots=slots)
    return out


def _reliability(probabilities: np.ndarray, truth: np.ndarray, bins: int) -> list[str]:
    lines = []
    edges = np.linspace(0.0, 1.0, bins + 1)
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (probabilities >= low) & (
            (probabilities < high) if high < 1 else (probabilities <= high)
        )
        if inside.any():
            lines.append(
                f"  p in [{low:.1f}, {high:.1f}]: {int(inside.sum()):5d} pairs, mean p "
                f"{probabilities[inside].mean():.3f}, observed same {truth[inside].mean():.3f}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, action="append", help="a labelled folder")
    parser.add_argument("--learn", action="store_true", help="learn ambient slots per source")
    parser.add_argument("--bins", type=int, default=5, help="reliability table bins")
    parser.add_argument("--l2", type=float, default=0.1, help="the calibration's L2 penalty")
    args = parser.parse_args()
    more = [MORE_DATA] if (MORE_DATA / "pairs.tsv").exists() else []
    folders = args.data or [DEFAULT_DATA, *more]
    missing = [f for f in folders if not (f / "pairs.tsv").exists()]
    if missing:
        print(f"identity_loso: no labelled screens at {', '.join(map(str, missing))}")
        return 2
    base = SimilaritySettings()
    states, labels, pairs, sources = _load(folders)
    if args.learn:
        per_source = _learned_settings(states, sources, base)
    else:
        per_source = dict.fromkeys(sources.values(), base)
    verdicts: list[Verdict] = []
    for pair in pairs:
        source_a, source_b = sources[pair.a], sources[pair.b]
        settings = per_source[source_a] if source_a == source_b else base
        verdicts.append(compare(states[pair.a], states[pair.b], settings=settings))
    rows = np.array(
        [
            feature_row(
                v.same,
                v.visual,
                v.structure if v.structure is not None else v.visual,
                v.content if v.content is not None else v.visual,
                v.changes or 0.0,
                v.state_changes or 0.0,
                v.ambient if v.ambient is not None else 1.0,
            )
            for v in verdicts
        ]
    )
    truth = np.array([p.positive for p in pairs], dtype=float)
    counts: dict[str, Counts] = defaultdict(Counts)
    held_p = np.zeros(len(pairs))
    for source in sorted(set(sources.values())):
        test = np.array([source in (sources[p.a], sources[p.b]) for p in pairs])
        coef = fit_logistic(rows[~test], truth[~test], l2=args.l2)
        held_p[test] = [probability(coef, r) for r in rows[test]]
        for pair, verdict in zip(pairs, verdicts, strict=True):
            if sources[pair.a] == sources[pair.b] == source:
                counts[source].add(pair.positive, verdict.same)
    print(f"{len(states)} screens, {len(pairs)} labelled pairs, {len(counts)} sources")
    print("the rules, on each left-out source's own pairs:")
    for source, c in sorted(counts.items()):
        print(f"  {source:<28} {c}")
    with_positives = [c for c in counts.values() if c.tp + c.fn]
    precisions = [c.precision for c in counts.values()]
    print(
        f"  macro over sources: precision {statistics.fmean(precisions):.3f}"
        f" (min {min(precisions):.3f}), recall "
        f"{statistics.fmean(c.recall for c in with_positives):.3f} over the "
        f"{len(with_positives)} sources with same-state pairs"
    )
    wrong = [(p, v) for p, v in zip(pairs, verdicts, strict=True) if v.same != p.positive]
    for pair, verdict in wrong:
        kind = "FALSE MERGE" if verdict.same else "missed"
        truth_text = f"{labels[pair.a]} / {labels[pair.b]}"
        print(f"  {kind}: {pair.a} ~ {pair.b} [{truth_text}]: {verdict.describe()}")
    brier = float(np.mean((held_p - truth) ** 2))
    in_sample = fit_logistic(rows, truth, l2=args.l2)
    fitted = np.array([probability(in_sample, r) for r in rows])
    fitted_brier = float(np.mean((fitted - truth) ** 2))
    print(f"calibration, left-out sources: Brier {brier:.4f} (in-sample {fitted_brier:.4f})")
    print("\n".join(_reliability(held_p, truth, args.bins)))
    names = ", ".join(("intercept", *FEATURES))
    print(f"coefficients fitted on all sources ({names}):")
    print(f"  {in_sample}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
