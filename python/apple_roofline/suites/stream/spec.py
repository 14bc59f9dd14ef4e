"""The ``stream`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import SuiteSpec
from .suite import StreamSuite

__all__ = ["SPEC"]

SPEC = SuiteSpec(name="stream", measure=StreamSuite, order=10, budget_s=30.0, default=True)
