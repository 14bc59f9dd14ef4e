"""The paths a matmul call can take, as a small registry (docs/design/studies.md, "The per-call cost study").

Each :class:`CallPath` has a name, the device backends whose studies include it, a statement of
what one call includes, and a ``prepare`` function that sets up one shape: buffers written, the
output poisoned with NaN, and returns a :class:`PreparedCall` — ``run(reps)``, seconds of each of
``reps`` calls, and ``check()``, the output validated against NumPy. Every GPU and library path
is timed by the native round-trip loop (``_core.launch_round_trip``: ``Kernel::launch``, then
``Backend::synchronize``, on the host's steady clock; the dispatch-latency study's ``round_trip``),
so Python's own cost is not in the figure:

* ``blas`` — the host CPU's BLAS ``cblas_sgemm`` through ``Backend.gemm`` on the CPU backend
  (OpenBLAS from scipy-openblas32 on Linux; Accelerate on macOS, which runs it on the AMX matrix
  units of Apple silicon). In every study, whatever the device: it is the CPU's side of the
  crossover.
* ``cublas`` — ``cublasGemmEx`` FP32 (CUDA).
* ``mps`` — ``MPSMatrixMultiplication`` FP32 (Metal).
* ``kernel`` — the tool's own 16×16 tiled kernel (the gemm suite's
  :data:`~apple_roofline.suites.gemm.precisions.TILED_GEMM`, ``shaders/cuda/gemm.cu`` and
  ``shaders/metal/gemm.metal``), so CUDA and Metal compare path for path. It computes whole 16-row
  tiles: B is padded with zero rows to a multiple of 16 (the call still counts 2·B·N² FLOPs, the
  work asked for).
* ``coreml_<units>`` — one Core ML prediction per compute-unit setting (Metal studies): the engines
  study's FP16 matmul model (weights N×N, input B×N, FP16: Core ML's precision, so the bytes differ
  from the FP32 paths' though the FLOPs are the same), timed by its native path
  (:func:`apple_roofline.engines.predict.native_timing`: each ``predictionFromFeatures`` alone on the
  host clock, Objective-C++) and validated there against NumPy. Skipped with the reason where
  predictions cannot run (off macOS) or coremltools is missing.

Validation is the gemm suite's :func:`~apple_roofline.suites.gemm.checks.check_gemm` (exact elementwise
bound up to 512 rows, Freivalds above; every shape here has at most 256 rows). Nothing here imports
the extension at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..errors import OptionError
from ..shaders import resolve
from ..suites.base import poison, read
from ..suites.gemm.checks import check_gemm
from ..suites.gemm.precisions import TILE, TILED_GEMM

__all__ = ["CallPath", "PathContext", "PreparedCall", "PATHS", "COREML_UNITS", "check_paths", "blas_label"]

#: Core ML's compute-unit settings (MLComputeUnits), one path each: coreml_<name>.
COREML_UNITS: Tuple[str, ...] = ("all", "cpu_only", "cpu_and_gpu", "cpu_and_ne")


@dataclass(frozen=True)
class PreparedCall:
    """One shape ready to be timed: ``run(reps)`` makes ``reps`` calls, each waited for, and returns
    the seconds of each; ``check()`` validates the output of the last call; ``rows`` is how many
    rows of A the path computes (B, or B padded to a tile); ``warms_up``: each ``run`` warms up
    on its own (Core ML: it loads the model and predicts until two agree), so the runner does not
    warm it up call by call."""

    run: Callable[[int], List[float]]
    check: Callable[[], Tuple[bool, str]]
    rows: int
    warms_up: bool = False


@dataclass
class PathContext:
    """What a path needs to prepare a shape: the extension module, the study's device backend, its
    backend name and device string (``"cuda:0"``), and ``host()``, the host's CPU backend (the
    device's own when it is the CPU; opened once, on first use)."""

    core: Any
    backend: Any
    backend_name: str
    device: str
    _host: Optional[Any] = field(default=None, init=False, repr=False)

    def host(self) -> Any:
        """The CPU backend: the device's own on a CPU study, else ``_core.Backend("cpu", 0)``."""
        if self.backend_name == "cpu":
            return self.backend
        if self._host is None:
            self._host = self.core.Backend("cpu", 0)
        return self._host


