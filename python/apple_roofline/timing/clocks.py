"""The clock each measurement ran at (docs/design/clocks.md, "Clocks"): the effective clock a backend
measured, the reported clock a sampler read, and the run's steady clock.

**Effective clock.** A backend measures the clock of each timed sample where it can
(``Kernel.clock``: CUDA kernels read ``%clock64`` and ``%globaltimer`` themselves, cuBLAS gets a
probe kernel before and after each sample, CPU workers count core cycles with ``perf_event_open``).
:func:`effective_clock` turns that into a measurement's parameters: ``effective_clock_mhz`` (the
samples' mean), ``effective_clock_min_mhz`` and ``effective_clock_max_mhz`` (their spread) and
``effective_clock_source`` (how it was obtained). Where the backend measured nothing it falls back
to the clock the sampler read over the window (NVML's ``sm_clock_mhz``, cpufreq's or macOS's
``cpu_clock_mhz``, IOReport's residency-weighted ``gpu_clock_mhz``), and the source says
``reported: ...`` and why nothing was measured. The sampler's own values stay beside it, named apart.

**Steady clock.** Each measurement's clock is :func:`pass_clock` (the first of :data:`CLOCK_KEYS`
present). A run's or study's **steady clock** is the median of its measurements' clocks: the clock
the device holds under sustained load, robust to a few measurements that ran while it was still
ramping or held down by its power limit. A measurement is **below steady** when its clock is more
than :data:`CLOCK_TOLERANCE` (5 %) under it; its ``clock`` parameter says ``"steady"`` or ``"below
steady"`` (absent where no clock is known), and the reports list those below.
"""

from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

__all__ = [
    "EFFECTIVE",
    "EFFECTIVE_MIN",
    "EFFECTIVE_MAX",
    "EFFECTIVE_SOURCE",
    "CLOCK_PARAMS",
    "REPORTED_KEYS",
    "effective_clock",
    "CLOCK_KEYS",
    "CLOCK_TOLERANCE",
    "CLOCK_PARAM",
    "STEADY",
    "BELOW",
    "pass_clock",
    "steady_clock",
    "mark_steady",
    "below_steady",
    "theoretical_clock_mhz",
    "at_clock",
]

#: The measured clock of a measurement's samples (MHz), their smallest and largest, and how it was obtained.
EFFECTIVE = "effective_clock_mhz"
EFFECTIVE_MIN = "effective_clock_min_mhz"
EFFECTIVE_MAX = "effective_clock_max_mhz"
EFFECTIVE_SOURCE = "effective_clock_source"
#: The measurement parameter that holds the steady-clock verdict.
CLOCK_PARAM = "clock"
#: Every parameter this module writes; reports list them apart from a kernel's own parameters.
CLOCK_PARAMS: Tuple[str, ...] = (EFFECTIVE, EFFECTIVE_MIN, EFFECTIVE_MAX, EFFECTIVE_SOURCE, CLOCK_PARAM)

#: The sampler values a backend's clock falls back to, by preference, each with what it is.
REPORTED_KEYS: Tuple[Tuple[str, str], ...] = (
    ("sm_clock_mhz", "the SM clock NVML reported"),
    ("gpu_clock_mhz", "the GPU clock the OS reported (IOReport / powermetrics: performance-state residency, weighted)"),
    ("cpu_clock_mhz", "the CPU clock the OS reported"),
)

#: Where a measurement's clock is, in order of preference (MHz).
CLOCK_KEYS: Tuple[str, ...] = (EFFECTIVE, "sm_clock_mhz", "gpu_clock_mhz")
#: How far under the steady clock a measurement may run and still count as at it (a fraction).
CLOCK_TOLERANCE = 0.05
STEADY, BELOW = "steady", "below steady"

Param = Union[int, float, str, bool]


