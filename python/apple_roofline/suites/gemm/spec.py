"""The ``gemm`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import SuiteSpec
from .suite import GemmSuite

__all__ = ["SPEC"]

SPEC = SuiteSpec(name="gemm", measure=GemmSuite, order=40, budget_s=90.0, default=True)
