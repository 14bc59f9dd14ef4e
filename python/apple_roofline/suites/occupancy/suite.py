"""The ``occupancy`` suite: throughput of one fixed kernel against the threadgroup (shared) memory
each threadgroup declares, after the "Occupancy Impact" table of Apple's GPU optimization guide
(docs/design/rules.md, "Threadgroup memory and occupancy").

The kernel (``occupancy_copy``, shaders/cuda/occupancy.cu and its Metal twin) is a float4 copy of
two arrays of the run's STREAM size in which each thread passes its element to its neighbour
through threadgroup memory: ``out[i] = in[i ^ 1]``. The threadgroup declares T bytes, its threads'
slots spread over all of them; T = 0 reads the neighbour's element directly. Memory-bound, it needs
many threads resident to keep enough loads in flight, so fewer resident threadgroups show as fewer
GB/s. T runs over 0, 4, 8, 12, 16, 24, 32, 40, 48 … KiB up to the device's limit per threadgroup
(CUDA ``CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK``, 48 KiB of static shared memory; Metal
``maxThreadgroupMemoryLength``, 32 KiB on Apple GPUs), at 256 threads per threadgroup (the
guide's starting size), so the smallest non-zero T is one float4 per thread (4 KiB).

What the device says about each point is recorded with it: on CUDA ``resident_blocks_per_sm``, the
occupancy calculator's figure (``cuOccupancyMaxActiveBlocksPerMultiprocessor``: wave_items / SMs /
block, the reference the issue asks for); on Metal ``max_threads_per_threadgroup``, the pipeline's
``maxTotalThreadsPerThreadgroup`` (Metal reports no resident count; the throughput is the measure).

The sizes are macros prepended to the source (``AR_TG_FLOAT4S``, ``AR_TG_SPREAD``): a static
threadgroup array needs a compile-time size on both backends, and a Metal function constant cannot
size one. The CPU has no threadgroup memory: one skip says so. Registers per thread are not swept:
the backend interface does not report a kernel's register count (``CU_FUNC_ATTRIBUTE_NUM_REGS``), so
a register-capped build could not say what it capped; said as a second skip.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from ..access.suite import skip_case
from ..base import Case, KernelDef, Suite, check_tiled, fill, pattern, poison, read

__all__ = [
    "OccupancySuite",
    "OCCUPANCY_BLOCK",
    "TG_KIB",
    "tg_sizes",
    "tg_limit",
    "occupancy_source",
    "CPU_REASON",
    "REGISTERS_REASON",
    "occupancy_reference",
    "KERNEL",
    "REGISTERS_KERNEL",
]

#: Threads per threadgroup of every case (the guide's "start with 256").
OCCUPANCY_BLOCK = 256
#: Threadgroup memory sizes the suite asks for, in KiB, before the device's limit cuts them.
TG_KIB: Tuple[int, ...] = (0, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 224)
#: Why the CPU has no points.
CPU_REASON = "the CPU has no threadgroup memory: the threadgroup-memory rule does not apply to it"
#: Why no register sweep.
REGISTERS_REASON = (
    "registers per thread are not swept: the backend interface does not report a kernel's register "
    "count (CUDA's CU_FUNC_ATTRIBUTE_NUM_REGS), so a register-capped build could not say what it capped"
)

KERNEL = KernelDef(
    "occupancy",
    "occupancy_copy",
    "fp32",
    {"cuda": ("occupancy.cu", "occupancy_copy"), "metal": ("occupancy.metal", "occupancy_copy")},
    constants={"cuda": {"BLOCK": OCCUPANCY_BLOCK}, "metal": {"BLOCK": OCCUPANCY_BLOCK}},
)
REGISTERS_KERNEL = KernelDef("occupancy", "registers", "fp32", {})


def tg_limit(info: Any) -> int:
    """Bytes of threadgroup memory one threadgroup may declare on the device ``info`` describes:
    CUDA's ``shared_memory_per_block_bytes``, Metal's ``max_threadgroup_memory_bytes``; 0 unknown."""
    for key in ("shared_memory_per_block_bytes", "max_threadgroup_memory_bytes"):
        v = int(info.get(key, 0) or 0)
        if v > 0:
            return v
    return 0


def tg_sizes(limit: int, block: int = OCCUPANCY_BLOCK) -> List[int]:
    """The TG_KIB sizes in bytes up to ``limit`` that hold a whole float4 per thread of ``block``
    (0 always)."""
    return [k << 10 for k in TG_KIB if k == 0 or ((k << 10) <= limit and (k << 10) % (16 * block) == 0)]


def occupancy_source(text: str, tg_bytes: int, block: int = OCCUPANCY_BLOCK) -> str:
    """``text`` with the two macros of the module docstring prepended for ``tg_bytes`` of threadgroup
    memory at ``block`` threads per threadgroup.

    Raises:
        ValueError: ``tg_bytes`` is not 0 or a positive multiple of 16 · block.
    """
    if tg_bytes < 0 or tg_bytes % (16 * block):
        raise ValueError(
            f"occupancy: {tg_bytes} bytes of threadgroup memory is not 0 or a multiple of "
            f"{16 * block} (one float4 per thread)"
        )
    f4 = tg_bytes // 16
    return f"#define AR_TG_FLOAT4S {f4}\n#define AR_TG_SPREAD {f4 // block}\n" + text


def occupancy_reference(x: np.ndarray) -> np.ndarray:
    """out[i] = in[i ^ 1] over float4 elements, for ``x`` one period of floats whose length is a
    multiple of 8 (two float4s)."""
    return x.reshape(-1, 2, 4)[:, ::-1, :].reshape(-1)


class OccupancySuite(Suite):
    """The fixed kernel at every :func:`tg_sizes` size (module docstring)."""

    name = "occupancy"

    def total(self) -> int:
        return len(TG_KIB) + 1

    def cases(self) -> Iterator[Case]:
        src = self.source(KERNEL)
        if src is None:
            yield skip_case(KERNEL, {}, CPU_REASON)
            return
        yield skip_case(REGISTERS_KERNEL, {}, REGISTERS_REASON)
        consts = self.constants(KERNEL)
        block = int(consts.get("BLOCK", OCCUPANCY_BLOCK))
        period = pattern("fp32", -1.0, 1.0, seed=5, period=8 * 4099)  # whole float4 pairs
        ref = occupancy_reference(period)
        items = max(2 * block, (self.ctx.array_bytes // 16) // (2 * block) * (2 * block))
        words = 4 * items
        bufs = (self.ctx.backend.alloc(16 * items), self.ctx.backend.alloc(16 * items))
        fill(bufs[0], period, words)
        units = int(self.ctx.info.get("compute_units", 0) or 0)
        for tg in tg_sizes(tg_limit(self.ctx.info), block):
            yield self._case(src, tg, consts, block, items, bufs, ref, units)

    def _case(
        self,
        src: Tuple[str, str],
        tg: int,
        consts: Dict[str, Any],
        block: int,
        items: int,
        bufs: Tuple[Any, Any],
        ref: np.ndarray,
        units: int,
    ) -> Case:
        """The case at ``tg`` bytes of threadgroup memory per threadgroup of ``block`` threads over
        ``items`` work items of ``bufs``, checked against ``ref`` (read into the run's scratch);
        ``units``: the device's compute units (0: unknown), for the resident blocks per SM."""
        words = 4 * items
        text = occupancy_source(src[0], tg, block)
        reset = partial(poison, bufs[1], "fp32", words)
        reset()
        params: Dict[str, Any] = {"threadgroup_bytes": tg, "block": block, "n": items}

        def make_kernel() -> Any:
            kernel = self.ctx.backend.compile(text, src[1], consts)
            wave = int(kernel.wave_items)
            if wave and units:
                params["resident_blocks_per_sm"] = wave // (units * block)
            if int(kernel.max_block):
                params["max_threads_per_threadgroup"] = int(kernel.max_block)
            return kernel

        def check() -> Tuple[bool, str]:
            return check_tiled(read(bufs[1], "fp32", words, self.ctx.scratch), ref, 0.0, 0.0)

        return Case(
            kernel=KERNEL,
            params=params,
            work_items=items,
            flops=0,
            bytes=32 * items,
            args=[bufs[0], bufs[1]],
            make_kernel=make_kernel,
            check=check,
            reset=reset,
        )
