"""A measurement's window of samples, summarized (docs/design.md, "Clocks and power").

The samples that describe ``[t0, t1]`` are those taken after ``t0`` up to and including the first
taken at or after ``t1``: a reading describes the interval since the previous one (an energy
counter's delta) or the moment it was taken (a clock), so the first reading after the window's end
still covers it. Each value's mean over them becomes a parameter of the measurement, power also its
maximum; a bitmask value (``name_bits``) becomes ``name``: the flags set in any sample, by name.

A power reading that averages over the time before it (NVML's, ``powermetrics``' interval) describes
the window only when it was taken at least that long after the window's start; ``power_after``
leaves out the earlier ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Sequence, Union

__all__ = ["Sample", "Summary", "POWER", "POWER_VALUES", "PARAMS", "select", "summarize"]

#: A window's summary: parameter name -> mean (float) or flag names (str, comma-separated, "none").
Summary = Dict[str, Union[float, str]]

#: The value (and parameter) holding power in watts.
POWER = "power_w"

#: Every parameter a summary can hold: the values the samplers read, power's maximum and the
#: decoded flags. Reports list them apart from a kernel's own parameters.
PARAMS = ("sm_clock_mhz", "mem_clock_mhz", "cpu_clock_mhz", "gpu_clock_mhz", "gpu_active_pct", "power_w", "power_max_w",
          "gpu_power_w", "cpu_power_w", "ane_power_w", "temperature_c", "throttle")

#: Values that are power readings (watts), subject to ``power_after``.
POWER_VALUES = ("power_w", "gpu_power_w", "cpu_power_w", "ane_power_w")


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


def summarize(samples: Sequence[Sample], t0: float, t1: float,
              flag_names: Callable[[str, int], List[str]], power_after: float = 0.0) -> Summary:
    """Each value's mean over the samples of ``[t0, t1]`` (:func:`select`), rounded to 0.1;
    ``power_max_w`` the largest power; a ``name_bits`` value as ``name``: the flags set in any of
    them, ``flag_names(key, bits)``, comma-separated, or ``"none"``. Empty when no sample
    describes the window. Values absent from a sample (a counter's first reading) are left out of
    that value's mean. Power values (:data:`POWER_VALUES`) read before ``t0 + power_after``
    (seconds) are left out: they average over time before the window."""
    chosen = select(samples, t0, t1)
    sums: Dict[str, List[float]] = {}
    for s in chosen:
        early = s.t < t0 + power_after
        for k, v in s.values.items():
            if early and k in POWER_VALUES:
                continue
            sums.setdefault(k, []).append(float(v))
    out: Summary = {}
    for k, vs in sums.items():
        if k.endswith("_bits"):
            bits = 0
            for v in vs:
                bits |= int(v)
            out[k[: -len("_bits")]] = ",".join(flag_names(k, bits)) or "none"
        else:
            out[k] = round(sum(vs) / len(vs), 1)
            if k == POWER:
                out["power_max_w"] = round(max(vs), 1)
    return out
