"""The CPU clock behind the theoretical peaks, from readings a neighbour cannot fool (docs/design/limits.md,
"Theoretical ceilings"): the robust estimate on readings seen on a 2-vCPU guest, and a run's clock
from readings given, never timed."""

from __future__ import annotations

from typing import Callable, List

import pytest

from apple_roofline.roofline import Measurement
from apple_roofline.theoretical import CoreGroup, CpuSpec, Figure
from apple_roofline.theoretical.cpu_clock import (
    OUTLIER_FLOOR,
    RunClock,
    clock_warnings,
    effective_readings_hz,
    robust_clock,
    with_clock,
)

#: Eight calls of measure_cpu_clock_hz() on a 2-vCPU Xeon guest (tree f22d365), GHz: a neighbour took
#: the second one's CPU.
GUEST_GHZ = (2.491, 1.431, 2.567, 2.539, 2.544, 2.541, 2.567, 2.566)
MEASURED = "measured: dependent integer-add chain (apple_roofline._core.measure_cpu_clock_hz), 52 ms"


def spec(clock: Figure) -> CpuSpec:
    return CpuSpec(
        model="test",
        vendor="Intel",
        arch="x86_64",
        physical_cores=Figure(2, "cores", "test"),
        logical_cpus=2,
        clock_hz=clock,
        vector_bits=Figure(512, "bits", "test"),
        fma_pipes=Figure(2, "pipes", "test table"),
        fp16=False,
    )


def readings(values_ghz: List[float]) -> Callable[[], float]:
    it = iter(values_ghz)
    return lambda: next(it) * 1e9


def test_the_reading_a_neighbour_stole_is_dropped() -> None:
    est = robust_clock([g * 1e9 for g in GUEST_GHZ])
    assert est.dropped == (1.431e9,)
    assert est.hz == pytest.approx(2.544e9)  # the median of the seven kept
    assert est.spread == pytest.approx((2.491e9, 2.567e9))
    assert 0.05e9 < est.threshold_hz < 1.0e9  # 2.491 GHz (0.05 from the median) stays
    text = est.text("chain")
    assert "median of 7 of 8 chain readings" in text and "dropped 1.431 GHz" in text
    d = est.to_dict()
    assert d["dropped_hz"] == [1.431e9] and len(d["kept_hz"]) == 7 and d["min_hz"] == pytest.approx(2.491e9)


def test_readings_that_agree_to_a_few_mhz_drop_none() -> None:
    """The MAD of near-identical readings is tiny; the floor keeps a reading 1 % off."""
    est = robust_clock([2.600e9, 2.600e9, 2.600e9, 2.601e9, 2.574e9])
    assert est.dropped == () and est.threshold_hz == pytest.approx(OUTLIER_FLOOR * 2.600e9)
    assert robust_clock([2.6e9, 1.4e9]).dropped == ()  # two readings cannot say which one is wrong
    assert robust_clock([2.6e9]).text("chain") == "median of 1 chain reading"


def test_bad_readings_raise() -> None:
    with pytest.raises(ValueError, match="empty"):
        robust_clock([])
    with pytest.raises(ValueError, match="finite and positive"):
        robust_clock([2.6e9, float("nan")])
    with pytest.raises(ValueError, match="finite and positive"):
        robust_clock([2.6e9, 0.0])
    with pytest.raises(ValueError, match="z must"):
        robust_clock([2.6e9], z=0.0)
    with pytest.raises(ValueError, match="floor"):
        robust_clock([2.6e9], floor=-0.1)


def test_a_run_s_peaks_rest_on_the_readings_not_on_a_low_first_one() -> None:
    """The run's first reading was the stolen 1.59 GHz; four more, after each suite, agree at
    2.6 GHz: the peaks use 2.6 GHz, and the dropped reading is said in the results and a warning."""
    clock = RunClock(spec(Figure(1.59e9, "Hz", MEASURED)), measure=readings([2.61, 2.60, 2.60, 2.59]))
    before, _ = clock.theoretical()
    for _ in range(4):
        clock.take()
    desc, ceilings = clock.theoretical()
    theo = desc["theoretical"]
    assert isinstance(theo, dict) and isinstance(before["theoretical"], dict)
    assert before["theoretical"]["clock_hz"] == pytest.approx(1.59e9)
    assert theo["clock_hz"] == pytest.approx(2.60e9)
    assert "median of 4 of 5" in str(theo["clock_source"]) and "dropped 1.590 GHz" in str(theo["clock_source"])
    assert theo["clock_readings"]["chain"]["dropped_hz"] == [1.59e9] and theo["clock_readings"]["used"] == "chain"
    fp32 = next(c for c in ceilings if c.name == "FP32 vector")
    assert fp32.value == pytest.approx(2 * 16 * 2 * 2 * 2.60)  # GFLOP/s at 2.6 GHz
    warnings = clock_warnings(desc)
    assert len(warnings) == 1 and "1.590 GHz" in warnings[0] and "2.600 GHz" in warnings[0]


