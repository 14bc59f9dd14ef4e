"""Apple silicon's clocks and power (docs/design.md, "Clocks and power"): the ``powermetrics``
plist parser and its subprocess sampler, the IOReport channel arithmetic and its ctypes layer
against a fake library, and the choice between them. Nothing here runs on a Mac: every plist and
channel below is SYNTHETIC, built from the documented formats (keys as asitop reads them, channel
names as macmon matches them), never a recorded measurement."""

from __future__ import annotations

import ctypes
import io
import plistlib
import time
from typing import Any, Dict, List, Optional

import pytest

from apple_roofline.telemetry import NullSampler, NvmlSampler, RaplSampler, sampler_for
from apple_roofline.telemetry.choose import graphics_sampler
from apple_roofline.telemetry.ioreport import (Channel, IOReport, IOReportSampler, channel_values, gpu_clock,
                                               parse_dvfs)
from apple_roofline.telemetry.powermetrics import PowermetricsSampler, parse_plist, split_plists

# -- powermetrics ------------------------------------------------------------

#: SYNTHETIC: one interval as ``powermetrics --samplers gpu_power,cpu_power -f plist`` writes it.
PLIST: Dict[str, Any] = {
    "elapsed_ns": 100_000_000,
    "processor": {"cpu_power": 4321.0, "gpu_power": 12500.0, "ane_power": 0.0, "combined_power": 16821.0,
                  "clusters": [{"name": "E-Cluster", "freq_hz": 1_000_000_000.0, "idle_ratio": 0.9},
                               {"name": "P-Cluster", "freq_hz": 3_000_000_000.0, "idle_ratio": 0.5}]},
    "gpu": {"freq_hz": 1398.0, "idle_ratio": 0.25},
}


def test_parse_plist_power_and_clocks() -> None:
    v = parse_plist(PLIST, "gpu")
    assert v == {"cpu_power_w": pytest.approx(4.321), "gpu_power_w": 12.5, "ane_power_w": 0.0, "power_w": 12.5,
                 "gpu_clock_mhz": 1398.0, "gpu_active_pct": 75.0, "cpu_clock_mhz": 2000.0}
    assert parse_plist(PLIST, "cpu")["power_w"] == pytest.approx(4.321)


def test_parse_plist_older_energy_keys_and_hz() -> None:
    old = {"elapsed_ns": 500_000_000, "processor": {"cpu_energy": 1000, "gpu_energy": 2500},
           "gpu": {"freq_hz": 1_296_000_000.0}}
    v = parse_plist(old, "gpu")
    assert v["cpu_power_w"] == 2.0 and v["gpu_power_w"] == 5.0 and v["power_w"] == 5.0  # mJ over 0.5 s
    assert v["gpu_clock_mhz"] == 1296.0  # a value that can only be Hz
    assert parse_plist({}, "gpu") == {}


def test_split_plists_keeps_the_incomplete_rest() -> None:
    a, b = plistlib.dumps({"x": 1}), plistlib.dumps({"x": 2})
    done, rest = split_plists(a + b"\0" + b[:20])
    assert done == [a] and rest == b[:20]


class FakeProc:
    def __init__(self, out: bytes) -> None:
        self.stdout, self.stderr = io.BufferedReader(io.BytesIO(out)), io.BytesIO(b"")
        self.terminated = False

    def terminate(self) -> None:
        self.terminated = True

    def wait(self, timeout: float = 0) -> int:
        return 0


def test_powermetrics_sampler_reads_the_subprocess() -> None:
    out = b"".join(plistlib.dumps(dict(PLIST, gpu={"freq_hz": f, "idle_ratio": 0.0})) + b"\0" for f in (389.0, 1398.0))
    started: List[List[str]] = []
    procs: List[FakeProc] = []

    def popen(cmd: List[str], **kw: Any) -> FakeProc:
        started.append(cmd)
        procs.append(FakeProc(out))
        return procs[-1]

    s = PowermetricsSampler("gpu", interval_ms=100, popen=popen, is_root=True)
    s.start()
    for _ in range(200):
        if len(s.samples()) == 2 or s.reason:
            break
        time.sleep(0.005)
    assert started == [["powermetrics", "--samplers", "gpu_power,cpu_power", "-f", "plist", "-i", "100"]]
    assert [x.values["gpu_clock_mhz"] for x in s.samples()] == [389.0, 1398.0]
    for _ in range(200):  # the stream ended: the process exited on its own, which is a reason
        if s.reason:
            break
        time.sleep(0.005)
    assert s.reason == "powermetrics exited"
    s.stop()
    assert procs[0].terminated
    d = s.describe()
    assert d["sampler"] == "powermetrics" and d["power_average_s"] == 0.1 and "powermetrics -i 100" in str(d["power_source"])


def test_powermetrics_needs_root() -> None:
    s = PowermetricsSampler(is_root=False, popen=lambda *a, **k: pytest.fail("must not start")).start()
    assert s.reason == "powermetrics needs root (sudo); IOReport is used without it"


