"""Physical limits (docs/design/limits.md, "Physical limits"): every measured figure held against the limit
of the thing it is labelled with, at the clock it ran at. The one place the check is made; the
views only show its verdict.

* A bandwidth labelled DRAM (a STREAM ``"DRAM bandwidth"`` measurement, a working-set point of the
  ``hierarchy`` suite planned beyond every cache) against the memory interface's theoretical peak,
  the run's theoretical ``"DRAM bandwidth"`` ceiling (:mod:`apple_roofline.theoretical`: bus width ×
  memory clock on CUDA, the chip table on Apple; none on a CPU, so a CPU's is not checked).
* A compute figure (a peak kernel, a vendor GEMM, a matrix-unit tile) against the theoretical peak
  of its pipe (the theoretical ceiling of the same class; a matrix tile's is the GEMM peak of its
  inputs, :func:`~apple_roofline.suites.matrix.kernels.gemm_class_of`) at the clock the measurement ran at
  (:func:`~apple_roofline.timing.clocks.pass_clock`: the effective clock, else the reported one; the
  highest reading where the clock moved over the samples): theoretical × that clock ÷ the clock the
  theoretical is given at. A clock measured above the device's maximum stands: an H100's SM runs at
  up to 2,083 MHz, above the 1,980 MHz its driver gives as the maximum, by its own kernels' rates and the
  host's clock (docs/design/limits.md, "Physical limits").
* On an NVIDIA GPU, shared memory (the ``"Shared memory bandwidth"`` class) and the ``hierarchy``
  suite's L1 points against the on-chip data path: :data:`ONCHIP_BYTES_PER_CLOCK` bytes per clock
  per SM (32 banks of 32 bits per clock, the CUDA C++ Programming Guide's shared-memory section for
  compute capability 5.x and later; L1 hits are served by the same unified L1/shared-memory array,
  the tuning guides' "Unified Shared Memory/L1/Texture Cache") × SMs × the clock it ran at.
* Other cache levels (L2, a CPU's caches, Apple's) and STREAM's ``"Cache bandwidth"``: the project has
  no documented or derived peak for them, so they are not checked (no constant is invented).

A figure above its limit by more than :data:`TOLERANCE` gets an :class:`~.records.OverLimit` with
the reason (:func:`check_limits`); such a measurement sets no ceiling and no level
(:attr:`~.records.Measurement.usable`). Fractions of a limit are shown through :func:`share_text`,
so no view shows more than 100 % of anything.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ...study.records import OVER_LIMIT_REASONS, Ceiling, Measurement, OverLimit, format_params
from ...suites.registry import limit_rule, pipe_class, roof_class
from ...text import percent
from ...timing.clocks import EFFECTIVE_MAX, EFFECTIVE_MIN, pass_clock, theoretical_clock_mhz
from ...timing.measure import MIN_SAMPLE_S

__all__ = [
    "TOLERANCE",
    "DRAM_CLASS",
    "OVER_MARK",
    "CACHE_RESIDENT",
    "CLOCK_MISREAD",
    "TIMER_ERROR",
    "ONCHIP_BYTES_PER_CLOCK",
    "ONCHIP_CLASS",
    "Limit",
    "Limits",
    "check_limits",
    "figure_of",
    "DRAM_LEVEL",
    "share_text",
    "flagged_cell",
    "limit_warnings",
    "run_clock",
    "over_limit_text",
    "classes_over_limit",
]

#: How far (a fraction) a figure may lie above its limit and still count as at it: the timer's
#: resolution. A timed sample lasts at least 1 ms (:data:`MIN_SAMPLE_S`); CUDA events resolve about
#: 0.5 µs, Metal's GPU timestamps and the host's ``perf_counter`` nanoseconds, so a sample's time is
#: good to 0.05 %, and the effective clock's ``%globaltimer`` (32 ns steps over the same time) to
#: 0.003 %. 0.5 % is ten times the worst of those and half the 1 % by which a misread clock showed
#: (a wgmma tile at 101 % of its pipe on an H200).
TOLERANCE = 0.005
#: The ceiling class of DRAM bandwidth, measured (STREAM) and theoretical (the interface's peak).
DRAM_CLASS = "DRAM bandwidth"
#: Bytes per clock per SM of an NVIDIA GPU's shared memory: 32 banks, each 32 bits per clock cycle
#: (CUDA C++ Programming Guide, compute capability 5.x and later, "Shared Memory"); L1 hits go through
#: the same unified L1/shared-memory array, so the hierarchy's L1 points are held against it too.
ONCHIP_BYTES_PER_CLOCK = 128
#: The ceiling class of shared memory bandwidth (the hierarchy suite's ``shared`` kernel).
ONCHIP_CLASS = "Shared memory bandwidth"
#: The memory level (a suite's :attr:`~apple_roofline.suites.registry.LimitRule.level`) whose points
#: are held against the on-chip data path.
_L1 = "L1"
#: The memory level whose points are held against the memory interface's peak.
DRAM_LEVEL = "DRAM"
#: The mark a view puts beside a figure above its limit.
OVER_MARK = "⚠"

#: The reasons, each by name (:data:`~.records.OVER_LIMIT_REASONS`).
CACHE_RESIDENT, CLOCK_MISREAD, TIMER_ERROR = OVER_LIMIT_REASONS


@dataclass(frozen=True)
class Limit:
    """The limit of one measured figure: ``value`` in ``unit`` at the clock the measurement ran at,
    ``against``, what it is (``"theoretical GEMM BF16 at 1,763 MHz, the clock it ran at"``), and
    ``mhz``, that clock (None for the memory interface's peak, which no clock scales, and for a compute
    peak left at the clock it is given at where either clock is unknown). A figure above a clocked
    limit means its clock was misread (:meth:`Limits.check`)."""

    value: float
    unit: str
    against: str
    mhz: Optional[float] = None


def figure_of(m: Measurement) -> float:
    """The figure of ``m`` that the views show and the limit is held against: GFLOP/s at the median
    for a compute class; GB/s at the best sample where its suite's rule says so
    (:attr:`~apple_roofline.suites.registry.LimitRule.best_figure`: a working-set point of the
    ``hierarchy`` suite, as its curve is drawn and its level found), else at the median."""
    if roof_class(m) is not None:
        return m.gflops
    return m.best_gbps if limit_rule(m.suite).best_figure(m) else m.gbps


def run_clock(params: Mapping[str, object]) -> Tuple[Optional[float], str]:
    """The clock (MHz) a measurement with ``params`` ran its samples at, for its limit, and words on
    it: :func:`~apple_roofline.timing.clocks.pass_clock`'s; where the clock measured over the samples moved
    (the highest reading, :data:`~apple_roofline.timing.clocks.EFFECTIVE_MAX`, above their mean by more than
    :data:`TOLERANCE`), the highest reading, which the samples before the GPU stepped its clock down
    ran at. A reading above the device's maximum stands (module docstring). ``(None, "")`` where no
    clock is known."""
    mhz = pass_clock(params)
    if mhz is None:
        return None, ""
    top, low = params.get(EFFECTIVE_MAX), params.get(EFFECTIVE_MIN)
    if isinstance(top, (int, float)) and _number(top) and top > mhz * (1.0 + TOLERANCE):
        span = (
            f"{low:,.0f} to {top:,.0f} MHz"
            if isinstance(low, (int, float)) and _number(low)
            else f"up to {top:,.0f} MHz"
        )
        return float(top), f"{top:,.0f} MHz, the highest clock read over its samples ({span})"
    return mhz, f"{mhz:,.0f} MHz, the clock it ran at"


def _number(v: object) -> bool:
    """Whether ``v`` is a number of a measurement's parameters (an int or float, not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_dram(m: Measurement) -> bool:
    """Whether ``m`` is labelled DRAM: STREAM's DRAM class, or a point its suite labels DRAM (a
    working-set point of the hierarchy planned beyond every cache)."""
    if m.ceiling_class == DRAM_CLASS:
        return True
    return limit_rule(m.suite).level(m) == DRAM_LEVEL


