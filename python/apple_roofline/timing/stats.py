"""Summary statistics of timing samples: the one statistics module every study uses.

Small pure functions with their edge cases written down, in the manner of google/benchmark and
pytest-benchmark (docs/design/measurement.md, "Measurement"): the median is the primary statistic, rates are
derived from it, "best" rates come from the minimum, the coefficient of variation (CV) flags noisy
measurements, and the tail percentiles (p10, p90, p99) describe latency distributions the way
wrk2 and HdrHistogram report them (a mean hides the tail). :func:`median_interval` gives a
distribution-free confidence interval for a median from two order statistics.

Nothing in this module touches a device or the native extension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Tuple

import numpy as np

__all__ = [
    "CONFIDENCE",
    "CV_WARN",
    "NOISY_CV",
    "PERCENTILES",
    "MedianInterval",
    "Summary",
    "median_interval",
    "summarize",
]

#: Coefficient of variation above which a measurement is reported as noisy
#: (docs/design/measurement.md, "Measurement": a warning above 5 %). A fraction, not a percentage.
CV_WARN: float = 0.05

#: Coefficient of variation above which a sample set is marked noisy (docs/design/measurement.md, "Noisy
#: samples"): the runner measures such a kernel once more, and a measurement still above it is
#: marked so in the report, its warning and any ceiling it sets. A fraction: 0.5 is a standard
#: deviation half the mean.
NOISY_CV: float = 0.5

#: The percentiles a :class:`Summary` carries besides the quartiles.
PERCENTILES: Tuple[float, ...] = (10.0, 25.0, 50.0, 75.0, 90.0, 99.0)

#: The confidence level of :func:`median_interval` unless told otherwise (a fraction).
CONFIDENCE: float = 0.95


@dataclass(frozen=True)
class Summary:
    """Order statistics and moments of one measurement's samples.

    All fields except ``n`` and ``cv`` are in the unit of the samples
    (seconds per launch throughout this package). Percentiles use linear
    interpolation between order statistics (NumPy's default method): with
    fewer than 100 samples ``p99`` lies between the two largest.

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
        cv: coefficient of variation ``stdev / |mean|`` (dimensionless
            fraction); 0.0 when ``n == 1`` or the mean is 0.
        p10, p90, p99: the 10th, 90th and 99th percentiles.
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
    p10: float
    p90: float
    p99: float

    @property
    def p50(self) -> float:
        """The median (50th percentile)."""
        return self.median


def summarize(samples: Sequence[float], *, positive: bool = True) -> Summary:
    """Summarize timing samples (seconds per launch).

    Args:
        samples: one-dimensional sequence of ``n >= 1`` durations in seconds.
            Order does not matter.
        positive: require every sample to be > 0 (durations). False admits
            zero and negative values: differences of two clocks' instants,
            such as a start latency mapped from a device clock onto the host's.

    Returns:
        A :class:`Summary`. Quartiles use linear interpolation (NumPy's
        default percentile method), so for ``n == 1`` every order statistic
        equals the single sample and ``iqr``, ``stdev`` and ``cv`` are 0.0.

    Raises:
        ValueError: if ``samples`` is empty ("samples must not be empty"),
            contains a NaN or infinity ("samples must be finite"), or, with
            ``positive``, contains a value <= 0 ("samples must be positive
            seconds"). Booleans and non-numbers are rejected too.
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
        if positive and v <= 0.0:
            raise ValueError(f"samples must be positive seconds (samples[{i}] is {v!r})")
    arr = np.asarray(values, dtype=np.float64)
    n = int(arr.size)
    p10, q1, median, q3, p90, p99 = (float(x) for x in np.percentile(arr, list(PERCENTILES)))
    mean = float(np.mean(arr))
    stdev = float(np.std(arr, ddof=1)) if n > 1 else 0.0
    cv = stdev / abs(mean) if n > 1 and mean != 0.0 else 0.0
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
        p10=p10,
        p90=p90,
        p99=p99,
    )


@dataclass(frozen=True)
class MedianInterval:
    """A distribution-free confidence interval for the median of the population a sample came from
    (:func:`median_interval`).

    Attributes:
        n: number of samples (>= 1).
        median: the sample median (linear interpolation, as :class:`Summary`), in the samples' unit.
        low, high: the interval's ends, the order statistics ``x(rank)`` and ``x(n + 1 - rank)``
            (1-based, ascending), in the samples' unit; ``min`` and ``max`` when ``rank`` is 0.
        rank: the rank of ``low``; 0 when no pair of order statistics reaches ``confidence``
            (fewer than 6 samples at 95 %).
        confidence: the level asked for (a fraction between 0 and 1).
        coverage: the interval's exact coverage probability, ``1 - 2 P(B <= rank - 1)`` with
            ``B ~ Binomial(n, 1/2)`` (that of ``[min, max]``, ``1 - 2**(1 - n)``, when ``rank`` is
            0); at least ``confidence`` when ``rank >= 1``.
    """

    n: int
    median: float
    low: float
    high: float
    rank: int
    confidence: float
    coverage: float

    @property
    def reached(self) -> bool:
        """Whether the interval reaches ``confidence`` (``rank >= 1``)."""
        return self.rank >= 1


def _binomial_half_cdf(n: int) -> np.ndarray:
    """``P(B <= k)`` for ``k = 0 .. n``, ``B ~ Binomial(n, 1/2)``, from log-binomial coefficients
    (exact to rounding for any ``n``; no factorial overflows)."""
    k = np.arange(1, n + 1, dtype=np.float64)
    log_comb = np.concatenate(([0.0], np.cumsum(np.log(n - k + 1.0) - np.log(k))))
    cdf: np.ndarray = np.minimum(np.cumsum(np.exp(log_comb - n * math.log(2.0))), 1.0)
    return cdf


def median_interval(samples: Sequence[float], confidence: float = CONFIDENCE) -> MedianInterval:
    """The distribution-free confidence interval for a median from order statistics.

    Method: the number ``B`` of samples below the population median is Binomial(n, 1/2) whatever
    the distribution (continuous, independent samples), so ``[x(l), x(n + 1 - l)]`` covers the
    median with probability ``1 - 2 P(B <= l - 1)``; ``l`` is the largest rank for which that is
    at least ``confidence`` (W. J. Conover, *Practical Nonparametric Statistics*, 3rd ed., Wiley
    1999, section 3.2, "confidence interval for a quantile"; the interval that inverts the sign
    test). Exact for every ``n``, deterministic (no resampling, no seed), and valid for skewed and
    heavy-tailed samples such as latencies.

    Args:
        samples: ``n >= 1`` finite numbers in any unit, any sign (differences included); order
            does not matter.
        confidence: the coverage asked for, strictly between 0 and 1 (default :data:`CONFIDENCE`).

    Returns:
        A :class:`MedianInterval`. With too few samples to reach ``confidence`` (n <= 5 at 95 %)
        ``rank`` is 0, the interval is ``[min, max]`` and ``coverage`` says what it has.

    Raises:
        ValueError: ``confidence`` not strictly between 0 and 1 (the message gives the range), or
            ``samples`` empty or holding a non-finite value or a non-number (as :func:`summarize`).
    """
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence {confidence!r} is out of range (valid: strictly between 0 and 1)")
    median = summarize(samples, positive=False).median  # checks the samples
    x = np.sort(np.asarray([float(s) for s in samples], dtype=np.float64))
    n = int(x.size)
    cdf = _binomial_half_cdf(n)
    rank = int(np.count_nonzero(2.0 * cdf <= 1.0 - confidence))  # P(B <= rank - 1) small enough
    if rank == 0:
        return MedianInterval(n, median, float(x[0]), float(x[-1]), 0, float(confidence), 1.0 - 2.0 * float(cdf[0]))
    coverage = 1.0 - 2.0 * float(cdf[rank - 1])
    return MedianInterval(n, median, float(x[rank - 1]), float(x[n - rank]), rank, float(confidence), coverage)
