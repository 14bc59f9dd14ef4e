"""The work of the ``peak`` suite's cases, for the time prediction of a ``--quick`` run
(:class:`~apple_roofline.suites.work.CaseWork`, docs/design/budgets.md, "Time budgets")."""

from __future__ import annotations

from typing import List

from ..base import ITEMSIZE, SuiteContext
from ..fma import FMA_KERNELS
from ..work import CaseWork
from .suite import PEAK_F, PEAK_VARIANTS, peak_items

__all__ = ["peak_work"]


def peak_work(ctx: SuiteContext) -> List[CaseWork]:
    """One :class:`CaseWork` per peak variant at F = PEAK_F on :func:`~.suite.peak_items` work items (a GPU's
    whole waves, known only once a kernel is built, are not counted: compute-bound launches of a
    few milliseconds); FP16 variants are left out on a device whose info says it has no FP16
    arithmetic (``fp16_arithmetic`` false: they are skipped, not measured). The host writes the
    input and poisons the output before each case and reads the output back."""
    no_fp16 = ctx.info.get("fp16_arithmetic") is False
    out: List[CaseWork] = []
    for dtype, variant in PEAK_VARIANTS:
        if dtype == "fp16" and no_fp16:
            continue
        fk = FMA_KERNELS[variant]
        items = peak_items(ctx, fk.elems_per_item * ITEMSIZE[dtype])
        half = items * fk.elems_per_item * ITEMSIZE[dtype]
        out.append(
            CaseWork(
                f"peak/{variant}/{dtype}",
                launch_bytes=fk.bytes_per_item(dtype) * items,
                launch_flops=fk.flops_per_item(PEAK_F) * items,
                write_bytes=2 * half,
                check_bytes=half,
            )
        )
    return out
