"""How well ``compare()`` decides "same UI state" on real screens, measured leave one source out.

    .venv/bin/python benchmarks/real_screens.py [--data DIR ...] [--settings FILE] [--worst N]

Reads one or more folders of labelled real screens in the ``dev_screens`` layout
(``screens.tsv`` with a state label and the source repository per screen, ``pairs.tsv``
with pairs marked positive, negative or ambiguous, ``<source>/<name>.png|xml``). By default
``../shared/fixtures/real/dev_screens`` and, when present, ``../devdata/real_screens``
(rebuilt by ``benchmarks/real_screens_data.py``; ``ELDERBENCH_SHARED_FIXTURES`` and
``ELDERBENCH_DEVDATA`` point elsewhere). A source is one repository: its screens
come from one project, often one device and one run, so it is the unit a rule can overfit.

Leave one source out: for each source, ``fit`` is given every other source and returns
the settings; those settings decide the held-out source's own pairs. A pair across two
sources is decided by settings fitted without either. ``fit`` defaults to the fixed
settings (``SimilaritySettings()`` or ``--settings``); a tuner plugs in with
``run(folders, fit)``. Ambiguous pairs are left out. The screens carry no foreground
activity, so the activity never decides here.

It prints, per held-out source, precision and recall of "same" and the macro average over
sources (the figure that counts), then the pooled figures, accuracy by pair kind, recall
per state, and the wrong decisions with their component scores and reasons.

Targets (issue 22): precision 1.000, recall >= 0.90, macro over sources.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from graph_builder.errors import GraphBuilderError
from graph_builder.screen import Screen
from graph_builder.similarity import SimilaritySettings, Verdict, compare, load_settings

ROOT = Path(__file__).resolve().parents[1]
# Beside the repository, like ../shared; the variables point elsewhere (another checkout).
SHARED = Path(os.environ.get("ELDERBENCH_SHARED_FIXTURES") or ROOT.parent / "shared/fixtures")
DEVDATA = Path(os.environ.get("ELDERBENCH_DEVDATA") or ROOT.parent / "devdata")
DEFAULT_DATA = (SHARED / "real/dev_screens", DEVDATA / "real_screens")


class DataError(Exception):
    """A data folder is missing or its label files do not fit together."""


@dataclass(frozen=True, slots=True)
class Labelled:
    """One labelled screen."""

    id: str
    label: str
    source: str  # the repository the capture comes from
    screen: Screen


@dataclass(frozen=True, slots=True)
class Pair:
    a: str
    b: str
    positive: bool
    scope: str  # within_source | cross_source


@dataclass(frozen=True, slots=True)
class SourceData:
    """What a fit sees of one source: its screens and its own labelled pairs."""

    name: str
    screens: tuple[Labelled, ...]
    pairs: tuple[Pair, ...]


@dataclass(frozen=True, slots=True)
class LabelledSet:
    screens: dict[str, Labelled]
    pairs: tuple[Pair, ...]
    folders: tuple[Path, ...]

    @property
    def sources(self) -> list[str]:
        return sorted({s.source for s in self.screens.values()})

    def source(self, name: str) -> SourceData:
        screens = tuple(s for s in self.screens.values() if s.source == name)
        ids = {s.id for s in screens}
        pairs = tuple(p for p in self.pairs if p.a in ids and p.b in ids)
        return SourceData(name, screens, pairs)


Fit = Callable[[Sequence[SourceData]], SimilaritySettings]


def fixed(settings: SimilaritySettings) -> Fit:
    """A fit that ignores its training sources: the settings as they are."""
    return lambda _train: settings


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


@dataclass(frozen=True, slots=True)
class Decision:
    pair: Pair
    verdict: Verdict | None  # None: the screens could not be compared
    error: str = ""


@dataclass
class Report:
    data: LabelledSet
    decisions: list[Decision] = field(default_factory=list)
    seconds: float = 0.0

    def by_source(self) -> dict[str, Counts]:
        """The held-out counts of each source (its own pairs)."""
        counts: dict[str, Counts] = {name: Counts() for name in self.data.sources}
        for d in self.decided():
            if d.pair.scope == "within_source":
                counts[self.data.screens[d.pair.a].source].add(d.pair.positive, d.verdict.same)
        return counts

    def decided(self) -> list[_Decided]:
        return [_Decided(d.pair, d.verdict) for d in self.decisions if d.verdict is not None]

    def macro(self) -> tuple[float, float]:
        """Precision averaged over the sources where something was merged, recall over
        the sources that have same-state pairs (an empty average counts as 1.0)."""
        counts = self.by_source().values()
        merged = [c.precision for c in counts if c.tp + c.fp]
        positive = [c.recall for c in counts if c.tp + c.fn]
        return (
            statistics.fmean(merged) if merged else 1.0,
            statistics.fmean(positive) if positive else 1.0,
        )


@dataclass(frozen=True, slots=True)
class _Decided:
    pair: Pair
    verdict: Verdict


def _screen(folder: Path, row: dict[str, str]) -> Screen:
    xml = folder / row["xml"] if row.get("xml") else None
    if row.get("png"):
        with Image.open(folder / row["png"]) as image:
            size = image.size
        return Screen(size, screenshot_path=folder / row["png"], hierarchy_path=xml)
    return Screen((int(row["width"]), int(row["height"])), hierarchy_path=xml)


def load_folder(folder: Path) -> tuple[list[Labelled], list[Pair]]:
    """The screens and the non-ambiguous pairs of one data folder."""
    for name in ("screens.tsv", "pairs.tsv"):
        if not (folder / name).is_file():
            raise DataError(f"no labelled screens at {folder} ({name} missing)")
    screens = []
    with (folder / "screens.tsv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            screens.append(
                Labelled(row["id"], row["label"], row["source_repo"], _screen(folder, row))
            )
    with (folder / "pairs.tsv").open(encoding="utf-8", newline="") as fh:
        pairs = [
            Pair(row["a"], row["b"], row["kind"] == "positive", row["scope"])
            for row in csv.DictReader(fh, delimiter="\t")
            if row["kind"] != "ambiguous"
        ]
    return screens, pairs


def load(folders: Sequence[Path]) -> LabelledSet:
    """Several data folders as one set; screen ids must be unique across them."""
    screens: dict[str, Labelled] = {}
    pairs: list[Pair] = []
    for folder in folders:
        these, their_pairs = load_folder(folder)
        for screen in these:
            if screen.id in screens:
                raise DataError(f"{folder}: screen id {screen.id} is also in another folder")
            screens[screen.id] = screen
        for pair in their_pairs:
            if pair.a not in screens or pair.b not in screens:
                raise DataError(f"{folder}/pairs.tsv names an unknown screen in {pair.a}, {pair.b}")
        pairs.extend(their_pairs)
    return LabelledSet(screens, tuple(pairs), tuple(folders))


def run(folders: Sequence[Path], fit: Fit) -> Report:
    """Decide every labelled pair with settings fitted without the pair's sources."""
    data = load(folders)
    report = Report(data)
    fitted: dict[frozenset[str], SimilaritySettings] = {}
    started = time.perf_counter()
    for pair in data.pairs:
        held_out = frozenset({data.screens[pair.a].source, data.screens[pair.b].source})
        if held_out not in fitted:
            fitted[held_out] = fit([data.source(s) for s in data.sources if s not in held_out])
        a, b = data.screens[pair.a].screen, data.screens[pair.b].screen
        try:
            report.decisions.append(Decision(pair, compare(a, b, settings=fitted[held_out])))
        except GraphBuilderError as exc:
            report.decisions.append(Decision(pair, None, str(exc)))
    report.seconds = time.perf_counter() - started
    return report