def test_powermetrics_garbage_is_a_reason() -> None:
    s = PowermetricsSampler(popen=lambda *a, **k: FakeProc(b"not a plist\0"), is_root=True).start()
    for _ in range(200):
        if s.reason:
            break
        time.sleep(0.005)
    s.stop()
    assert s.reason.startswith("powermetrics output unreadable: ")


# -- IOReport: the arithmetic ------------------------------------------------------

def test_channel_values_energy_and_gpu_residency() -> None:
    states = (("OFF", 500), ("P1", 250), ("P2", 0), ("P3", 250))
    chans = [Channel("Energy Model", "", "GPU Energy", "nJ", 2_000_000_000),
             Channel("Energy Model", "", "DIE_0_CPU Energy", "mJ", 300), Channel("Energy Model", "", "DIE_1_CPU Energy", "mJ", 100),
             Channel("Energy Model", "", "ANE0", "mJ", 50), Channel("Energy Model", "", "DRAM", "mJ", 999),
             Channel("GPU Stats", "GPU Performance States", "GPUPH", states=states)]
    v = channel_values(chans, 0.5, "gpu", [0.0, 400.0, 800.0, 1200.0])
    assert v == {"gpu_power_w": 4.0, "cpu_power_w": pytest.approx(0.8), "ane_power_w": pytest.approx(0.1),
                 "power_w": 4.0, "gpu_clock_mhz": 800.0, "gpu_active_pct": 50.0}
    without_table = channel_values(chans, 0.5, "cpu")
    assert "gpu_clock_mhz" not in without_table and without_table["gpu_active_pct"] == 50.0
    assert without_table["power_w"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="unknown energy unit 'kWh'"):
        channel_values([Channel("Energy Model", "", "GPU Energy", "kWh", 1)], 1.0)


def test_gpu_clock_idle_and_mismatched_table() -> None:
    assert gpu_clock((("OFF", 100),), [0.0, 400.0]) == (None, 0.0)
    assert gpu_clock((("OFF", 0), ("P1", 1), ("P2", 1)), [0.0, 400.0]) == (None, 100.0)  # 2 states, 1 step


def test_parse_dvfs() -> None:
    data = b"".join(int(hz).to_bytes(4, "little") + int(mv).to_bytes(4, "little")
                    for hz, mv in [(0, 0), (396e6, 600), (1398e6, 900)])
    assert parse_dvfs(data) == [0.0, 396.0, 1398.0]


# -- IOReport: the ctypes layer against a fake library -------------------------------

class Fn:
    """A fake C function: calls ``impl``, accepts ``restype``/``argtypes`` as ctypes functions do."""

    def __init__(self, impl: Any) -> None:
        self.impl, self.restype, self.argtypes = impl, None, None

    def __call__(self, *a: Any) -> Any:
        return self.impl(*a)


class FakeLibs:
    """libIOReport and CoreFoundation over Python objects: a ref is an int handle; released refs
    are counted. Each sample holds the energy counter's total and the GPU residencies."""

    def __init__(self, groups: Dict[str, List[Channel]]) -> None:
        self.objs: Dict[int, Any] = {}
        self.released: List[Any] = []
        self.groups = groups
        self.counter = 0
        self.lib = self._ns({
            "IOReportCopyChannelsInGroup": lambda g, s, a, b, c: self.new(("channels", list(self.groups.get(self.objs[g], []))))
            if self.objs[g] in self.groups else None,
            "IOReportMergeChannels": lambda a, b, n: self.objs[a][1].extend(self.objs[b][1]),
            "IOReportCreateSubscription": lambda n, ch, out, a, b: self.new("subscription"),
            "IOReportCreateSamples": self.sample,
            "IOReportCreateSamplesDelta": self.delta,
            "IOReportChannelGetGroup": lambda ch: self.new(self.objs[ch].group),
            "IOReportChannelGetSubGroup": lambda ch: self.new(self.objs[ch].subgroup),
            "IOReportChannelGetChannelName": lambda ch: self.new(self.objs[ch].name),
            "IOReportChannelGetUnitLabel": lambda ch: self.new(self.objs[ch].unit),
            "IOReportSimpleGetIntegerValue": lambda ch, i: self.objs[ch].value,
            "IOReportStateGetCount": lambda ch: len(self.objs[ch].states),
            "IOReportStateGetNameForIndex": lambda ch, k: self.new(self.objs[ch].states[k][0]),
            "IOReportStateGetResidency": lambda ch, k: self.objs[ch].states[k][1],
        })
        self.cf = self._ns({
            "CFStringCreateWithCString": lambda a, b, e: self.new(b.decode()),
            "CFStringGetCString": self.get_cstring,
            "CFDictionaryGetValue": lambda d, k: self.objs[d].get(self.objs[k]),
            "CFDictionaryCreateMutableCopy": lambda a, n, d: self.new(self.objs[d]),
            "CFArrayGetCount": lambda a: len(self.objs[a]),
            "CFArrayGetValueAtIndex": lambda a, i: self.new(self.objs[a][i]),
            "CFDataGetLength": lambda d: 0, "CFDataGetBytePtr": lambda d: 0,
            "CFRelease": lambda r: self.released.append(self.objs[r]),
        })

    @staticmethod
    def _ns(fns: Dict[str, Any]) -> Any:
        class Lib:
            pass
        lib = Lib()
        for k, f in fns.items():
            setattr(lib, k, Fn(f))
        return lib

    def new(self, obj: Any) -> int:
        h = len(self.objs) + 1
        self.objs[h] = obj
        return h

    def get_cstring(self, ref: int, buf: Any, size: int, enc: int) -> bool:
        ctypes.memmove(buf, self.objs[ref].encode() + b"\0", len(self.objs[ref]) + 1)
        return True

    def sample(self, sub: int, channels: int, n: Any) -> int:
        self.counter += 1
        return self.new(("sample", self.counter))

    def delta(self, a: int, b: int, n: Any) -> int:
        steps = self.objs[b][1] - self.objs[a][1]  # one "GPU Energy" joule and 10 ms busy at P1 per sample
        chans = [Channel("Energy Model", "", "GPU Energy", "mJ", 1000 * steps),
                 Channel("Energy Model", "", "CPU Energy", "mJ", 250 * steps),
                 Channel("GPU Stats", "GPU Performance States", "GPUPH", states=(("OFF", 10 * steps), ("P1", 10 * steps)))]
        return self.new({"IOReportChannels": self.new(chans)})


