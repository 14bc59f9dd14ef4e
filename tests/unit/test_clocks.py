"""The effective clock of a measurement, its fallback to the reported clock, the steady clock and the
ceilings at the clock (apple_roofline.clocks, roofline/clock_table.py; docs/design.md, "Clocks")."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, Mapping

import pytest

from apple_roofline import clocks as C
from apple_roofline.measure import Timing
from apple_roofline.roofline.cases import measurement_params
from apple_roofline.roofline.clock_table import clock_table
from apple_roofline.roofline.run import Run
from apple_roofline.results import load_results
from apple_roofline.telemetry import Sampler
from apple_roofline.text import DASH

DATA = Path(__file__).parent / "data" / "run_h100_power.json"

KERNEL = "%clock64 / %globaltimer in the kernel: thread 0 of the first 4 blocks of every launch, entry to exit"
PERF = ("perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: No such file or directory (no hardware cycle counter "
        "here: a VM or container without a PMU); /proc/sys/kernel/perf_event_paranoid is 2")


def test_a_measured_clock_gives_its_mean_spread_and_method() -> None:
    got = C.effective_clock({"mhz": [1790.0, 1795.0, 1800.0], "method": KERNEL}, {"sm_clock_mhz": 1980.0}, "nvml")
    assert got == {C.EFFECTIVE: 1795.0, C.EFFECTIVE_MIN: 1790.0, C.EFFECTIVE_MAX: 1800.0,
                   C.EFFECTIVE_SOURCE: f"measured: {KERNEL}"}


def test_without_a_measurement_the_reported_clock_is_used_and_labelled_with_the_reason() -> None:
    """The CPU fallback where perf_event_open is refused (as on this host), forced with the backend's
    own words: the OS's reported clock, named as reported, with why nothing was measured."""
    got = C.effective_clock({"mhz": [], "method": f"not measured: {PERF}"}, {"cpu_clock_mhz": 3600.2}, "rapl")
    assert got[C.EFFECTIVE] == 3600.2 and C.EFFECTIVE_MIN not in got
    source = str(got[C.EFFECTIVE_SOURCE])
    assert source.startswith("reported: the CPU clock the OS reported (cpu_clock_mhz, rapl)")
    assert source.endswith(f"not measured: {PERF}")


def test_nvml_is_preferred_to_the_other_reported_clocks_and_nothing_reported_says_so() -> None:
    got = C.effective_clock(None, {"cpu_clock_mhz": 3000.0, "sm_clock_mhz": 1980.0})
    assert got[C.EFFECTIVE] == 1980.0 and "SM clock NVML reported" in str(got[C.EFFECTIVE_SOURCE])
    # a Mac's sampler reads both: a CPU measurement takes the CPU's clock, a GPU one the GPU's
    both = {"cpu_clock_mhz": 3900.0, "gpu_clock_mhz": 1400.0}
    assert C.effective_clock(None, both, "ioreport", "cpu")[C.EFFECTIVE] == 3900.0
    assert C.effective_clock(None, both, "ioreport", "gpu")[C.EFFECTIVE] == 1400.0
    none = C.effective_clock({"mhz": [], "method": "not measured: the kernel has no clock probe"}, {})
    assert none == {C.EFFECTIVE_SOURCE: "none: not measured (the kernel has no clock probe) and no clock sampled"}


class _Sampler(Sampler):
    name = "nvml"

    def open(self) -> str:
        return ""

    def read(self) -> Mapping[str, float]:
        return {"sm_clock_mhz": 1980.0}


def test_measurement_params_keep_both_clocks_named_apart() -> None:
    s = _Sampler().start()
    try:
        t0 = s.samples()[0].t - 0.001
        timing = Timing(1, (1.0,), 3, (t0, t0 + 0.002), {"mhz": [1792.0, 1794.0], "method": KERNEL})
        params = measurement_params({"m": 64}, "", timing, s)
    finally:
        s.stop()
    assert params["sm_clock_mhz"] == 1980.0 and params[C.EFFECTIVE] == 1793.0
    assert str(params[C.EFFECTIVE_SOURCE]).startswith("measured: ")


@dataclasses.dataclass(frozen=True)
class _M:
    params: Dict[str, Any]