@dataclass(frozen=True)
class Limits:
    """The limits of one run (module docstring).

    Attributes:
        theoretical: the run's theoretical ceilings by name.
        max_mhz: the clock (MHz) the theoretical compute ceilings are given at
            (:func:`~apple_roofline.timing.clocks.theoretical_clock_mhz`), or None.
        geforce: whether the device is an NVIDIA GeForce part, whose tensor cores accumulate FP16 in
            FP16 at twice the FP32-accumulation rate the GEMM FP16 peak is (docs/design/limits.md, "Physical
            limits"): there an FP16-accumulating tile has no limit.
        sms: an NVIDIA GPU's SM count (``compute_units`` of a CUDA device record), for the on-chip
            data path's limit (:data:`ONCHIP_BYTES_PER_CLOCK`); 0 elsewhere (not checked).
    """

    theoretical: Mapping[str, Ceiling]
    max_mhz: Optional[float]
    geforce: bool
    sms: int = 0

    @classmethod
    def of(cls, ceilings: Sequence[Ceiling], device: Mapping[str, object]) -> "Limits":
        """The limits of a run from its ceilings (the theoretical ones are used) and its device record."""
        spec = device.get("theoretical")
        line = spec.get("product_line") if isinstance(spec, Mapping) else None
        cuda = device.get("backend") == "cuda"
        units = device.get("compute_units") if cuda else 0
        return cls(
            {c.name: c for c in ceilings if c.source == "theoretical"},
            theoretical_clock_mhz(device),
            line == "GeForce",
            units if isinstance(units, int) and not isinstance(units, bool) and units > 0 else 0,
        )

    def onchip(self, m: Measurement) -> Optional[Limit]:
        """The on-chip data path's limit of a shared-memory figure or an L1 point of the hierarchy
        (module docstring) at the clock ``m`` ran at (else the maximum clock); None where it does not
        apply or the SM count or every clock is unknown."""
        l1 = limit_rule(m.suite).level(m) == _L1
        if not self.sms or not (l1 or m.ceiling_class == ONCHIP_CLASS):
            return None
        mhz, words = run_clock(m.params)
        if mhz is None:
            mhz, words = self.max_mhz, f"{self.max_mhz:,.0f} MHz" if self.max_mhz is not None else ""
        if mhz is None:
            return None
        return Limit(
            ONCHIP_BYTES_PER_CLOCK * self.sms * mhz * 1e6 / 1e9,
            "GB/s",
            f"on-chip data path ({ONCHIP_BYTES_PER_CLOCK} B per clock per SM × {self.sms} SMs at {words})",
            mhz,
        )

    def pipe(self, ceiling_class: str) -> Optional[Ceiling]:
        """The theoretical peak of the pipe a compute class runs on: the theoretical ceiling of the same
        name, a matrix tile's the GEMM peak of its inputs (none for an FP16-accumulating tile on a
        GeForce part); None where the run has none."""
        if ceiling_class in self.theoretical:
            return self.theoretical[ceiling_class]
        name = pipe_class(ceiling_class, self.geforce)  # a suite's rule: a matrix tile's GEMM peak
        return self.theoretical.get(name) if name is not None else None

    def limit(self, m: Measurement) -> Optional[Limit]:
        """The limit of ``m``'s figure (:func:`figure_of`), or None where nothing bounds it here."""
        compute = roof_class(m)  # the sweep's: the FMA pipe its chains run on
        if compute is not None:
            t = self.pipe(compute)
            if t is None or t.kind != "compute":
                return None
            mhz, words = run_clock(m.params)
            if mhz is None or self.max_mhz is None:
                return Limit(t.value, t.unit, f"theoretical {t.name}")
            return Limit(t.value * mhz / self.max_mhz, t.unit, f"theoretical {t.name} at {words}", mhz)
        onchip = self.onchip(m)
        if onchip is not None:
            return onchip
        t = self.theoretical.get(DRAM_CLASS)
        if _is_dram(m) and t is not None and t.kind == "bandwidth":
            return Limit(t.value, t.unit, f"theoretical {t.name} (the memory interface's peak)")
        return None

    def check(self, m: Measurement) -> Optional[OverLimit]:
        """``m``'s :class:`~.records.OverLimit` when it is valid and its figure lies above its limit by
        more than :data:`TOLERANCE`, else None. The reason: a timer error where its timed sample was
        shorter than :data:`MIN_SAMPLE_S`; else a cache-resident working set for a bandwidth (only a
        cache delivers bytes faster than the memory interface) and a misread clock for a compute figure
        and for an on-chip figure (at the true clock neither a pipe nor the data path exceeds its peak)."""
        if not m.valid:
            return None
        lim = self.limit(m)
        figure = figure_of(m)
        if lim is None or figure <= lim.value * (1.0 + TOLERANCE):
            return None
        sample_s = (m.min_s if limit_rule(m.suite).shortest_sample(m) else m.median_s) * m.batch
        reason = (
            TIMER_ERROR
            if sample_s < MIN_SAMPLE_S
            else CLOCK_MISREAD
            if roof_class(m) is not None or lim.mhz is not None
            else CACHE_RESIDENT
        )
        return OverLimit(figure, lim.value, lim.unit, lim.against, reason)


