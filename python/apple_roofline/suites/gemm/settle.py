"""When a GEMM size ladder has its answer (docs/design/matrix.md, "The GEMM ladder").

A GEMM ceiling is the best valid size of its class, so the ladder only needs to go on while a larger
size could still raise it. :func:`settle_note` says, from the size just measured and the one before
it, whether the ladder has **settled**: the two rates agree within :data:`SETTLE_TOL` (3 %), both
sets of samples are quiet (CV at most :data:`SETTLE_MAX_CV`) and the next size would be costly (its
launch, predicted as this one's fastest times the FLOPs' ratio, :func:`.sizes.growth`: 8 for a
doubling, at least :data:`SETTLE_MIN_NEXT_S`).

Why 3 % bounds the ceiling to about 1 %: near its plateau a library GEMM's rate falls short by the
partial last wave of tiles (a share that shrinks like 1/N², as the tiles grow like N²) and the fixed
launch cost (like 1/N³), so each doubling removes about three quarters of the remaining shortfall.
When one doubling gained g, every later one together gains about g·(1/4 + 1/16 + …) = g/3: 1 % for
g = 3 % (a ×4 step removes fifteen sixteenths, so after one that gained g the later ones gain about
g/15). The recorded H200 cuBLAS ladders agree: a doubling that gained at most 16 % was followed by
one that gained at most 0.2 of it (TF32 2048 → 4096 +16 %, 4096 → 8192 +2.9 %), a miss of at most
0.75 % at the tolerance (docs/design/matrix.md, "The GEMM ladder", has the numbers). A size that ran
slower than the one before (a power cap, as FP64 at 8192 on an H200) also settles the ladder when
within the tolerance; one further below did not agree, so the ladder goes on while the time budget
allows. Noisy samples (CV above 1 %: the medians could be off by more than the tolerance's margin)
never settle a ladder, nor do cheap sizes, where measuring one more costs little.

A small size also draws the curve without setting the ceiling: :func:`few_reps` says when a size is
measured with :data:`FEW_REPS` samples first (short, after a quiet size; the runner keeps them when
their CV is at most :data:`~apple_roofline.timing.stats.CV_WARN`, else measures the case again with the
full count).
"""

from __future__ import annotations

from typing import Optional

from ...timing.stats import CV_WARN

__all__ = [
    "SETTLE_TOL",
    "SETTLE_MAX_CV",
    "SETTLE_MIN_NEXT_S",
    "FEW_REPS",
    "FEW_REPS_MAX_LAUNCH_S",
    "settle_note",
    "few_reps",
]

#: Two consecutive sizes whose median rates differ by at most this fraction agree.
SETTLE_TOL = 0.03
#: Samples noisier than this CV never settle a ladder.
SETTLE_MAX_CV = 0.01
#: A ladder settles only where the next size's predicted launch is at least this long (seconds).
SETTLE_MIN_NEXT_S = 1e-3
#: Samples taken first for a size whose predicted launch is short (:func:`few_reps`).
FEW_REPS = 5
#: A size whose predicted launch (the size before's fastest times the FLOPs' ratio) is below this (seconds) is measured
#: with :data:`FEW_REPS` samples first: launch-latency bound, far from the class's ceiling.
FEW_REPS_MAX_LAUNCH_S = 50e-6


def settle_note(
    n_before: int,
    rate_before: float,
    cv_before: float,
    n: int,
    rate: float,
    cv: float,
    fastest_s: float,
    growth: float = 8.0,
) -> Optional[str]:
    """Why the ladder ends at size ``n``, or None where it goes on.

    ``rate_before`` and ``rate`` are the median rates (GFLOP/s, any one unit) of sizes ``n_before``
    ``n_before`` (the size before ``n`` in the ladder) and ``n``, ``cv_before`` and ``cv`` their
    samples' CVs (fractions), ``fastest_s`` the fastest launch of size ``n`` (seconds) and ``growth``
    how many times longer the next size's launch is predicted to take (:func:`.sizes.growth`: 8 for
    a doubling). Settled (a phrase such as "settled: +2.2% from 2048, within 3%") when the rates
    agree within :data:`SETTLE_TOL`, both CVs are at most :data:`SETTLE_MAX_CV` and the next size's
    predicted launch (``growth`` × ``fastest_s``) is at least :data:`SETTLE_MIN_NEXT_S`. Raises
    ValueError for a rate that is not positive."""
    if rate_before <= 0 or rate <= 0:
        raise ValueError(f"rates must be positive, not {rate_before!r} and {rate!r}")
    change = rate / rate_before - 1.0
    if abs(change) > SETTLE_TOL or max(cv_before, cv) > SETTLE_MAX_CV or growth * fastest_s < SETTLE_MIN_NEXT_S:
        return None
    return f"settled: {change:+.1%} from {n_before}, within {SETTLE_TOL:.0%}"


def few_reps(fastest_before_s: Optional[float], cv_before: float = 0.0, growth: float = 8.0) -> Optional[int]:
    """The samples to take first for the next size, given the size before's fastest launch
    ``fastest_before_s`` (seconds; None for the first size), its samples' CV ``cv_before`` and how
    many times longer the next size's launch is predicted to take (``growth``, :func:`.sizes.growth`):
    :data:`FEW_REPS` where the next launch is predicted (``growth`` × ``fastest_before_s``) below
    :data:`FEW_REPS_MAX_LAUNCH_S` and
    the size before was quiet (CV at most :data:`~apple_roofline.timing.stats.CV_WARN`: a noisy one
    predicts a noisy next size, whose few samples would be measured again), else None (the run's
    ``reps``)."""
    if fastest_before_s is None or growth * fastest_before_s >= FEW_REPS_MAX_LAUNCH_S or cv_before > CV_WARN:
        return None
    return FEW_REPS
