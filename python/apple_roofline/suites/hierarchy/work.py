"""The work of the ``hierarchy`` suite's cases, for the time prediction of a ``--quick`` run
(:class:`~apple_roofline.suites.work.CaseWork`, docs/design/budgets.md, "Time budgets")."""

from __future__ import annotations

from typing import Dict, List

from ..base import SuiteContext
from ..work import CaseWork
from .suite import HIERARCHY_KERNELS, LAUNCH_S, WORD, HierarchySuite

__all__ = ["hierarchy_work"]


def hierarchy_work(ctx: SuiteContext) -> List[CaseWork]:
    """One :class:`CaseWork` per kernel and working set of the hierarchy sweep in ``ctx`` (its
    ``points``): a launch makes at least two passes over the working set (``rmw`` writes every word
    back) and lasts at least LAUNCH_S; the host writes each working set's new part of the input as
    the sweep reaches it, and ``rmw``'s check reads its buffer back. ``rmw`` is left out below one word per CPU thread,
    as the suite leaves it out below a wave; the GPU-only ``shared`` kernel is not counted (a few
    small launches)."""
    suite = HierarchySuite(ctx)
    lanes = int(ctx.info.get("threads", 0) or 0) if ctx.info.get("backend") == "cpu" else 0
    filled: Dict[str, int] = {hk.name: 0 for hk in HIERARCHY_KERNELS}
    out: List[CaseWork] = []
    for ws in suite.points:
        for hk in HIERARCHY_KERNELS:
            if hk.rmw and ws // WORD < lanes:
                continue
            new = max(0, ws - filled[hk.name])
            filled[hk.name] = max(filled[hk.name], ws)
            out.append(
                CaseWork(
                    f"hierarchy/{hk.name} {ws} B",
                    launch_bytes=ws * (4 if hk.rmw else 2),
                    write_bytes=new,
                    check_bytes=ws if hk.rmw else 0,
                    min_launch_s=LAUNCH_S,
                )
            )
    return out
