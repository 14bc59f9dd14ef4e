"""Embedding: time any Python callable and place it on a measured roofline.

:func:`measure` times a callable with the methodology of the suites (docs/design/measurement.md,
"Measurement") and returns a :class:`~apple_roofline.roofline.Point`; :mod:`apple_roofline.user_kernels.flops_bytes`
counts the work and traffic of common operations. Nothing here touches the native extension.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, TypedDict

import numpy as np

from ..roofline.model.model import Point
from ..roofline.model.roofs import PIPES, PRECISIONS, precision_of_dtype
from ..timing.measure import MAX_REPS
from ..timing.stats import summarize

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["measure", "Sampling", "MAX_CALLS"]

#: Upper bound on calls per sample (as ``measure.time_kernel``'s ``max_batch``).
MAX_CALLS = 1 << 20


def _count(value: Any, name: str, valid: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number ({valid}), not {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite ({valid}), not {value!r}")
    return v


def _int(value: Any, name: str, lo: int, hi: Optional[int]) -> int:
    valid = f"{lo} to {hi}" if hi is not None else f"{lo} or more"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer ({valid}), not {value!r}")
    if value < lo or (hi is not None and value > hi):
        raise ValueError(f"{name} {value!r} is out of range (valid: {valid})")
    return int(value)


class Sampling(TypedDict, total=False):
    """How :func:`measure` samples (its methodology's steps 1 to 3), each optional: ``warmup``
    untimed calls (>= 0, default 3), ``reps`` samples (1 to 10000, default 10) and ``min_sample_s``
    the shortest sample in seconds (finite, > 0, default 1e-3)."""

    warmup: int
    reps: int
    min_sample_s: float


#: :class:`Sampling`'s defaults.
_SAMPLING_DEFAULTS: Dict[str, Any] = {"warmup": 3, "reps": 10, "min_sample_s": 1e-3}


def measure(
    fn: Callable[[], Any],
    *,
    flops: float,
    bytes: float,
    sync: Optional[Callable[[], Any]] = None,
    name: Optional[str] = None,
    dtype: Any = None,
    pipe: Optional[str] = None,
    working_set: Optional[float] = None,
    **sampling: Unpack[Sampling],
) -> Point:
    """Time ``fn()`` and return it as a roofline :class:`Point`.

    Units: ``flops`` is the FLOPs one call of ``fn`` performs (>= 0, counted per scalar
    operation, an FMA is 2), ``bytes`` the DRAM bytes one call moves (> 0); the result's
    ``seconds`` is the median time of one call, in seconds. :mod:`apple_roofline.user_kernels.flops_bytes`
    computes both for matmul, elementwise and reduction operations. Fractional counts are
    accepted (e.g. averages).

    Methodology (docs/design/measurement.md, "Measurement", as the suites' ``measure.time_kernel`` but
    timed with the host clock, :func:`time.perf_counter`):

    1. warm-up: ``fn()`` is called ``warmup`` times (what the first call returns gives the
       default ``dtype``), then ``sync()``;
    2. calibration: the number of calls per sample is doubled (or scaled from the last
       estimate) until one sample — ``calls`` back-to-back calls followed by ``sync()`` —
       lasts at least ``min_sample_s`` (at most :data:`MAX_CALLS` calls), amortising the
       clock's and ``sync``'s own cost;
    3. ``reps`` samples, each ``perf_counter()``, ``calls`` × ``fn()``, ``sync()``,
       ``perf_counter()``, divided by ``calls``: seconds per call;
    4. statistics by :func:`apple_roofline.timing.stats.summarize`: the point's ``seconds`` is the
       median, and the full :class:`~apple_roofline.timing.stats.Summary` (min, quartiles, CV ...) is
       in ``point.summary``.

    ``sync`` is called before the clock is read at the end of every sample; pass the call that
    waits for your framework's queued work, e.g. ``torch.cuda.synchronize``,
    ``lambda: mx.eval(out)`` or ``cupy.cuda.Device().synchronize``. **Without** ``sync``,
    asynchronous work (a GPU kernel launched by ``fn``) is not waited for: only the launch is
    timed. Plain CPU callables (NumPy) need no sync.

    Args:
        fn: the work, called with no arguments (wrap arguments with a lambda or
            :func:`functools.partial`).
        flops: FLOPs per call, finite, >= 0.
        bytes: bytes moved per call, finite, > 0.
        sync: optional zero-argument callable that waits for ``fn``'s work to finish.
        name: the point's label (default ``fn.__name__``, else the type's name).
        dtype: the precision the work is done in: ``"fp32"``, ``"fp16"``, ``"bf16"``, ``"tf32"``,
            ``"fp64"``, ``"fp8"``, ``"int8"`` or a data type naming one (``np.float32``,
            ``torch.float16``). Default: read from what the first warm-up call of ``fn()``
            returns (its ``.dtype``: a NumPy, PyTorch, CuPy or MLX array), else unknown (also with
            ``warmup=0``). It chooses the compute ceiling the point is judged against
            (:meth:`~apple_roofline.roofline.model.model.RooflineModel.judge`: the highest ceiling of that
            precision, not the roofline's peak).
        pipe: what does the work: ``"fma"`` (elementwise and FMA work, judged against the vector
            and scalar ceilings) or ``"tensor"`` (a matmul, judged against the GEMM ceilings); None:
            the highest ceiling of the precision.
        working_set: the bytes one call touches (its arrays' total size), where it may fit a cache:
            the memory level whose working-set range holds it sets the bandwidth the point is judged
            against (a 1 MiB array in L2, not DRAM); None: DRAM's, and a point above the DRAM roof is
            judged against the cache level whose roof holds it.
        **sampling: how it samples (:class:`Sampling`): ``warmup`` untimed calls before calibration,
            >= 0 (default 3); ``reps`` samples, 1 to 10000 (default 10); ``min_sample_s`` the minimum
            duration of one sample in seconds, finite and > 0 (default 1e-3).

    Returns:
        ``Point(name, flops, bytes, seconds=median seconds per call, summary=..., dtype=...,
        samples=..., pipe=..., working_set=...)``; its ``intensity``, ``gflops`` and ``gbps`` follow.

    Raises:
        TypeError: if ``fn`` or ``sync`` is not callable, or a keyword is none of the above (checked
            before anything is called).
        ValueError: for ``flops`` < 0, ``bytes`` <= 0, a non-finite or non-numeric count,
            ``warmup`` < 0, ``reps`` outside 1..10000, ``min_sample_s`` <= 0, a ``dtype`` that
            names no precision, a ``pipe`` other than "fma" and "tensor" or a ``working_set`` that is
            not a finite number > 0; the message names the argument and its valid range. Nothing is
            called.
        Exception: whatever ``fn`` or ``sync`` raises propagates unchanged; nothing is
            measured (no partial result).
    """
    unknown = sorted(set(sampling) - set(_SAMPLING_DEFAULTS))
    if unknown:
        raise TypeError(f"measure() got an unexpected keyword argument {unknown[0]!r}")
    if not callable(fn):
        raise TypeError(f"fn must be callable (a function of no arguments), not {type(fn).__name__}: {fn!r}")
    if sync is not None and not callable(sync):
        raise TypeError(f"sync must be callable or None, not {type(sync).__name__}: {sync!r}")
    f, b = _amounts(flops, bytes)
    given = {**_SAMPLING_DEFAULTS, **sampling}
    warmup = _int(given["warmup"], "warmup", 0, None)
    reps = _int(given["reps"], "reps", 1, MAX_REPS)
    min_s = _count(given["min_sample_s"], "min_sample_s", "> 0 seconds")
    if min_s <= 0:
        raise ValueError(f"min_sample_s must be > 0 seconds, not {given['min_sample_s']!r}")
    precision, ws = _judged_by(dtype, pipe, working_set)
    if name is None:
        name = str(getattr(fn, "__name__", type(fn).__name__))
    wait: Callable[[], Any] = sync if sync is not None else (lambda: None)
    result = fn() if warmup > 0 else None  # the first warm-up call; what it returns tells the dtype
    for _ in range(warmup - 1):
        fn()
    wait()
    if precision is None:
        precision = precision_of_dtype(getattr(result, "dtype", None))
    samples = _samples(fn, wait, min_s, reps)
    summary = summarize(samples)
    return Point(
        name=name,
        flops=f,
        bytes=b,
        seconds=summary.median,
        summary=summary,
        dtype=precision,
        samples=tuple(samples),
        pipe=pipe,
        working_set=ws,
    )


def _amounts(flops: Any, bytes: Any) -> Tuple[float, float]:
    """``(flops, bytes)`` per call as floats.

    Raises:
        ValueError: either not a finite number, flops < 0 or bytes <= 0.
    """
    f = _count(flops, "flops", ">= 0")
    if f < 0:
        raise ValueError(f"flops must be >= 0, not {flops!r}")
    b = _count(bytes, "bytes", "> 0")
    if b <= 0:
        raise ValueError(f"bytes must be > 0 (a roofline point needs traffic), not {bytes!r}")
    return f, b


def _judged_by(dtype: Any, pipe: Optional[str], working_set: Optional[float]) -> Tuple[Optional[str], Optional[float]]:
    """What the point is judged against: ``(precision of dtype or None, working set in bytes or
    None)``; ``pipe`` checked.

    Raises:
        ValueError: a dtype that names no precision, a pipe not in :data:`PIPES`, a working set that
            is not a finite number > 0.
    """
    precision = precision_of_dtype(dtype) if dtype is not None else None
    if dtype is not None and precision is None:
        raise ValueError(
            f"dtype {dtype!r} names no precision (valid: {', '.join(PRECISIONS)}, or a data type such as numpy.float32)"
        )
    if pipe is not None and pipe not in PIPES:
        raise ValueError(f"pipe must be one of {', '.join(PIPES)} or None, not {pipe!r}")
    ws = _count(working_set, "working_set", "> 0 bytes") if working_set is not None else None
    if ws is not None and ws <= 0:
        raise ValueError(f"working_set must be > 0 bytes, not {working_set!r}")
    return precision, ws


def _samples(fn: Callable[[], Any], wait: Callable[[], Any], min_s: float, reps: int) -> List[float]:
    """Seconds per call of ``reps`` samples of ``calls`` back-to-back calls then ``wait()``, the
    calls per sample doubled (or scaled from the last estimate) until a sample lasts ``min_s``
    (at most :data:`MAX_CALLS`); each at least the clock's resolution."""
    clock = time.perf_counter
    floor = max(time.get_clock_info("perf_counter").resolution, 1e-9)

    def sample(calls: int) -> float:
        t0 = clock()
        for _ in range(calls):
            fn()
        wait()
        return clock() - t0

    calls = 1
    while True:
        elapsed = sample(calls)
        if elapsed >= min_s or calls >= MAX_CALLS:
            break
        guess = math.ceil(calls * min_s / elapsed * 1.1) if elapsed > 0 else calls * 16
        calls = min(MAX_CALLS, max(calls * 2, guess))
    return [max(sample(calls), floor) / calls for _ in range(reps)]