@dataclass(frozen=True)
class CallPath:
    """One path of the registry.

    Attributes:
        name: the path's name (``--path``).
        backends: the device backends whose studies include it.
        call: what one call includes, in words.
        prepare: ``prepare(ctx, batch, n)`` -> :class:`PreparedCall`, or None when the path is not
            in this build.
        unavailable: why, when ``prepare`` is None.
        label: ``label(ctx)``, the library or kernel it runs, for reports.
        runs_on: ``runs_on(ctx)``, the device string it runs on (the study's, or ``"cpu"``).
        dtype: the element type of A, W and C, for the bytes per call (``fp32``; ``fp16`` for Core ML).
    """

    name: str
    backends: Tuple[str, ...]
    call: str
    prepare: Optional[Callable[[PathContext, int, int], PreparedCall]]
    label: Callable[[PathContext], str]
    unavailable: str = ""
    runs_on: Callable[[PathContext], str] = lambda ctx: ctx.device
    dtype: str = "fp32"


def _gemm_call(
    ctx: PathContext,
    backend: Any,
    kernel: Any,
    batch: int,
    n: int,
    rows: int,
    work_items: int,
    extra: Sequence[Any] = (),
) -> PreparedCall:
    """Buffers A (rows×N, rows past B zero), W (N×N) and C (rows×N, NaN) on ``backend``; ``run`` is
    the native round-trip loop of ``kernel`` over (A, W, C, *extra) and ``work_items`` work items."""
    rng = np.random.default_rng(batch * 4099 + n)
    a = rng.uniform(-1.0, 1.0, (batch, n)).astype(np.float32)
    w = rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32)
    bufs = (backend.alloc(rows * n * 4), backend.alloc(n * n * 4), backend.alloc(rows * n * 4))
    bufs[0].write(np.concatenate([a, np.zeros((rows - batch, n), np.float32)]).ravel())
    bufs[1].write(w.ravel())
    poison(bufs[2], "fp32", rows * n)
    args = (*bufs, *extra)
    core = ctx.core

    def run(reps: int) -> List[float]:
        return list(core.launch_round_trip(backend, kernel, args, work_items, reps))

    def check() -> Tuple[bool, str]:
        c = np.array(read(bufs[2], "fp32", rows * n)).reshape(rows, n)[:batch]
        return check_gemm(a, w, c, "fp32")

    return PreparedCall(run, check, rows)


def _blas(ctx: PathContext, batch: int, n: int) -> PreparedCall:
    host = ctx.host()
    return _gemm_call(ctx, host, host.gemm("fp32", batch, n, n), batch, n, batch, 1)


def _library(ctx: PathContext, batch: int, n: int) -> PreparedCall:
    return _gemm_call(ctx, ctx.backend, ctx.backend.gemm("fp32", batch, n, n), batch, n, batch, 1)


