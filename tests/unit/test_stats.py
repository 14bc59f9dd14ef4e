from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from apple_roofline.timing.stats import CV_WARN, Summary, summarize


def test_cv_warn_is_five_percent() -> None:
    assert CV_WARN == 0.05


def test_single_sample() -> None:
    s = summarize([2.5e-3])
    assert s == Summary(
        n=1,
        median=2.5e-3,
        min=2.5e-3,
        max=2.5e-3,
        q1=2.5e-3,
        q3=2.5e-3,
        iqr=0.0,
        mean=2.5e-3,
        stdev=0.0,
        cv=0.0,
        p10=2.5e-3,
        p90=2.5e-3,
        p99=2.5e-3,
    )


def test_hand_computed_values() -> None:
    s = summarize([4.0, 1.0, 3.0, 2.0])
    assert s.n == 4
    assert s.median == 2.5
    assert (s.min, s.max) == (1.0, 4.0)
    # linear interpolation: q1 at position 0.75 -> 1.75, q3 at 2.25 -> 3.25
    assert s.q1 == pytest.approx(1.75)
    assert s.q3 == pytest.approx(3.25)
    assert s.iqr == pytest.approx(1.5)
    assert s.mean == 2.5
    assert s.stdev == pytest.approx(math.sqrt(5.0 / 3.0))  # ddof=1
    assert s.cv == pytest.approx(math.sqrt(5.0 / 3.0) / 2.5)


def test_odd_count_median_is_middle_sample() -> None:
    assert summarize([3.0, 1.0, 2.0]).median == 2.0


def test_accepts_tuples_and_numpy() -> None:
    assert summarize(np.array([1.0, 2.0])).median == 1.5
    assert summarize((1, 2, 3)).mean == 2.0


@pytest.mark.parametrize(
    "samples, fragment",
    [
        ([], "empty"),
        ([1.0, float("nan")], "finite"),
        ([1.0, float("inf")], "finite"),
        ([1.0, 0.0], "positive seconds"),
        ([-1.0], "positive seconds"),
        ([1.0, "2"], "not a number"),
        ([True], "not a number"),
    ],
)
def test_rejects_bad_samples(samples: list, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        summarize(samples)


@given(st.lists(st.floats(min_value=1e-9, max_value=1e3), min_size=1, max_size=50))
def test_properties(samples: list) -> None:
    s = summarize(samples)
    assert s.n == len(samples)
    assert s.min <= s.q1 <= s.median <= s.q3 <= s.max
    assert s.iqr >= 0
    assert s.min <= s.mean * (1 + 1e-12) and s.mean <= s.max * (1 + 1e-12)
    assert s.median == pytest.approx(statistics.median(samples))
    assert s.cv >= 0
    if len(samples) > 1:
        assert s.stdev == pytest.approx(statistics.stdev(samples), rel=1e-6, abs=1e-12)
