"""The language of a suite's requests as figures, beside another set's: the share of
instructions per length bin, and per label of each dimension (when both sets carry
labels). ``analyze --out`` and ``elderbench figures --against`` draw the same ones."""

from __future__ import annotations

from collections.abc import Sequence

from evaluator.language.instructions import InstructionStats
from evaluator.plots import Plot, bars


def _share(count: int, n: int) -> dict[str, float | int]:
    return {"value": count / n, "count": count, "of": n}


def _sets(
    own: tuple[str, InstructionStats], other: tuple[str, InstructionStats] | None
) -> list[tuple[str, InstructionStats]]:
    return [own, *([other] if other is not None else [])]


def _series(sets: Sequence[tuple[str, InstructionStats]]) -> list[str]:
    """Each set's name with its size: the base of its shares, in the legend."""
    return [f"{name} (n={s.n})" for name, s in sets]


def _bases(sets: Sequence[tuple[str, InstructionStats]]) -> str:
    return " and ".join(f"{s.n} of {name}" for name, s in sets)


def length_distribution(
    own: tuple[str, InstructionStats], other: tuple[str, InstructionStats] | None = None
) -> Plot:
    sets = _sets(own, other)
    bins = list(own[1].length_bins)
    return bars(
        "language_lengths",
        "Instruction length",
        f"Share of each set's instructions per length bin in characters (over "
        f"{_bases(sets)} instructions).",
        axis="Share (%) of each set's instructions",
        series=_series(sets),
        panels=[
            {
                "title": "length (characters)",
                "groups": [
                    {"label": b, "bars": [_share(s.length_bins.get(b, 0), s.n) for _, s in sets]}
                    for b in bins
                ],
            }
        ],
    )


def label_distribution(
    own: tuple[str, InstructionStats],
    other: tuple[str, InstructionStats] | None = None,
    *,
    other_labelled: bool = True,
) -> Plot | None:
    """Label shares per dimension; the other set only when it carries labels."""
    sets = _sets(own, other if other_labelled else None)
    panels = []
    for dimension in own[1].labels:
        labels: list[str] = []
        for _, s in sets:
            labels += [k for k in s.labels.get(dimension, {}) if k not in labels]
        if not labels:
            continue
        groups = []
        for label in labels:
            row = []
            for _, s in sets:
                share = s.labels.get(dimension, {}).get(label)
                row.append(_share(share.count if share else 0, s.n))
            groups.append({"label": label, "bars": row})
        panels.append({"title": dimension, "groups": groups})
    if not panels:
        return None
    return bars(
        "language_labels",
        "Labels of the instructions",
        f"Share of each set's instructions carrying each label (over {_bases(sets)} "
        "instructions); an instruction with two labels of one dimension counts in both.",
        axis="Share (%) of each set's instructions",
        series=_series(sets),
        panels=panels,
    )


def distribution_plots(
    own: tuple[str, InstructionStats],
    other: tuple[str, InstructionStats] | None = None,
    *,
    other_labelled: bool = True,
) -> list[Plot]:
    found = [
        length_distribution(own, other),
        label_distribution(own, other, other_labelled=other_labelled),
    ]
    return [p for p in found if p is not None]
