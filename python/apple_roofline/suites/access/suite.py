"""The ``access`` suite: the guide's memory-access rules measured (docs/design/rules.md, "The access-pattern
rules"): effective bandwidth against stride (1, 2, 4 … 32 elements) and against load width (32-bit
scalar, 2- and 4-wide vectors), at two working sets. The kernels, their counting and their NumPy
reference are :mod:`.kernels`'.

Levels (``params.level``):

- ``dram``: two arrays of the run's STREAM size (``--array-bytes``; 256 MiB or 4× the last-level
  cache, docs/design/measurement.md, "Measurement"), rounded down to a power of two of bytes;
- ``cache``: two arrays of a quarter of the device's last-level cache each (:func:`last_level_bytes`:
  the L2 an NVIDIA GPU reports, the CPU's L3, else the largest documented level: an NVIDIA GPU's L2
  through WebGPU, an Apple chip's system-level cache), rounded down to a power of two, so both fit in
  half of it. A device with no such size known gets one skip saying so.

Every width at every stride: 3 × 6 cases per level (``--quick``: strides QUICK_STRIDES, 3 × 3). Opt-in
(``--suite access``): it sets no ceiling. The input is written once per level (the identity; the kernels only
read it); the output is filled with 0xFFFFFFFF before each case, a word no element can hold.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, Iterator, Tuple

import numpy as np

from ...theoretical.caches import SHARED_LEVEL, cache_levels
from ..base import Case, HostScratch, KernelDef, Suite, fill, prebuild, read
from ..matrix.suite import unsupported
from .kernels import ACCESS_KERNELS, ACCESS_STRIDES, AccessKernel, check_access, identity_words

__all__ = [
    "AccessSuite",
    "LEVELS",
    "QUICK_STRIDES",
    "last_level_bytes",
    "level_bytes",
    "NO_CACHE_REASON",
    "POISON_WORD",
    "skip_case",
]

#: Strides with ``--quick``.
QUICK_STRIDES: Tuple[int, ...] = (1, 4, 32)
#: The working sets, in measurement order.
LEVELS: Tuple[str, ...] = ("dram", "cache")
#: The output fill before each case: no element index equals it.
POISON_WORD = 0xFFFFFFFF
#: Why a device without a reported cache size has no cache-level cases.
NO_CACHE_REASON = (
    "the device reports no last-level cache size and none is documented for it (docs/hierarchy.md), "
    "so no working set is known to be cache-resident"
)


def _pow2_floor(x: int) -> int:
    return 1 << (int(x).bit_length() - 1) if x >= 1 else 0


def last_level_bytes(info: Any) -> int:
    """The device's last-level cache in bytes: the one it reports (``llc_bytes``), else the largest
    swept level its documented facts give (:func:`~apple_roofline.theoretical.caches.cache_levels`: an
    NVIDIA GPU's L2 through WebGPU, an Apple chip's system-level cache); 0 where neither knows one."""
    llc = int(info.get("llc_bytes", 0) or 0)
    if llc:
        return llc
    levels, _notes = cache_levels(info)
    return max((lv.capacity for lv in levels if lv.name != SHARED_LEVEL), default=0)


def level_bytes(level: str, array_bytes: int, info: Any) -> int:
    """Bytes of each of the two arrays at ``level`` (module docstring); 0 when no last-level cache
    size is known (``cache``, :func:`last_level_bytes`)."""
    if level == "dram":
        return _pow2_floor(array_bytes)
    llc = last_level_bytes(info)
    return _pow2_floor(llc // 4) if llc >= 64 else 0


def skip_case(kdef: KernelDef, params: Dict[str, Any], reason: str) -> Case:
    """A case the runner records as skipped with ``reason`` (its kernel raises UnsupportedError)."""
    return Case(
        kernel=kdef,
        params=params,
        work_items=1,
        flops=0,
        bytes=0,
        args=[],
        make_kernel=lambda: unsupported(reason),
        check=lambda: (False, reason),
        reset=lambda: None,
    )


class AccessSuite(Suite):
    """Every ACCESS_KERNELS kernel at every ACCESS_STRIDES stride, at each of LEVELS."""

    name = "access"

    def total(self) -> int:
        return len(LEVELS) * len(ACCESS_KERNELS) * len(self.strides())

    def strides(self) -> Tuple[int, ...]:
        """The strides measured: ACCESS_STRIDES, or QUICK_STRIDES with ``--quick``."""
        return QUICK_STRIDES if self.ctx.quick else ACCESS_STRIDES

    def cases(self) -> Iterator[Case]:
        kernels = [(ak, src) for ak in ACCESS_KERNELS for src in [self.source(ak.kernel_def())] if src is not None]
        prebuild(self.ctx.backend, [(*src, self.constants(ak.kernel_def())) for ak, src in kernels])
        scratch = self.ctx.scratch
        for level in LEVELS:
            nbytes = level_bytes(level, self.ctx.array_bytes, self.ctx.info)
            if nbytes == 0:
                for ak, _ in kernels:
                    yield skip_case(ak.kernel_def(), {"level": level}, NO_CACHE_REASON)
                continue
            words = nbytes // 4
            bufs = (self.ctx.backend.alloc(nbytes), self.ctx.backend.alloc(nbytes))
            offset = 0
            for chunk in identity_words(words):
                bufs[0].write(chunk, offset)
                offset += chunk.nbytes
            for ak, src in kernels:
                for stride in self.strides():
                    yield self._case(ak, src, level, stride, bufs, words, scratch)
            del bufs

    def _case(
        self,
        ak: AccessKernel,
        src: Tuple[str, str],
        level: str,
        stride: int,
        bufs: Tuple[Any, Any],
        words: int,
        scratch: HostScratch,
    ) -> Case:
        n = words // ak.width
        kdef = ak.kernel_def()
        reset: Callable[[], None] = partial(fill, bufs[1], np.array([POISON_WORD], np.uint32), words)
        reset()

        def check() -> Tuple[bool, str]:
            got = read(bufs[1], "int32", words, scratch).view(np.uint32)
            return check_access(got, n, ak.width, stride)

        def plan(consts: Dict[str, Any]) -> Case:
            case = Case(
                kernel=kdef,
                params={"level": level, "stride": stride, "width": ak.width, "n": n, "array_bytes": words * 4},
                work_items=n,
                flops=0,
                bytes=ak.bytes_per_item() * n,
                args=[bufs[0], bufs[1], stride],
                make_kernel=partial(self.ctx.backend.compile, src[0], src[1], consts),
                check=check,
                reset=reset,
            )
            case.rebind = lambda block: plan({**consts, "BLOCK": block})
            return case

        return plan(self.constants(kdef))
