"""The ``stream`` suite: McCalpin's STREAM kernels on fp32 arrays (docs/design/extending.md, "Adding a suite").

copy ``c = a``, scale ``b = q·c``, add ``c = a + b``, triad ``a = b + q·c``; one work item is one
4-wide vector (16 B). Bytes per element: 8, 8, 12, 12 (each input read once, the output written
once: BabelStream's convention); FLOPs per element: 0, 1, 1, 2. Arrays default to at least 4× the
last-level cache and at least 256 MiB (the M5 article's size), capped to fit memory. Each kernel is measured on its own:
inputs written, output poisoned with NaN, timed, then checked element by element against NumPy.
Every input is a pattern of period PERIOD tiled, so the reference is computed once per kernel over
one period and checks every element (and every block size the case is rebound to when tuning).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, List, Tuple

import numpy as np

from ..base import (
    EPS,
    ITEMSIZE,
    PERIOD,
    Case,
    Constants,
    KernelDef,
    OutputCheck,
    Suite,
    check_tiled,
    fill,
    pattern,
    poison,
    rebindable,
)

__all__ = ["StreamSuite", "STREAM_KERNELS", "Q", "VECTOR", "BLOCK_ELEMENTS", "bandwidth_class", "array_elements"]

#: The scalar of scale and triad (STREAM's own).
Q = 3.0
#: Elements per work item: every kernel reads and writes 4-wide fp32 vectors (16 B).
VECTOR = 4
#: Arrays are whole blocks of this many elements (so every backend's vector loads stay in bounds).
BLOCK_ELEMENTS = 64
_ELEMENT = ITEMSIZE["fp32"]


@dataclass(frozen=True)
class StreamKernel:
    """One STREAM kernel: which of (a, b, c) it writes, FLOPs and bytes per element, and its NumPy
    reference ``ref(a, b, c, q)``."""

    name: str
    output: int  # index of the output array among (a, b, c)
    flops_per_elem: int
    bytes_per_elem: int
    ref: Callable[[np.ndarray, np.ndarray, np.ndarray, np.float32], np.ndarray]

    def kernel_def(self, ceiling_class: str = "DRAM bandwidth") -> KernelDef:
        entry = f"stream_{self.name}_f32"
        # 1024 threads per block on CUDA: on an H100 the triad reached 91.2 % of the theoretical
        # bandwidth with 1024 against 90.6 % with 256 (256 MiB arrays).
        return KernelDef(
            "stream",
            self.name,
            "fp32",
            {
                "cpu": ("kernels.cpp", entry),
                "cuda": ("stream.cu", entry),
                "metal": ("stream.metal", entry),
                "wgpu": ("stream.wgsl", entry),
            },
            # WebGPU: 1024 invocations a workgroup too (on an H200 through Vulkan the triad moved 4,351 GB/s
            # with 1024 and 3,620 with 256, bench/README.md, "WebGPU"), built without naga's bounds checks
            # (every access is guarded by the work-item count; with them: the same 3,619 GB/s at 256)
            constants={"cuda": {"BLOCK": 1024}, "wgpu": {"BLOCK": 1024, "AR_RUNTIME_CHECKS": 0}},
            ceiling_class=ceiling_class,
            ceiling_kind="bandwidth",
        )


def bandwidth_class(array_bytes: int, llc_bytes: int) -> str:
    """ "DRAM bandwidth" when each array is at least 4× the last-level cache (docs/design/measurement.md,
    "Measurement") or the
    cache size is unknown, else "Cache bandwidth": small arrays measure the caches, not DRAM."""
    return "Cache bandwidth" if llc_bytes and array_bytes < 4 * llc_bytes else "DRAM bandwidth"


STREAM_KERNELS: Tuple[StreamKernel, ...] = (
    StreamKernel("copy", 2, 0, 8, lambda a, b, c, q: a),
    StreamKernel("scale", 1, 1, 8, lambda a, b, c, q: q * c),
    StreamKernel("add", 2, 1, 12, lambda a, b, c, q: a + b),
    StreamKernel("triad", 0, 2, 12, lambda a, b, c, q: b + q * c),
)


def array_elements(array_bytes: int) -> int:
    """fp32 elements per array for a requested size in bytes: whole blocks of
    :data:`BLOCK_ELEMENTS`, at least one block."""
    return max(BLOCK_ELEMENTS, array_bytes // _ELEMENT // BLOCK_ELEMENTS * BLOCK_ELEMENTS)


class StreamSuite(Suite):
    """STREAM copy, scale, add and triad over three fp32 arrays of ``ctx.array_bytes`` each."""

    name = "stream"

    def total(self) -> int:
        return len(STREAM_KERNELS)

    def cases(self) -> Iterator[Case]:
        n = array_elements(self.ctx.array_bytes)
        nbytes = n * _ELEMENT
        backend = self.ctx.backend
        bufs: List[Any] = [backend.alloc(nbytes) for _ in range(3)]
        pats = [pattern("fp32", 0.5, 1.5, seed, PERIOD) for seed in (1, 2, 3)]
        q = np.float32(Q)
        rtol = 4 * EPS["fp32"]
        cclass = bandwidth_class(nbytes, int(self.ctx.info.get("llc_bytes", 0) or 0))
        # Whether each array holds its input pattern: the kernels only read their inputs, so an
        # array is written again only after it was a kernel's output.
        holds_pattern = [False] * len(bufs)
        for sk in STREAM_KERNELS:
            kdef = sk.kernel_def(cclass)
            src = self.source(kdef)
            if src is None:
                continue
            for i, buf in enumerate(bufs):
                if i == sk.output:
                    poison(buf, "fp32", n)
                    holds_pattern[i] = False
                elif not holds_pattern[i]:
                    fill(buf, pats[i], n)
                    holds_pattern[i] = True
            # Element i of every input is its pattern's element i % PERIOD, so one period of the
            # reference, tiled, is the whole output's (computed once per kernel).
            want = sk.ref(pats[0], pats[1], pats[2], q).astype(np.float32)
            yield rebindable(partial(self._case, sk, kdef, src, bufs, n, want, rtol), self.constants(kdef))

    def _case(
        self,
        sk: StreamKernel,
        kdef: KernelDef,
        src: Tuple[str, str],
        bufs: List[Any],
        n: int,
        want: np.ndarray,
        rtol: float,
        constants: Constants,
    ) -> Case:
        """The case of ``sk`` over the ``n``-element arrays ``bufs`` built with ``constants``: its
        output checked against ``want`` (one period of the reference, tiled) within ``rtol``, read
        into the run's scratch."""
        out = bufs[sk.output]

        check = OutputCheck.of_output(out, "fp32", n, self.ctx.scratch, lambda got: check_tiled(got, want, rtol, 0.0))
        return Case(
            kernel=kdef,
            params={"n": n, "array_bytes": n * _ELEMENT, "q": Q},
            work_items=n // VECTOR,
            flops=sk.flops_per_elem * n,
            bytes=sk.bytes_per_elem * n,
            args=[*bufs, Q],
            make_kernel=partial(self.ctx.backend.compile, src[0], src[1], dict(constants)),
            check=check,
            reset=partial(poison, out, "fp32", n),
        )
