"""The steady clock of a graphics study and which passes ran below it (docs/design.md, "The graphics
study", "Steady clock").

Each pass's clock is the sampler's mean over its timed samples (``sm_clock_mhz`` from NVML,
``gpu_clock_mhz`` on a Mac; :data:`CLOCK_KEYS`, the first present). The study's **steady clock** is
the median of its passes' clocks: the clock the GPU holds under the study's sustained load, robust to
a few passes that ran while it was still ramping or held down by its power limit. A pass is **below
steady** when its clock is more than :data:`CLOCK_TOLERANCE` (5 %) under it; the measurement's
``clock`` parameter says ``"steady"`` or ``"below steady"`` (absent where no clock was sampled), and
the report lists the passes below.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..roofline.records import Measurement

__all__ = ["CLOCK_KEYS", "CLOCK_TOLERANCE", "CLOCK_PARAM", "STEADY", "BELOW", "pass_clock", "steady_clock",
           "mark_steady", "below_steady"]

#: Where a pass's clock is, in order of preference (MHz).
CLOCK_KEYS: Tuple[str, ...] = ("sm_clock_mhz", "gpu_clock_mhz")
#: How far under the steady clock a pass may run and still count as at it (a fraction).
CLOCK_TOLERANCE = 0.05
#: The measurement parameter that holds the verdict.
CLOCK_PARAM = "clock"
STEADY, BELOW = "steady", "below steady"


def pass_clock(params: Mapping[str, Any]) -> Optional[float]:
    """The clock (MHz) in a pass's parameters or a sampler summary: the first of :data:`CLOCK_KEYS`
    that is a positive number, else None."""
    for key in CLOCK_KEYS:
        v = params.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def steady_clock(measurements: Sequence[Measurement]) -> Optional[float]:
    """The median clock (MHz) of the passes that have one; None when none has."""
    clocks = [c for c in (pass_clock(m.params) for m in measurements) if c is not None]
    return float(statistics.median(clocks)) if clocks else None


def mark_steady(measurements: Sequence[Measurement], tolerance: float = CLOCK_TOLERANCE
                ) -> Tuple[Tuple[Measurement, ...], Optional[float]]:
    """Each measurement with ``params["clock"]`` set to ``"steady"`` or ``"below steady"`` against
    :func:`steady_clock` (unchanged where it has no clock), and that steady clock (None: none sampled)."""
    steady = steady_clock(measurements)
    if steady is None:
        return tuple(measurements), None
    out: List[Measurement] = []
    for m in measurements:
        c = pass_clock(m.params)
        if c is None:
            out.append(m)
            continue
        verdict = BELOW if c < (1.0 - tolerance) * steady else STEADY
        params: Dict[str, Any] = {**m.params, CLOCK_PARAM: verdict}
        out.append(dataclasses.replace(m, params=params))
    return tuple(out), steady


def below_steady(measurements: Sequence[Measurement]) -> List[Measurement]:
    """The measurements marked ``"below steady"``."""
    return [m for m in measurements if m.params.get(CLOCK_PARAM) == BELOW]
