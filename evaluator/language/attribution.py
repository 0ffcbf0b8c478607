"""Which properties of a request go with success: correlations and pairwise interactions.

Observations are task results of one or several runs (harness errors left out, human
verdicts applied). Features are those ElderBench's appendix E uses:

- continuous: instruction length in characters, in words, and its verb count, each
  standardized (z-score over the observations);
- categorical: one indicator per label (``scenario=system_settings``, ``syntax=elliptical``).

``correlations`` gives each feature's point-biserial r with success and its p-value, for
features held by at least ``min_group`` observations and missed by as many (a label on one
task of eighteen says nothing), with Holm and Benjamini-Hochberg adjustments across all
features tested. ``interactions`` fits a factorization machine (evaluator.language.fm) and
ranks pairs of features by their interaction weight; a pair counts only when both features
occur together in at least ``min_group`` observations. Several runs are pooled: a task run
by three agents is three observations, and the report says how many tasks they cover.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluator.language.fm import EnsembleFit, FMSettings, fit_ensemble
from evaluator.language.text import features
from evaluator.metrics import effective_status
from evaluator.records import TaskResult, TaskStatus
from evaluator.run_store import HumanVerdict
from evaluator.stats import benjamini_hochberg, holm, point_biserial

MIN_GROUP = 5
CONTINUOUS = ("length_chars", "length_words", "verb_count")


@dataclass(frozen=True, slots=True)
class Observation:
    task_id: str
    run: str
    instruction: str
    labels: tuple[tuple[str, str], ...]
    success: bool
    variant: str = "original"


def observations(
    runs: Sequence[tuple[str, Sequence[TaskResult], Mapping[str, HumanVerdict]]],
) -> list[Observation]:
    """(run name, results, human verdicts) -> evaluated observations."""
    out = []
    for name, results, overrides in runs:
        for r in results:
            status = effective_status(r, overrides)
            if status is TaskStatus.ERROR:
                continue
            out.append(
                Observation(
                    r.task_id,
                    name,
                    r.instruction,
                    tuple(r.labels.items()),
                    status is TaskStatus.SUCCESS,
                    r.variant,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class FeatureMatrix:
    names: tuple[str, ...]
    x: np.ndarray  # (n, d)
    y: np.ndarray  # (n,) 0/1
    continuous: frozenset[str]
    group: tuple[str, ...]  # per feature: its one-hot dimension, or its own name


def feature_matrix(obs: Sequence[Observation]) -> FeatureMatrix:
    if not obs:
        raise ValueError("no evaluated task results to analyse")
    feats = [features(o.instruction) for o in obs]
    columns: dict[str, np.ndarray] = {
        "length_chars": np.array([f.chars for f in feats], dtype=np.float64),
        "length_words": np.array([f.words for f in feats], dtype=np.float64),
        "verb_count": np.array([f.verbs for f in feats], dtype=np.float64),
    }
    for name in CONTINUOUS:
        col = columns[name]
        sd = col.std()
        columns[name] = (col - col.mean()) / sd if sd > 0 else np.zeros_like(col)
    labels = sorted({pair for o in obs for pair in o.labels})
    for dim, value in labels:
        columns[f"{dim}={value}"] = np.array(
            [1.0 if (dim, value) in o.labels else 0.0 for o in obs]
        )
    variants = sorted({o.variant for o in obs})
    if len(variants) > 1:  # pooled original and normalized runs: let the model see which
        for v in (v for v in variants if v != "original"):
            columns[f"instruction={v}"] = np.array([1.0 if o.variant == v else 0.0 for o in obs])
    names = tuple(columns)
    group = tuple(n.split("=", 1)[0] if "=" in n else n for n in names)
    return FeatureMatrix(
        names,
        np.column_stack([columns[n] for n in names]),
        np.array([1.0 if o.success else 0.0 for o in obs]),
        frozenset(CONTINUOUS),
        group,
    )


@dataclass(frozen=True, slots=True)
class FeatureTest:
    feature: str
    r: float | None
    p_value: float | None
    p_holm: float | None
    q_bh: float | None
    holders: int | None  # observations holding a categorical feature; None if continuous
    note: str = ""  # why it was not tested

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "r": self.r,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "q_bh": self.q_bh,
            "holders": self.holders,
            "note": self.note,
        }


def correlations(matrix: FeatureMatrix, *, min_group: int = MIN_GROUP) -> list[FeatureTest]:
    """Point-biserial r of success with each feature, adjusted across the features tested."""
    n = len(matrix.y)
    successes = int(matrix.y.sum())
    tested: list[tuple[str, float, float, int | None]] = []
    untested: list[FeatureTest] = []
    for j, name in enumerate(matrix.names):
        col = matrix.x[:, j]
        holders = None if name in matrix.continuous else int(col.sum())
        if min(successes, n - successes) < min_group:
            note = f"success or failure occurs fewer than {min_group} times"
        elif holders is not None and min(holders, n - holders) < min_group:
            note = f"{holders} of {n} observations hold it (at least {min_group} each way needed)"
        else:
            c = point_biserial(list(matrix.y.astype(bool)), list(col))
            if c is not None:
                tested.append((name, c.r, c.p_value, holders))
                continue
            note = "constant over the observations"
        untested.append(FeatureTest(name, None, None, None, None, holders, note))
    p = [t[2] for t in tested]
    out = [
        FeatureTest(name, r, pv, ph, q, holders)
        for (name, r, pv, holders), ph, q in zip(
            tested, holm(p), benjamini_hochberg(p), strict=True
        )
    ]
    return out + untested


@dataclass(frozen=True, slots=True)
class Interaction:
    first: str
    second: str
    weight: float
    sign_agreement: float
    support: int  # observations where both features are present

    def to_json(self) -> dict[str, Any]:
        return {
            "features": [self.first, self.second],
            "weight": self.weight,
            "sign_agreement": self.sign_agreement,
            "support": self.support,
        }


@dataclass(frozen=True, slots=True)
class InteractionAnalysis:
    observations: int
    tasks: int
    features: tuple[str, ...]
    positive: tuple[Interaction, ...]
    negative: tuple[Interaction, ...]
    settings: FMSettings
    seeds: tuple[int, ...]
    resamples: int
    min_support: int

    def to_json(self) -> dict[str, Any]:
        return {
            "observations": self.observations,
            "tasks": self.tasks,
            "features": list(self.features),
            "positive": [i.to_json() for i in self.positive],
            "negative": [i.to_json() for i in self.negative],
            "model": {
                "kind": "factorization machine, logistic loss, full-batch Adam",
                "factors": self.settings.factors,
                "iterations": self.settings.iterations,
                "learning_rate": self.settings.learning_rate,
                "l2_linear": self.settings.l2_linear,
                "l2_factors": self.settings.l2_factors,
                "seeds": list(self.seeds),
                "bootstrap_resamples": self.resamples,
            },
            "min_support": self.min_support,
        }


def interactions(
    matrix: FeatureMatrix,
    *,
    tasks: int,
    top: int = 5,
    min_support: int = MIN_GROUP,
    settings: FMSettings | None = None,
) -> InteractionAnalysis:
    settings = settings or FMSettings()
    fitted: EnsembleFit = fit_ensemble(matrix.x, matrix.y, settings=settings)
    present = matrix.x != 0
    pairs = []
    d = len(matrix.names)
    for i in range(d):
        for j in range(i + 1, d):
            a, b = matrix.names[i], matrix.names[j]
            if matrix.group[i] == matrix.group[j] == "scenario":
                continue  # one scenario a task: these never co-occur
            if a in matrix.continuous and b in matrix.continuous:
                continue  # length in characters and in words measure one thing
            support = int((present[:, i] & present[:, j]).sum())
            if support < min_support:
                continue
            pairs.append(
                Interaction(
                    a, b, float(fitted.mean[i, j]), float(fitted.sign_agreement[i, j]), support
                )
            )
    pairs.sort(key=lambda p: p.weight)
    positive = tuple(p for p in reversed(pairs) if p.weight > 0)[:top]
    negative = tuple(p for p in pairs if p.weight < 0)[:top]
    return InteractionAnalysis(
        len(matrix.y),
        tasks,
        matrix.names,
        positive,
        negative,
        settings,
        fitted.seeds,
        fitted.resamples,
        min_support,
    )
