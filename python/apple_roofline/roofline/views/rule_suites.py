"""What the report tables and figures of the optimization guide's rule suites (``access``,
``occupancy``, ``dualissue``) share: their measurements of a run, the ratio cell, the figure title."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Tuple

from ...text import DASH

if TYPE_CHECKING:
    from ...study.records import Measurement
    from ..model.run import Run

__all__ = ["of_suite", "valid_indexed", "ratio_text", "figure_title"]


def of_suite(run: "Run", suite: str) -> List["Measurement"]:
    """The measurements of ``suite`` in ``run``, in run order."""
    return [m for m in run.measurements if m.suite == suite]


def valid_indexed(run: "Run", suite: str) -> List[Tuple[int, "Measurement"]]:
    """``(index in the run, measurement)`` of each valid measurement of ``suite`` (the index gives
    the marker's gid, :func:`~apple_roofline.roofline.views.plot.measurement_gid`)."""
    return [(i, m) for i, m in enumerate(run.measurements) if m.suite == suite and m.valid]


def ratio_text(a: Optional[float], b: Optional[float]) -> str:
    """``"1.93×"`` for a / b (3 significant figures), a dash when either is missing or b is 0."""
    return f"{a / b:.3g}×" if a is not None and b else DASH


def figure_title(run: "Run", what: str) -> str:
    """``"<device>: <what>"``, a rule figure's title."""
    return f"{run.device_name}: {what}"
