"""The effective clock of a measurement, its fallback to the reported clock, the steady clock and the
ceilings at the clock (apple_roofline.timing.clocks, roofline/views/clock_table.py; docs/design/clocks.md, "Clocks")."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import pytest

from apple_roofline.results import load_results
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.cases import measurement_params
from apple_roofline.roofline.views.clock_table import clock_table
from apple_roofline.telemetry import Sampler
from apple_roofline.text import DASH
from apple_roofline.timing import clocks as C
from apple_roofline.timing.measure import Timing

DATA = Path(__file__).parent / "data" / "run_h100_power.json"

KERNEL = "%clock64 / %globaltimer in the kernel: thread 0 of the first 4 blocks of every launch, entry to exit"
PERF = (
    "perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: No such file or directory (no hardware cycle counter "
    "here: a VM or container without a PMU); /proc/sys/kernel/perf_event_paranoid is 2"
)


def test_a_measured_clock_gives_its_mean_spread_and_method() -> None:
    got = C.effective_clock({"mhz": [1790.0, 1795.0, 1800.0], "method": KERNEL}, {"sm_clock_mhz": 1980.0}, "nvml")
    assert got == {
        C.EFFECTIVE: 1795.0,
        C.EFFECTIVE_MIN: 1790.0,
        C.EFFECTIVE_MAX: 1800.0,
        C.EFFECTIVE_SOURCE: f"measured: {KERNEL}",
    }


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
    """A sampler named ``name`` whose every reading is ``values`` (NVML's SM clock by default)."""

    def __init__(self, name: str = "nvml", values: Optional[Mapping[str, float]] = None) -> None:
        super().__init__()
        self.name, self.values = name, dict(values or {"sm_clock_mhz": 1980.0})

    def open(self) -> str:
        return ""

    def read(self) -> Mapping[str, float]:
        return self.values


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
    ms = tuple(
        dataclasses.replace(
            m,
            params={
                **{k: v for k, v in m.params.items() if k not in C.CLOCK_PARAMS and k not in C.CLOCK_KEYS},
                C.EFFECTIVE_SOURCE: f"none: {why}",
            },
        )
        for m in run.measurements
    )
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
    from apple_roofline.roofline.model.model import RooflineModel
    from apple_roofline.roofline.views.plot import ceiling_classes, clocked_theoretical, plot_roofline

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


# ---- the CPU's measured clock (perf_event_open) -----------------------------------------------------

#: What the CPU backend's ``Kernel.clock`` says after ``time()`` where the OS lets a thread count its
#: cycles: the method in native/cpu/cpu_backend.cpp's words (two workers, both counted), one MHz value
#: per timed sample (Σ cycles / Σ time on the CPU of the counting workers). No machine the tests run on
#: allows perf_event_open (VMs without a PMU: tests/device/test_cpu.py takes its "not measured"
#: branch), so this reading stands in for the measured branch. The values are not a recording of one
#: machine: they are set near the kept 2-vCPU EPYC run's measured all-core clock (3601 MHz).
PERF_METHOD = (
    "core cycles / time on the CPU of 2 of 2 workers per sample (perf_event_open: "
    "PERF_COUNT_HW_CPU_CYCLES and PERF_COUNT_SW_TASK_CLOCK, user mode)"
)
PERF_TIMED = {"mhz": [3588.2, 3594.6, 3600.4], "method": PERF_METHOD}
#: The warm-up's reading (the clock still ramping): never the measurement's.
PERF_WARMUP = {"mhz": [1204.7, 2411.9, 3387.0], "method": PERF_METHOD}
EPYC = Path(__file__).parent / "data" / "run_epyc_2vcpu.json"


def test_the_perf_event_method_is_the_cpu_backends_own_text() -> None:
    """PERF_METHOD as native/cpu/cpu_backend.cpp builds it (its literals and counts, 2 of 2 workers)."""
    import re

    source = (Path(__file__).parents[2] / "native" / "cpu" / "cpu_backend.cpp").read_text()
    statement = re.search(r'clock_\.method = ("core cycles.*?);', source, re.S)
    assert statement is not None, "the measured method's text is no longer built in cpu_backend.cpp"
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|std::to_string\((\w+)\)', statement.group(1))
    assert "".join(text if not var else "2" for text, var in parts) == PERF_METHOD


class _PerfCountingKernel:
    """A CPU kernel where perf_event_open counts: each ``time()`` call's samples last 1 ms a launch,
    and ``clock`` then holds that call's reading (the warm-up's, then the timed samples')."""

    def __init__(self) -> None:
        self.readings = [PERF_WARMUP, PERF_TIMED]
        self.clock: Mapping[str, Any] = {"mhz": [], "method": "not measured: nothing timed yet"}
        self.calls = 0

    def time(self, args: Any, work_items: int, batch: int = 1, reps: int = 1, clock: bool = True) -> List[float]:
        reading = self.readings[self.calls]
        self.calls += 1
        assert len(reading["mhz"]) == reps  # one value per sample, as the backend gives
        self.clock = reading
        return [1e-3 * batch] * reps


def test_a_cpu_measured_clock_from_perf_events_is_the_measurements_and_the_reports() -> None:
    """The CPU's measured-clock branch end to end without a PMU: time_kernel keeps the timed samples'
    reading (not the warm-up's), the measurement's effective clock is its mean 3594.4 MHz, spread
    3588.2 to 3600.4, labelled measured with the backend's method, beside cpufreq's reported clock;
    and the report's ceilings-at-the-clock table shows it as measured."""
    from apple_roofline.roofline.run.cases import judge, time_case
    from apple_roofline.suites import Case, KernelDef

    kernel = _PerfCountingKernel()
    kdef = KernelDef(
        "peak",
        "vec4_indep8",
        "fp32",
        {"cpu": ("kernels.cpp", "peak_vec4_indep8_f32")},
        ceiling_class="FP32 vector",
        ceiling_kind="compute",
    )
    case = Case(kdef, {"F": 512}, 1 << 20, 1 << 30, 1 << 23, [], lambda: kernel, lambda: (True, "ok"), lambda: None)
    # Linux's CPU sampler (RAPL, with cpufreq's clock): a reported clock the measured one must win over
    with _Sampler("rapl", {"cpu_clock_mhz": 2450.0}).start() as sampler:
        m = judge(case, time_case(case, kernel, reps=3, max_warmup_s=0.0, sampler=sampler), case.check())
    assert kernel.calls == 2  # one warm-up call (its 3 launches agree), then the 3 timed samples
    assert m.params[C.EFFECTIVE] == 3594.4
    assert (m.params[C.EFFECTIVE_MIN], m.params[C.EFFECTIVE_MAX]) == (3588.2, 3600.4)
    assert m.params[C.EFFECTIVE_SOURCE] == f"measured: {PERF_METHOD}"
    assert m.params["cpu_clock_mhz"] == 2450.0  # cpufreq's reported clock over the window, named apart

    run = load_results(EPYC)
    assert isinstance(run, Run)
    vec4 = next(x for x in run.measurements if x.kernel == "vec4_indep8" and x.params["F"] == 512)
    clocked = dataclasses.replace(
        vec4, params={**vec4.params, **{k: m.params[k] for k in C.CLOCK_PARAMS if k in m.params}}
    )
    table = clock_table(
        dataclasses.replace(run, measurements=tuple(clocked if x is vec4 else x for x in run.measurements))
    )
    assert table is not None
    row = next(r for r in table.rows if r[0] == "FP32 vector")
    # 414.0 GFLOP/s of 460.9 at the 3601 MHz all-core clock (89.8 %), of 460.1 at 3594.4 MHz (90.0 %)
    assert row[2] == "3594 (measured)" and row[4] == "89.8 %" and row[6] == "90.0 %"
