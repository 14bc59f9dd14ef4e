"""Timing render passes at the GPU's loaded clock (docs/design/graphics.md, "The graphics study", "Timing").

A GPU left idle lowers its clock within milliseconds and raises it again only under sustained work
(on an H100 through Vulkan, 1980 MHz fell to 345 MHz between Python-paced passes; texture passes came
out up to 5.7x slow). So each measurement is **one submission**: ``lead`` untimed passes, then ``reps``
samples of ``batch`` passes each, then one stored pass whose target is copied out for validation and
whose fragment-shader invocations are counted, back to back in the same queue submission, every sample
timed by GPU timestamps at its first pass's beginning and its last pass's end and divided by
``batch`` (as the compute suites divide a batch of launches). The lead lasts :func:`lead_seconds`: the
full :data:`SPIN_UP_S` after the GPU was idle (the study's first pass, or a host gap as long as a
third of it), else twice the host gap since the previous submission ended (at least
:data:`MIN_LEAD_S`), so that consecutive passes do not pay a spin-up each.

``batch`` comes from the seconds one pass takes (:func:`batch_for`), found once per *shape* (passes
that do the same work per pass, e.g. a fill pass stored and discarded) and shared: the first pass of
a shape is probed (:attr:`Pacer.probes`), later ones reuse the per-pass time measured at the loaded
clock.

Each measurement's clock is the sampler's mean over its timed samples (:mod:`apple_roofline.
telemetry`). When it is more than :data:`CLOCK_TOLERANCE` below the highest clock seen so far in the
study and the sampler does not say the GPU was power- or thermal-limited, the pass is timed once more
after a full spin-up and the second timing kept (``retried``); whether the kept one ran at the study's
steady clock is decided over the whole study (:func:`~.clocks.steady_clock`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Hashable, List, Mapping, Optional, Tuple

from ..telemetry import Sampler
from ..telemetry.window import Summary
from ..timing.clocks import CLOCK_TOLERANCE, pass_clock
from ..timing.watchdog import watched

__all__ = [
    "SPIN_UP_S",
    "MIN_LEAD_S",
    "MIN_SAMPLE_S",
    "MAX_BATCH",
    "PassRun",
    "PassTiming",
    "Pacer",
    "lead_seconds",
    "batch_for",
    "passes_for",
    "limited",
]

#: Seconds of back-to-back passes before the samples after the GPU was idle (``quick``: a quarter).
SPIN_UP_S = 0.25
#: The shortest lead, seconds: even a short host gap may have let the clock dip.
MIN_LEAD_S = 0.02
#: The shortest sample (``quick``: a fifth): samples are batches of passes at least this long.
MIN_SAMPLE_S = 0.01
#: The most passes in one sample.
MAX_BATCH = 4096
#: Throttle reasons that mean the clock was held down by the GPU's own limits, not by idling: a pass
#: below the highest clock for one of these is kept (and marked), not re-timed.
LIMITS = ("power", "thermal", "slowdown", "brake")


def lead_seconds(gap_s: Optional[float], spin_up_s: float, min_lead_s: float = MIN_LEAD_S) -> float:
    """Seconds of untimed passes before a pass's samples: ``spin_up_s`` when the GPU was idle (``gap_s``
    None: nothing submitted yet, or a gap of a third of ``spin_up_s`` or more), else twice the gap, at
    least ``min_lead_s`` and at most ``spin_up_s``."""
    if gap_s is None or gap_s >= spin_up_s / 3:
        return spin_up_s
    return min(spin_up_s, max(min_lead_s, 2.0 * gap_s))


def batch_for(per_pass_s: float, min_sample_s: float, max_batch: int = MAX_BATCH) -> int:
    """Passes per sample so that a sample lasts at least ``min_sample_s``: ceil(min_sample_s /
    per_pass_s), 1 to ``max_batch``."""
    return int(min(max_batch, max(1, math.ceil(min_sample_s / max(per_pass_s, 1e-9)))))


def passes_for(seconds: float, per_pass_s: float, max_passes: int = MAX_BATCH) -> int:
    """How many passes of ``per_pass_s`` fill ``seconds`` (0 for none), at most ``max_passes``."""
    if seconds <= 0:
        return 0
    return int(min(max_passes, max(1, math.ceil(seconds / max(per_pass_s, 1e-9)))))


def limited(summary: Mapping[str, Any]) -> bool:
    """Whether the sampler's throttle reasons say the GPU held its own clock down (power, thermal)."""
    reasons = str(summary.get("throttle", ""))
    return any(word in reasons for word in LIMITS)


