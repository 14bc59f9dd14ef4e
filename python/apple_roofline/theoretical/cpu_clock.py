"""The CPU clock behind a run's theoretical peaks, from readings a neighbour cannot fool
(docs/design/limits.md, "Theoretical ceilings").

Where no maximum clock can be read (no cpufreq, no sysctl: most virtual machines, Apple silicon),
the clock is measured (:mod:`.cpu_probe`: a dependent integer-add chain for about 50 ms). One such
reading is at the mercy of the host: on a 2-vCPU guest, eight readings gave 2.491, 1.431, 2.567,
2.539, 2.544, 2.541, 2.567 and 2.566 GHz, and a run whose peaks rested on a 1.59 GHz reading showed
a kernel at 149 % of them. So a run takes several readings spread over it (:class:`RunClock`: two at
the start, one after each suite) and the peaks use their robust estimate (:func:`robust_clock`):

* a reading is **dropped** when it lies further from the median of all readings than both
  :data:`OUTLIER_Z` scaled median absolute deviations (1.4826 × MAD, the standard deviation of
  normal readings: the modified z-score of Iglewicz and Hoaglin, 1993) and :data:`OUTLIER_FLOOR` of
  the median (so that readings that agree to a few MHz drop none);
* the clock is the **median** of the readings kept; their smallest and largest are its spread.

Where the CPU backend counted core cycles with perf events, each measurement's effective clock
(``effective_clock_mhz``, :mod:`apple_roofline.timing.clocks`) is a reading of the clock the kernels ran
at; their robust estimate is reported beside the chain's, and the peaks use the higher of the two,
so that they stay an upper bound for every kernel timed at its own clock. Pure Python: the readings
are given, never timed here.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..study.records import Ceiling
from .cpu import CpuSpec, Figure, describe, theoretical_ceilings
from .cpu_probe import native_clock_hz

__all__ = [
    "MAD_SCALE",
    "OUTLIER_FLOOR",
    "OUTLIER_Z",
    "ClockEstimate",
    "RunClock",
    "clock_warnings",
    "effective_readings_hz",
    "robust_clock",
    "with_clock",
]

#: A reading further than this many scaled MADs from the median is an outlier (Iglewicz and Hoaglin's
#: modified z-score bound).
OUTLIER_Z = 3.5
#: ... and only when it is also further than this fraction of the median.
OUTLIER_FLOOR = 0.02
#: MAD × this = the standard deviation of normally distributed readings.
MAD_SCALE = 1.4826


@dataclass(frozen=True)
class ClockEstimate:
    """The robust estimate of several clock readings.

    Attributes:
        hz: the median of the readings kept, Hz.
        kept: the readings kept, Hz, in the order given.
        dropped: the readings dropped as outliers, Hz, in the order given.
        threshold_hz: how far from the median of all readings a reading could lie and be kept, Hz.
    """

    hz: float
    kept: Tuple[float, ...]
    dropped: Tuple[float, ...]
    threshold_hz: float

    @property
    def spread(self) -> Tuple[float, float]:
        """The smallest and largest reading kept, Hz."""
        return min(self.kept), max(self.kept)

    def text(self, what: str) -> str:
        """One sentence: ``"median of 7 of 8 <what> readings, 2.491 to 2.567 GHz; dropped 1.431 GHz
        (more than 0.125 GHz from the median of all, the larger of 3.5 scaled MADs and 2%)"``."""
        lo, hi = self.spread
        n = len(self.kept) + len(self.dropped)
        out = (
            f"median of {len(self.kept)} of {n} {what} readings"
            if self.dropped
            else f"median of {n} {what} reading{'s' if n != 1 else ''}"
        )
        out += f", {lo / 1e9:.3f} to {hi / 1e9:.3f} GHz" if n > 1 else ""
        if self.dropped:
            out += (
                f"; dropped {', '.join(f'{d / 1e9:.3f}' for d in self.dropped)} GHz (more than "
                f"{self.threshold_hz / 1e9:.3f} GHz from the median of all, the larger of {OUTLIER_Z:g} "
                f"scaled MADs and {OUTLIER_FLOOR:.0%})"
            )
        return out

    def to_dict(self) -> Dict[str, Any]:
        """``{"hz", "min_hz", "max_hz", "kept_hz", "dropped_hz", "threshold_hz"}`` (JSON-ready)."""
        lo, hi = self.spread
        return {
            "hz": self.hz,
            "min_hz": lo,
            "max_hz": hi,
            "kept_hz": list(self.kept),
            "dropped_hz": list(self.dropped),
            "threshold_hz": self.threshold_hz,
        }


