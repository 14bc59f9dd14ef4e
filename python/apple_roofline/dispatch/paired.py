"""The Python binding's cost from interleaved samples: paired differences, their median and its interval.

The C++ loop's and the Python loop's own medians drift by tenths of a µs per launch between series
measured seconds or minutes apart (the host's clock, its other work, the driver's queue), so a
difference of two series' medians carries that drift whole: three studies on one H200 gave +0.250,
+0.166 and +0.431 µs for the same build, and −0.321 µs for another kernel. The study therefore
measures the two paths interleaved (:func:`pair_order`): pair ``i`` is one sample of each path taken
back to back, the path that goes first alternating from pair to pair, so that neither always runs
on a warmer or a colder host. Within a pair the drift cancels; the estimate is the median of the
``n`` paired differences ``python[i] − native[i]`` with its distribution-free confidence interval
(:func:`apple_roofline.timing.stats.median_interval`: order statistics, Binomial(n, 1/2)).

A cost is a finding only when the interval says so (:attr:`PairedDifference.status`): it must reach
its confidence level, lie wholly above zero (a negative cost is no cost the binding can have: the
Python loop runs the C++ loop's calls and more) and be no wider than the effect itself. Every other
outcome is reported as "not resolved", with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Sequence, Tuple

import numpy as np

from ..timing.stats import CONFIDENCE, median_interval

__all__ = [
    "PAIRED_PATHS",
    "STATUSES",
    "RESOLVED",
    "PairedDifference",
    "pair_order",
    "paired_difference",
]

#: The two paths a pairing interleaves: the C++ loop (the floor) and the same loop in Python.
PAIRED_PATHS: Tuple[str, str] = ("native", "python")
#: The status of a cost that the interval resolves.
RESOLVED = "resolved"
#: Every :attr:`PairedDifference.status`, and what each means (the reason a cost is not resolved).
STATUSES: Dict[str, str] = {
    RESOLVED: "the interval lies above zero and is no wider than the effect",
    "too_few_pairs": "too few pairs to reach the confidence level",
    "negative": "the interval lies below zero: python faster than native, a measurement artefact",
    "includes_zero": "the interval includes zero",
    "wider_than_effect": "the interval is wider than the effect",
}


def pair_order(pairs: int) -> Tuple[str, ...]:
    """The path measured first in each of ``pairs`` pairs: ``"native"``, ``"python"``, ``"native"``
    ... alternating, so that each path goes first in half the pairs (one more for native when
    ``pairs`` is odd) and the two are never taken in the same order twice running.

    Raises:
        ValueError: ``pairs`` not an integer of at least 1.
    """
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise ValueError(f"pairs {pairs!r} is out of range (valid: 1 or more)")
    return tuple(PAIRED_PATHS[i % 2] for i in range(pairs))


@dataclass(frozen=True)
class PairedDifference:
    """The median of paired ``python − native`` differences with its confidence interval.

    Attributes:
        n: number of pairs (>= 1).
        median_s: median of the differences, seconds per launch (any sign).
        low_s, high_s: the confidence interval for that median, seconds per launch
            (:func:`apple_roofline.timing.stats.median_interval`).
        confidence: the level asked for (a fraction, e.g. 0.95).
        coverage: the interval's exact coverage probability (>= ``confidence`` unless
            ``status`` is ``"too_few_pairs"``).
    """

    n: int
    median_s: float
    low_s: float
    high_s: float
    confidence: float
    coverage: float

    @property
    def width_s(self) -> float:
        """``high_s - low_s``, seconds per launch."""
        return self.high_s - self.low_s

    @property
    def status(self) -> str:
        """One key of :data:`STATUSES`: ``"too_few_pairs"`` when the interval does not reach
        ``confidence``; ``"negative"`` when it lies below zero; ``"includes_zero"``; then
        ``"wider_than_effect"`` when ``width_s > median_s``; else :data:`RESOLVED`."""
        if self.coverage < self.confidence:
            return "too_few_pairs"
        if self.high_s < 0.0:
            return "negative"
        if self.low_s <= 0.0:
            return "includes_zero"
        if self.width_s > self.median_s:
            return "wider_than_effect"
        return RESOLVED

    @property
    def resolved(self) -> bool:
        """Whether the cost is a finding (``status == "resolved"``)."""
        return self.status == RESOLVED

    @property
    def verdict(self) -> str:
        """``"resolved"``, or ``"not resolved: <reason>"`` (:data:`STATUSES`), for reports."""
        status = self.status
        if status == RESOLVED:
            return RESOLVED
        if status == "too_few_pairs":
            return (
                f"not resolved: {self.n} pair{'s' if self.n != 1 else ''} cannot give a "
                f"{self.confidence * 100:g} % interval (coverage {self.coverage * 100:.1f} %)"
            )
        return f"not resolved: {STATUSES[status]}"

    def to_dict(self) -> Dict[str, object]:
        """JSON-ready dict: ``n``, ``median_s``, ``low_s``, ``high_s``, ``confidence``, ``coverage``
        and ``status`` (for readers; a reader recomputes them from the samples)."""
        return {
            "n": self.n,
            "median_s": self.median_s,
            "low_s": self.low_s,
            "high_s": self.high_s,
            "confidence": self.confidence,
            "coverage": self.coverage,
            "status": self.status,
        }


def paired_difference(
    python_s: Sequence[float], native_s: Sequence[float], confidence: float = CONFIDENCE
) -> PairedDifference:
    """The median of ``python_s[i] − native_s[i]`` over the pairs, with its distribution-free
    confidence interval (:func:`apple_roofline.timing.stats.median_interval`; W. J. Conover, *Practical
    Nonparametric Statistics*, 3rd ed., 1999, section 3.2).

    Args:
        python_s, native_s: seconds per launch, one sample per pair, in pair order (the same
            length, at least 1).
        confidence: the interval's level, strictly between 0 and 1 (default 0.95).

    Raises:
        ValueError: the lengths differ or are 0, a sample is not finite, or ``confidence`` is out
            of range (the message names which).
    """
    if len(python_s) != len(native_s):
        raise ValueError(
            f"paired samples differ in length: {len(python_s)} python, {len(native_s)} native "
            "(valid: one of each per pair)"
        )
    if not python_s:
        raise ValueError("paired samples must not be empty (valid: 1 or more pairs)")
    diff = np.asarray(python_s, dtype=np.float64) - np.asarray(native_s, dtype=np.float64)
    ci = median_interval(diff.tolist(), confidence)
    return PairedDifference(ci.n, ci.median, ci.low, ci.high, ci.confidence, ci.coverage)
