"""The measurement loop (docs/design/measurement.md, "Measurement"): warm-up, batch calibration,
repetitions -> raw samples.

1. Warm-up: at least ``warmup`` untimed-for-the-result launches, continued (up to
   ``max_warmup_s``) until two consecutive launches agree within 10 %, because clocks ramp.
2. Calibration: ``batch`` launches per sample so that one sample lasts at least :data:`MIN_SAMPLE_S`
   (1 ms by default) of device time, amortising the timer's own cost.
3. ``reps`` samples (at least 10 by default) of ``batch`` back-to-back launches, each timed by the
   backend's device clock (Kernel.time); returned as seconds per launch.
Only step 3 measures the clock (``Kernel.time(..., clock=True)``): the warm-up, the calibration and
the spin-up time their launches with ``clock=False``, so that no clock probe adds to the load before
the samples (docs/design/clocks.md, "Clocks": a probed launch of a 3-ms tensor-core tile is another 3 ms at
the power limit). Statistics are in stats.py; this module only produces samples.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from ..errors import check_int
from .watchdog import watched

__all__ = ["Timing", "time_kernel", "warm_up", "check_reps", "DEFAULT_REPS", "MAX_REPS"]

#: Timed samples per measurement by default (docs/design/measurement.md, "Measurement": at least 10).
DEFAULT_REPS = 10
#: The most samples one measurement takes.
MAX_REPS = 10000


def check_reps(reps: object) -> int:
    """``reps`` as the number of samples of a measurement.

    Raises:
        OptionError: (option ``reps``) not an integer, or outside 1 to :data:`MAX_REPS`.
    """
    return check_int(reps, "reps", 1, MAX_REPS)


@dataclass(frozen=True)
class Timing:
    """Samples of one kernel: ``batch`` launches per sample, ``samples_s`` seconds per launch;
    ``window`` the host times (``time.perf_counter()``, seconds) just before and just after the timed
    samples, without warm-up and spin-up, over which clocks and power are summarized
    (docs/design/power.md, "Clocks and power"); ``(0.0, 0.0)`` when unknown. ``clock`` is the kernel's
    ``Kernel.clock`` after the timed samples (``{"mhz": [...], "method": str}``: the clock the backend
    measured them at, docs/design/clocks.md, "Clocks"), None where the kernel has none."""

    batch: int
    samples_s: Tuple[float, ...]
    warmup_launches: int
    window: Tuple[float, float] = (0.0, 0.0)
    clock: Optional[Mapping[str, Any]] = None


def warm_up(
    run: Callable[[int], List[float]], warmup: int = 3, max_warmup_s: float = 0.5, max_launches: int = 64
) -> List[float]:
    """Step 1 of the loop (module docstring): ``run(count)`` makes ``count`` launches and returns the
    seconds of each; ``warmup`` launches first, then one at a time until the last two agree within
    10 %, ``max_warmup_s`` seconds or ``max_launches`` launches have passed. Returns every time."""
    times = list(run(warmup))

    def settled() -> bool:  # the last two launches agree within 10 %
        return len(times) > 1 and abs(times[-1] - times[-2]) <= 0.1 * times[-1]

    while not settled() and sum(times) < max_warmup_s and len(times) < max_launches:
        times.extend(run(1))
    return times


#: The shortest timed sample the calibration aims for, in seconds (step 2 above).
MIN_SAMPLE_S = 1e-3
#: The most launches one sample holds.
MAX_BATCH = 1 << 20


def time_kernel(
    kernel: Any,
    args: Sequence[Any],
    work_items: int,
    *,
    reps: int = DEFAULT_REPS,
    warmup: int = 3,
    max_warmup_s: float = 0.5,
    spin_up_s: float = 0.0,
    min_window_s: float = 0.0,
) -> Timing:
    """Warm up, calibrate and time ``kernel`` (a ``_core.Kernel``) over ``work_items`` work items.

    ``spin_up_s`` > 0 runs about that many seconds of launches back to back, as one sample, right
    before the timed samples: a GPU whose clock falls to idle between the warm-up's paced launches
    (an H100 drops from 1980 to 345 MHz within milliseconds) is then timed at its loaded clock
    (docs/design/measurement.md, "Measurement").

    ``min_window_s`` > 0 lengthens each sample (more launches per sample, never more samples) so
    that the ``reps`` timed samples together last at least that many seconds: a power sensor that
    averages over a time (NVML's) then has readings wholly inside the window (``run
    --power-window``; docs/design/power.md, "Clocks and power"). The per-launch time that sizes it is
    the shorter of a lone launch's and one calibrated sample's. Off by default, so runs are not slowed.

    Returns a Timing whose ``samples_s`` has ``reps`` entries, in seconds per launch, and whose
    ``clock`` is the kernel's measured clock of those samples (``kernel.clock``, where it has one).
    Every call waits within the bound of its predicted seconds (:func:`apple_roofline.timing.watchdog.
    bound_for`; the first launch, whose time is not known, within the longest).

    Raises OptionError (a ValueError) when reps is outside 1..MAX_REPS or warmup < 1;
    :class:`~apple_roofline.errors.DeviceStopped` when a call outlasts its bound (the device stopped
    responding); backend errors propagate.
    """
    reps = check_reps(reps)
    warmup = check_int(warmup, "warmup", 1)
    name = f"kernel {getattr(kernel, 'entry', '') or '?'}"
    seen: List[float] = []

    def launches(count: int) -> List[float]:
        # the first launch's time is unknown (the longest bound); later ones are predicted from the
        # slowest of the last three (docs/design/watchdog.md, "A watchdog on every device wait")
        with watched(name, max(seen[-3:]) * count if seen else None):
            got = list(kernel.time(args, work_items, 1, count, clock=False))
        seen.extend(got)
        return got

    times = warm_up(launches, warmup, max_warmup_s)
    per_launch = max(min(times[-3:]), 1e-9)
    batch = int(min(MAX_BATCH, max(1, math.ceil(MIN_SAMPLE_S / per_launch))))
    if min_window_s > 0:
        # A launch in a batch can be much shorter than one timed alone (a 16x16 DGEMM on an H100:
        # about 7x, launch latency overlapping); the window is sized from one calibrated sample.
        with watched(name, batch * per_launch):
            probe = kernel.time(args, work_items, batch, 1, clock=False)[0] / batch
        per_launch = max(min(per_launch, probe), 1e-9)
        batch = int(min(MAX_BATCH, max(batch, math.ceil(min_window_s / (reps * per_launch)))))
    if spin_up_s > 0:
        spin = int(min(MAX_BATCH, max(batch, math.ceil(spin_up_s / per_launch))))
        with watched(name, spin * per_launch):
            kernel.time(args, work_items, spin, 1, clock=False)
    start = time.perf_counter()
    with watched(name, batch * reps * per_launch):
        samples = kernel.time(args, work_items, batch, reps)
    end = time.perf_counter()
    clock = getattr(kernel, "clock", None)  # the timed samples' measured clock, read after them
    return Timing(
        batch,
        tuple(s / batch for s in samples),
        len(times),
        (start, end),
        dict(clock) if isinstance(clock, Mapping) else None,
    )