def describe(pair: Pair, verdict: Verdict, data: LabelledSet) -> str:
    a, b = data.screens[pair.a], data.screens[pair.b]
    truth = "same" if pair.positive else f"{a.label} vs {b.label}"
    return f"{pair.a} ~ {pair.b} [{truth}]: {verdict.describe()}"


def print_report(report: Report, worst: int) -> None:
    data = report.data
    decided = report.decided()
    print(
        f"{len(data.screens)} screens from {len(data.sources)} sources in "
        f"{', '.join(str(f) for f in data.folders)}; {len(data.pairs)} labelled pairs "
        f"decided in {report.seconds:.1f} s"
    )
    failed = [d for d in report.decisions if d.verdict is None]
    if failed:
        print(f"{len(failed)} pairs could not be compared, e.g. {failed[0].error}")
    print("leave one source out (each source's own pairs, settings fitted on the others):")
    not_compared: dict[str, int] = defaultdict(int)
    for undecided in failed:
        if undecided.pair.scope == "within_source":
            not_compared[data.screens[undecided.pair.a].source] += 1
    for source, counts in report.by_source().items():
        skipped = f"; {not_compared[source]} not compared" if not_compared[source] else ""
        if counts.tp + counts.fp + counts.fn + counts.tn:
            print(f"  {source:<40} {counts}{skipped}")
        else:
            print(f"  {source:<40} no pair decided{skipped}")
    precision, recall = report.macro()
    print(f"  macro over sources: precision {precision:.3f}  recall {recall:.3f}")
    _print_pooled(decided, data)
    wrong = [d for d in decided if d.verdict.same != d.pair.positive]
    print(f"wrong decisions ({len(wrong)}):")
    for d in sorted(wrong, key=lambda d: -d.verdict.score):
        kind = "FALSE MERGE" if d.verdict.same else "missed"
        print(f"  {kind}: {describe(d.pair, d.verdict, data)}")
    close = sorted(
        (d for d in decided if not d.pair.positive and not d.verdict.same),
        key=lambda d: -d.verdict.score,
    )[:worst]
    print(f"closest right separations ({len(close)}):")
    for d in close:
        print(f"  {describe(d.pair, d.verdict, data)}")