def robust_clock(readings_hz: Sequence[float], *, z: float = OUTLIER_Z, floor: float = OUTLIER_FLOOR) -> ClockEstimate:
    """The robust estimate of clock readings (module docstring).

    Args:
        readings_hz: one or more readings, Hz, each finite and > 0.
        z: the outlier bound in scaled MADs (> 0).
        floor: the outlier bound's least value as a fraction of the median (>= 0).

    Returns:
        A :class:`ClockEstimate`; with fewer than three readings none is dropped (two that disagree
        cannot say which one is wrong).

    Raises:
        ValueError: no readings, a reading not finite and positive, ``z`` not above 0 or ``floor``
            negative.
    """
    values = [float(r) for r in readings_hz]
    if not values:
        raise ValueError("readings_hz must not be empty")
    bad = [r for r in values if not (math.isfinite(r) and r > 0)]
    if bad:
        raise ValueError(f"clock readings must be finite and positive Hz, not {bad[0]!r}")
    if not z > 0:
        raise ValueError(f"z must be above 0, not {z!r}")
    if floor < 0:
        raise ValueError(f"floor must be at least 0, not {floor!r}")
    mid = statistics.median(values)
    mad = statistics.median(abs(r - mid) for r in values)
    threshold = max(z * MAD_SCALE * mad, floor * mid)
    if len(values) < 3:
        return ClockEstimate(mid, tuple(values), (), threshold)
    kept = tuple(r for r in values if abs(r - mid) <= threshold)
    dropped = tuple(r for r in values if abs(r - mid) > threshold)
    return ClockEstimate(statistics.median(kept), kept, dropped, threshold)


def effective_readings_hz(measurements: Sequence[Any]) -> List[float]:
    """The effective clocks (Hz) the CPU backend measured with perf events: each measurement's
    ``effective_clock_mhz`` whose ``effective_clock_source`` starts with ``"measured"`` (objects with
    ``params``), in order."""
    from ..timing.clocks import EFFECTIVE, EFFECTIVE_SOURCE

    out: List[float] = []
    for m in measurements:
        params: Mapping[str, Any] = getattr(m, "params", {})
        mhz = params.get(EFFECTIVE)
        if (
            str(params.get(EFFECTIVE_SOURCE, "")).startswith("measured")
            and isinstance(mhz, (int, float))
            and not isinstance(mhz, bool)
            and mhz > 0
        ):
            out.append(float(mhz) * 1e6)
    return out


def with_clock(spec: CpuSpec, hz: float, source: str) -> CpuSpec:
    """``spec`` with every measured clock (a figure whose source starts with ``"measured"``: the
    spec's and its core groups') set to ``hz`` with ``source``; the other figures unchanged."""

    def swap(f: Figure) -> Figure:
        return Figure(hz, "Hz", source) if f.source.startswith("measured") else f

    groups = tuple(dataclasses.replace(g, clock_hz=swap(g.clock_hz)) for g in spec.core_groups)
    return dataclasses.replace(spec, clock_hz=swap(spec.clock_hz), core_groups=groups)