def effective_clock(
    reading: Optional[Mapping[str, Any]], reported: Mapping[str, Any], sampler: str = "", target: str = ""
) -> Dict[str, Param]:
    """A measurement's effective-clock parameters (module docstring).

    ``reading`` is ``Kernel.clock`` after the timed samples (``{"mhz": [...], "method": str}``; None
    where the kernel has none), ``reported`` the sampler's summary over the same window, ``sampler``
    its name and ``target`` the device it samples for, where a sampler reads both a CPU and a GPU
    (the Mac's: "cpu" or "gpu"; "" otherwise): a CPU measurement falls back only to the CPU's clock,
    a GPU one only to the GPU's. Returns :data:`EFFECTIVE`, :data:`EFFECTIVE_MIN`,
    :data:`EFFECTIVE_MAX` (MHz, 0.1) and :data:`EFFECTIVE_SOURCE`; only the source where neither
    measured nor reported a clock (why)."""
    mhz = [float(v) for v in (reading or {}).get("mhz", ()) if isinstance(v, (int, float)) and v > 0]
    method = str((reading or {}).get("method", "") or "not measured: the backend measures no clock")
    if mhz:
        return {
            EFFECTIVE: round(statistics.fmean(mhz), 1),
            EFFECTIVE_MIN: round(min(mhz), 1),
            EFFECTIVE_MAX: round(max(mhz), 1),
            EFFECTIVE_SOURCE: f"measured: {method}",
        }
    why = method[len("not measured: ") :] if method.startswith("not measured: ") else method
    for key, what in REPORTED_KEYS:
        if target and key.startswith("cpu_") != (target == "cpu"):
            continue
        v = reported.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            src = f"reported: {what} ({key}{', ' + sampler if sampler else ''}); not measured: {why}"
            return {EFFECTIVE: float(v), EFFECTIVE_SOURCE: src}
    return {EFFECTIVE_SOURCE: f"none: not measured ({why}) and no clock sampled"}


def pass_clock(params: Mapping[str, Any]) -> Optional[float]:
    """The clock (MHz) in a measurement's parameters or a sampler summary: the first of
    :data:`CLOCK_KEYS` that is a positive number, else None."""
    for key in CLOCK_KEYS:
        v = params.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


M = TypeVar("M")


def steady_clock(measurements: Sequence[Any]) -> Optional[float]:
    """The median clock (MHz) of the measurements (objects with ``params``) that have one; None when none has."""
    clocks = [c for c in (pass_clock(m.params) for m in measurements) if c is not None]
    return float(statistics.median(clocks)) if clocks else None


def mark_steady(measurements: Sequence[M], tolerance: float = CLOCK_TOLERANCE) -> Tuple[Tuple[M, ...], Optional[float]]:
    """Each measurement (a dataclass with ``params``) with ``params["clock"]`` set to ``"steady"`` or
    ``"below steady"`` against :func:`steady_clock` (unchanged where it has no clock), and that
    steady clock (None: none known)."""
    steady = steady_clock(measurements)
    if steady is None:
        return tuple(measurements), None
    out: List[M] = []
    for m in measurements:
        params: Mapping[str, Any] = getattr(m, "params")
        c = pass_clock(params)
        if c is None:
            out.append(m)
            continue
        verdict = BELOW if c < (1.0 - tolerance) * steady else STEADY
        out.append(dataclasses.replace(m, params={**params, CLOCK_PARAM: verdict}))  # type: ignore[type-var]
    return tuple(out), steady


def below_steady(measurements: Sequence[M]) -> List[M]:
    """The measurements marked ``"below steady"``."""
    return [m for m in measurements if getattr(m, "params").get(CLOCK_PARAM) == BELOW]


def theoretical_clock_mhz(device: Mapping[str, Any]) -> Optional[float]:
    """The clock (MHz) the device's theoretical compute ceilings are given at (``device["theoretical"]``:
    ``clock_hz``, the maximum SM clock on CUDA and the measured all-core clock on a CPU, or Apple's
    ``gpu_clock_mhz``), or None."""
    spec = device.get("theoretical")
    if not isinstance(spec, Mapping):
        return None
    hz = spec.get("clock_hz")
    if isinstance(hz, (int, float)) and not isinstance(hz, bool) and hz > 0:
        return float(hz) / 1e6
    mhz = spec.get("gpu_clock_mhz")
    value = mhz.get("value") if isinstance(mhz, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def at_clock(peak: float, max_mhz: Optional[float], mhz: Optional[float]) -> Optional[float]:
    """A theoretical ceiling ``peak`` given at the maximum clock ``max_mhz``, scaled to the clock
    ``mhz`` (both MHz): ``peak × mhz / max_mhz``; None where either clock is unknown."""
    if not max_mhz or not mhz or max_mhz <= 0 or mhz <= 0:
        return None
    return peak * mhz / max_mhz
