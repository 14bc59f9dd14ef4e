"""The work of the ``stream`` suite's cases, for the time prediction of a ``--quick`` run
(:class:`~apple_roofline.suites.work.CaseWork`, docs/design/budgets.md, "Time budgets")."""

from __future__ import annotations

from typing import List

from ..base import ITEMSIZE, SuiteContext
from ..work import CaseWork
from .suite import STREAM_KERNELS, array_elements

__all__ = ["stream_work"]


def stream_work(ctx: SuiteContext) -> List[CaseWork]:
    """One :class:`CaseWork` per STREAM kernel on arrays of ``ctx.array_bytes``: its bytes and
    FLOPs per launch; before it the host writes all three arrays (two inputs, the poisoned output)
    and after it reads the output back to check it."""
    n = array_elements(ctx.array_bytes)
    nbytes = n * ITEMSIZE["fp32"]
    return [
        CaseWork(
            f"stream/{sk.name}",
            launch_bytes=sk.bytes_per_elem * n,
            launch_flops=sk.flops_per_elem * n,
            write_bytes=3 * nbytes,
            check_bytes=nbytes,
        )
        for sk in STREAM_KERNELS
    ]