def test_measurements_more_than_5_percent_under_the_steady_clock_are_marked() -> None:
    ms = [_M({C.EFFECTIVE: 1980.0}), _M({C.EFFECTIVE: 1790.0}), _M({"sm_clock_mhz": 1975.0}), _M({})]
    marked, steady = C.mark_steady(ms)
    assert steady == 1975.0
    assert [m.params.get(C.CLOCK_PARAM) for m in marked] == [C.STEADY, C.BELOW, C.STEADY, None]
    assert C.below_steady(marked) == [marked[1]]


def test_a_theoretical_ceiling_at_the_clock_scales_with_it() -> None:
    assert C.at_clock(1_000.0, 2000.0, 1800.0) == pytest.approx(900.0)
    assert C.at_clock(1_000.0, None, 1800.0) is None and C.at_clock(1_000.0, 2000.0, None) is None
    assert C.theoretical_clock_mhz({"theoretical": {"clock_hz": 1.98e9}}) == 1980.0
    assert C.theoretical_clock_mhz({"theoretical": {"gpu_clock_mhz": {"value": 1578.0}}}) == 1578.0
    assert C.theoretical_clock_mhz({}) is None


def test_the_ceilings_at_the_clock_table_gives_both_fractions() -> None:
    """The kept H100 run (sampled clocks only: its effective clocks are NVML's, labelled reported):
    the FP64 GEMM ran at 1756 MHz, so 57,376 GFLOP/s is 85.8 % of 66,908 at 1980 MHz and 96.7 % of
    66,908 × 1756 / 1980 at its own clock."""
    run = load_results(DATA)
    assert isinstance(run, Run)
    table = clock_table(run)
    assert table is not None
    row = next(r for r in table.rows if r[0] == "GEMM FP64")
    assert row[2] == "1756 (reported)" and row[4] == "85.8 %" and row[6] == "96.7 %"
    assert table.header[3] == "Theoretical at 1980 MHz"


def test_without_an_effective_clock_the_table_says_why_and_leaves_its_columns_out() -> None:
    """A machine without a PMU (issue 32): no measurement has an effective clock, so the table has
    no column of dashes; one sentence gives the reason the measurements recorded."""
    run = load_results(DATA)
    assert isinstance(run, Run)
    why = "not measured (perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: no PMU) and no clock sampled"
    ms = tuple(dataclasses.replace(m, params={**{k: v for k, v in m.params.items()
                                                 if k not in C.CLOCK_PARAMS and k not in C.CLOCK_KEYS},
                                              C.EFFECTIVE_SOURCE: f"none: {why}"}) for m in run.measurements)
    table = clock_table(dataclasses.replace(run, measurements=ms))
    assert table is not None
    assert table.header == ("Ceiling", "GFLOP/s", "Theoretical at 1980 MHz", "of it")
    full = clock_table(run)
    assert full is not None and len(table.rows) == len(full.rows)
    assert all(DASH not in row for row in table.rows)
    assert len(table.notes) == 1 and table.notes[0].endswith(f"the columns at the effective clock are left out: {why}.")
    row = next(r for r in table.rows if r[0] == "GEMM FP64")
    assert row[3] == "85.8 %"


def test_the_figure_draws_the_theoretical_ceiling_at_the_effective_clock_too() -> None:
    """The kept H100 run: each shown compute class with both ceilings gets a dotted line at the
    theoretical value × its measurement's clock / 1980 MHz, and its label says at which clock."""
    from apple_roofline.roofline.model import RooflineModel
    from apple_roofline.roofline.plot import ceiling_classes, clocked_theoretical, plot_roofline

    run = load_results(DATA)
    assert isinstance(run, Run)
    model = RooflineModel.from_run(run)
    assert model.theoretical_mhz == 1980.0
    fig = plot_roofline(model, ceilings="all")  # on the Agg canvas, no pyplot state to close
    lines = {a.get_gid(): a for a in fig.axes[0].get_lines() if str(a.get_gid()).startswith("ceiling:theoretical-at")}
    labels = {t.get_gid(): t.get_text() for t in fig.axes[0].texts}
    _bw, compute = ceiling_classes(model.ceilings)
    fp64 = next(c for c in compute if c.name == "GEMM FP64")
    mhz, value = clocked_theoretical(model, fp64) or (0.0, 0.0)
    assert mhz == 1755.8 and value == pytest.approx(66908.16 * 1755.8 / 1980)
    line = lines["ceiling:theoretical-at-clock:compute:GEMM FP64"]
    assert line.get_linestyle() == ":"
    assert "at 1756 MHz" in labels["label:compute:GEMM FP64"]
