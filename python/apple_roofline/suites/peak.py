"""The ``peak`` suite: compute ceilings from FMA chains on a small cache-resident buffer (DESIGN.md §4).

F = 512 on a 4 MiB input and a 4 MiB output (the M5 article's 4 MB buffer). FP32: the M5 article's
six variants ``vec4_cross4``, ``vec4_indep4``, ``vec4_indep8``, ``scalar_indep4``, ``scalar_indep8``,
``scalar_indep16``; FP16: ``vec4_cross4``, ``scalar_indep8``, ``scalar_indep16``, ``scalar_indep32``;
FP64: ``scalar_indep8``. Vector variants set the "<dtype> vector" ceiling, scalar ones the
"<dtype> scalar ILP" ceiling (FP64: "FP64"). A variant the device cannot run (FP16 on a CPU without
FP16 arithmetic, FP64 on a GPU without it) is reported as skipped with the backend's reason.
"""

from __future__ import annotations

from typing import Iterator, Tuple

from .base import ITEMSIZE, Case, KernelDef, Suite
from .chains import chain_case
from .fma import FMA_KERNELS

__all__ = ["PeakSuite", "PEAK_VARIANTS", "PEAK_F", "PEAK_BUFFER_BYTES"]

PEAK_F = 512
PEAK_BUFFER_BYTES = 4 << 20

#: (dtype, variant) in the order they are measured.
PEAK_VARIANTS: Tuple[Tuple[str, str], ...] = (
    ("fp32", "vec4_cross4"), ("fp32", "vec4_indep4"), ("fp32", "vec4_indep8"),
    ("fp32", "scalar_indep4"), ("fp32", "scalar_indep8"), ("fp32", "scalar_indep16"),
    ("fp16", "vec4_cross4"), ("fp16", "scalar_indep8"), ("fp16", "scalar_indep16"), ("fp16", "scalar_indep32"),
    ("fp64", "scalar_indep8"),
)


def ceiling_class(dtype: str, variant: str) -> str:
    """The ceiling a peak variant can set: "FP32 vector", "FP32 scalar ILP", "FP16 …", "FP64"."""
    if dtype == "fp64":
        return "FP64"
    return f"{dtype.upper()} {'vector' if variant.startswith('vec4') else 'scalar ILP'}"


def kernel_def(dtype: str, variant: str) -> KernelDef:
    fk = FMA_KERNELS[variant]
    return KernelDef("peak", variant, dtype, {"cpu": ("builtin", fk.entry(dtype))},
                     ceiling_class=ceiling_class(dtype, variant), ceiling_kind="compute")


class PeakSuite(Suite):
    """Every PEAK_VARIANTS kernel at F = PEAK_F on PEAK_BUFFER_BYTES input and output buffers."""

    name = "peak"

    def total(self) -> int:
        return len(PEAK_VARIANTS)

    def cases(self) -> Iterator[Case]:
        backend = self.ctx.backend
        bufs = (backend.alloc(PEAK_BUFFER_BYTES), backend.alloc(PEAK_BUFFER_BYTES))
        for dtype, variant in PEAK_VARIANTS:
            kdef = kernel_def(dtype, variant)
            src = self.source(kdef)
            if src is None:
                continue
            fk = FMA_KERNELS[variant]
            items = PEAK_BUFFER_BYTES // (fk.elems_per_item * ITEMSIZE[dtype])
            yield chain_case(kdef, fk, PEAK_F, items, bufs, src, backend, {})
