"""Instruction statistics of a suite or of a plain list, and two sets side by side.

A set is read from a suite folder (instructions and their labels), from a text file (one
instruction a line), from a JSON list or JSON-lines file (strings, or objects with an
``instruction`` field and optional ``labels``), or from a TSV file with a header naming
``instruction`` and optionally ``scenario``, ``syntax``, ``semantics`` (several labels
separated by ``;``). So a suite can be compared with another benchmark's instructions.

>>> s = instruction_stats([Instruction("call my daughter"), Instruction("屏幕太暗了")])
>>> s.n, s.share_under_20, s.mean_chars
(2, 1.0, 10.5)
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluator.errors import ConfigError
from evaluator.language.text import features
from evaluator.stats import chi_square, expected_counts, fisher_exact
from graph_builder.errors import FormatError
from graph_builder.io import SUITE_FILE, load_suite_tasks, parse_json
from graph_builder.model import DEFAULT_VOCABULARIES, Labels

SHORT_CHARS = 20  # ElderBench's cut: 78.31% of its instructions are under 20 characters
LABEL_DIMENSIONS = tuple(DEFAULT_VOCABULARIES)  # scenario, syntax, semantics
LENGTH_BINS = ((0, 10), (10, 20), (20, 40), (40, 80), (80, None))


@dataclass(frozen=True, slots=True)
class Instruction:
    text: str
    labels: Labels = field(default_factory=Labels)
    task_id: str | None = None


@dataclass(frozen=True, slots=True)
class InstructionSet:
    name: str
    items: tuple[Instruction, ...]
    labelled: bool  # False for a plain list: label shares are then not comparable


@dataclass(frozen=True, slots=True)
class LabelShare:
    count: int
    share: float


@dataclass(frozen=True, slots=True)
class InstructionStats:
    """What a paper's dataset table reports about a set of instructions."""

    n: int
    mean_chars: float
    median_chars: float
    mean_words: float
    median_words: float
    share_under_20: float
    count_under_20: int
    mean_verbs: float
    share_multi_verb: float
    length_bins: dict[str, int]
    labels: dict[str, dict[str, LabelShare]]  # dimension -> label -> count and share

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean_chars": self.mean_chars,
            "median_chars": self.median_chars,
            "mean_words": self.mean_words,
            "median_words": self.median_words,
            "share_under_20": self.share_under_20,
            "count_under_20": self.count_under_20,
            "mean_verbs": self.mean_verbs,
            "share_multi_verb": self.share_multi_verb,
            "length_bins": dict(self.length_bins),
            "labels": {
                dim: {k: {"count": v.count, "share": v.share} for k, v in shares.items()}
                for dim, shares in self.labels.items()
            },
        }


def bin_name(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else f"{low}-{high - 1}"


def instruction_stats(items: Sequence[Instruction]) -> InstructionStats:
    if not items:
        raise ConfigError("no instructions to describe")
    feats = [features(i.text) for i in items]
    chars = [f.chars for f in feats]
    words = [f.words for f in feats]
    n = len(items)
    bins = {bin_name(lo, hi): 0 for lo, hi in LENGTH_BINS}
    for c in chars:
        lo, hi = next(b for b in LENGTH_BINS if b[1] is None or c < b[1])
        bins[bin_name(lo, hi)] += 1
    labels: dict[str, dict[str, LabelShare]] = {}
    for dim in LABEL_DIMENSIONS:
        counter: Counter[str] = Counter()
        for item in items:
            counter.update({v for d, v in item.labels.items() if d == dim})
        labels[dim] = {k: LabelShare(c, c / n) for k, c in sorted(counter.items())}
    return InstructionStats(
        n=n,
        mean_chars=statistics.fmean(chars),
        median_chars=float(statistics.median(chars)),
        mean_words=statistics.fmean(words),
        median_words=float(statistics.median(words)),
        share_under_20=sum(c < SHORT_CHARS for c in chars) / n,
        count_under_20=sum(c < SHORT_CHARS for c in chars),
        mean_verbs=statistics.fmean(f.verbs for f in feats),
        share_multi_verb=sum(f.verbs >= 2 for f in feats) / n,
        length_bins=bins,
        labels=labels,
    )


# --------------------------------------------------------------------------- two sets


@dataclass(frozen=True, slots=True)
class CategoryTest:
    """One category (a label, or the short-instruction share) in two sets, and its test."""

    category: str
    count_a: int
    n_a: int
    count_b: int
    n_b: int
    test: str  # "fisher" (2x2, small expected counts) or "chi-square"
    p_value: float

    @property
    def share_a(self) -> float:
        return self.count_a / self.n_a if self.n_a else 0.0

    @property
    def share_b(self) -> float:
        return self.count_b / self.n_b if self.n_b else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "count_a": self.count_a,
            "n_a": self.n_a,
            "share_a": self.share_a,
            "count_b": self.count_b,
            "n_b": self.n_b,
            "share_b": self.share_b,
            "test": self.test,
            "p_value": self.p_value,
        }


