"""The ``peak`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import List

from ..registry import SuiteSpec
from .suite import PEAK_VARIANTS, PeakSuite, ceiling_class
from .work import peak_work


def _ceiling_names() -> List[str]:
    """The class of every peak variant."""
    return [ceiling_class(dtype, variant) for dtype, variant in PEAK_VARIANTS]


__all__ = ["SPEC"]

SPEC = SuiteSpec(
    name="peak", measure=PeakSuite, order=30, budget_s=30.0, default=True, ceiling_names=_ceiling_names, work=peak_work
)
