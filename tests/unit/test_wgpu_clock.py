"""The clock a wgpu kernel's samples ran at (apple_roofline.webgpu.clock.ClockReader): NVML's SM clock
on an NVIDIA adapter (faked here), on a Mac's Metal adapter the run's IOReport sampler's instead, and
"not known" with the reason elsewhere."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from apple_roofline.webgpu import clock as wgpu_clock


class _FakeNvml:
    def __init__(self, device_name: str = "", **_: Any) -> None:
        self.device_name = device_name
        self.closed = False

    def open(self) -> str:
        return "" if self.device_name == "NVIDIA H200" else f"no NVML device named {self.device_name!r}"

    def read(self) -> Dict[str, float]:
        return {"sm_clock_mhz": 1980.0}

    def close(self) -> None:
        self.closed = True


@pytest.fixture(autouse=True)
def _fake_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wgpu_clock, "NvmlSampler", _FakeNvml)


def test_an_nvidia_adapter_reads_nvml_by_name() -> None:
    reader = wgpu_clock.ClockReader({"name": "NVIDIA H200", "vendor_id": "0x10de", "api": "Vulkan"})
    reading = reader.reading()
    assert reading["mhz"] == [1980.0]
    assert reading["method"].startswith("NVML's SM clock of NVIDIA H200")
    reader.close()
    assert reader.reading()["mhz"] == []  # closed: no sampler left to read


def test_an_nvidia_adapter_nvml_cannot_find_says_why() -> None:
    reading = wgpu_clock.ClockReader({"name": "NVIDIA L4", "vendor_id": "4318", "api": "Vulkan"}).reading()
    assert reading["mhz"] == []
    assert reading["method"] == "not known: no NVML device named 'NVIDIA L4'"


def test_a_mac_adapter_leaves_the_clock_to_the_run_sampler() -> None:
    reading = wgpu_clock.ClockReader({"name": "Apple M5", "vendor_id": "0x0", "api": "Metal"}).reading()
    assert reading["mhz"] == []
    assert reading["method"].startswith("not measured:") and "IOReport" in reading["method"]


def test_another_adapter_is_not_known_with_its_name() -> None:
    reading = wgpu_clock.ClockReader({"name": "AMD Radeon 780M", "vendor_id": "0x1002", "api": "Vulkan"}).reading()
    assert reading["mhz"] == []
    assert reading["method"].startswith("not known:") and "Vulkan adapter AMD Radeon 780M" in reading["method"]


def test_an_nvidia_adapter_is_known_by_its_vendor_id_vendor_or_name() -> None:
    from apple_roofline.telemetry.choose import is_nvidia_adapter

    for info in ({"vendor_id": "0x10de"}, {"vendor": "4318"}, {"vendor": "NVIDIA"}, {"name": "NVIDIA H200"}):
        assert is_nvidia_adapter(info), info
    assert not is_nvidia_adapter({"vendor_id": "0x1002", "vendor": "AMD", "name": "AMD Radeon 780M"})
    assert not is_nvidia_adapter({})
