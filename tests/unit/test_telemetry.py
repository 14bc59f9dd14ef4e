"""Clocks and power (docs/design/power.md, "Clocks and power"): the window summary, the NVML sampler
against a fake pynvml, the RAPL sampler against a fake powercap tree, the choice of sampler and
the runner's parameters with a fake sampler."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any, Dict, List, Mapping

import pytest

from apple_roofline.roofline.run.runner import measurement_params
from apple_roofline.telemetry import NullSampler, NvmlSampler, RaplSampler, Sample, Sampler, sampler_for, summarize
from apple_roofline.telemetry.nvml import AVERAGE, INSTANT, INSTANT_AVERAGE_S, MISSING
from apple_roofline.telemetry.rapl import energy_delta_uj
from apple_roofline.timing.measure import Timing


def no_flags(key: str, bits: int) -> List[str]:
    return [f"bit{b}" for b in range(8) if bits & (1 << b)]


# -- the window ------------------------------------------------------------


def test_window_takes_the_samples_inside_and_the_first_after() -> None:
    samples = [
        Sample(t, {"power_w": p, "sm_clock_mhz": c})
        for t, p, c in [
            (0.0, 900.0, 100.0),
            (1.0, 100.0, 1000.0),
            (2.0, 300.0, 2000.0),
            (3.0, 200.0, 1500.0),
            (4.0, 999.0, 10.0),
        ]
    ]
    s = summarize(samples, 0.5, 2.5, no_flags)
    assert s == {"power_w": 200.0, "power_max_w": 300.0, "sm_clock_mhz": 1500.0}


def test_a_window_shorter_than_the_period_uses_the_next_sample() -> None:
    samples = [Sample(0.0, {"power_w": 50.0}), Sample(1.0, {"power_w": 70.0})]
    assert summarize(samples, 0.2, 0.3, no_flags) == {"power_w": 70.0, "power_max_w": 70.0}
    assert summarize(samples, 1.0, 2.0, no_flags) == {}  # nothing after the window's start


def test_bitmasks_are_ored_and_named() -> None:
    samples = [Sample(1.0, {"throttle_bits": 1.0}), Sample(2.0, {"throttle_bits": 4.0})]
    assert summarize(samples, 0.0, 2.0, no_flags) == {"throttle": "bit0,bit2"}
    assert summarize([Sample(1.0, {"throttle_bits": 0.0})], 0.0, 1.0, no_flags) == {"throttle": "none"}


def test_a_value_missing_from_a_sample_is_left_out_of_its_mean() -> None:
    samples = [Sample(1.0, {"cpu_clock_mhz": 1000.0}), Sample(2.0, {"cpu_clock_mhz": 3000.0, "power_w": 40.0})]
    assert summarize(samples, 0.0, 2.0, no_flags) == {"cpu_clock_mhz": 2000.0, "power_w": 40.0, "power_max_w": 40.0}


# -- the base sampler --------------------------------------------------------


class Counting(Sampler):
    name = "counting"

    def __init__(self, fail_after: int = 10**9) -> None:
        super().__init__(period_s=0.001)
        self.n = 0
        self.fail_after = fail_after

    def open(self) -> str:
        return ""

    def read(self) -> Mapping[str, float]:
        self.n += 1
        if self.n > self.fail_after:
            raise OSError("the counter went away")
        return {"power_w": 10.0 * self.n}


def test_the_thread_samples_and_stops() -> None:
    with Counting() as s:
        import time

        time.sleep(0.05)
    n = len(s.samples())
    assert n >= 3 and not s.reason
    assert s.describe()["samples"] == n and "reason" not in s.describe()
    assert len(s.samples()) == n  # stopped: no more samples


def test_a_failing_read_records_why_and_stops_reading() -> None:
    s = Counting(fail_after=1)
    s.period_s = 3600.0
    s.start()  # the first reading succeeds
    s.poll()  # the second fails
    s.stop()
    assert len(s.samples()) == 1
    assert s.reason == "counting stopped reading: the counter went away"
    assert s.window(0.0, 1e12) == {}


def test_a_failing_open_is_a_reason_never_an_error() -> None:
    class Broken(Sampler):
        name = "broken"

        def open(self) -> str:
            raise RuntimeError("no\ndevice")

    s = Broken().start()
    assert s.reason == "cannot open broken: no device" and not s.active
    assert s.describe() == {
        "sampler": "broken",
        "period_s": 0.02,
        "samples": 0,
        "reason": "cannot open broken: no device",
    }


def test_window_polls_so_a_short_window_has_a_sample() -> None:
    s = Counting()
    s.period_s = 3600.0  # the thread never reads again on its own
    s.start()
    try:
        from apple_roofline.telemetry import clock

        t0 = clock()
        t1 = clock()
        assert s.window(t0, t1) == {"power_w": 20.0, "power_max_w": 20.0}
    finally:
        s.stop()


def test_power_is_left_out_of_a_window_shorter_than_its_averaging() -> None:
    """A power reading that averages the last second describes the preceding work for a 10 ms
    measurement (NVML on Ampere and newer): such a window gets no power, a longer one does."""
    s = Counting()
    s.period_s = 3600.0
    s.power_average_s = 1.0
    s.start()
    try:
        from apple_roofline.telemetry import clock

        t1 = clock()
        assert s.window(t1 - 0.01, t1) == {}
        longer = s.window(t1 - 2.0, t1 + 1e-6)
        assert set(longer) == {"power_w", "power_max_w"} and longer["power_max_w"] >= longer["power_w"] > 0
        assert s.describe()["power_average_s"] == 1.0
    finally:
        s.stop()


def test_nvml_power_averages_one_second() -> None:
    from apple_roofline.roofline.views.tables import telemetry_note

    assert NvmlSampler.power_average_s == 1.0
    note = telemetry_note({"telemetry": {"sampler": "nvml", "period_s": 0.02, "samples": 9, "power_average_s": 1.0}})
    assert note is not None and "average of the last 1 s" in note and "at least that long" in note


# -- NVML --------------------------------------------------------------------


class NVMLError(Exception):
    pass


class FieldValue:
    """nvidia-ml-py's c_nvmlFieldValue_t, as far as the sampler reads it."""

    def __init__(self, ret: int, mw: int) -> None:
        self.nvmlReturn, self.valueType = ret, 1  # NVML_VALUE_TYPE_UNSIGNED_INT
        self.value = types.SimpleNamespace(uiVal=mw)


