"""How well ``compare()`` decides "same UI state" on real screens of real apps.

    .venv/bin/python benchmarks/real_screens.py [--data DIR] [--settings FILE] [--worst N]

Reads the labelled development screens (``../shared/fixtures/real/dev_screens`` beside the
repository: screenshots and dumps of real apps on real phones, ``screens.tsv`` with a state
label per screen and ``pairs.tsv`` with every pair marked positive, negative or
ambiguous). Every pair that is not ambiguous is one "same state?" decision by
``graph_builder.similarity.compare`` with the default (or given) settings. The screens
carry no foreground activity, so the activity never decides here; in a recording it
separates most apps and pages before the hierarchy is looked at.

It prints:

- pairwise precision and recall of "same", and accuracy by pair kind (positive or negative,
  within one source repository or across two);
- recall per state (the macro average too: one login page has most positive pairs);
- the same figures for each source folder on its own pairs, so a rule that only works
  for one app shows up (the rules are not fitted to data, so there is nothing to refit
  per fold; this is the leave-one-source-out check that matters for them);
- the worst pairs: every wrong decision and the closest right ones, with their component
  scores and the reason ``compare()`` gave.

Targets (issue 13): precision 1.000, recall >= 0.90.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from graph_builder.model import Observation
from graph_builder.screen import Screen
from graph_builder.similarity import (
    SimilaritySettings,
    Verdict,
    compare,
    load_settings,
    screen_features,
)

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/fixtures/real/dev_screens"


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    positive: bool
    scope: str  # within_source | cross_source


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, positive: bool, same: bool) -> None:
        if positive:
            self.tp += same
            self.fn += not same
        else:
            self.fp += same
            self.tn += not same

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def __str__(self) -> str:
        return (
            f"precision {self.precision:.3f}  recall {self.recall:.3f}  "
            f"({self.tp} right merges, {self.fp} wrong merges, {self.fn} missed, "
            f"{self.tn} kept apart)"
        )


def load_screens(data: Path) -> tuple[dict[str, Screen], dict[str, str]]:
    """Screen states by id (lazy files, no activity) and their labels."""
    states: dict[str, Screen] = {}
    labels: dict[str, str] = {}
    with (data / "screens.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            with Image.open(data / row["png"]) as image:
                size = image.size
            obs = Observation(screenshot=row["png"], screen=size, hierarchy=row["xml"])
            states[row["id"]] = Screen.from_observation(obs, data)
            labels[row["id"]] = row["label"]
    return states, labels


def load_pairs(data: Path) -> list[Pair]:
    with (data / "pairs.tsv").open(encoding="utf-8", newline="") as fh:
        return [
            Pair(row["a"], row["b"], row["kind"] == "positive", row["scope"])
            for row in csv.DictReader(fh, delimiter="\t")
            if row["kind"] != "ambiguous"
        ]


def describe(pair: Pair, verdict: Verdict, labels: dict[str, str]) -> str:
    truth = "same" if pair.positive else f"{labels[pair.a]} vs {labels[pair.b]}"
    return f"{pair.a} ~ {pair.b} [{truth}]: {verdict.describe()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the dev_screens folder")
    parser.add_argument("--settings", type=Path, help="similarity settings JSON")
    parser.add_argument("--worst", type=int, default=12, help="right decisions to show closest")
    args = parser.parse_args()
    if not (args.data / "pairs.tsv").exists():
        print(f"real_screens: no labelled screens at {args.data} (pairs.tsv missing)")
        return 2
    settings = load_settings(args.settings) if args.settings else SimilaritySettings()
    started = time.perf_counter()
    states, labels = load_screens(args.data)
    for state in states.values():
        screen_features(state, settings)
    prepared = time.perf_counter() - started
    pairs = load_pairs(args.data)
    started = time.perf_counter()
    verdicts = [compare(states[p.a], states[p.b], settings=settings) for p in pairs]
    compared = time.perf_counter() - started

    total = Counts()
    by_kind: dict[str, Counts] = defaultdict(Counts)
    by_label: dict[str, Counts] = defaultdict(Counts)
    by_source: dict[str, Counts] = defaultdict(Counts)
    for pair, verdict in zip(pairs, verdicts, strict=True):
        total.add(pair.positive, verdict.same)
        kind = f"{'positive' if pair.positive else 'negative'} {pair.scope}"
        by_kind[kind].add(pair.positive, verdict.same)
        if pair.positive:
            by_label[labels[pair.a]].add(True, verdict.same)
        if pair.scope == "within_source":
            by_source[pair.a.rpartition("_")[0]].add(pair.positive, verdict.same)

    print(
        f"{len(states)} screens, {len(pairs)} labelled pairs; features {prepared:.1f} s, "
        f"{len(pairs)} comparisons {compared:.2f} s"
    )
    print(f"all pairs:  {total}")
    print("accuracy by pair kind:")
    for kind, counts in sorted(by_kind.items()):
        right = counts.tp + counts.tn
        n = right + counts.fp + counts.fn
        print(f"  {kind:<24} {right / n:.3f}  ({right}/{n})")
    print("recall per state (positive pairs):")
    for label, counts in sorted(by_label.items()):
        print(f"  {label:<48} {counts.recall:.3f}  ({counts.tp}/{counts.tp + counts.fn})")
    macro = statistics.fmean(c.recall for c in by_label.values())
    print(f"  macro average over {len(by_label)} states: {macro:.3f}")
    print("per source folder (its own pairs):")
    for source, counts in sorted(by_source.items()):
        print(f"  {source:<8} {counts}")

    wrong = [(p, v) for p, v in zip(pairs, verdicts, strict=True) if v.same != p.positive]
    print(f"wrong decisions ({len(wrong)}):")
    for pair, verdict in sorted(wrong, key=lambda pv: -pv[1].score):
        print(f"  {'FALSE MERGE' if verdict.same else 'missed'}: {describe(pair, verdict, labels)}")
    close_negatives = sorted(
        ((p, v) for p, v in zip(pairs, verdicts, strict=True) if not p.positive and not v.same),
        key=lambda pv: -pv[1].score,
    )[: args.worst]
    print(f"closest right separations ({len(close_negatives)}):")
    for pair, verdict in close_negatives:
        print(f"  {describe(pair, verdict, labels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