def _tiled(ctx: PathContext, batch: int, n: int) -> PreparedCall:
    source, entry = TILED_GEMM.sources[ctx.backend_name]
    kernel = ctx.backend.compile(*resolve(source, entry), dict(TILED_GEMM.constants.get(ctx.backend_name, {})))
    rows = -(-batch // TILE) * TILE
    return _gemm_call(ctx, ctx.backend, kernel, batch, n, rows, rows * n, (n,))


def _coreml(units: str) -> Callable[[PathContext, int, int], PreparedCall]:
    """``prepare`` of the Core ML path with ``units``: the model built (or found in the engines
    cache) once per shape; ``run(reps)`` loads it and times ``reps`` predictions natively (each run
    warms up first, so the first prediction's load is not in the samples); ``check()`` reports the
    validation of the last run's outputs."""

    def prepare(ctx: PathContext, batch: int, n: int) -> PreparedCall:
        from ..engines.kernels import Shape
        from ..engines.models import CoremltoolsMissing, build_model, default_cache_dir
        from ..engines.predict import native_timing, predictions_unavailable

        why = predictions_unavailable()
        if why:
            raise ctx.core.UnsupportedError(f"[coreml] {why}")
        try:
            model = build_model(Shape(n, n), batch, "fp16", default_cache_dir())
        except CoremltoolsMissing as exc:
            raise ctx.core.UnsupportedError(f"[coreml] {exc}") from None
        last: List[Tuple[bool, str]] = []

        def run(reps: int) -> List[float]:
            t = native_timing(model, units, reps)
            last[:] = [(t.valid, t.validation)]
            return list(t.samples_s)

        def check() -> Tuple[bool, str]:
            return last[-1] if last else (False, "no prediction was made")

        return PreparedCall(run, check, batch, warms_up=True)

    return prepare


def blas_label(info: Mapping[str, Any]) -> str:
    """The ``blas`` path's label from the CPU backend's ``info()["blas"]``: Accelerate is marked as
    the AMX path."""
    lib = str(info.get("blas", "") or "BLAS")
    amx = " — AMX matrix units on Apple silicon" if lib.startswith("Accelerate") else ""
    return f"cblas_sgemm, {lib}{amx}"


_SYNC = {"cuda": "cuStreamSynchronize", "metal": "waitUntilCompleted"}


def _registry() -> Dict[str, CallPath]:
    paths = [
        CallPath(
            "blas",
            ("cpu", "cuda", "metal"),
            "cblas_sgemm on the host CPU, returning when the product is done; inputs in host memory",
            _blas,
            lambda ctx: blas_label(ctx.host().info()),
            runs_on=lambda ctx: "cpu",
        ),
        CallPath(
            "cublas",
            ("cuda",),
            "cublasGemmEx (FP32) enqueued on the stream, then cuStreamSynchronize; inputs already on the device",
            _library,
            lambda ctx: "cuBLAS cublasGemmEx FP32",
        ),
        CallPath(
            "mps",
            ("metal",),
            "MPSMatrixMultiplication (FP32) in one command buffer, committed, then waitUntilCompleted; "
            "inputs already in shared memory",
            _library,
            lambda ctx: "MetalPerformanceShaders MPSMatrixMultiplication FP32",
        ),
        CallPath(
            "kernel",
            ("cuda", "metal"),
            "the tool's 16×16 tiled kernel, one launch, then the device's wait (cuStreamSynchronize, "
            "waitUntilCompleted); B padded to a multiple of 16 rows; inputs already on the device",
            _tiled,
            lambda ctx: f"{TILED_GEMM.name} ({TILED_GEMM.sources[ctx.backend_name][0]})",
        ),
    ]
    paths += [
        CallPath(
            f"coreml_{u}",
            ("metal",),
            f"one Core ML prediction (FP16 model, MLComputeUnits {u.upper()}), "
            "predictionFromFeatures returning the output; input already in an MLMultiArray",
            _coreml(u.upper()),
            lambda ctx: "Core ML (engines study's FP16 matmul model)",
            dtype="fp16",
        )
        for u in COREML_UNITS
    ]
    return {p.name: p for p in paths}


#: Every path, by name, in measurement order.
PATHS: Dict[str, CallPath] = _registry()


def check_paths(names: Sequence[str]) -> Tuple[str, ...]:
    """``names`` as path names, in the registry's order, without repeats.

    Raises:
        OptionError: (parameter ``paths``) an unknown name, or none; the message lists the valid names.
    """
    valid = ", ".join(PATHS)
    if not names:
        raise OptionError("paths", "", valid, problem="is empty", shown="(none)")
    for name in names:
        if name not in PATHS:
            raise OptionError("paths", name, valid, problem="is not a path")
    return tuple(p for p in PATHS if p in names)