def fake_pynvml(*, init_fails: bool = False, power_fails: bool = False, instant: str = "none") -> types.ModuleType:
    """A fake pynvml; ``instant``: "none" (no nvmlDeviceGetFieldValues: an old nvidia-ml-py),
    "ok" (the field reads 431 W), "unsupported" (NVML returns the field with NOT_SUPPORTED)."""
    m = types.ModuleType("pynvml")
    calls: Dict[str, Any] = {"shutdown": 0, "fields": []}
    m.NVMLError = NVMLError  # type: ignore[attr-defined]
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0  # type: ignore[attr-defined]
    if instant != "none":
        m.NVML_FI_DEV_POWER_INSTANT = 186  # type: ignore[attr-defined]

        def fields(h: object, ids: List[int]) -> List[FieldValue]:
            calls["fields"].append(list(ids))
            return [FieldValue(0, 431_000) if instant == "ok" else FieldValue(3, 0) for _ in ids]

        m.nvmlDeviceGetFieldValues = fields  # type: ignore[attr-defined]
        m.nvmlErrorString = lambda r: {3: "Not Supported"}.get(r, "Unknown Error")  # type: ignore[attr-defined]

    def init() -> None:
        if init_fails:
            raise NVMLError("Driver Not Loaded")

    def power(h: object) -> int:
        if power_fails:
            raise NVMLError("Not Supported")
        return 512_000  # mW

    def shutdown() -> None:
        calls["shutdown"] += 1

    m.calls = calls  # type: ignore[attr-defined]
    m.nvmlInit = init  # type: ignore[attr-defined]
    m.nvmlShutdown = shutdown  # type: ignore[attr-defined]
    m.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)  # type: ignore[attr-defined]
    m.nvmlDeviceGetHandleByPciBusId = lambda b: ("pci", b)  # type: ignore[attr-defined]
    m.nvmlDeviceGetClockInfo = lambda h, c: {1: 1755, 2: 2619}[c]  # type: ignore[attr-defined]
    m.nvmlDeviceGetPowerUsage = power  # type: ignore[attr-defined]
    m.nvmlDeviceGetTemperature = lambda h, s: 61  # type: ignore[attr-defined]
    m.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: 0x4 | 0x20  # type: ignore[attr-defined]
    return m


