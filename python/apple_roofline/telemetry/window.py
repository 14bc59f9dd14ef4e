"""A measurement's window of samples, summarized (docs/design/power.md, "Clocks and power").

The samples that describe ``[t0, t1]`` are those taken after ``t0`` up to and including the first
taken at or after ``t1``: a reading describes the interval since the previous one (an energy
counter's delta) or the moment it was taken (a clock), so the first reading after the window's end
still covers it. Each value's mean over them becomes a parameter of the measurement, power also its
maximum; a bitmask value (``name_bits``) becomes ``name``: the flags set in any sample, by name.

A power reading that averages over the time before it (NVML's, ``powermetrics``' interval) describes
the window only when it was taken at least that long after the window's start; ``power_after``
leaves out the earlier ones.

Readings of a source that differences counters (IOReport, ``powermetrics``) cover unequal
intervals (the one taken at a window's end can be a millisecond long) and say how long in
``interval_s``: power over the window is then joules over seconds (each reading's watts weighted by
its interval), and ``power_max_w`` comes only from readings at least one full period long (a short
reading's quotient is noise). A clock read from residencies is weighted the same way by the time
the block was busy (:data:`WEIGHTS`); the CPU clusters' clocks (``cpu_cluster_mhz.<name>``, each
weighted by ``cpu_cluster_busy_s.<name>``) become one parameter, ``cpu_cluster_clocks``. The weights
themselves are not parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "Sample",
    "Summary",
    "POWER",
    "POWER_VALUES",
    "PARAMS",
    "WEIGHTS",
    "CLUSTER_MHZ",
    "CLUSTER_BUSY",
    "FULL_PERIOD",
    "select",
    "summarize",
]

#: A window's summary: parameter name -> mean (float) or flag names (str, comma-separated, "none").
Summary = Dict[str, Union[float, str]]

#: The value (and parameter) holding power in watts.
POWER = "power_w"

#: Every parameter a summary can hold: the values the samplers read, power's maximum and the
#: decoded flags. Reports list them apart from a kernel's own parameters.
PARAMS = (
    "sm_clock_mhz",
    "mem_clock_mhz",
    "cpu_clock_mhz",
    "gpu_clock_mhz",
    "gpu_active_pct",
    "power_w",
    "power_max_w",
    "gpu_power_w",
    "cpu_power_w",
    "ane_power_w",
    "temperature_c",
    "throttle",
    "cpu_cluster_clocks",
)

#: Values that are power readings (watts), subject to ``power_after``.
POWER_VALUES = ("power_w", "gpu_power_w", "cpu_power_w", "ane_power_w")

#: Value -> the value that weights its mean over a window, where a reading has it (module docstring).
WEIGHTS: Dict[str, str] = {
    **{k: "interval_s" for k in POWER_VALUES},
    "gpu_active_pct": "interval_s",
    "gpu_clock_mhz": "gpu_busy_s",
    "cpu_clock_mhz": "cpu_busy_s",
}
#: Prefixes of a CPU cluster's clock and its busy seconds; the cluster's name follows.
CLUSTER_MHZ, CLUSTER_BUSY = "cpu_cluster_mhz.", "cpu_cluster_busy_s."
#: A reading counts as a full period when its interval is at least this share of the period (the
#: sampling thread's wake-up is never early, but the host clocks of the wait and the stamps differ).
FULL_PERIOD = 0.95
_WEIGHT_VALUES = frozenset(WEIGHTS.values())


def _weight_of(key: str) -> str:
    if key.startswith(CLUSTER_MHZ):
        return CLUSTER_BUSY + key[len(CLUSTER_MHZ) :]
    return WEIGHTS.get(key, "")


def _is_weight(key: str) -> bool:
    return key in _WEIGHT_VALUES or key.startswith(CLUSTER_BUSY)


@dataclass(frozen=True)
class Sample:
    """One reading: ``t`` on the host clock (``time.perf_counter()``, seconds) and ``values`` (name
    -> number; units in the name: ``_mhz``, ``_w``, ``_c``; ``_bits`` a bitmask of flags)."""

    t: float
    values: Mapping[str, float]


def select(samples: Sequence[Sample], t0: float, t1: float) -> List[Sample]:
    """The samples that describe ``[t0, t1]`` (module docstring); ``samples`` oldest first."""
    out: List[Sample] = []
    for s in samples:
        if s.t <= t0:
            continue
        out.append(s)
        if s.t >= t1:
            break
    return out


def summarize(
    samples: Sequence[Sample],
    t0: float,
    t1: float,
    flag_names: Callable[[str, int], List[str]],
    power_after: float = 0.0,
    period_s: float = 0.0,
) -> Summary:
    """Each value's mean over the samples of ``[t0, t1]`` (:func:`select`), rounded to 0.1 —
    weighted by its weight (:data:`WEIGHTS`) where every sample holding the value holds its weight,
    else plain; ``power_max_w`` the largest power of the readings at least :data:`FULL_PERIOD` of
    ``period_s`` long (every reading where none says its interval); ``cpu_cluster_clocks`` the CPU
    clusters' clocks as "name MHz, ..."; a ``name_bits`` value as ``name``: the flags set in any of
    them, ``flag_names(key, bits)``, comma-separated, or ``"none"``. Empty when no sample describes
    the window. Values absent from a sample (a counter's first reading) are left out of that value's
    mean. Power values (:data:`POWER_VALUES`) read before ``t0 + power_after`` (seconds) are left
    out: they average over time before the window."""
    sums, peaks = _gather(select(samples, t0, t1), t0, power_after, period_s)
    out: Summary = {}
    clusters: List[str] = []
    for k, pairs in sums.items():
        if k.endswith("_bits"):
            out[k[: -len("_bits")]] = _flags(k, pairs, flag_names)
            continue
        mean = _mean(pairs)
        if mean is None:  # a block never busy over the window has no clock over it
            continue
        if k.startswith(CLUSTER_MHZ):
            clusters.append(f"{k[len(CLUSTER_MHZ) :]} {mean:.0f} MHz")
            continue
        out[k] = round(mean, 1)
        if k == POWER and peaks:
            out["power_max_w"] = round(max(peaks), 1)
    if clusters:
        out["cpu_cluster_clocks"] = ", ".join(sorted(clusters))
    return out


#: A value's readings over a window: ``(value, its weight or None)`` each.
_Pairs = List[Tuple[float, Optional[float]]]


def _gather(
    chosen: Sequence[Sample], t0: float, power_after: float, period_s: float
) -> Tuple[Dict[str, _Pairs], List[float]]:
    """``(sums, peaks)``: per value (weights aside, power read before ``t0 + power_after`` left
    out) its readings with their weights, in the order the values first appear; and the power
    readings at least :data:`FULL_PERIOD` of ``period_s`` long (every one that says no interval)."""
    sums: Dict[str, _Pairs] = {}
    peaks: List[float] = []
    for s in chosen:
        early = s.t < t0 + power_after
        for k, v in s.values.items():
            if _is_weight(k) or (early and k in POWER_VALUES):
                continue
            w = s.values.get(_weight_of(k))
            sums.setdefault(k, []).append((float(v), None if w is None else float(w)))
            if k == POWER:
                span = s.values.get("interval_s")
                if span is None or span >= FULL_PERIOD * period_s:
                    peaks.append(float(v))
    return sums, peaks


def _flags(key: str, pairs: _Pairs, flag_names: Callable[[str, int], List[str]]) -> str:
    """The flags of bitmask ``key`` set in any reading, comma-separated, or ``"none"``."""
    bits = 0
    for v, _w in pairs:
        bits |= int(v)
    return ",".join(flag_names(key, bits)) or "none"


def _mean(pairs: _Pairs) -> Optional[float]:
    """The readings' mean: weighted where every reading has its weight (None when those weights sum
    to 0 or less), else plain."""
    vs = [v for v, _w in pairs]
    weights = [w for _v, w in pairs if w is not None]
    if weights and len(weights) == len(pairs):
        if sum(weights) <= 0:
            return None
        return sum(v * w for v, w in zip(vs, weights)) / sum(weights)
    return sum(vs) / len(vs)