@dataclass
class PassRun:
    """What one measurement's submission returned (``run`` of a pass): seconds per sample, the
    fragment-shader invocations of one pass (None when not counted or not countable), the target after
    a stored pass (None when not read; shape (height, width, channels), the format's storage dtype)."""

    samples_s: List[float]
    invocations: Optional[int] = None
    image: Optional[Any] = None


@dataclass(frozen=True)
class PassTiming:
    """One pass's timing: ``batch`` passes per sample, ``samples_s`` seconds per pass (one per
    sample), ``lead`` untimed passes before them (``lead_s`` seconds planned), ``window`` the host
    times (``time.perf_counter()``) the samples ran in, ``summary`` the sampler's clocks and power over
    it, ``retried`` whether this is a second timing after a full spin-up."""

    batch: int
    samples_s: Tuple[float, ...]
    lead: int
    lead_s: float
    window: Tuple[float, float]
    summary: Summary
    retried: bool = False

    @property
    def per_pass_s(self) -> float:
        """Seconds per pass: the middle sample (the upper of the two middle ones for an even count)."""
        return sorted(self.samples_s)[len(self.samples_s) // 2]


class Pacer:
    """Times passes of one study so that the GPU stays at its loaded clock (module docstring).

    Args:
        sampler: the study's clock sampler (a :class:`~apple_roofline.telemetry.NullSampler` when none).
        reps: samples per pass.
        min_sample_s: the shortest sample, seconds.
        spin_up_s: the lead after an idle GPU, seconds.
        tolerance: how far under the highest clock so far (a fraction) a pass may run before it is
            timed again.
        clock: the host clock, seconds (tests replace it).
    """

    def __init__(
        self,
        sampler: Sampler,
        *,
        reps: int,
        min_sample_s: float = MIN_SAMPLE_S,
        spin_up_s: float = SPIN_UP_S,
        tolerance: float = CLOCK_TOLERANCE,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.sampler = sampler
        self.reps = reps
        self.min_sample_s = min_sample_s
        self.spin_up_s = spin_up_s
        self.tolerance = tolerance
        self.clock = clock
        #: Host time the last submission was seen finished (None: nothing submitted yet).
        self.last_end: Optional[float] = None
        #: Seconds per pass at the loaded clock, by shape (shared calibration).
        self.per_pass: Dict[Hashable, float] = {}
        #: The highest clock (MHz) a pass ran at so far.
        self.highest_clock: Optional[float] = None
        #: Passes probed (one lone pass timed to size the batch), passes re-timed after a spin-up.
        self.probes = 0
        self.retries = 0
        #: Called before a pass is timed (:meth:`probe`, :meth:`measure`): the runner's wait for its
        #: sampler opening on a thread (it must sample the first pass's timed samples).
        self.ready: Callable[[], object] = lambda: None
        #: GPU seconds so far: timed ``samples``, planned ``lead`` passes, ``probes`` (where the
        #: study's time went, beside the host's work between submissions).
        self.gpu_s: Dict[str, float] = {"samples": 0.0, "lead": 0.0, "probes": 0.0}

    def gap(self) -> Optional[float]:
        """Seconds since the last submission finished (None before the first)."""
        return None if self.last_end is None else self.clock() - self.last_end

    def predict_s(self, per_pass_s: float, reps: Optional[int] = None, *, count: bool = False) -> float:
        """Seconds the submission of :meth:`measure` would take now for a pass of ``per_pass_s``: its
        lead (after the gap since the last submission), ``reps`` samples (default :attr:`reps`) of
        their batch, the stored pass and the counting pass (``count``); a re-timing after a low clock
        not included."""
        per = max(per_pass_s, 1e-9)
        lead = passes_for(lead_seconds(self.gap(), self.spin_up_s), per)
        n = self.reps if reps is None else reps
        return (lead + batch_for(per, self.min_sample_s) * n + (2 if count else 1)) * per

    def probe(self, p: Any, name: str = "a render pass") -> float:
        """Seconds of one lone pass of ``p`` (the faster of two); a probe is GPU work, so it does not
        reset the idle gap. Its time is not known yet: its waits have the longest bound
        (:data:`~apple_roofline.timing.watchdog.CAP_S`), and :class:`~apple_roofline.errors.DeviceStopped`
        names ``name``."""
        self.ready()
        self.probes += 1
        with watched(f"{name} (probe)", None):
            samples = [float(t) for t in p.time((), 0, 1, 2)]
        self.gpu_s["probes"] += sum(samples)
        return max(min(samples), 1e-9)

    def measure(
        self,
        p: Any,
        shape: Hashable,
        per_pass_s: Optional[float] = None,
        *,
        count: bool = False,
        name: str = "a render pass",
        reps: Optional[int] = None,
    ) -> Tuple[PassTiming, PassRun]:
        """Time pass ``p`` (its ``run(batch, reps, lead, count=, read=True)``): the per-pass time from
        the shape's calibration, else ``per_pass_s``, else a probe; one submission holding the count
        (``count``), the lead, ``reps`` samples (default :attr:`reps`) and the stored pass read back;
        re-timed once after a full spin-up when its clock came out low (module docstring). Returns the
        timing and the run (its invocations and image).

        Raises:
            DeviceStopped: the submission did not finish within the bound of its predicted seconds
                (:func:`~apple_roofline.timing.watchdog.bound_for`), naming ``name``.
        """
        self.ready()
        per = self.per_pass.get(shape) or per_pass_s or self.probe(p, name)
        batch = batch_for(per, self.min_sample_s)
        n = self.reps if reps is None else reps
        timing, run = self._run(p, batch, n, lead_seconds(self.gap(), self.spin_up_s), per, count, name)
        if self._low(timing.summary):
            self.retries += 1
            again, run = self._run(p, batch, n, self.spin_up_s, per, count, name)
            timing = dataclasses.replace(again, retried=True)
        clock = pass_clock(timing.summary)
        if clock is not None and (self.highest_clock is None or clock > self.highest_clock):
            self.highest_clock = clock
        self.per_pass[shape] = timing.per_pass_s
        return timing, run

    def _low(self, summary: Mapping[str, Any]) -> bool:
        clock = pass_clock(summary)
        return (
            clock is not None
            and self.highest_clock is not None
            and not limited(summary)
            and clock < (1.0 - self.tolerance) * self.highest_clock
        )

    def _run(
        self, p: Any, batch: int, reps: int, lead_s: float, per_pass_s: float, count: bool, name: str
    ) -> Tuple[PassTiming, PassRun]:
        lead = passes_for(lead_s, per_pass_s)
        # the submission: the lead, the samples, the stored pass and (on some devices) a counting pass
        predicted = (lead + batch * reps + (2 if count else 1)) * per_pass_s
        with watched(name, predicted):
            run: PassRun = p.run(batch, reps, lead, count=count, read=True)
        end = self.clock()
        self.last_end = end
        self.gpu_s["samples"] += sum(run.samples_s)
        self.gpu_s["lead"] += lead * per_pass_s
        # The samples end the submission but for one stored pass and a copy: their window is the
        # samples' own seconds before the host saw it done.
        start = end - sum(run.samples_s)
        summary = self.sampler.window(start, end) if self.sampler.active else {}
        return PassTiming(batch, tuple(s / batch for s in run.samples_s), lead, lead_s, (start, end), summary), run