def test_nvml_reads_clocks_power_temperature_and_throttle_reasons() -> None:
    nvml = fake_pynvml(instant="ok")
    s = NvmlSampler(3, module=nvml)
    s.start()
    s.stop()
    assert not s.reason and s.notes == []
    values = s.samples()[0].values
    assert values == {
        "sm_clock_mhz": 1755.0,
        "mem_clock_mhz": 2619.0,
        "power_w": 431.0,
        "temperature_c": 61.0,
        "throttle_bits": 36.0,
    }
    assert nvml.calls["fields"][0] == [186]  # type: ignore[attr-defined]
    assert s.power_source == INSTANT and s.power_average_s == INSTANT_AVERAGE_S == 0.1
    assert s.describe()["power_source"] == INSTANT and s.describe()["power_average_s"] == 0.1
    summary = summarize(s.samples(), 0.0, 1e12, s.flag_names)
    assert summary["throttle"] == "sw_power_cap,sw_thermal_slowdown"
    assert summary["power_w"] == 431.0
    assert nvml.calls["shutdown"] == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("instant", ["none", "unsupported"])
def test_nvml_falls_back_to_the_one_second_average(instant: str) -> None:
    """Without the instantaneous field (an old nvidia-ml-py, or a GPU that returns it unsupported)
    power is nvmlDeviceGetPowerUsage, whose 1-s average keeps the 1-s rule; the note says why."""
    s = NvmlSampler(0, module=fake_pynvml(instant=instant))
    s.start()
    s.stop()
    assert not s.reason and s.samples()[0].values["power_w"] == 512.0
    assert s.power_source == AVERAGE and s.power_average_s == 1.0
    assert len(s.notes) == 1 and s.notes[0].startswith("NVML's instantaneous power field is not read (")
    assert ("Not Supported" in s.notes[0]) == (instant == "unsupported")
    assert s.describe()["power_source"] == "nvmlDeviceGetPowerUsage"


def test_nvml_instant_power_is_given_to_a_tenth_of_a_second_window() -> None:
    """With the instantaneous field a 0.2-s measurement gets power, from the readings taken at
    least 0.1 s after its start (earlier ones may describe the work before it)."""
    s = NvmlSampler(0, module=fake_pynvml(instant="ok"))
    assert s.open() == ""
    s._open = True
    try:
        samples = [Sample(10.0 + 0.02 * i, {"power_w": 100.0 if i < 5 else 700.0}) for i in range(12)]
        summary = summarize(samples, 10.0, 10.2, s.flag_names, power_after=s.power_average_s)
        assert summary == {"power_w": 700.0, "power_max_w": 700.0}
        assert summarize(samples, 10.0, 10.2, s.flag_names)["power_w"] < 700.0  # without the rule: mixed
        assert s.power_window_s == pytest.approx(0.2)
    finally:
        s.close()


def test_nvml_prefers_the_pci_bus_id() -> None:
    s = NvmlSampler(0, pci_bus_id="0000:1B:00.0", module=fake_pynvml())
    assert s.open() == ""
    assert s._handle == ("pci", b"0000:1B:00.0")
    s.close()


def test_nvml_failing_init_is_a_reason() -> None:
    s = NvmlSampler(0, module=fake_pynvml(init_fails=True)).start()
    assert s.reason == "NVML cannot start: Driver Not Loaded"
    assert s.samples() == () and s.window(0.0, 1e12) == {}


def test_nvml_leaves_out_a_value_it_cannot_read() -> None:
    s = NvmlSampler(0, module=fake_pynvml(power_fails=True))
    s.start()
    s.stop()
    assert not s.reason and "power_w" not in s.samples()[0].values
    assert s.notes == ["NVML cannot read power_w: Not Supported"]


def test_nvml_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # type: ignore[arg-type]
    s = NvmlSampler(0).start()
    assert s.reason == MISSING == "nvidia-ml-py is not installed: pip install 'apple_roofline[power]'"


def test_nvml_through_sys_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml())
    s = sampler_for("cuda", 0, {"pci_bus_id": ""})
    assert isinstance(s, NvmlSampler)
    s.start()
    s.stop()
    assert s.samples()[0].values["power_w"] == 512.0


# -- RAPL --------------------------------------------------------------------


def powercap(tmp: Path, energies: Mapping[str, int], max_range: int = 1000) -> Path:
    root = tmp / "powercap"
    for zone, e in energies.items():
        z = root / zone
        z.mkdir(parents=True)
        (z / "name").write_text("psys\n" if zone == "intel-rapl:9" else f"package-{zone[-1]}\n")
        (z / "energy_uj").write_text(f"{e}\n")
        (z / "max_energy_range_uj").write_text(f"{max_range}\n")
    return root


def cpus(tmp: Path, khz: List[int]) -> Path:
    root = tmp / "cpu"
    for i, f in enumerate(khz):
        d = root / f"cpu{i}" / "cpufreq"
        d.mkdir(parents=True)
        (d / "scaling_cur_freq").write_text(f"{f}\n")
    return root


def test_energy_delta_wraps_around_the_range() -> None:
    assert energy_delta_uj(100, 400, 1000) == 300
    assert energy_delta_uj(900, 100, 1000) == 200


