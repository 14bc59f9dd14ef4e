"""The ``sweep`` suite: the roofline traced by one kernel family at growing FMA counts
(docs/design/measurement.md, "Counting FLOPs and bytes").

``vec4`` (the M5 article's float4 kernel: four cross-dependent 4-wide chains, 32·F FLOPs and 32 B
per work item, arithmetic intensity F FLOP/B) and ``scalar8`` (eight independent scalar chains,
16·F FLOPs and 64 B per work item, F/4 FLOP/B), F = 1, 2, 4 … 1024 (1, 4 … 1024 with --quick).
Buffers: the run's array size each (input and output), as large as a STREAM array (in a quick run
shrunk for time, :data:`~apple_roofline.suites.work.SHRINK_STEPS`, 4x the last-level cache where
that is smaller: :func:`sweep_buffer_bytes`).

Time budget: once a kernel is clearly compute-bound — its effective bandwidth at the previous F fell
below half of its bandwidth at F = 1 — the working set of the next points shrinks so that one
launch lasts about ``max_launch_s``; such points record ``shrunk: true`` and their working set. A
compute-bound kernel's rate does not depend on where its data lives (the M5 article's 128 MB sweep
and 4 MB peak agree), and the points that trace the bandwidth roof always use the full size.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from ..base import ITEMSIZE, TUNE_OPTION, Case, KernelDef, Suite, prebuild
from ..chains import ChainKernel, chain_case, chain_references
from ..fma import FMA_KERNELS, FmaKernel
from ..work import shrink_level

__all__ = [
    "SweepSuite",
    "SWEEP_KERNELS",
    "SWEEP_SUITE",
    "SWEEP_TUNE_F",
    "sweep_F",
    "sweep_compute_class",
    "sweep_buffer_bytes",
]

#: The suite's name, as its measurements carry it.
SWEEP_SUITE = "sweep"


def sweep_compute_class(kernel: str, dtype: str) -> str:
    """The compute ceiling class a sweep kernel runs on and is held against: ``"FP32 vector"`` for
    the vector kernels (``vec4``), ``"FP32 scalar ILP"`` for the scalar ones (``scalar8``)."""
    kind = "vector" if kernel.startswith("vec") else "scalar ILP"
    return f"{dtype.upper()} {kind}"


#: (measurement name, FMA kernel) of the sweep, in the terms of docs/design/measurement.md,
#: "Counting FLOPs and bytes".
SWEEP_KERNELS: Tuple[Tuple[str, FmaKernel], ...] = (
    ("vec4", FMA_KERNELS["vec4_cross4"]),
    ("scalar8", FMA_KERNELS["scalar_indep8"]),
)


#: The F a sweep kernel's block size is tuned at (``options[TUNE_OPTION]``): the memory-bound end,
#: where the block size matters most, since resident threads hide DRAM latency; at large F each
#: thread's own FMA chains keep the ALUs busy (docs/design/studies.md, "Threadgroup-size tuning").
SWEEP_TUNE_F = 1


def sweep_F(quick: bool) -> List[int]:
    """FMA iterations per work item: powers of 2 from 1 to 1024 (powers of 4 with --quick)."""
    return [4**i for i in range(6)] if quick else [2**i for i in range(11)]


def sweep_buffer_bytes(ctx: Any) -> int:
    """Bytes of each of the sweep's two buffers in a suite context: ``ctx.array_bytes`` (at least
    4 KiB); with a quick run's second shrink step (:data:`~apple_roofline.suites.work.SHRINK_STEPS`),
    4x the last-level cache rounded up to a MiB (the smallest working set that measures DRAM) where
    the cache size is known and that is smaller."""
    full = max(4096, int(ctx.array_bytes))
    llc = int(ctx.info.get("llc_bytes", 0) or 0)
    if not (ctx.quick and shrink_level(ctx.options) >= 2 and llc):
        return full
    mib = 1 << 20
    return min(full, -(-4 * llc // mib) * mib)


class SweepSuite(Suite):
    """The ``vec4`` and ``scalar8`` FMA sweeps over F (sweep_F), one input and one output buffer."""

    name = "sweep"
    adaptive = True  # a compute-bound point's items follow from the point before

    def total(self) -> int:
        return len(SWEEP_KERNELS) * len(self.f_values())

    def f_values(self) -> List[int]:
        """The F of this run: :func:`sweep_F`, or only :data:`SWEEP_TUNE_F` when tuning."""
        return [SWEEP_TUNE_F] if self.ctx.options.get(TUNE_OPTION) else sweep_F(self.ctx.quick)

    def kernels(self) -> List[Tuple[KernelDef, FmaKernel, Tuple[str, str]]]:
        """(kernel table entry, FMA kernel, source) of each sweep kernel this backend has."""
        out = []
        for name, fk in SWEEP_KERNELS:
            kdef = KernelDef("sweep", name, "fp32", fk.sources("fp32"), constants=fk.constants())
            src = self.source(kdef)
            if src is not None:
                out.append((kdef, fk, src))
        return out

    def cases(self) -> Iterator[Case]:
        buf_bytes = sweep_buffer_bytes(self.ctx)
        backend = self.ctx.backend
        bufs = (backend.alloc(buf_bytes), backend.alloc(buf_bytes))
        max_launch_s = float(self.ctx.options.get("max_launch_s", 0.05))
        kernels = self.kernels()
        prebuild(
            backend, [(*src, {**self.constants(kdef), "F": F}) for kdef, _, src in kernels for F in self.f_values()]
        )
        filled = 0  # elements of bufs[0] holding the input pattern: the same for every case, written once
        scratch = self.ctx.scratch
        for kdef, fk, src in kernels:
            full_items = buf_bytes // (fk.elems_per_item * ITEMSIZE[kdef.dtype])
            items = full_items
            first_gbps: Optional[float] = None
            self.last = None
            refs = chain_references(fk, self.f_values(), kdef.dtype)  # one pass of the chains for every F
            for F in self.f_values():
                prev: Any = self.last
                if prev is not None and prev.valid:
                    first_gbps = first_gbps or prev.gbps
                    compute_bound = prev.gbps < 0.5 * first_gbps
                    prev_items = int(prev.params["n"]) // fk.elems_per_item
                    t_next = prev.median_s * F / int(prev.params["F"])  # compute-bound: time ∝ F
                    if compute_bound and t_next > max_launch_s:
                        items = max(1024, int(prev_items * max_launch_s / t_next) // 64 * 64)
                items = min(items, full_items)
                count = items * fk.elems_per_item
                yield chain_case(
                    ChainKernel(kdef, fk, src, backend, self.constants(kdef)),
                    F,
                    items,
                    bufs,
                    {"shrunk": items < full_items},
                    reference=refs[F],
                    fill_input=count > filled,
                    scratch=scratch,
                )
                filled = max(filled, count)
