"""The ``stream`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Tuple

from ..registry import SuiteSpec
from .suite import StreamSuite
from .work import stream_work


def _ceiling_names() -> Tuple[str, ...]:
    """DRAM's, or the caches' when the arrays fit in them (:func:`.suite.bandwidth_class`)."""
    return ("DRAM bandwidth", "Cache bandwidth")


__all__ = ["SPEC"]

SPEC = SuiteSpec(
    name="stream",
    measure=StreamSuite,
    order=10,
    budget_s=30.0,
    default=True,
    ceiling_names=_ceiling_names,
    work=stream_work,
)
