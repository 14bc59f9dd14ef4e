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
        {"kernel": "k", "batch": 3, **timer.verdict(1.0, 1.001), "rate": 1234.4, "unit": "GB/s", "probe_mhz": 1979.94},
        {"kernel": "j", "batch": 4, **timer.verdict(2.0, 2.0), "rate": 5.0, "unit": "GFLOP/s", "probe_mhz": None},
    ]
    text = timer.table(rows)
    assert "| k | 3 | 1.000000 | 1.001000 | 1.00100 | agrees | 1,234 GB/s | 1979.9 |" in text
    assert "| j | 4 | 2.000000 | 2.000000 | 1.00000 | agrees | 5 GFLOP/s | — |" in text


def _row(kernel: str, mhz: float | None, rate: float, host_over_event: float = 1.001) -> dict:
    return {
        "kernel": kernel,
        "probe_mhz": mhz,
        "rate": rate * 0.9,
        "probed_rate": rate,
        "host_over_event": host_over_event,
    }


def test_rows_above_the_maximum_are_set_against_the_rows_at_it() -> None:
    """The 2026-11-28 H100 pattern: an SM-bound kernel's rate follows the probe's 1,995 MHz (a 15 MHz
    step above 1,980) while the DRAM-bound copy's does not, and host ÷ device stays the same. A
    reading within the tolerance above the maximum counts as at it; a row without a reading counts in
    neither group; a kernel never above gets no ratios."""
    rows = [
        _row("sm", 1980.0, 100.0),
        _row("sm", 1979.0, 100.0),
        _row("sm", 1995.0, 100.75, 1.002),
        _row("dram", 1980.0, 3000.0),
        _row("dram", 1995.0, 3000.0),
        _row("dram", None, 9999.0),
        _row("flat", 1985.0, 7.0),  # 0.25 % above 1,980: within the tolerance, at the maximum
    ]
    sm, dram, flat = timer.above_the_maximum(rows, 1980.0)
    assert (sm["kernel"], sm["at"], sm["above"]) == ("sm", 2, 1)
    assert sm["clock_ratio"] == pytest.approx(1995.0 / 1979.5) and sm["rate_ratio"] == pytest.approx(1.0075)
    assert sm["host_over_event_at"] == pytest.approx(1.001) and sm["host_over_event_above"] == pytest.approx(1.002)
    assert (dram["at"], dram["above"], dram["rate_ratio"]) == (1, 1, 1.0)
    assert (flat["at"], flat["above"], flat["clock_ratio"], flat["rate_ratio"]) == (1, 0, None, None)
    assert flat["host_over_event_above"] is None
    text = timer.summary_table([sm, dram, flat], 1980.0)
    assert "| rows at or below 1,980 MHz |" in text
    assert "| sm | 2 | 1 | 1.0078 | 1.0075 | 1.00100 | 1.00200 |" in text
    assert "| flat | 1 | 0 | — | — | 1.00100 | — |" in text
    with pytest.raises(ValueError, match="positive MHz"):
        timer.above_the_maximum(rows, 0.0)