def clock_warnings(desc: Mapping[str, Any]) -> List[str]:
    """One line for each kind of reading (``chain``, ``effective``) that dropped readings, from a run's
    device description (``desc["theoretical"]["clock_readings"]``, :meth:`RunClock.theoretical`);
    none elsewhere."""
    spec = desc.get("theoretical")
    readings = spec.get("clock_readings") if isinstance(spec, Mapping) else None
    if not isinstance(readings, Mapping):
        return []
    out = []
    for kind in ("chain", "effective"):
        est = readings.get(kind)
        if isinstance(est, Mapping) and est.get("dropped_hz"):
            dropped = ", ".join(f"{float(d) / 1e9:.3f}" for d in est["dropped_hz"])
            used = (
                f"; the theoretical peaks use {float(est['hz']) / 1e9:.3f} GHz, the median of the "
                f"{len(est['kept_hz'])} kept"
                if readings.get("used") == kind
                else ""
            )
            out.append(
                f"CPU clock: dropped the {kind} reading(s) {dropped} GHz, more than "
                f"{float(est['threshold_hz']) / 1e9:.3f} GHz from the median of all{used}"
            )
    return out


class RunClock:
    """A run's CPU clock readings and the theoretical peaks they give (module docstring).

    Args:
        spec: the host's spec, read at the start of the run (its measured clock is the first reading).
        measure: takes one reading, Hz (default: :func:`~.cpu_probe.native_clock_hz`). Called only
            where the spec's clock was measured.
    """

    def __init__(self, spec: CpuSpec, measure: Optional[Callable[[], float]] = None) -> None:
        self.spec = spec
        self.measured = spec.clock_hz.source.startswith("measured")
        self.readings: List[float] = [spec.clock_hz.value] if self.measured and spec.clock_hz.known else []
        self.failures: List[str] = []
        self._measure = measure

    def take(self) -> None:
        """One more reading (about 50 ms), where the clock is measured; a reading that fails is
        recorded in :attr:`failures`, never raised."""
        if not self.measured:
            return
        try:
            hz = float(self._measure() if self._measure is not None else native_clock_hz())
        except (ImportError, AttributeError, RuntimeError, OSError, ValueError) as e:
            self.failures.append(f"{type(e).__name__}: {e}")
            return
        if math.isfinite(hz) and hz > 0:
            self.readings.append(hz)
        else:
            self.failures.append(f"reading returned {hz!r}")

    def theoretical(self, measurements: Sequence[Any] = ()) -> Tuple[Dict[str, object], List[Ceiling]]:
        """``({"theoretical": describe(spec)}, theoretical_ceilings(spec))`` with the spec's measured
        clock replaced by the robust estimate of the readings so far (and of the perf-event effective
        clocks of ``measurements``, the higher of the two); ``theoretical.clock_readings`` records
        both estimates (:meth:`ClockEstimate.to_dict`, ``None`` where there is none), which one the
        peaks use (``"chain"`` or ``"effective"``) and the readings that failed. Unchanged where the
        clock was not measured."""
        if not self.measured or not self.readings:
            return {"theoretical": describe(self.spec)}, theoretical_ceilings(self.spec)
        chain = robust_clock(self.readings)
        eff_readings = effective_readings_hz(measurements)
        effective = robust_clock(eff_readings) if eff_readings else None
        use_effective = effective is not None and effective.hz > chain.hz
        source = (
            "measured: "
            + chain.text(
                "dependent integer-add chain (apple_roofline._core.measure_cpu_clock_hz, "
                "50 ms each, one thread per usable CPU, at the start and after each suite)"
            )
            + (
                f"; the effective clock of the CPU measurements (perf events), {effective.text('effective-clock')}"
                if effective is not None
                else ""
            )
            + ("; the peaks use the effective clock, the higher" if use_effective else "")
        )
        hz = effective.hz if use_effective and effective is not None else chain.hz
        spec = with_clock(self.spec, hz, source)
        desc = describe(spec)
        desc["clock_readings"] = {
            "chain": chain.to_dict(),
            "effective": effective.to_dict() if effective else None,
            "used": "effective" if use_effective else "chain",
            "failed": list(self.failures),
        }
        return {"theoretical": desc}, theoretical_ceilings(spec)