def test_a_clock_read_from_cpufreq_is_left_alone() -> None:
    def never() -> float:
        raise AssertionError("a maximum clock that was read needs no reading")

    clock = RunClock(spec(Figure(3.7e9, "Hz", "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")), measure=never)
    clock.take()
    desc, _ = clock.theoretical()
    assert isinstance(desc["theoretical"], dict)
    assert desc["theoretical"]["clock_hz"] == 3.7e9 and "clock_readings" not in desc["theoretical"]
    assert clock_warnings(desc) == [] and clock_warnings({}) == []


def test_a_failed_reading_is_recorded_not_raised() -> None:
    def broken() -> float:
        raise RuntimeError("perf says no")

    clock = RunClock(spec(Figure(2.6e9, "Hz", MEASURED)), measure=broken)
    clock.take()
    desc, _ = clock.theoretical()
    assert isinstance(desc["theoretical"], dict)
    assert desc["theoretical"]["clock_readings"]["failed"] == ["RuntimeError: perf says no"]
    assert desc["theoretical"]["clock_hz"] == 2.6e9


def test_the_higher_effective_clock_keeps_the_peaks_an_upper_bound(make_m: Callable[..., Measurement]) -> None:
    """Where perf events counted the cores' cycles, a kernel that ran at 2.9 GHz would exceed peaks
    at the chain's 2.6 GHz: the peaks use the effective clock's median, the higher."""
    ms = [
        make_m(
            "peak",
            "fma",
            "fp32",
            flops=1 << 30,
            bytes=1,
            gflops=100.0,
            params={"effective_clock_mhz": mhz, "effective_clock_source": "measured: perf events (cycles)"},
        )
        for mhz in (2900.0, 2910.0, 2890.0, 1200.0)
    ]
    ms.append(
        make_m(
            "peak",
            "fma",
            "fp32",
            flops=1 << 30,
            bytes=1,
            gflops=100.0,
            params={"effective_clock_mhz": 2600.0, "effective_clock_source": "reported: cpufreq"},
        )
    )
    assert effective_readings_hz(ms) == [2.9e9, 2.91e9, 2.89e9, 1.2e9]
    clock = RunClock(spec(Figure(2.6e9, "Hz", MEASURED)), measure=readings([2.6, 2.6]))
    clock.take()
    clock.take()
    desc, _ = clock.theoretical(ms)
    theo = desc["theoretical"]
    assert isinstance(theo, dict)
    assert theo["clock_hz"] == pytest.approx(2.9e9) and theo["clock_readings"]["used"] == "effective"
    assert theo["clock_readings"]["effective"]["dropped_hz"] == [1.2e9]
    assert "effective" in clock_warnings(desc)[0]


def test_with_clock_replaces_only_measured_clocks() -> None:
    p = CoreGroup("P", "", Figure(4, "cores", "t"), Figure(3.2e9, "Hz", MEASURED), Figure(4, "pipes", "t"))
    e = CoreGroup("E", "", Figure(4, "cores", "t"), Figure.unknown("Hz", "no E-core sysctl"), Figure(2, "pipes", "t"))
    s = CpuSpec(
        model="Apple M1",
        vendor="Apple",
        arch="arm64",
        physical_cores=Figure(8, "cores", "t"),
        logical_cpus=8,
        clock_hz=p.clock_hz,
        vector_bits=Figure(128, "bits", "t"),
        fma_pipes=p.fma_pipes,
        fp16=True,
        core_groups=(p, e),
    )
    out = with_clock(s, 3.1e9, "measured: robust")
    assert out.clock_hz.value == 3.1e9 and out.core_groups[0].clock_hz.value == 3.1e9
    assert out.core_groups[1].clock_hz == e.clock_hz