def _print_pooled(decided: list[_Decided], data: LabelledSet) -> None:
    total = Counts()
    by_kind: dict[str, Counts] = defaultdict(Counts)
    by_label: dict[str, Counts] = defaultdict(Counts)
    for d in decided:
        total.add(d.pair.positive, d.verdict.same)
        kind = f"{'positive' if d.pair.positive else 'negative'} {d.pair.scope}"
        by_kind[kind].add(d.pair.positive, d.verdict.same)
        if d.pair.positive:
            by_label[data.screens[d.pair.a].label].add(True, d.verdict.same)
    print(f"all pairs pooled (every decision held out): {total}")
    print("accuracy by pair kind:")
    for kind, counts in sorted(by_kind.items()):
        right = counts.tp + counts.tn
        n = right + counts.fp + counts.fn
        print(f"  {kind:<24} {right / n:.3f}  ({right}/{n})")
    print("recall per state (positive pairs):")
    for label, counts in sorted(by_label.items()):
        print(f"  {label:<56} {counts.recall:.3f}  ({counts.tp}/{counts.tp + counts.fn})")
    if by_label:
        macro = statistics.fmean(c.recall for c in by_label.values())
        print(f"  macro average over {len(by_label)} states: {macro:.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, action="append", help="a labelled folder (repeat for several)"
    )
    parser.add_argument("--settings", type=Path, help="similarity settings JSON (fixed fit)")
    parser.add_argument("--worst", type=int, default=12, help="right decisions to show closest")
    args = parser.parse_args()
    folders = args.data or [f for f in DEFAULT_DATA if (f / "pairs.tsv").exists()]
    if not folders:
        print(f"real_screens: no labelled screens at {', '.join(map(str, DEFAULT_DATA))}")
        return 2
    settings = load_settings(args.settings) if args.settings else SimilaritySettings()
    try:
        report = run(folders, fixed(settings))
    except DataError as exc:
        print(f"real_screens: {exc}")
        return 2
    print_report(report, args.worst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
