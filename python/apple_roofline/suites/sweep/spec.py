"""The ``sweep`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Tuple

from ..registry import SuiteFigure, SuiteSpec
from .plot import sweep_figure
from .suite import SweepSuite, sweep_compute_class
from .work import sweep_work

if TYPE_CHECKING:
    from ...study.records import Measurement
    from ..base import SuiteContext

__all__ = ["SPEC"]


def _roof_class(m: "Measurement") -> Optional[str]:
    return sweep_compute_class(m.kernel, m.dtype)


def _sizing_warnings(measurements: Sequence["Measurement"], _ctx: "SuiteContext") -> Tuple[str, ...]:
    """Where a sweep point ran on a working set shrunk once the kernel was compute-bound (its
    ``shrunk`` parameter, :mod:`.suite`)."""
    if not any(m.params.get("shrunk") for m in measurements):
        return ()
    return ("sweep points marked shrunk ran on a smaller working set once the kernel was compute-bound",)


SPEC = SuiteSpec(
    name="sweep",
    measure=SweepSuite,
    order=20,
    budget_s=60.0,
    default=True,
    work=sweep_work,
    roof_class=_roof_class,
    sizing_warnings=_sizing_warnings,
    curves=True,
    figure=SuiteFigure("sweep", sweep_figure, "The arithmetic-intensity sweep: GFLOP/s and effective GB/s against F."),
)
