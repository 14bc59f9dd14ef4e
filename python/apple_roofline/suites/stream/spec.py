"""The ``stream`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Tuple

from ...study.records import Measurement
from ..registry import PointMarker, SuiteSpec
from .suite import StreamSuite
from .work import stream_work


def _ceiling_names() -> Tuple[str, ...]:
    """DRAM's, or the caches' when the arrays fit in them (:func:`.suite.bandwidth_class`)."""
    return ("DRAM bandwidth", "Cache bandwidth")


def _drawn(m: Measurement) -> bool:
    """A STREAM kernel is the bandwidth ceiling itself, so the figure draws it as a point only above
    its physical limit (then it is no ceiling: docs/design/limits.md)."""
    return m.over_limit is not None


__all__ = ["SPEC"]

SPEC = SuiteSpec(
    name="stream",
    measure=StreamSuite,
    order=10,
    budget_s=30.0,
    default=True,
    ceiling_names=_ceiling_names,
    drawn=_drawn,
    marker=PointMarker("STREAM kernels", "o", 4.5),
    work=stream_work,
)
