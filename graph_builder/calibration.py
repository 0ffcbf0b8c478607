"""The probability that two screens are one UI state: a small logistic model in numpy.

The same/different decision is made by rules (``graph_builder.similarity``); this model
turns a comparison's components into a calibrated probability for people and for
ranking (the weakest member of a node, the possible merges). It is fitted on labelled
pairs of real screens by ``benchmarks/identity_loso.py``, which measures it leave one
source out (Brier score and a reliability table on the left-out source); the fitted
coefficients are ``SimilaritySettings.calibration``.

>>> import numpy as np
>>> rows = np.array([feature_row(True, 1.0, 1.0, 1.0, 0, 0, 1.0),
...                  feature_row(False, 0.5, 0.4, 0.3, 3, 3, 0.2)] * 20)
>>> coef = fit_logistic(rows, np.array([1, 0] * 20))
>>> probability(coef, rows[0]) > 0.9 > 0.1 > probability(coef, rows[1])
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

FEATURES = (
    "rules say same",
    "visual",
    "structure",
    "content",
    "content changes",
    "state changes",
    "ambient",
)


def feature_row(
    same: bool,
    visual: float,
    structure: float,
    content: float,
    content_changes: float,
    state_changes: float,
    ambient: float,
) -> tuple[float, ...]:
    """The model's inputs, each in [0, 1]: the rules' decision, the components, and the
    change counts capped at 3 and scaled."""
    return (
        1.0 if same else 0.0,
        visual,
        structure,
        content,
        min(content_changes, 3.0) / 3.0,
        min(state_changes, 3.0) / 3.0,
        ambient,
    )


def probability(coefficients: Sequence[float], row: Sequence[float]) -> float:
    z = coefficients[0] + sum(c * x for c, x in zip(coefficients[1:], row, strict=True))
    z = max(-40.0, min(40.0, z))
    return 1.0 / (1.0 + math.exp(-z))


def fit_logistic(
    rows: np.ndarray, labels: np.ndarray, *, l2: float = 1.0, iterations: int = 50
) -> tuple[float, ...]:
    """Intercept and coefficients of an L2-regularised logistic regression (Newton steps).

    Unweighted, so its probabilities match the frequencies of the pairs it was fitted on.
    """
    x = np.hstack([np.ones((len(rows), 1)), np.asarray(rows, dtype=float)])
    y = np.asarray(labels, dtype=float)
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0  # the intercept is not shrunk
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(w)), gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return tuple(round(float(v), 4) for v in w)