def check_limits(
    measurements: Sequence[Measurement], ceilings: Sequence[Ceiling], device: Mapping[str, object]
) -> Tuple[Measurement, ...]:
    """Every measurement with its :attr:`~.records.Measurement.over_limit` set afresh against the run's
    limits (:meth:`Limits.check`): from its theoretical ``ceilings`` and its ``device`` record (the
    clock the theoretical peaks are given at). Called where a run is assembled and where one is read,
    before its measured ceilings are derived."""
    limits = Limits.of(ceilings, device)
    out: List[Measurement] = []
    for m in measurements:
        over = limits.check(m)
        out.append(m if over == m.over_limit else dataclasses.replace(m, over_limit=over))
    return tuple(out)


def share_text(fraction: float, reason: str, *, whole: bool = False) -> str:
    """A measured figure as a share of a limit, never above 100 %: the percentage
    (:func:`~apple_roofline.text.percent`, or a whole one with ``whole``) up to 100 %; ``"100 %"``
    within :data:`TOLERANCE` above it (at the limit, to the timer's resolution); beyond that the mark
    and ``reason`` instead of a number (``"⚠ above: clock misread"``)."""
    if fraction > 1.0 + TOLERANCE:
        return f"{OVER_MARK} above: {reason}"
    shown = min(fraction, 1.0)
    return f"{shown:.0%}" if whole else percent(shown)


