"""The ``gemm`` suite: vendor GEMM libraries on square N = 16, 32 … (docs/design/measurement.md,
"Counting FLOPs and bytes").

C[M×N] = A[M×K]·B[K×N] in the six precisions of :data:`~.precisions.GEMM_PRECISIONS` (its module
gives their formats and the counting). CPU: BLAS sgemm and dgemm (Accelerate on macOS, OpenBLAS
elsewhere) and, on macOS, FP16 through BNNSMatMul (the M5 article's AMX measurements); CUDA: cuBLAS,
all six; Metal: MetalPerformanceShaders fp32 and fp16. A backend without a precision in its kernel
table is skipped silently; one whose ``gemm`` raises ``UnsupportedError`` is recorded as skipped.
Besides the vendor libraries, :data:`~.precisions.TILED_GEMM`, the M5 article's plain 16×16 tiled
kernel, fp32, never a ceiling.

N doubles from 16 (--quick: N = 64, 256, 1024, 4096, :mod:`.sizes`) until the ladder has settled
(two quiet sizes agree within 3 %: :mod:`.settle`), the next size would exceed the time budget (a
launch of about ``max_launch_s``; --quick: less), the memory cap, or the last size (8192; --quick:
4096); the last size measured records why (docs/design/matrix.md, "The GEMM ladder"). The operands
come from :mod:`.inputs`; every product is validated against NumPy, elementwise up to
N = :data:`~.checks.EXACT_CHECK_MAX_N` and by Freivalds' test above it (:mod:`.checks`; see
:func:`~.checks.check_gemm` for the bounds).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...study.records import LADDER_PARAM
from ...timing.stats import summarize
from ..base import ITEMSIZE, Case, KernelDef, Suite, SuiteContext, read
from .checks import check_product, output_values, poison_output
from .inputs import Drawn, draw_inputs, draw_kind, input_kind
from .precisions import GEMM_PRECISIONS, TILED_GEMM, gemm_bytes, gemm_flops, gemm_kernel_def
from .reuse import SharedDraws
from .settle import few_reps, settle_note
from .sizes import SIZES_OPTION, growth, ladder_sizes, most_sizes, next_size

__all__ = ["GemmSuite"]


@dataclass(frozen=True)
class _Ladder:
    """One kernel's ladder (:meth:`GemmSuite._ladder`): its kernel table entry ``kdef``, precision
    ``dtype`` and ``library`` ("" for the tiled kernel); ``make(N)`` gives a case's ``make_kernel``;
    a ``compiled`` kernel takes (A, B, C, N) and N·N work items, a library routine (A, B, C) and 1;
    buffers come from ``backend``; ``max_launch_s`` is the time budget of one launch (seconds) and
    ``mem`` the device memory (bytes, 0: unknown)."""

    kdef: KernelDef
    dtype: str
    library: str
    make: Callable[[int], Any]
    compiled: bool
    backend: Any
    max_launch_s: float
    mem: int


def _buffers(backend: Any, drawn: Drawn, dtype: str, n: int) -> List[Any]:
    """A, B and C of an n×n product in ``dtype``'s storage formats on ``backend``: A and B written
    with ``drawn``'s stored arrays, C poisoned (:func:`~.checks.poison_output`)."""
    p = GEMM_PRECISIONS[dtype]
    bufs = [
        backend.alloc(n * n * ITEMSIZE[p.in_dtype]),
        backend.alloc(n * n * ITEMSIZE[p.in_dtype]),
        backend.alloc(n * n * ITEMSIZE[p.out_dtype]),
    ]
    bufs[0].write(drawn.a_stored.ravel())
    # int8: the backend takes B transposed (core/backend.h: the tensor cores' layout), and
    # gemm_inputs already gives it so.
    bufs[1].write(drawn.b_stored.ravel())
    poison_output(bufs[2], dtype, n * n)
    return bufs