def test_rapl_power_from_energy_deltas_and_clock_from_cpufreq(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pc = powercap(
        tmp_path, {"intel-rapl:0": 900, "intel-rapl:1": 0, "intel-rapl:0:0": 5, "intel-rapl:9": 7}, max_range=1_000_000
    )
    s = RaplSampler(powercap=pc, cpus=cpus(tmp_path, [2_000_000, 3_000_000]))
    times = iter([10.0, 10.5])
    monkeypatch.setattr("apple_roofline.telemetry.rapl.clock", lambda: next(times))
    assert s.open() == ""
    first = s.read()
    assert first == {"cpu_clock_mhz": 2500.0}  # no power before a second reading
    (pc / "intel-rapl:0" / "energy_uj").write_text("100\n")  # wrapped past 1,000,000
    (pc / "intel-rapl:1" / "energy_uj").write_text("20000\n")
    second = s.read()
    # package 0: 1,000,000 - 900 + 100 = 999,200 uJ; package 1: 20,000 uJ; over 0.5 s; psys and subzones left out
    assert second["power_w"] == pytest.approx((999_200 + 20_000) / 1e6 / 0.5)
    assert second["cpu_clock_mhz"] == 2500.0


def test_rapl_unreadable_counters_are_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pc = powercap(tmp_path, {"intel-rapl:0": 1})
    read_text = Path.read_text

    def root_only(self: Path, *a: Any, **k: Any) -> str:  # mode 0400 as Linux 5.10 has it (root reads anything)
        if self.name == "energy_uj":
            raise PermissionError(13, "Permission denied", str(self))
        return read_text(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", root_only)
    s = RaplSampler(powercap=pc, cpus=tmp_path / "nothing").start()
    assert s.reason.startswith("power: RAPL energy counters are not readable (")
    assert "root only since Linux 5.10" in s.reason and "clock: no readable" in s.reason
    assert s.samples() == ()


def test_rapl_without_power_still_samples_the_clock(tmp_path: Path) -> None:
    s = RaplSampler(powercap=tmp_path / "no-powercap", cpus=cpus(tmp_path, [1_500_000]))
    s.start()
    s.stop()
    assert not s.reason and s.notes == [f"power: no RAPL package zone under {tmp_path / 'no-powercap'}"]
    assert s.samples()[0].values == {"cpu_clock_mhz": 1500.0}
    assert s.describe()["notes"] == s.notes


# -- the choice and the runner -----------------------------------------------


def test_sampler_for_each_device() -> None:
    assert isinstance(sampler_for("cuda", 1), NvmlSampler) and sampler_for("cuda", 1).index == 1  # type: ignore[attr-defined]
    assert isinstance(sampler_for("cpu", platform="linux"), RaplSampler)
    win = sampler_for("cpu", platform="win32").start()
    assert isinstance(win, NullSampler) and win.reason == "no clock or power sampler for cpu on win32"
    assert (
        sampler_for("metal", 0, platform="darwin", root=False).name == "ioreport"
    )  # Apple: tests/unit/test_telemetry_apple.py


class Fixed(Sampler):
    name = "fixed"

    def __init__(self) -> None:
        super().__init__()
        self.windows: List[Any] = []
        self._open = True

    def window(self, t0: float, t1: float) -> Dict[str, Any]:
        self.windows.append((t0, t1))
        return {"power_w": 250.0, "power_max_w": 300.0, "sm_clock_mhz": 1980.0, "throttle": "none"}


def test_runner_attaches_the_window_of_the_timed_samples() -> None:
    s = Fixed()
    timing = Timing(4, (1e-3,) * 10, 5, (2.0, 3.0))
    params = measurement_params({"n": 1024}, "counter timestamps", timing, s)
    assert s.windows == [(2.0, 3.0)]
    source = params.pop("effective_clock_source")
    assert params == {
        "n": 1024,
        "timer": "counter timestamps",
        "power_w": 250.0,
        "power_max_w": 300.0,
        "sm_clock_mhz": 1980.0,
        "throttle": "none",
        "effective_clock_mhz": 1980.0,
    }
    assert isinstance(source, str) and source.startswith("reported:")  # the backend measured none: labelled
    # no window, or no sampler: nothing sampled, and the clock's absence said (docs/design/clocks.md, "Clocks")
    for got in (
        measurement_params({"n": 1}, "", Timing(1, (1e-3,), 3), s),
        measurement_params({"n": 1}, "", timing, None),
    ):
        assert got.pop("effective_clock_source").startswith("none:") and got == {"n": 1}
    assert s.windows == [(2.0, 3.0)]