GROUPS = {"Energy Model": [Channel("Energy Model", "", "GPU Energy", "mJ")],
          "GPU Stats": [Channel("GPU Stats", "GPU Performance States", "GPUPH")]}


def test_ioreport_subscribes_merges_and_decodes_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLibs(GROUPS)
    io_ = IOReport(fake.lib, fake.cf)
    assert fake.lib.IOReportCreateSamples.restype is ctypes.c_void_p  # prototypes declared
    sub, channels = io_.subscribe(IOReportSampler.GROUPS)
    assert fake.objs[sub] == "subscription"
    assert [c.name for c in fake.objs[channels][1]] == ["GPU Energy", "GPUPH"]  # merged
    s = IOReportSampler("gpu", library=io_)
    monkeypatch.setattr(io_, "gpu_dvfs_mhz", lambda: [0.0, 444.0])
    times = iter([10.0, 10.5, 11.0])
    monkeypatch.setattr("apple_roofline.telemetry.ioreport.clock", lambda: next(times))
    assert s.open() == "" and s.notes == []
    s._open = True
    assert s.read() == {}  # the first sample has nothing before it
    v = s.read()
    assert v == {"gpu_power_w": 2.0, "cpu_power_w": 0.5, "power_w": 2.0, "gpu_clock_mhz": 444.0, "gpu_active_pct": 50.0}
    s.close()
    assert ("sample", 2) in fake.released and "subscription" in fake.released  # nothing leaks


def test_ioreport_without_channels_or_library_is_a_reason() -> None:
    fake = FakeLibs({})
    s = IOReportSampler(library=IOReport(fake.lib, fake.cf)).start()
    assert s.reason == "IOReport cannot subscribe: IOReport has no channel in Energy Model, GPU Stats"
    here = IOReportSampler().start()  # this machine has no libIOReport: importing worked, opening says why
    assert here.reason.startswith("IOReport is not available: ")


# -- the choice ------------------------------------------------------------------

def test_apple_choice_says_which() -> None:
    assert isinstance(sampler_for("metal", 0, platform="darwin", root=True), PowermetricsSampler)
    gpu = sampler_for("metal", 0, platform="darwin", root=False)
    assert isinstance(gpu, IOReportSampler) and gpu.target == "gpu"
    cpu = sampler_for("cpu", platform="darwin", root=False)
    assert isinstance(cpu, IOReportSampler) and cpu.target == "cpu"
    assert isinstance(sampler_for("metal", 0, platform="linux"), NullSampler)


def test_graphics_sampler_per_adapter() -> None:
    assert isinstance(graphics_sampler("metal", {"name": "Apple M5"}, root=False), IOReportSampler)
    nv = graphics_sampler("wgpu", {"name": "NVIDIA H100 80GB HBM3", "vendor": "4318"}, platform="linux")
    assert isinstance(nv, NvmlSampler) and nv.device_name == "NVIDIA H100 80GB HBM3"
    assert isinstance(graphics_sampler("wgpu", {"name": "llvmpipe", "adapter_type": "CPU"}, platform="linux"),
                      RaplSampler)
    other = graphics_sampler("wgpu", {"name": "Radeon", "vendor": "4098"}, platform="linux").start()
    assert other.reason == "no clock or power sampler for the wgpu adapter Radeon on linux"
