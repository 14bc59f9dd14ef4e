"""The work of the ``sweep`` suite's cases, for the time prediction of a ``--quick`` run
(:class:`~apple_roofline.suites.work.CaseWork`, docs/design/budgets.md, "Time budgets")."""

from __future__ import annotations

from typing import List

from ..base import ITEMSIZE, SuiteContext
from ..work import CaseWork
from .suite import SweepSuite, sweep_buffer_bytes

__all__ = ["sweep_work"]


def sweep_work(ctx: SuiteContext) -> List[CaseWork]:
    """One :class:`CaseWork` per kernel and F of the sweep in ``ctx``, each at the full working set
    (:func:`~.suite.sweep_buffer_bytes` per buffer), one series per kernel whose launches shrink to
    ``max_launch_s`` once compute-bound, as the suite's do. The host writes the input once per run
    (with the series' first case) and poisons and reads back the output of every case."""
    suite = SweepSuite(ctx)
    buf_bytes = sweep_buffer_bytes(ctx)
    max_launch_s = float(ctx.options.get("max_launch_s", 0.05))
    out: List[CaseWork] = []
    for kdef, fk, _src in suite.kernels():
        items = buf_bytes // (fk.elems_per_item * ITEMSIZE[kdef.dtype])
        half = items * fk.elems_per_item * ITEMSIZE[kdef.dtype]  # one buffer's bytes in use
        for i, F in enumerate(suite.f_values()):
            out.append(
                CaseWork(
                    f"sweep/{kdef.name} F={F}",
                    launch_bytes=fk.bytes_per_item(kdef.dtype) * items,
                    launch_flops=fk.flops_per_item(F) * items,
                    write_bytes=half * (2 if not out else 1),
                    check_bytes=half,
                    series=kdef.name,
                    shrink_to_s=max_launch_s,
                )
            )
    return out