def flagged_cell(m: Measurement, cell: str, unit: str) -> str:
    """A table cell showing ``m``'s rate in ``unit``, with the mark and reason where that rate lies
    above its limit (``"5,130 ⚠ cache-resident working set"``)."""
    o = m.over_limit
    return f"{cell} {OVER_MARK} {o.reason}" if o is not None and o.unit == unit else cell


def over_limit_text(m: Measurement) -> str:
    """One sentence on a measurement above its limit (a warning line, a hover text); "" when it is not."""
    o = m.over_limit
    if o is None:
        return ""
    params = format_params(m.params)
    return (
        f"{m.label}{f' ({params})' if params else ''}: {o.text} (beyond the {100 * TOLERANCE:g} % tolerance); "
        "it sets no ceiling and no level"
    )


def limit_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One warning per measurement above its limit (:func:`over_limit_text`), in order."""
    return [over_limit_text(m) for m in measurements if m.over_limit is not None]


def classes_over_limit(measurements: Sequence[Measurement]) -> Dict[str, Measurement]:
    """Ceiling class -> its fastest valid measurement, for each class that has valid measurements and
    every one above its limit: the classes that would have had a ceiling and have none, which the
    tables show flagged in its place."""
    over: Dict[str, Measurement] = {}
    usable = {m.ceiling_class for m in measurements if m.usable}
    for m in measurements:
        if not m.valid or m.over_limit is None or m.ceiling_class is None or m.ceiling_class in usable:
            continue
        prev = over.get(m.ceiling_class)
        if prev is None or figure_of(m) > figure_of(prev):
            over[m.ceiling_class] = m
    return over
