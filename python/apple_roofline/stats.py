"""Summary statistics of timing samples.

Small pure functions with their edge cases written down, in the manner of
google/benchmark and pytest-benchmark (DESIGN section 5): the median is the
primary statistic, rates are derived from it, "best" rates come from the
minimum, and the coefficient of variation (CV) flags noisy measurements.

Nothing in this module touches a device or the native extension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["CV_WARN", "Summary", "summarize"]

#: Coefficient of variation above which a measurement is reported as noisy
#: (DESIGN section 5: "Warn when CV > 5 %"). A fraction, not a percentage.
CV_WARN: float = 0.05


@dataclass(frozen=True)
class Summary:
    """Order statistics and moments of one measurement's samples.

    All fields except ``n`` and ``cv`` are in the unit of the samples
    (seconds per launch throughout this package).

    Attributes:
        n: number of samples (>= 1).
        median: median sample (linear interpolation between the two middle
            samples when ``n`` is even).
        min: smallest sample.
        max: largest sample.
        q1: first quartile (25th percentile, linear interpolation, NumPy's
            default method).
        q3: third quartile (75th percentile, same method).
        iqr: interquartile range ``q3 - q1`` (0.0 when ``n == 1``).
        mean: arithmetic mean.
        stdev: sample standard deviation (``ddof=1``); 0.0 when ``n == 1``.
        cv: coefficient of variation ``stdev / mean`` (dimensionless
            fraction); 0.0 when ``n == 1``.
    """

    n: int
    median: float
    min: float
    max: float
    q1: float
    q3: float
    iqr: float
    mean: float
    stdev: float
    cv: float


def summarize(samples: Sequence[float]) -> Summary:
    """Summarize timing samples (seconds per launch).

    Args:
        samples: one-dimensional sequence of ``n >= 1`` durations in seconds.
            Order does not matter.

    Returns:
        A :class:`Summary`. Quartiles use linear interpolation (NumPy's
        default percentile method), so for ``n == 1`` every order statistic
        equals the single sample and ``iqr``, ``stdev`` and ``cv`` are 0.0.

    Raises:
        ValueError: if ``samples`` is empty ("samples must not be empty"),
            contains a NaN or infinity ("samples must be finite"), or contains
            a value <= 0 ("samples must be positive seconds"). Booleans and
            non-numbers are rejected too.
    """
    values: list[float] = []
    for i, s in enumerate(samples):
        if isinstance(s, bool) or not isinstance(s, (int, float, np.floating, np.integer)):
            raise ValueError(f"samples[{i}] is {s!r}, not a number of seconds")
        values.append(float(s))
    if not values:
        raise ValueError("samples must not be empty")
    for i, v in enumerate(values):
        if not math.isfinite(v):
            raise ValueError(f"samples must be finite (samples[{i}] is {v!r})")
        if v <= 0.0:
            raise ValueError(f"samples must be positive seconds (samples[{i}] is {v!r})")
    arr = np.asarray(values, dtype=np.float64)
    n = int(arr.size)
    q1, median, q3 = (float(x) for x in np.percentile(arr, [25.0, 50.0, 75.0]))
    mean = float(np.mean(arr))
    stdev = float(np.std(arr, ddof=1)) if n > 1 else 0.0
    cv = stdev / mean if n > 1 else 0.0
    return Summary(
        n=n,
        median=median,
        min=float(arr.min()),
        max=float(arr.max()),
        q1=q1,
        q3=q3,
        iqr=q3 - q1,
        mean=mean,
        stdev=stdev,
        cv=cv,
    )