def test_share(category: str, count_a: int, n_a: int, count_b: int, n_b: int) -> CategoryTest:
    """Does a category's share differ between two sets? Chi-square on the 2x2 table, or
    Fisher's exact test when an expected count is under 5 (Cochran's rule)."""
    table = [[count_a, n_a - count_a], [count_b, n_b - count_b]]
    if min(min(row) for row in expected_counts(table)) < 5:
        return CategoryTest(category, count_a, n_a, count_b, n_b, "fisher", fisher_exact(table))
    return CategoryTest(
        category, count_a, n_a, count_b, n_b, "chi-square", chi_square(table).p_value
    )


test_share.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


@dataclass(frozen=True, slots=True)
class SetComparison:
    name_a: str
    name_b: str
    stats_a: InstructionStats
    stats_b: InstructionStats
    length: CategoryTest  # the share under 20 characters
    length_bins_p: float  # chi-square over the length bins
    labels: tuple[CategoryTest, ...]  # only when both sets are labelled

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.name_a,
            "b": self.name_b,
            "stats_a": self.stats_a.to_json(),
            "stats_b": self.stats_b.to_json(),
            "share_under_20": self.length.to_json(),
            "length_bins_p": self.length_bins_p,
            "labels": [t.to_json() for t in self.labels],
        }


def compare_sets(a: InstructionSet, b: InstructionSet) -> SetComparison:
    sa, sb = instruction_stats(a.items), instruction_stats(b.items)
    length = test_share(
        f"under {SHORT_CHARS} characters", sa.count_under_20, sa.n, sb.count_under_20, sb.n
    )
    bins_p = chi_square([list(sa.length_bins.values()), list(sb.length_bins.values())]).p_value
    tests: list[CategoryTest] = []
    if a.labelled and b.labelled:
        for dim in LABEL_DIMENSIONS:
            for label in sorted(set(sa.labels[dim]) | set(sb.labels[dim])):
                ca = sa.labels[dim].get(label, LabelShare(0, 0.0)).count
                cb = sb.labels[dim].get(label, LabelShare(0, 0.0)).count
                tests.append(test_share(f"{dim}={label}", ca, sa.n, cb, sb.n))
    return SetComparison(a.name, b.name, sa, sb, length, bins_p, tuple(tests))


# --------------------------------------------------------------------------- reading sets


def suite_instructions(folder: Path, *, variant: str = "original") -> InstructionSet:
    tasks = load_suite_tasks(folder)
    if not tasks:
        raise ConfigError(f"{folder}: no tasks (no */task.json) in this suite folder")
    items = tuple(
        Instruction(t.instruction_for(variant), t.labels, t.id)
        for t in tasks
        if variant == "original" or t.normalized_instruction
    )
    return InstructionSet(folder.name or str(folder), items, labelled=True)


def read_instruction_set(path: Path) -> InstructionSet:
    """A suite folder or an instruction file (see the module docstring for the formats)."""
    path = Path(path)
    if path.is_dir():
        if not (path / SUITE_FILE).is_file():
            raise ConfigError(f"{path}: a folder must be a suite (it has no {SUITE_FILE})")
        return suite_instructions(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file or folder") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it as UTF-8 text ({exc})") from exc
    items = _parse_instruction_file(path, text)
    if not items:
        raise ConfigError(f"{path}: holds no instructions")
    labelled = any(tuple(i.labels.items()) for i in items)
    return InstructionSet(path.stem, tuple(items), labelled=labelled)


def _parse_instruction_file(path: Path, text: str) -> list[Instruction]:
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return _parse_tsv(path, text)
    if suffix == ".json":
        try:
            data = parse_json(text, source=path)
        except FormatError as exc:
            raise ConfigError(str(exc)) from exc
        if not isinstance(data, list):
            raise ConfigError(f"{path}: expected a JSON list of instructions")
        return [_instruction_from(value, path, n) for n, value in enumerate(data, 1)]
    if suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    value = parse_json(line, source=f"{path}, line {n}")
                except FormatError as exc:
                    raise ConfigError(str(exc)) from exc
                out.append(_instruction_from(value, path, n))
        return out
    return [
        Instruction(line.strip())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _instruction_from(value: object, path: Path, n: int) -> Instruction:
    if isinstance(value, str) and value.strip():
        return Instruction(value.strip())
    if isinstance(value, Mapping) and isinstance(value.get("instruction"), str):
        labels = value.get("labels") or {}
        if not isinstance(labels, Mapping):
            raise ConfigError(f"{path}, item {n}: 'labels' must be an object")
        return Instruction(value["instruction"].strip(), _labels(labels), value.get("id"))
    raise ConfigError(f"{path}, item {n}: expected a string or an object with 'instruction'")


def _parse_tsv(path: Path, text: str) -> list[Instruction]:
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    if rows and "instruction" not in rows[0]:
        raise ConfigError(f"{path}: the TSV header must name an 'instruction' column")
    return [
        Instruction(row["instruction"].strip(), _labels(row))
        for row in rows
        if (row.get("instruction") or "").strip()
    ]


def _labels(raw: Mapping[str, Any]) -> Labels:
    def many(value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(";") if v.strip())
        if isinstance(value, Iterable):
            return tuple(str(v) for v in value)
        return ()

    scenario = raw.get("scenario")
    return Labels(
        scenario=str(scenario).strip() or None if scenario else None,
        syntax=many(raw.get("syntax")),
        semantics=many(raw.get("semantics")),
    )
