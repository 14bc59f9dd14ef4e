"""The ``peak`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import SuiteSpec
from .suite import PeakSuite

__all__ = ["SPEC"]

SPEC = SuiteSpec(name="peak", measure=PeakSuite, order=30, budget_s=30.0, default=True)
