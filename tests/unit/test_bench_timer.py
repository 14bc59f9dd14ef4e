"""bench/bench_timer.py's pure parts: the verdict on host ÷ device time, the sample's launches, the
probe's mean clock and the table. No GPU is needed."""

from __future__ import annotations

import pytest

from bench_scripts import load_bench

timer = load_bench("bench_timer")


def test_the_host_may_only_take_longer_and_not_by_more_than_the_tolerance() -> None:
    assert timer.verdict(1.0, 1.0018)["verdict"] == "agrees"
    assert timer.verdict(1.0, 1.0)["host_over_event"] == 1.0
    assert timer.verdict(1.0, 0.985)["verdict"] == "device timer slow"
    assert timer.verdict(1.0, 1.0 + 2 * timer.TOLERANCE)["verdict"] == "device timer fast or host late"
    with pytest.raises(ValueError, match="positive"):
        timer.verdict(0.0, 1.0)


def test_a_sample_lasts_about_the_seconds_asked_for() -> None:
    assert timer.batch_for(1.0, 2.6e-3) == 385
    assert timer.batch_for(1.0, 5.0) == 1  # a launch longer than the sample: one
    assert timer.mean_mhz({"mhz": [1979.0, 1981.0], "method": "m"}) == 1980.0
    assert timer.mean_mhz({"mhz": [], "method": "not measured"}) is None and timer.mean_mhz(None) is None


def test_the_table_gives_every_row_and_a_dash_without_a_clock() -> None:
    rows = [
        {"kernel": "k", "batch": 3, **timer.verdict(1.0, 1.001), "probe_mhz": 1979.94},
        {"kernel": "j", "batch": 4, **timer.verdict(2.0, 2.0), "probe_mhz": None},
    ]
    text = timer.table(rows)
    assert "| k | 3 | 1.000000 | 1.001000 | 1.00100 | agrees | 1979.9 |" in text
    assert "| j | 4 | 2.000000 | 2.000000 | 1.00000 | agrees | — |" in text