class GemmSuite(Suite):
    """Vendor GEMM (the backend's ``gemm`` routine) for every precision of GEMM_PRECISIONS that the
    backend's kernel table names, then the tiled comparison kernel where the backend has it, on
    square sizes doubling from 16 (the context's :data:`~.sizes.SIZES_OPTION`: others, as a
    ``--quick`` run's) until the ladder settles (:mod:`.settle`) or the next size would not fit the
    time budget or memory (device memory ≥ 4× the three matrices; through WebGPU, the three within
    the adapter's largest binding).

    Raises ValueError (when built) for a :data:`~.sizes.SIZES_OPTION` that :func:`~.sizes.ladder_sizes`
    refuses."""

    name = "gemm"
    adaptive = True  # the ladder's next size follows from the last size's measurement

    def __init__(self, ctx: SuiteContext) -> None:
        super().__init__(ctx)
        self.scratch = ctx.scratch  # every check reads C into it (docs/design/budgets.md, "Time budgets")
        self.sizes = ladder_sizes(ctx.options.get(SIZES_OPTION))
        #: each ladder's inputs, drawn once for the ladders that take the same (:meth:`cases` sets it)
        self.inputs: SharedDraws[str, Drawn] = SharedDraws(draw_inputs, ())
        #: the float64 values of each size up to UNIFORM_KEEP_MAX_N, which every floating-point
        #: precision's inputs are rounded from (:func:`~.inputs.uniform_pair64`): drawn once for all of them
        self.uniform: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}

    def _host_ladders(self) -> bool:
        """Whether the CPU's library GEMMs run too (:meth:`_host_gemm`: a GPU sharing the host's memory)."""
        return self.ctx.backend_name != "cpu" and bool(self.ctx.info.get("unified_memory"))

    def ladder_dtypes(self) -> List[str]:
        """The dtype of each ladder :meth:`cases` runs, in order: each library precision the
        backend has, "fp32" for the tiled kernel where it has it, then the CPU's library
        precisions beside a unified-memory GPU."""
        out = [d for d in GEMM_PRECISIONS if self.source(gemm_kernel_def(d)) is not None]
        if self.source(TILED_GEMM) is not None:
            out.append(TILED_GEMM.dtype)
        if self._host_ladders():
            out += [d for d, p in GEMM_PRECISIONS.items() if "cpu" in p.libraries]
        return out

    def total(self) -> int:
        return len(self.ladder_dtypes()) * most_sizes(self.sizes)

    def cases(self) -> Iterator[Case]:
        """Every ladder's cases (:meth:`ladder_dtypes` gives their order); inputs that several
        ladders take are drawn once (:attr:`inputs`) and released when the cases end."""
        # a function of the uniform values, not a bound method: the suite and its draws hold no
        # reference cycle, so the suite is released as its cases end (docs/design/measurement.md, "Measurement")
        self.inputs = SharedDraws(partial(draw_kind, self.uniform), [input_kind(d) for d in self.ladder_dtypes()])
        try:
            yield from self._ladders()
        finally:
            self.inputs.clear()
            self.uniform.clear()

    def _ladders(self) -> Iterator[Case]:
        backend = self.ctx.backend
        for dtype, p in GEMM_PRECISIONS.items():
            kdef = gemm_kernel_def(dtype)
            if self.source(kdef) is None:
                continue
            library = kdef.sources[self.ctx.backend_name][0]
            yield from self._ladder(kdef, dtype, library, lambda N, dtype=dtype: partial(backend.gemm, dtype, N, N, N))
        src = self.source(TILED_GEMM)
        if src is not None:
            consts = self.constants(TILED_GEMM)
            yield from self._ladder(
                TILED_GEMM, "fp32", "", lambda N: partial(backend.compile, src[0], src[1], consts), compiled=True
            )
        yield from self._host_gemm()

    def _host_gemm(self) -> Iterator[Case]:
        """On a GPU that shares the host's memory (``info["unified_memory"]``: Apple silicon), the
        CPU's library GEMMs too — on Apple silicon Accelerate's sgemm/dgemm and BNNS FP16 run on the
        AMX matrix units (the M5 article measures them beside the GPU) — as ``cpu_<kernel>`` with the
        ceiling classes "CPU GEMM <dtype>", timed on the CPU backend with its own buffers."""
        if not self._host_ladders():
            return
        host = self.ctx.options.get("host_backend")
        if host is None:
            from ..._native import _core

            host = _core.Backend("cpu", 0)
        for dtype, p in GEMM_PRECISIONS.items():
            lib = p.libraries.get("cpu")
            if lib is None:
                continue
            kdef = KernelDef(
                "gemm",
                f"cpu_{p.kernel}",
                dtype,
                {self.ctx.backend_name: (lib, p.kernel)},
                ceiling_class=f"CPU {p.ceiling_class}",
                ceiling_kind="compute",
            )
            yield from self._ladder(
                kdef, dtype, lib, lambda N, dtype=dtype: partial(host.gemm, dtype, N, N, N), backend=host
            )

    def _ladder(
        self, kdef: KernelDef, dtype: str, library: str, make: Any, compiled: bool = False, backend: Any = None
    ) -> Iterator[Case]:
        """Cases of one kernel at the ladder's sizes (:attr:`sizes`: N = 16, 32 … by default):
        ``make(N)`` gives the case's ``make_kernel``; a
        ``compiled`` kernel takes (A, B, C, N) and N·N work items, a library routine (A, B, C) and 1.
        Buffers come from ``backend`` (default: the suite's). The ladder ends where the size's
        :data:`~apple_roofline.study.records.LADDER_PARAM` says why (:meth:`_end_note`), at an invalid
        size, or where the next launch is predicted over the budget (a journal's measurement from before
        that parameter)."""
        mem = int(self.ctx.info.get("memory_bytes", 0) or 0)
        most = int(self.ctx.info.get("max_buffer_bytes", 0) or 0)  # a WebGPU adapter's largest binding
        ladder = _Ladder(
            kdef,
            dtype,
            library,
            make,
            compiled,
            self.ctx.backend if backend is None else backend,
            float(self.ctx.options.get("gemm_max_launch_s", 0.25)),
            mem,
        )
        before: Any = None  # the valid measurement of the size before
        kind = input_kind(dtype)
        self.inputs.start(kind)
        N, n_before = self.sizes[0], 0
        while not (mem and gemm_bytes(N, N, N, dtype) * 4 > mem) and not (most and gemm_bytes(N, N, N, dtype) > most):
            case = self._case(ladder, self.inputs.get(kind, N), N, before, n_before)
            self.last = None  # set by record(); stays None when the case was skipped
            yield case
            last: Any = self.last
            nxt = self._next_size(ladder, N, last)
            if nxt is None:
                break
            before, n_before, N = last, N, nxt
        self.inputs.end(kind)

    def _case(self, ladder: _Ladder, drawn: Drawn, N: int, before: Any, n_before: int) -> Case:
        """The case of ``ladder`` at size ``N`` on ``drawn``'s inputs, in fresh buffers
        (:func:`_buffers`); ``before`` is the valid Measurement of the size before, ``n_before``, or
        None (its samples set how few repetitions this size takes first)."""
        dtype = ladder.dtype
        bufs = _buffers(ladder.backend, drawn, dtype, N)
        return Case(
            kernel=ladder.kdef,
            params={"m": N, "n": N, "k": N},
            work_items=N * N if ladder.compiled else 1,
            flops=gemm_flops(N, N, N),
            bytes=gemm_bytes(N, N, N, dtype),
            args=[*bufs, N] if ladder.compiled else bufs,
            make_kernel=ladder.make(N),
            check=partial(self._check, drawn, bufs[2], N, dtype, ladder.library),
            reset=partial(poison_output, bufs[2], dtype, N * N),
            few_reps=None if before is None else few_reps(before.min_s, before.cv, growth(n_before, N)),
            note=partial(self._end_note, self.sizes, N, n_before, dtype, before, ladder.max_launch_s, ladder.mem),
        )

    def _check(self, drawn: Drawn, cbuf: Any, N: int, dtype: str, library: str) -> Tuple[bool, str]:
        """A case's check: C read from ``cbuf`` (through :attr:`scratch`) against ``drawn``'s inputs
        (:func:`~.checks.check_product`, with their memo)."""
        c = output_values(read(cbuf, GEMM_PRECISIONS[dtype].out_dtype, N * N, self.scratch), dtype).reshape(N, N)
        return check_product(drawn.a, drawn.b, c, dtype, library, drawn.memo)

    def _next_size(self, ladder: _Ladder, N: int, last: Any) -> Optional[int]:
        """The size after ``N`` given its Measurement ``last`` (None where the case was skipped), or
        None where the ladder ends: ``last`` missing or invalid, or carrying
        :data:`~apple_roofline.study.records.LADDER_PARAM`, no next size, or its launch predicted over
        the budget."""
        # The next size costs about growth (8 for a doubling) times this one; predicted from
        # the best sample, so one disturbed size (a noisy neighbour, a BLAS thread wake-up)
        # does not end the ladder.
        if last is None or not last.valid or LADDER_PARAM in last.params:
            return None
        nxt = next_size(self.sizes, N, last.min_s, ladder.max_launch_s)
        if nxt is None or last.min_s * growth(N, nxt) > ladder.max_launch_s:
            return None
        return nxt

    @staticmethod
    def _end_note(
        sizes: Sequence[int],
        N: int,
        n_before: int,
        dtype: str,
        before: Any,
        max_launch_s: float,
        mem: int,
        samples_s: Sequence[float],
    ) -> Dict[str, Any]:
        """``{LADDER_PARAM: why}`` where a ladder of ``sizes`` ends at size ``N`` (whose valid
        measurement has ``samples_s``, seconds per launch; ``before`` the Measurement of the size
        before, ``n_before``, or None), else ``{}``: settled (:func:`~.settle.settle_note`), N the
        ladder's last size, the next size's launch (:func:`~.sizes.next_size`) predicted (this one's
        fastest times :func:`~.sizes.growth`, 8 for a doubling) over ``max_launch_s``, or the next
        size's matrices (4× their bytes) over the device memory ``mem`` (0: unknown)."""
        s = summarize(samples_s)
        n_next = next_size(sizes, N, s.min, max_launch_s)
        why = None
        if before is not None:
            rate = gemm_flops(N, N, N) / s.median / 1e9
            grow = growth(N, n_next if n_next is not None else 2 * N)
            why = settle_note(n_before, before.gflops, before.cv, N, rate, s.cv, s.min, grow)
        if why is None and n_next is None:
            why = "largest size"
        if why is None and n_next is not None and growth(N, n_next) * s.min > max_launch_s:
            why = f"time budget: next launch predicted {growth(N, n_next) * s.min:.3g} s > {max_launch_s:g} s"
        if why is None and mem and n_next is not None and gemm_bytes(n_next, n_next, n_next, dtype) * 4 > mem:
            why = f"memory: {n_next} needs over a quarter of {mem} bytes"
        return {} if why is None else {LADDER_PARAM: why}
