"""The ``sweep`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import SuiteSpec
from .suite import SweepSuite
from .work import sweep_work

__all__ = ["SPEC"]

SPEC = SuiteSpec(name="sweep", measure=SweepSuite, order=20, budget_s=60.0, default=True, work=sweep_work)
