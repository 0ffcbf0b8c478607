"""A second-order factorization machine for binary outcomes, in numpy.

    y_hat(x) = w0 + sum_i w_i x_i + sum_{i<j} <v_i, v_j> x_i x_j        (Rendle, 2010)

fitted by full-batch Adam on the mean logistic loss with L2 penalties. No maintained FM
library supports Python 3.12 with numpy 2, and the data here is small (hundreds of
task runs), so a plain, seeded implementation is both enough and reproducible: the same
data and seed give the same numbers on every machine. Interactions between rare feature
pairs are poorly identified; ``fit_ensemble`` refits with several seeds and reports how
often each pair's sign agrees, so a reader can tell a stable interaction from noise.

>>> rng = np.random.default_rng(0)
>>> X = rng.integers(0, 2, size=(400, 3)).astype(float)
>>> y = ((X[:, 0] * X[:, 1]) > 0).astype(float)  # success needs features 0 and 1 together
>>> model = fit(X, y, seed=1)
>>> round(float(model.interaction(0, 1)), 1) > 0
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class FMSettings:
    """Every knob of the fit; the defaults are what the analysis uses."""

    factors: int = 4
    iterations: int = 1500
    learning_rate: float = 0.05
    l2_linear: float = 1e-3
    l2_factors: float = 1e-3
    init_scale: float = 0.1


@dataclass(frozen=True, slots=True)
class FactorizationMachine:
    w0: float
    w: np.ndarray  # (d,)
    v: np.ndarray  # (d, k)

    def logits(self, x: np.ndarray) -> np.ndarray:
        xv = x @ self.v
        pair = 0.5 * ((xv**2) - (x**2) @ (self.v**2)).sum(axis=1)
        return self.w0 + x @ self.w + pair

    def predict(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(x)))

    def interaction(self, i: int, j: int) -> float:
        return float(self.v[i] @ self.v[j])

    def interactions(self) -> np.ndarray:
        """The (d, d) matrix of pairwise weights <v_i, v_j> (diagonal zero)."""
        m = self.v @ self.v.T
        np.fill_diagonal(m, 0.0)
        return m


def fit(
    x: np.ndarray, y: np.ndarray, *, seed: int = 0, settings: FMSettings | None = None
) -> FactorizationMachine:
    """Fit on features ``x`` (n, d) and outcomes ``y`` in {0, 1}."""
    s = settings or FMSettings()
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError("x must be (n, d) and y (n,)")
    if x.shape[0] == 0:
        raise ValueError("no observations to fit")
    n, d = x.shape
    rng = np.random.default_rng(seed)
    params = [
        np.array([np.log((y.mean() + 1e-3) / (1 - y.mean() + 1e-3))]),
        np.zeros(d),
        rng.normal(0.0, s.init_scale, size=(d, s.factors)),
    ]
    m = [np.zeros_like(p) for p in params]
    v2 = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    x2 = x**2
    for t in range(1, s.iterations + 1):
        w0, w, v = params
        xv = x @ v
        logits = w0[0] + x @ w + 0.5 * ((xv**2) - x2 @ (v**2)).sum(axis=1)
        residual = (1.0 / (1.0 + np.exp(-logits)) - y) / n  # d(mean log loss)/d(logit)
        grads = [
            np.array([residual.sum()]),
            x.T @ residual + 2 * s.l2_linear * w,
            x.T @ (residual[:, None] * xv) - v * (x2.T @ residual)[:, None] + 2 * s.l2_factors * v,
        ]
        for k, g in enumerate(grads):
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v2[k] = beta2 * v2[k] + (1 - beta2) * g * g
            step = m[k] / (1 - beta1**t) / (np.sqrt(v2[k] / (1 - beta2**t)) + eps)
            params[k] = params[k] - s.learning_rate * step
    return FactorizationMachine(float(params[0][0]), params[1], params[2])


@dataclass(frozen=True, slots=True)
class EnsembleFit:
    """Interaction weights fitted on all observations (averaged over initial seeds), and
    how stable each one's sign is when the observations are resampled."""

    mean: np.ndarray  # (d, d)
    sign_agreement: np.ndarray  # (d, d): share of bootstrap refits agreeing with the sign
    seeds: tuple[int, ...]
    resamples: int


def fit_ensemble(
    x: np.ndarray,
    y: np.ndarray,
    *,
    seeds: tuple[int, ...] = (0, 1, 2),
    resamples: int = 20,
    settings: FMSettings | None = None,
) -> EnsembleFit:
    """Point estimate: the mean over ``seeds`` of fits on all rows. Stability: refits on
    ``resamples`` bootstrap samples of the rows (seeded, so reproducible)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean = np.mean([fit(x, y, seed=s, settings=settings).interactions() for s in seeds], axis=0)
    rng = np.random.default_rng(1_000 + seeds[0])
    agree = np.zeros_like(mean)
    for b in range(resamples):
        rows = rng.integers(0, len(y), size=len(y))
        boot = fit(x[rows], y[rows], seed=b, settings=settings).interactions()
        agree += np.sign(boot) == np.sign(mean)
    return EnsembleFit(mean, agree / max(1, resamples), tuple(seeds), resamples)
