"""The ``sweep`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from ..registry import SuiteFigure, SuiteSpec
from .plot import sweep_figure
from .suite import SweepSuite, sweep_compute_class
from .work import sweep_work

if TYPE_CHECKING:
    from ...study.records import Measurement

__all__ = ["SPEC"]


def _roof_class(m: "Measurement") -> Optional[str]:
    return sweep_compute_class(m.kernel, m.dtype)


SPEC = SuiteSpec(
    name="sweep",
    measure=SweepSuite,
    order=20,
    budget_s=60.0,
    default=True,
    work=sweep_work,
    roof_class=_roof_class,
    figure=SuiteFigure("sweep", sweep_figure, "The arithmetic-intensity sweep: GFLOP/s and effective GB/s against F."),
)
