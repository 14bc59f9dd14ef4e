"""The per-call cost model: a fixed overhead plus a rate, fitted per path, and where paths cross
(docs/design/studies.md, "The per-call cost study").

A call of F FLOPs through a path costs

    t(F) = t0 + F / R

t0 (seconds) is the fixed overhead of one call (dispatch, synchronisation, library set-up), R
(FLOP/s) the asymptotic rate. Times span decades over the grid (microseconds to tens of
milliseconds), so an ordinary least-squares fit would be decided by the largest calls alone; the
fit minimises the *relative* residuals instead, Σ ((t0 + F_i/R − t_i) / t_i)², which is linear in
(t0, 1/R): the rows [1/t_i, F_i/t_i] against 1 (weighted least squares with weights 1/t_i², as for
measurements whose error is a fixed fraction of their size). Both parameters are held
non-negative: when the unconstrained optimum has t0 < 0 the fit is redone with t0 = 0, and when it
has 1/R ≤ 0 (time does not grow with F over the grid) with 1/R = 0, which is reported as "no
rate". The goodness of fit is the root mean square and the largest of the relative residuals; a
path whose rate changes over the grid (a GPU filling up, a library switching algorithms) fits
badly, and says so there.

Two paths a and b cross where t0_a + F/R_a = t0_b + F/R_b, at F* = (t0_b − t0_a) / (1/R_a − 1/R_b).
Below F* the path with the smaller overhead wins, above it the one with the higher rate; when the
same path has both (or F* ≤ 0) it wins at every F and the crossover is "never".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["CallFit", "Crossover", "fit_call_cost", "crossover", "crossovers"]


@dataclass(frozen=True)
class CallFit:
    """The fit t(F) = t0 + F/R of one path.

    Attributes:
        path: the path's name.
        t0_s: fixed overhead per call, seconds (>= 0).
        inv_rate: 1/R, seconds per FLOP (>= 0; 0 when the time does not grow with F).
        rms_rel: root mean square of the relative residuals (fit − t) / t over the points.
        max_rel: largest absolute relative residual.
        points: number of (F, t) points fitted.
        flops_range: the smallest and largest F fitted.
    """

    path: str
    t0_s: float
    inv_rate: float
    rms_rel: float
    max_rel: float
    points: int
    flops_range: Tuple[float, float]

    @property
    def rate(self) -> Optional[float]:
        """R in FLOP/s, or None when the fit has no rate (1/R = 0)."""
        return 1.0 / self.inv_rate if self.inv_rate > 0 else None

    def time(self, flops: float) -> float:
        """The fitted seconds per call at ``flops`` FLOPs per call."""
        return self.t0_s + flops * self.inv_rate


def _solve(a: np.ndarray) -> np.ndarray:
    sol, *_ = np.linalg.lstsq(a, np.ones(a.shape[0]), rcond=None)
    out: np.ndarray = sol
    return out


def fit_call_cost(path: str, flops: Sequence[float], seconds: Sequence[float]) -> CallFit:
    """Fit t(F) = t0 + F/R to ``seconds`` per call at ``flops`` per call (module docstring: relative
    least squares, both parameters non-negative).

    Raises:
        ValueError: fewer than 2 points, lengths that differ, or a time or FLOP count that is not
            positive and finite.
    """
    f = np.asarray(flops, dtype=np.float64)
    t = np.asarray(seconds, dtype=np.float64)
    if f.shape != t.shape or f.ndim != 1:
        raise ValueError(f"path {path}: flops and seconds must be two lists of equal length")
    if f.size < 2:
        raise ValueError(f"path {path}: a fit needs at least 2 points, got {f.size}")
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(t)) and np.all(f > 0) and np.all(t > 0)):
        raise ValueError(f"path {path}: FLOPs and seconds must be positive and finite")
    a = np.column_stack([1.0 / t, f / t])
    t0, inv = (float(x) for x in _solve(a))
    if t0 < 0.0 or inv <= 0.0:
        # One parameter at its bound: the best of the two one-parameter fits that stays feasible.
        candidates = []
        inv_only = float(_solve(a[:, 1:2])[0])
        if inv_only > 0.0:
            candidates.append((0.0, inv_only))
        candidates.append((max(float(_solve(a[:, 0:1])[0]), 0.0), 0.0))
        t0, inv = min(candidates, key=lambda c: float(np.sum(((c[0] + f * c[1]) / t - 1.0) ** 2)))
    if inv * float(f.max()) <= 1e-9 * float(t.max()):
        inv = 0.0  # rounding noise of a flat fit, not a rate
    rel = (t0 + f * inv) / t - 1.0
    return CallFit(
        path,
        t0,
        inv,
        float(math.sqrt(float(np.mean(rel * rel)))),
        float(np.max(np.abs(rel))),
        int(f.size),
        (float(f.min()), float(f.max())),
    )


@dataclass(frozen=True)
class Crossover:
    """Where two paths' fitted costs cross.

    Attributes:
        a, b: the two paths.
        flops: F* (FLOPs per call) where they cost the same, or None ("never": one wins everywhere).
        below: the path that wins (is faster) for F < F* (or everywhere, when ``flops`` is None).
        above: the path that wins for F > F* (equal to ``below`` when ``flops`` is None).
        seconds: the fitted time per call at F* (None with ``flops``).
    """

    a: str
    b: str
    flops: Optional[float]
    below: str
    above: str
    seconds: Optional[float]

    @property
    def never(self) -> bool:
        """Whether one path wins at every F."""
        return self.flops is None


def crossover(fa: CallFit, fb: CallFit) -> Crossover:
    """The crossover of two fits (module docstring). Ties (equal overheads and rates) count as
    "never", won by ``fa``."""
    d_inv = fa.inv_rate - fb.inv_rate
    d_t0 = fb.t0_s - fa.t0_s
    if d_inv != 0.0:
        f_star = d_t0 / d_inv
        if f_star > 0.0 and math.isfinite(f_star):
            low, high = (fa, fb) if fa.t0_s < fb.t0_s else (fb, fa)
            return Crossover(fa.path, fb.path, f_star, low.path, high.path, fa.time(f_star))
    # No positive crossing: the one that is faster at F = 0+ (smaller t0; on a tie, the higher rate) wins.
    key_a, key_b = (fa.t0_s, fa.inv_rate), (fb.t0_s, fb.inv_rate)
    win = fb if key_b < key_a else fa
    return Crossover(fa.path, fb.path, None, win.path, win.path, None)


def crossovers(fits: Sequence[CallFit]) -> List[Crossover]:
    """:func:`crossover` of every pair of ``fits``, in their order (a before b)."""
    return [crossover(fits[i], fits[j]) for i in range(len(fits)) for j in range(i + 1, len(fits))]
