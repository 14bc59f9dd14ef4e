"""Core ML predictions of one built model, timed and validated: the native and the Python paths.

* native: ``_core.coreml_time`` (Objective-C++, ``native/metal/coreml.mm``): the compiled model
  loaded with its compute units, FP16 inputs as MLMultiArrays over memory allocated once, each
  ``predictionFromFeatures`` timed alone on the host clock after a warm-up (docs/design/measurement.md,
  "Measurement"); the per-prediction overhead the M5 article reports (about 25 µs) is not buried
  under Python's.
* python: coremltools' ``CompiledMLModel.predict`` on the same compiled model, each call timed with
  ``time.perf_counter`` (the dispatch study's Python path for kernels).

Validation (docs/design/measurement.md, "Validation"): the first timed output is compared with the NumPy product
of the FP16 input and the reference weight (FP16 weights, or the dequantized INT8 ones for w8a16)
against the FP32-accumulation bound of :func:`~apple_roofline.suites.gemm.checks.check_gemm` and, failing
that, the FP16-accumulation bound of
:func:`~apple_roofline.suites.gemm.checks.check_fp16_accumulation` (Core ML does not document its
accumulator); every other timed output must equal the first byte for byte, or the last one that
differs is validated the same way and the count is said.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Tuple

import numpy as np

from ..errors import check_int
from ..suites.gemm.checks import check_fp16_accumulation, check_gemm
from .kernels import Shape, parse_units
from .model import PathTiming
from .models import INPUT_NAME, OUTPUT_NAME, BuiltModel, build_model, default_cache_dir

__all__ = [
    "MACOS_ONLY",
    "MAX_REPS",
    "NATIVE_TIMER",
    "PYTHON_TIMER",
    "predictions_unavailable",
    "model_input",
    "check_output",
    "compile_model",
    "native_timing",
    "python_timing",
    "compute_plan",
    "matmul_call_seconds",
]

#: Why predictions cannot run off macOS.
MACOS_ONLY = "Core ML predictions need macOS"
#: The most predictions timed per point and path.
MAX_REPS = 100000
NATIVE_TIMER = "host steady clock around each -[MLModel predictionFromFeatures:error:] (Objective-C++)"
PYTHON_TIMER = "time.perf_counter around each coremltools CompiledMLModel.predict call"


def _core() -> Any:
    from .._native import _core

    return _core


def predictions_unavailable() -> str:
    """ "" when Core ML predictions can run here, else why not (:data:`MACOS_ONLY` off macOS)."""
    if sys.platform != "darwin":
        return MACOS_ONLY
    try:
        return str(_core().coreml_status())
    except ImportError as exc:
        return f"the native extension cannot be imported: {exc}"


def model_input(model: BuiltModel) -> np.ndarray:
    """The input x (B × K, FP16), uniform in [-1, 1), the same for every run of the model."""
    rng = np.random.default_rng(model.batch * 7919 + model.shape.k)
    return rng.uniform(-1.0, 1.0, (model.batch, model.shape.k)).astype(np.float16)


def check_output(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> Tuple[bool, str]:
    """Validate a prediction ``y`` (B × M) of ``x`` (B × K) by ``w`` (K × M): the FP32-accumulation
    bound first, then the FP16-accumulation one (module docstring). Returns ``(ok, message)``."""
    if y.shape != (x.shape[0], w.shape[1]):
        return False, f"the output has shape {y.shape}, expected {(x.shape[0], w.shape[1])}"
    ok, msg = check_gemm(x, w, y.astype(np.float16), "fp16")
    if ok:
        return True, msg
    ok16, msg16 = check_fp16_accumulation(x, w, y)
    if ok16:
        return True, f"{msg16}; not within the FP32-accumulation bound: Core ML accumulated in FP16"
    return False, f"{msg}; nor as an FP16-accumulated product: {msg16}"


def _check_all(
    x: np.ndarray, w: np.ndarray, first: np.ndarray, differing: int, last: Optional[np.ndarray], reps: int
) -> Tuple[bool, str]:
    ok, msg = check_output(x, w, first)
    if not differing:
        return ok, f"{msg}; all {reps} timed outputs identical"
    assert last is not None
    ok2, msg2 = check_output(x, w, last)
    return ok and ok2, (
        f"{msg}; {differing} of {reps} timed outputs differ from the first: the last of them "
        f"{'passed' if ok2 else 'failed'} ({msg2})"
    )


def compile_model(model: BuiltModel) -> Path:
    """The model compiled by Core ML (``model.mlmodelc`` in its cache folder), compiled once.

    Raises:
        DeviceError: Core ML cannot compile it (its message); UnsupportedError off macOS.
    """
    if not model.compiled.is_dir():
        _core().coreml_compile(str(model.package), str(model.compiled))
    return model.compiled


def native_timing(model: BuiltModel, units: str, reps: int, *, max_warmup_s: float = 2.0) -> PathTiming:
    """``reps`` predictions of ``model`` with ``units`` on the native path, validated.

    Raises:
        OptionError: ``units`` or ``reps`` out of range. DeviceError: Core ML failed (its message).
        UnsupportedError: off macOS.
    """
    (units,) = parse_units([units])
    reps = check_int(reps, "reps", 1, MAX_REPS)
    compiled = compile_model(model)
    x = model_input(model)
    out = _core().coreml_time(
        str(compiled), units, [(INPUT_NAME, list(x.shape), x.tobytes())], OUTPUT_NAME, reps, 3, max_warmup_s
    )
    dtype = np.dtype(str(out["output_dtype"]))
    shape = tuple(int(v) for v in out["output_shape"])
    first = np.frombuffer(out["first"], dtype=dtype).reshape(shape)
    last = np.frombuffer(out["last_differing"], dtype=dtype).reshape(shape) if out["differing"] else None
    ok, why = _check_all(x, model.reference(), first, int(out["differing"]), last, reps)
    return PathTiming("native", tuple(out["seconds"]), ok, why, NATIVE_TIMER, int(out["warmup"]), float(out["load_s"]))


def python_timing(model: BuiltModel, units: str, reps: int, *, max_warmup_s: float = 2.0) -> PathTiming:
    """``reps`` predictions of ``model`` with ``units`` through coremltools' ``predict``, validated
    (the garbage collector paused while timing, as ``timeit`` does).

    Raises:
        OptionError: ``units`` or ``reps`` out of range. CoremltoolsMissing: no coremltools.
        Exception: whatever coremltools raises when Core ML fails (its message).
    """
    from .models import import_coremltools

    (units,) = parse_units([units])
    reps = check_int(reps, "reps", 1, MAX_REPS)
    ct = import_coremltools()
    compiled = compile_model(model)
    x = model_input(model)
    start = time.perf_counter()
    cm = ct.models.CompiledMLModel(str(compiled), compute_units=getattr(ct.ComputeUnit, units))
    load_s = time.perf_counter() - start
    feed = {INPUT_NAME: x}

    def one() -> Tuple[float, np.ndarray]:
        t0 = time.perf_counter()
        y = cm.predict(feed)
        return time.perf_counter() - t0, np.asarray(y[OUTPUT_NAME])

    samples, first, last, differing, warm = _timed_loop(one, reps, max_warmup_s)
    ok, why = _check_all(x, model.reference(), first, differing, last, reps)
    return PathTiming("python", tuple(samples), ok, why, PYTHON_TIMER, warm, load_s)


def _timed_loop(
    one: Callable[[], Tuple[float, np.ndarray]], reps: int, max_warmup_s: float
) -> Tuple[list[float], np.ndarray, Optional[np.ndarray], int, int]:
    warm, previous, start = 0, -1.0, time.perf_counter()
    while True:
        s, _ = one()
        warm += 1
        agree = previous > 0 and abs(s - previous) <= 0.1 * max(s, previous)
        previous = s
        if warm >= 3 and (agree or time.perf_counter() - start >= max_warmup_s):
            break
    samples: list[float] = []
    first: Optional[np.ndarray] = None
    last: Optional[np.ndarray] = None
    differing = 0
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            s, y = one()
            samples.append(s)
            if first is None:
                first = y.copy()
            elif not np.array_equal(y, first):
                differing, last = differing + 1, y.copy()
    finally:
        if enabled:
            gc.enable()
    assert first is not None
    return samples, first, last, differing, warm


def compute_plan(model: BuiltModel, units: str) -> dict[str, Any]:
    """Core ML's compute plan of ``model`` under ``units`` (``{"known", "reason", "ops"}``), or
    ``known: false`` with why it cannot be known here (off macOS, before macOS 14.4)."""
    why = predictions_unavailable()
    if why:
        return {"known": False, "reason": why, "ops": []}
    return dict(_core().coreml_compute_plan(str(compile_model(model)), units))


def matmul_call_seconds(
    batch: int, n: int, compute_units: str, *, reps: int = 100, cache_dir: Optional[Path] = None
) -> Tuple[float, ...]:
    """Seconds of each of ``reps`` Core ML predictions of the FP16 matmul (B × N by N × N) with
    ``compute_units``, on the native path (Objective-C++, host clock), after a warm-up; the output
    is validated against NumPy before anything is returned. For per-call cost studies.

    Args:
        batch: B, 1 to 4096. n: N, 1 to 16384. compute_units: ``CPU_ONLY``, ``CPU_AND_GPU``,
            ``CPU_AND_NE`` or ``ALL``. reps: predictions timed (1 to 100000).
        cache_dir: where models are built (default :func:`~.models.default_cache_dir`).

    Raises:
        OptionError: a parameter out of range (the message names it and the valid range).
        UnsupportedError: off macOS, with the reason ("Core ML predictions need macOS").
        CoremltoolsMissing: coremltools is not installed (the message names the extra).
        ModelBuildError: the model cannot be built. DeviceError: Core ML failed (its message).
        BackendError: the output failed validation (the message says how).
    """
    from .kernels import check_batches, parse_shape

    (b,) = check_batches([batch])
    shape = parse_shape(check_int(n, "n", 1, 16384))
    (units,) = parse_units([compute_units])
    reps = check_int(reps, "reps", 1, MAX_REPS)
    why = predictions_unavailable()
    if why:
        raise _core().UnsupportedError(f"[coreml] {why}")
    model = build_model(Shape(shape.k, shape.m), b, "fp16", cache_dir or default_cache_dir())
    t = native_timing(model, units, reps)
    if not t.valid:
        raise _core().BackendError(f"[coreml] {model.key} with {units}: output failed validation: {t.validation}")
    return t.samples_s
