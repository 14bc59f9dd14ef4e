"""The clocks-and-power section of the roofline report (docs/design/power.md, "Clocks and power"): present
with GFLOP/s and GB/s per watt and the clocks where measurements have power, a sentence when the
run sampled nothing, absent for runs that predate sampling; the results file round-trips."""

from __future__ import annotations

import dataclasses

from apple_roofline.roofline import Run
from apple_roofline.roofline.views.html import measurement_tooltip, to_html
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.roofline.views.tables import efficiency_table, telemetry_note
from apple_roofline.study.records import format_params
from apple_roofline.text import DASH
from conftest import MakeMeasurement

GPU = {
    "power_w": 500.0,
    "power_max_w": 690.0,
    "sm_clock_mhz": 1500.0,
    "mem_clock_mhz": 2619.0,
    "temperature_c": 61.0,
    "throttle": "sw_power_cap",
}
NVML = {"sampler": "nvml", "period_s": 0.02, "samples": 1234}


def powered(run: Run, make_m: MakeMeasurement) -> Run:
    ms = (
        make_m(
            "gemm",
            "sgemm",
            "fp32",
            flops=2 * 4096**3,
            bytes=3 * 4096**2 * 4,
            gflops=50_000.0,
            params={"N": 4096, **GPU},
        ),
        make_m(
            "stream",
            "triad",
            "fp32",
            flops=2 * 2**20,
            bytes=12 * 2**20,
            gbps=3000.0,
            params={"n": 2**20, "power_w": 300.0},
        ),
    )
    kept = tuple(m for m in run.measurements if m.key not in {p.key for p in ms})  # a run holds each once
    return dataclasses.replace(run, measurements=kept + ms, device={**run.device, "telemetry": NVML})


def test_efficiency_per_watt_and_clocks(m5_run: Run, make_m: MakeMeasurement) -> None:
    run = powered(m5_run, make_m)
    table = efficiency_table(run.measurements)
    assert table is not None
    assert table.header == (
        "Kernel",
        "Params",
        "GFLOP/s",
        "GB/s",
        "W",
        "GFLOP/s per W",
        "GB/s per W",
        "Max W",
        "SM MHz",
        "Memory MHz",
        "°C",
        "Throttle",
    )
    gemm, triad = table.rows
    assert gemm == (
        "gemm/sgemm/fp32",
        "N=4096",
        "50,000",
        "73.2",
        "500",
        "100",
        "0.146",
        "690",
        "1,500",
        "2,619",
        "61.0",
        "sw_power_cap",
    )
    assert triad == ("stream/triad/fp32", "n=1048576", "500", "3,000", "300", "1.67", "10.0") + (DASH,) * 5
    assert run.measurements[-1].gbps_per_watt == 10.0
    assert format_params(run.measurements[-2].params) == "N=4096"  # clocks and power are not kernel parameters


def test_report_section(m5_run: Run, make_m: MakeMeasurement) -> None:
    text = to_markdown(powered(m5_run, make_m))
    assert "## Clocks and power" in text
    assert "Clocks and power sampled by nvml every 20 ms (1234 samples)." in text
    assert "| gemm/sgemm/fp32 | N=4096 |" in text
    assert "GFLOP/s per W" in to_html(powered(m5_run, make_m))
    assert "500 W: 100 GFLOP/s per W" in measurement_tooltip(powered(m5_run, make_m).measurements[-2])


def test_no_power_no_table_but_the_reason(m5_run: Run) -> None:
    assert efficiency_table(m5_run.measurements) is None
    assert "Clocks and power" not in to_markdown(m5_run)  # a run from before sampling: unchanged
    run = dataclasses.replace(
        m5_run,
        device={
            **m5_run.device,
            "telemetry": {
                "sampler": "rapl",
                "period_s": 0.02,
                "samples": 0,
                "reason": "power: no RAPL package zone under /sys/class/powercap; clock: no readable cpufreq",
            },
        },
    )
    text = to_markdown(run)
    assert (
        "## Clocks and power\n\nClocks and power were not sampled (rapl): power: no RAPL package zone under "
        "/sys/class/powercap; clock: no readable cpufreq.\n"
    ) in text
    assert "GFLOP/s per W" not in text


def test_notes_say_what_was_not_read() -> None:
    note = telemetry_note({"telemetry": {**NVML, "notes": ["NVML cannot read power_w: Not Supported"]}})
    assert note == (
        "Clocks and power sampled by nvml every 20 ms (1234 samples). "
        "Not read: NVML cannot read power_w: Not Supported."
    )
    assert telemetry_note({}) is None


def test_results_file_round_trips(m5_run: Run, make_m: MakeMeasurement) -> None:
    run = powered(m5_run, make_m)
    back = Run.from_dict(run.to_dict())
    assert back.device["telemetry"] == NVML
    assert back.measurements[-2].params == run.measurements[-2].params
    assert back.measurements[-2].gflops_per_watt == run.measurements[-2].gflops_per_watt == 100.0
