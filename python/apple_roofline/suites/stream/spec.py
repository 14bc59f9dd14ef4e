"""The ``stream`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Sequence, Tuple

from ...sizes import format_size
from ...study.records import Measurement
from ..base import SuiteContext
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


def _sizing_warnings(measurements: Sequence[Measurement], ctx: SuiteContext) -> Tuple[str, ...]:
    """Where a STREAM kernel's arrays were under 4x the last-level cache (it set "Cache bandwidth",
    :func:`.suite.bandwidth_class`): the bandwidth ceiling measures caches, not DRAM."""
    if not any(m.ceiling_class == "Cache bandwidth" for m in measurements):
        return ()
    return (
        f"STREAM arrays of {format_size(ctx.array_bytes)} are smaller than 4x the last-level cache "
        f"({format_size(int(ctx.info.get('llc_bytes', 0) or 0))}): the bandwidth ceiling measures caches, "
        "not DRAM",
    )


__all__ = ["SPEC"]

SPEC = SuiteSpec(
    name="stream",
    measure=StreamSuite,
    order=10,
    budget_s=30.0,
    default=True,
    ceiling_names=_ceiling_names,
    sizing_warnings=_sizing_warnings,
    drawn=_drawn,
    marker=PointMarker("STREAM kernels", "o", 4.5),
    work=stream_work,
)
