"""Comparing a read-back target with its reference within a bound, in float32 where that decides
exactly what float64 arithmetic decides (docs/design/graphics.md, "The graphics study", "Validation").

A 1080p rgba32float target holds 8.3 million values; converting both images to float64 to compare them
took 0.25 s per pass on a 2-core x86 host, more than timing the pass, so a study's checks fell behind
its passes. Every value a target or reference holds (unorm8, fp16, fp32) is exact in float32, so
:func:`beyond_bound` computes the error and the bound there and keeps the float64 computation for the
few values too close to their bound for float32's rounding to decide.
"""

from __future__ import annotations

from typing import Tuple

import numpy as np

__all__ = ["MARGIN", "CHUNK_VALUES", "beyond_bound"]

#: The relative margin within which float32 does not decide: its rounding of the error and of the bound
#: (atol + rtol·|want|, three roundings of 2⁻²⁴ each, no cancellation) is below 2⁻²², this is 2⁻¹⁸.
MARGIN = 2.0**-18
#: Bounds below this (atol 0 and a tiny reference value) may be subnormal in float32, where its
#: rounding is no longer relative: decided in float64.
_TINY = np.float32(2.0**-100)
_EXACT = (np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.float32))
#: Values compared at a time: a chunk's arrays stay in a core's second-level cache, where the dozen
#: passes over them cost a fraction of what passes over a whole 8.3-million-value target do.
CHUNK_VALUES = 1 << 16


def beyond_bound(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Tuple[np.ndarray, float]:
    """Which values of ``got`` are not within ``atol + rtol·|want|`` of ``want`` (NaN never is), as
    ``~(|got - want| <= atol + rtol·|want|)`` decides in float64, and the largest error over its
    bound (float32 precision; 0 where both are 0).

    Args:
        got, want: arrays of one shape (unorm8, fp16 or fp32 values; any other dtype is compared in
            float64 throughout).
        rtol, atol: the bound's relative and absolute parts, ≥ 0.

    Returns:
        ``(bad, worst)``: a boolean array of ``got``'s shape, and the worst ratio of error to bound.

    Raises:
        ValueError: ``got`` and ``want`` differ in shape.
    """
    if got.dtype not in _EXACT or want.dtype not in _EXACT:
        return _float64(got, want, rtol, atol)
    if got.shape != want.shape:
        raise ValueError(f"got has shape {got.shape}, want {want.shape}: they must match")
    flat_got, flat_want = got.reshape(-1), want.reshape(-1)
    bad = np.empty(flat_got.shape, dtype=bool)
    chunks = (slice(start, start + CHUNK_VALUES) for start in range(0, flat_got.size, CHUNK_VALUES))
    worst = [_decide(flat_got[part], flat_want[part], rtol, atol, bad[part]) for part in chunks]
    return bad.reshape(got.shape), float(np.max(worst)) if worst else 0.0  # NaN stays NaN, as in float64


def _decide(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, bad: np.ndarray) -> float:
    """:func:`beyond_bound` of one chunk (1-D), its verdicts written into ``bad`` (of its length);
    the worst ratio."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and infinities are values beyond any bound
        g, w = got.astype(np.float32, copy=False), want.astype(np.float32, copy=False)
        err = np.abs(g - w)
        bound = np.abs(w)
        bound *= np.float32(rtol)
        bound += np.float32(atol)
        ok = err <= bound * np.float32(1.0 - MARGIN)
        np.greater(err, bound * np.float32(1.0 + MARGIN), out=bad)
        unsure = ~(ok | bad) | ((bound < _TINY) & (err > 0))
        if unsure.any():  # float64 decides these, as it would all of them
            idx = np.nonzero(unsure)
            g64, w64 = got[idx].astype(np.float64), want[idx].astype(np.float64)
            bad[idx] = ~(np.abs(g64 - w64) <= atol + rtol * np.abs(w64))
        np.maximum(bound, _TINY, out=bound)
        err /= bound
        return float(np.max(err))


def _float64(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> Tuple[np.ndarray, float]:
    with np.errstate(invalid="ignore", over="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        bound = atol + rtol * np.abs(w)
        err = np.abs(g - w)
        worst = float(np.max(err / np.maximum(bound, 1e-300))) if err.size else 0.0
    return ~(err <= bound), worst
