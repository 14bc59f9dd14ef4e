"""Apple silicon's clocks and power (docs/design/power.md, "Clocks and power"): the ``powermetrics``
plist parser and its subprocess sampler, the IOReport channel arithmetic and its ctypes layer
against a fake library, and the choice between them. Nothing here runs on a Mac: every plist and
channel below is SYNTHETIC, built from the documented formats (keys as asitop reads them, channel
names as macmon matches them), never a recorded measurement."""

from __future__ import annotations

import ctypes
import io
import plistlib
import subprocess
import time
from typing import Any, Dict, List, Optional

import pytest

from apple_roofline.telemetry import NullSampler, NvmlSampler, RaplSampler, sampler_for
from apple_roofline.telemetry.choose import graphics_sampler
from apple_roofline.telemetry.dvfs import (
    GPU_KEYS,
    acc_cluster_keys,
    active_states,
    choose_table,
    cpu_cluster_kind,
    cpu_keys,
    parse_dvfs,
    residency_clock,
)
from apple_roofline.telemetry.ioreport import Channel, IOReport, IOReportSampler, channel_values, wanted
from apple_roofline.telemetry.powermetrics import PowermetricsSampler, parse_plist, split_plists
from apple_roofline.telemetry.window import Sample, summarize

# -- powermetrics ------------------------------------------------------------

#: SYNTHETIC: one interval as ``powermetrics --samplers gpu_power,cpu_power -f plist`` writes it.
PLIST: Dict[str, Any] = {
    "elapsed_ns": 100_000_000,
    "processor": {
        "cpu_power": 4321.0,
        "gpu_power": 12500.0,
        "ane_power": 0.0,
        "combined_power": 16821.0,
        "clusters": [
            {"name": "E-Cluster", "freq_hz": 1_000_000_000.0, "idle_ratio": 0.9},
            {"name": "P-Cluster", "freq_hz": 3_000_000_000.0, "idle_ratio": 0.5},
        ],
    },
    "gpu": {"freq_hz": 1398.0, "idle_ratio": 0.25},
}


def test_parse_plist_power_and_clocks() -> None:
    power = {"interval_s": 0.1, "cpu_power_w": 4.321, "gpu_power_w": 12.5, "ane_power_w": 0.0}
    assert parse_plist(PLIST, "gpu") == pytest.approx(
        dict(power, power_w=12.5, gpu_clock_mhz=1398.0, gpu_busy_s=0.075, gpu_active_pct=75.0)
    )
    # the CPU clock weights each cluster by its busy time: E 10 % busy at 1000, P 50 % at 3000 MHz
    # (the plain mean over clusters would say 2000); each reading has the measured part's clock only
    assert parse_plist(PLIST, "cpu") == pytest.approx(
        dict(
            power,
            power_w=4.321,
            **{
                "cpu_cluster_mhz.E-Cluster": 1000.0,
                "cpu_cluster_busy_s.E-Cluster": 0.01,
                "cpu_cluster_mhz.P-Cluster": 3000.0,
                "cpu_cluster_busy_s.P-Cluster": 0.05,
            },
            cpu_clock_mhz=(1000 * 0.1 + 3000 * 0.5) / 0.6,
            cpu_busy_s=0.06,
        )
    )
    idle = dict(
        PLIST,
        processor={"clusters": [{"name": "E", "freq_hz": 6e8, "idle_ratio": 1.0}]},
        gpu={"freq_hz": 389.0, "idle_ratio": 1.0},
    )
    assert "cpu_clock_mhz" not in parse_plist(idle, "cpu") and "gpu_clock_mhz" not in parse_plist(idle)  # never busy


def test_powermetrics_window_per_cluster() -> None:
    """SYNTHETIC sequence: two plists, the second with both clusters busier; the window's CPU clock
    and each cluster's are weighted by busy time, power by interval."""
    s = PowermetricsSampler("cpu", interval_ms=100, is_root=True)
    s._open = True
    a = parse_plist(PLIST, "cpu")
    b = parse_plist(
        dict(
            PLIST,
            elapsed_ns=300_000_000,
            processor=dict(
                PLIST["processor"],
                cpu_power=1000.0,
                clusters=[
                    {"name": "E-Cluster", "freq_hz": 2e9, "idle_ratio": 0.9},
                    {"name": "P-Cluster", "freq_hz": 4e9, "idle_ratio": 0.0},
                ],
            ),
        ),
        "cpu",
    )
    s.add(a, 1.0)
    s.add(b, 1.3)
    w = s.window(0.85, 1.3)  # both plists' intervals lie inside
    # E: 0.01 s at 1000 and 0.03 s at 2000 -> 1750; P: 0.05 s at 3000 and 0.3 s at 4000 -> 3857
    assert w["cpu_cluster_clocks"] == "E-Cluster 1750 MHz, P-Cluster 3857 MHz"
    assert w["cpu_clock_mhz"] == round((10 + 150 + 60 + 1200) / 0.39, 1)
    assert w["power_w"] == round((4.321 * 0.1 + 1.0 * 0.3) / 0.4, 1)  # J over s
    assert not any(k.endswith("_s") or k.startswith("cpu_cluster_mhz") for k in w)  # weights are no parameters


def test_parse_plist_older_energy_keys_and_hz() -> None:
    old = {
        "elapsed_ns": 500_000_000,
        "processor": {"cpu_energy": 1000, "gpu_energy": 2500},
        "gpu": {"freq_hz": 1_296_000_000.0},
    }
    v = parse_plist(old, "gpu")
    assert v["cpu_power_w"] == 2.0 and v["gpu_power_w"] == 5.0 and v["power_w"] == 5.0  # mJ over 0.5 s
    assert v["interval_s"] == 0.5
    assert v["gpu_clock_mhz"] == 1296.0  # a value that can only be Hz
    assert parse_plist({}, "gpu") == {}


def test_split_plists_keeps_the_incomplete_rest() -> None:
    a, b = plistlib.dumps({"x": 1}), plistlib.dumps({"x": 2})
    done, rest = split_plists(a + b"\0" + b[:20])
    assert done == [a] and rest == b[:20]


class FakeProc:
    def __init__(self, out: bytes) -> None:
        self.stdout = io.BufferedReader(io.BytesIO(out))
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
        # stderr goes to a file, never an unread pipe that would fill and block powermetrics
        assert kw["stdout"] is subprocess.PIPE and kw["stderr"] not in (subprocess.PIPE, None)
        kw["stderr"].write(b"powermetrics: a warning\n")
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
    assert s.reason == "powermetrics exited: powermetrics: a warning"  # read back from the file
    s.stop()
    assert procs[0].terminated
    d = s.describe()
    assert (
        d["sampler"] == "powermetrics"
        and d["power_average_s"] == 0.1
        and "powermetrics -i 100" in str(d["power_source"])
    )


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


def dvfs_bytes(hz: List[float]) -> bytes:
    """A ``voltage-states`` property: (frequency, voltage) little-endian uint32 pairs."""
    return b"".join(int(f).to_bytes(4, "little") + (700 + i).to_bytes(4, "little") for i, f in enumerate(hz))


def test_channel_values_energy_and_gpu_residency() -> None:
    states = (("OFF", 500), ("P1", 250), ("P2", 0), ("P3", 250))
    chans = [
        Channel("Energy Model", "", "GPU Energy", "nJ", 2_000_000_000),
        Channel("Energy Model", "", "DIE_0_CPU Energy", "mJ", 300),
        Channel("Energy Model", "", "DIE_1_CPU Energy", "mJ", 100),
        Channel("Energy Model", "", "ANE0", "mJ", 50),
        Channel("Energy Model", "", "DRAM", "mJ", 999),
        Channel("GPU Stats", "GPU Performance States", "GPUPH", states=states),
    ]
    v, notes = channel_values(chans, 0.5, "gpu", [400.0, 800.0, 1200.0])
    assert notes == []
    assert v == pytest.approx(
        {
            "interval_s": 0.5,
            "gpu_power_w": 4.0,
            "cpu_power_w": 0.8,
            "ane_power_w": 0.1,
            "power_w": 4.0,
            "gpu_clock_mhz": 800.0,
            "gpu_busy_s": 0.25,
            "gpu_active_pct": 50.0,
        }
    )
    without_table, _ = channel_values(chans, 0.5, "cpu")
    assert "gpu_clock_mhz" not in without_table and without_table["gpu_active_pct"] == 50.0
    assert without_table["power_w"] == pytest.approx(0.8)


def test_unknown_energy_unit_skips_that_channel_only() -> None:
    chans = [
        Channel("Energy Model", "", "GPU Energy", "kWh", 1),
        Channel("Energy Model", "", "CPU Energy", "mJ", 500),
        Channel("GPU Stats", "GPU Performance States", "GPUPH", states=(("OFF", 1), ("P1", 1))),
    ]
    v, notes = channel_values(chans, 1.0, "gpu", [600.0])
    assert notes == ["channel 'GPU Energy' skipped: unknown energy unit 'kWh'"]
    assert "gpu_power_w" not in v and "power_w" not in v  # the target's power is unknown, never guessed
    assert v["cpu_power_w"] == 0.5 and v["gpu_clock_mhz"] == 600.0  # the rest still reads


def test_residency_clock_pairs_the_first_states_on_a_count_mismatch() -> None:
    # SYNTHETIC: the GPU lists 4 active states, the table has 3 steps: pair the first 3; the 4th ran, so say so
    states = (("OFF", 100), ("P1", 100), ("P2", 100), ("P3", 100), ("P4", 100))
    r = residency_clock(states, [400.0, 800.0, 1200.0])
    assert r.mhz == pytest.approx(800.0) and r.busy == pytest.approx(0.8)  # the 4th's time counts as busy
    assert r.note == (
        "4 active states for 3 DVFS steps: 25.0 % of the active time was in states beyond the table "
        "(P4 on), left out of the clock"
    )
    fewer = residency_clock((("OFF", 100), ("P1", 100)), [400.0, 800.0])  # fewer states than steps: a guess, said
    assert fewer.mhz == 400.0 and fewer.note == "1 active states for 2 DVFS steps: the first 1 paired"
    assert residency_clock((("OFF", 100),), [400.0]).mhz is None  # never active: no clock
    assert residency_clock((("IDLE", 0),), [400.0]).busy is None  # no time passed
    exact = residency_clock((("IDLE", 3), ("V0", 1), ("V1", 3)), [600.0, 1000.0])
    assert exact.mhz == pytest.approx(900.0) and exact.note == ""


def test_parse_dvfs_units() -> None:
    assert parse_dvfs(dvfs_bytes([0, 396e6, 1398e6])) == [0.0, 396.0, 1398.0]  # the GPU's: Hz
    assert parse_dvfs(dvfs_bytes([600e6, 3204e6]), hz=None) == [600.0, 3204.0]  # M1-M3 CPU: Hz
    assert parse_dvfs(dvfs_bytes([1020e3, 4512e3]), hz=None) == [1020.0, 4512.0]  # M4+ CPU: kHz


#: SYNTHETIC pmgr tables in an M5-style layout (the key numbers are invented; the shapes are what the
#: checks look for): ``voltage-states9`` no longer holds the GPU's table (a CPU-like table that does
#: not start at the off state's 0), a 0-led table of the wrong length sits under ``voltage-states2``,
#: and the GPU's — 0, then 6 rising steps — under ``voltage-states11``.
M5_TABLES = {
    "voltage-states9": [912.0, 1284.0, 1752.0, 2100.0],
    "voltage-states2": [0.0, 500.0, 900.0],
    "voltage-states11": [0.0, 338.0, 618.0, 796.0, 924.0, 952.0, 1470.0],
    "voltage-states13": [0.0, 7.0, 12.0],
}


def test_choose_gpu_table_in_an_m5_layout() -> None:
    key, freqs, note = choose_table(M5_TABLES, ("voltage-states9",), 6, gpu=True)
    assert key == "voltage-states11" and freqs[1:] == [338.0, 618.0, 796.0, 924.0, 952.0, 1470.0]
    assert note == "voltage-states11 used: the expected voltage-states9 starts at 912 MHz, not 0 (the off state)"
    # the expected key, where it fits, is taken without a note
    assert choose_table({**M5_TABLES, "voltage-states9": [0.0, 400.0, 800.0]}, ("voltage-states9",), 2, gpu=True) == (
        "voltage-states9",
        [0.0, 400.0, 800.0],
        "",
    )
    # no table has 8 steps: the well-formed one nearest in length, its first steps paired, and said
    key, freqs, note = choose_table(M5_TABLES, ("voltage-states9",), 8, gpu=True)
    assert (
        key == "voltage-states11" and "the first steps are paired" in note and "has 6 steps for 8 active states" in note
    )
    # none well-formed: no table and the reasons
    key, freqs, note = choose_table({"voltage-states9": [912.0, 1284.0]}, ("voltage-states9",), 2, gpu=True)
    assert (key, freqs) == (
        "",
        [],
    ) and note == "no pmgr table fits (voltage-states9 starts at 912 MHz, not 0 (the off state))"
    assert "has steps outside 100-3000 MHz" in choose_table({"voltage-states13": [0.0, 7.0]}, (), 1, gpu=True)[2]
    assert "does not rise" in choose_table({"voltage-states3": [0.0, 900.0, 500.0]}, (), 2, gpu=True)[2]


def test_choose_cpu_table_by_cluster_and_length() -> None:
    tables = {
        "voltage-states1-sram": [600.0, 972.0, 1332.0],
        "voltage-states5-sram": [660.0, 1500.0, 2500.0, 3500.0],
        "voltage-states7-sram": [800.0, 1600.0, 2400.0, 3200.0, 4100.0],
    }
    assert choose_table(tables, ("voltage-states5-sram",), 4, gpu=False)[:2] == (
        "voltage-states5-sram",
        tables["voltage-states5-sram"],
    )
    key, _f, note = choose_table(tables, (), 5, gpu=False)  # an M5 super cluster: no documented key
    assert key == "voltage-states7-sram" and note == "voltage-states7-sram used: no expected key (none known) present"
    assert [cpu_cluster_kind(n) for n in ("ECPU", "PCPU1", "DIE_1_PCPU", "MCPU0", "GPUPH")] == ["E", "P", "P", "E", ""]


#: An M5 Max's pmgr ``acc-clusters`` bytes, as macmon's own test holds them (vladkens/macmon,
#: src_lib/sources.rs, ``parse_acc_clusters_values``): (table number, tier) per cluster.
M5_MAX_ACC = bytes([0x16, 0, 0, 0, 0, 0, 0, 0, 0x17, 1, 0, 0, 0, 0, 0, 0, 0x05, 2, 0, 0, 0, 0, 0, 0])


def test_acc_clusters_name_the_m5_cpu_tables() -> None:
    assert acc_cluster_keys(M5_MAX_ACC) == {"P": "voltage-states5-sram", "E": "voltage-states23-sram"}
    assert acc_cluster_keys(b"") == {} and acc_cluster_keys(bytes(8)) == {}  # one cluster names no pair
    # the M1-M4 keys first, then the one acc-clusters names (macmon's fallback order)
    assert cpu_keys("E", M5_MAX_ACC) == ("voltage-states1-sram", "voltage-states1", "voltage-states23-sram")
    assert cpu_keys("P", M5_MAX_ACC) == ("voltage-states5-sram", "voltage-states5")  # already there
    assert cpu_keys("", M5_MAX_ACC) == () and cpu_keys("E") == ("voltage-states1-sram", "voltage-states1")


# -- the GPU's table on the M1 and M2: published channel and pmgr tables -------------------------

#: The GPU's performance states as IOReport lists them on the M1 and M2: OFF, then P1..P15, whatever
#: the number of DVFS steps (lablup/all-smi, https://github.com/lablup/all-smi/pull/317, an M1 Ultra:
#: ``channel="GPUPH" states: OFF, P1, P2, P3, ... P15``; an M1 Pro's GPUPH also runs to P15 in
#: https://github.com/op06072/NeoAsitop/issues/2).
GPUPH_STATES = ("OFF",) + tuple(f"P{i}" for i in range(1, 16))
#: M2 Ultra (Mac14,14): ``macmon debug``'s pmgr tables in Hz, https://github.com/vladkens/macmon/issues/68
#: (voltage-states9, -sram, 8 and 5-sram) and https://github.com/vladkens/macmon/issues/17
#: (voltage-states1-sram); plus a SYNTHETIC 0-led 16-entry table, the shape the old exact-length
#: rule would have taken for 15 active states.
M2_ULTRA_PMGR_HZ = {
    "voltage-states9": [0, 444e6, 612e6, 808e6, 968e6, 1110e6, 1236e6, 1338e6, 1398e6],
    "voltage-states9-sram": [0, 444e6, 612e6, 808e6, 968e6, 1110e6, 1236e6, 1338e6, 1398e6],
    "voltage-states8": [600e6, 852e6, 1104e6, 1356e6, 1596e6, 1848e6, 2100e6],
    "voltage-states1-sram": [912e6, 1284e6, 1752e6, 2004e6, 2256e6, 2424e6],
    "voltage-states5-sram": [
        702e6,
        948e6,
        1188e6,
        1452e6,
        1704e6,
        1968e6,
        2208e6,
        2400e6,
        2568e6,
        2724e6,
        2868e6,
        3000e6,
        3132e6,
        3264e6,
        3360e6,
        3408e6,
        3504e6,
    ],
    "voltage-states20": [0] + [f * 1e6 for f in range(150, 1650, 100)],  # SYNTHETIC decoy
}
#: M1 Pro (14-core GPU): its six GPU steps as powermetrics prints them (MHz, rounded), from
#: https://github.com/philipturner/applegpuinfo/issues/7, as a voltage-states9 with the off entry.
M1_PRO_PMGR_HZ = {"voltage-states9": [0, 389e6, 486e6, 648e6, 778e6, 972e6, 1296e6]}


def _gpu_clock(pmgr_hz: Dict[str, List[float]], residency: Dict[str, int]) -> Any:
    """The pipeline of IOReportSampler.steps_for and channel_values on one GPUPH delta."""
    tables = {k: parse_dvfs(dvfs_bytes(v)) for k, v in pmgr_hz.items()}
    states = tuple((n, residency.get(n, 0)) for n in GPUPH_STATES)
    key, freqs, note = choose_table(tables, GPU_KEYS, len(active_states(states)), gpu=True)
    v, notes = channel_values(
        [Channel("GPU Stats", "GPU Performance States", "GPUPH", states=states)], 1.0, "gpu", freqs[1:]
    )
    return key, note, v, notes


@pytest.mark.parametrize(
    "pmgr,residency,mhz",
    [
        # M2 Ultra: 1/5 of the active time at 444 MHz (P1), 4/5 at 1398 MHz (P8, the top step)
        (M2_ULTRA_PMGR_HZ, {"OFF": 500, "P1": 100, "P8": 400}, (444 * 100 + 1398 * 400) / 500),
        # M1 Pro: 1/4 at 389 MHz (P1), 3/4 at 1296 MHz (P6, the top step)
        (M1_PRO_PMGR_HZ, {"OFF": 400, "P1": 100, "P6": 300}, (389 * 100 + 1296 * 300) / 400),
    ],
    ids=["M2 Ultra", "M1 Pro"],
)
def test_the_gpu_table_pairs_gpuph_states_in_order_without_a_note(
    pmgr: Dict[str, List[float]], residency: Dict[str, int], mhz: float
) -> None:
    """15 active states for 6 or 8 steps: voltage-states9 is taken (not the decoy whose length
    matches), P1.. pair with its steps in order, and nothing is noted."""
    key, note, v, notes = _gpu_clock(pmgr, residency)
    assert (key, note, notes) == ("voltage-states9", "", [])
    assert v["gpu_clock_mhz"] == pytest.approx(mhz)
    assert v["gpu_active_pct"] == pytest.approx(
        100 * (sum(residency.values()) - residency["OFF"]) / sum(residency.values())
    )


def test_time_in_a_gpu_state_beyond_the_table_is_noted() -> None:
    _key, note, v, notes = _gpu_clock(M1_PRO_PMGR_HZ, {"OFF": 100, "P6": 300, "P9": 100})
    assert note == "" and v["gpu_clock_mhz"] == pytest.approx(1296.0)  # P9 has no frequency: left out of the clock
    assert notes == [
        "GPU clock: 15 active states for 6 DVFS steps: 25.0 % of the active time was in states beyond "
        "the table (P7 on), left out of the clock"
    ]


def test_window_power_is_joules_over_seconds_and_max_from_full_periods() -> None:
    """SYNTHETIC IOReport-like readings with unequal intervals: three 50-ms readings and the 1-ms
    one taken at the window's end, whose quotient is noise (a 1 mJ quantum over 1 ms)."""
    samples = [
        Sample(0.00, {"interval_s": 0.05, "power_w": 10.0}),
        Sample(0.05, {"interval_s": 0.05, "power_w": 10.0}),
        Sample(0.10, {"interval_s": 0.05, "power_w": 12.0}),
        Sample(0.101, {"interval_s": 0.001, "power_w": 40.0}),
    ]
    w = summarize(samples, 0.01, 0.1005, lambda k, b: [], period_s=0.05)
    assert w["power_w"] == round((10.0 * 0.05 + 12.0 * 0.05 + 40.0 * 0.001) / 0.101, 1)  # 11.3, not the mean 20.7
    assert w["power_max_w"] == 12.0  # the 1-ms reading is no full period
    nvml_like = [Sample(0.05, {"power_w": 10.0}), Sample(0.1, {"power_w": 30.0})]  # no intervals: plain mean, max
    assert summarize(nvml_like, 0.0, 0.1, lambda k, b: [], period_s=0.02) == {"power_w": 20.0, "power_max_w": 30.0}


# -- IOReport: the ctypes layer against a fake library -------------------------------


class Fn:
    """A fake C function: calls ``impl``, accepts ``restype``/``argtypes`` as ctypes functions do."""

    def __init__(self, impl: Any) -> None:
        self.impl, self.restype, self.argtypes = impl, None, None

    def __call__(self, *a: Any) -> Any:
        return self.impl(*a)


def _ns(fns: Dict[str, Any]) -> Any:
    class Lib:
        pass

    lib = Lib()
    for k, f in fns.items():
        setattr(lib, k, Fn(f))
    return lib


class FakeLibs:
    """libIOReport, CoreFoundation and IOKit over Python objects: a ref is an int handle; released
    refs are recorded. ``groups`` are the channels each group lists; a delta holds, per sample
    elapsed and subscribed, one joule of GPU energy, 0.25 J of CPU energy, 10 units at OFF and 10 at the first
    GPU state, and the CPU clusters' residencies. ``pmgr`` are the IORegistry tables (key -> bytes)."""

    def __init__(self, groups: Dict[str, List[Channel]], pmgr: Optional[Dict[str, bytes]] = None) -> None:
        self.objs: Dict[int, Any] = {}
        self.released: List[Any] = []
        self.groups = groups
        self.pmgr = pmgr or {}
        self.buffers: List[Any] = []
        self.counter = 0
        self.subscribed: List[Channel] = []
        self.lib = _ns(
            {
                "IOReportCopyChannelsInGroup": self.copy_group,
                "IOReportMergeChannels": lambda a, b, n: self.objs[self.objs[a]["IOReportChannels"]].extend(
                    self.objs[self.objs[b]["IOReportChannels"]]
                ),
                "IOReportCreateSubscription": self.subscribe,
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
            }
        )
        self.cf = _ns(
            {
                "CFStringCreateWithCString": lambda a, b, e: self.new(b.decode()),
                "CFStringGetCString": self.get_cstring,
                "CFDictionaryGetValue": lambda d, k: self.objs[d].get(self.objs[k]),
                "CFDictionarySetValue": lambda d, k, v: self.objs[d].__setitem__(self.objs[k], v),
                "CFDictionaryCreateMutableCopy": lambda a, n, d: self.new(dict(self.objs[d])),
                "CFArrayGetCount": lambda a: len(self.objs[a]),
                "CFArrayGetValueAtIndex": lambda a, i: self.new(self.objs[a][i]),
                "CFArrayCreateMutableCopy": lambda a, n, arr: self.new(list(self.objs[arr])),
                "CFArrayRemoveValueAtIndex": lambda a, i: self.objs[a].pop(i),
                "CFDataGetLength": lambda d: len(self.objs[d]),
                "CFDataGetBytePtr": self.byte_ptr,
                "CFRelease": lambda r: self.released.append(self.objs[r]),
            }
        )
        self.iokit = _ns(
            {
                "IOServiceMatching": lambda name: self.new(name),
                "IOServiceGetMatchingServices": self.services,
                "IOIteratorNext": lambda it: self.objs[it].pop(0) if self.objs[it] else 0,
                "IORegistryEntryGetName": lambda e, buf: ctypes.memmove(
                    buf, self.objs[e] + b"\0", len(self.objs[e]) + 1
                ),
                "IORegistryEntryCreateCFProperty": lambda e, key, a, o: (
                    self.new(self.pmgr[self.objs[key]])
                    if self.objs[e] == b"pmgr" and self.objs[key] in self.pmgr
                    else None
                ),
                "IOObjectRelease": lambda r: 0,
            }
        )

    def new(self, obj: Any) -> int:
        h = len(self.objs) + 1
        self.objs[h] = obj
        return h

    def copy_group(self, g: int, s: Optional[int], a: int, b: int, c: int) -> Optional[int]:
        if self.objs[g] not in self.groups:
            return None
        return self.new({"IOReportChannels": self.new(list(self.groups[self.objs[g]]))})

    def subscribe(self, n: Any, channels: int, out: Any, a: int, b: Any) -> int:
        self.subscribed = list(self.objs[self.objs[channels]["IOReportChannels"]])
        out._obj.value = self.new("subscribed dictionary")
        return self.new("subscription")

    def services(self, port: int, matching: int, out: Any) -> int:
        out._obj.value = self.new([self.new(b"clpc"), self.new(b"pmgr")])
        return 0

    def byte_ptr(self, d: int) -> int:
        buf = ctypes.create_string_buffer(self.objs[d], len(self.objs[d]))
        self.buffers.append(buf)
        return ctypes.addressof(buf)

    def get_cstring(self, ref: int, buf: Any, size: int, enc: int) -> bool:
        ctypes.memmove(buf, self.objs[ref].encode() + b"\0", len(self.objs[ref]) + 1)
        return True

    def sample(self, sub: int, channels: int, n: Any) -> int:
        self.counter += 1
        return self.new(("sample", self.counter))

    def delta(self, a: int, b: int, n: Any) -> int:
        steps = self.objs[b][1] - self.objs[a][1]
        chans = [
            Channel("Energy Model", "", "GPU Energy", "mJ", 1000 * steps),
            Channel("Energy Model", "", "CPU Energy", "mJ", 250 * steps),
            Channel("GPU Stats", "GPU Performance States", "GPUPH", states=(("OFF", 10 * steps), ("P1", 10 * steps))),
            Channel(
                "CPU Stats",
                "CPU Complex Performance States",
                "ECPU",
                states=(("IDLE", 30 * steps), ("V0P5", 10 * steps), ("V1P0", 0)),
            ),
            Channel(
                "CPU Stats",
                "CPU Complex Performance States",
                "PCPU",
                states=(("IDLE", 0), ("DOWN", 0), ("V0P6", 10 * steps), ("V1P1", 30 * steps)),
            ),
        ]
        names = {c.name for c in self.subscribed}  # a delta holds the subscribed channels
        return self.new({"IOReportChannels": self.new([c for c in chans if c.name in names])})


GROUPS = {
    "Energy Model": [
        Channel("Energy Model", "", "GPU Energy", "mJ"),
        Channel("Energy Model", "", "DRAM", "mJ"),
        Channel("Energy Model", "", "CPU Energy", "mJ"),
    ],
    "GPU Stats": [
        Channel("GPU Stats", "GPU Performance States", "GPUPH"),
        Channel("GPU Stats", "GPU Performance States", "GPU_SRAM"),
    ],
    "CPU Stats": [
        Channel("CPU Stats", "CPU Complex Performance States", "ECPU"),
        Channel("CPU Stats", "CPU Complex Performance States", "PCPU"),
    ],
}
#: SYNTHETIC pmgr tables: the GPU's (entry 0 the off state, in Hz) and the clusters' (kHz, as from the M4 on).
PMGR = {
    "voltage-states9": dvfs_bytes([0, 444e6]),
    "voltage-states1-sram": dvfs_bytes([1020e3, 2000e3]),
    "voltage-states5-sram": dvfs_bytes([1200e3, 4000e3]),
}


def test_ioreport_subscribes_only_the_channels_read_and_decodes_deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLibs(GROUPS, PMGR)
    io_ = IOReport(fake.lib, fake.cf, fake.iokit)
    assert fake.lib.IOReportCreateSamples.restype is ctypes.c_void_p  # prototypes declared
    sub, channels, subscribed = io_.subscribe(IOReportSampler.GROUPS[:2], wanted("gpu"))
    assert fake.objs[sub] == "subscription" and fake.objs[subscribed] == "subscribed dictionary"
    assert [c.name for c in fake.subscribed] == ["GPU Energy", "CPU Energy", "GPUPH"]  # merged, DRAM and SRAM dropped
    assert io_.pmgr_tables() == PMGR
    s = IOReportSampler("gpu", library=io_)
    # each reading's stamp is the midpoint of the two clock reads around IOReportCreateSamples
    times = iter([10.0, 10.25, 10.5, 10.75])  # binary fractions: exact midpoints
    monkeypatch.setattr("apple_roofline.telemetry.ioreport.clock", lambda: next(times))
    assert s.open() == "" and s.notes == []
    s._open = True
    assert s.read_stamped() == (10.125, {})  # the first sample has nothing before it
    t, v = s.read_stamped()
    assert t == 10.625
    assert v == pytest.approx(
        {
            "interval_s": 0.5,
            "gpu_power_w": 2.0,
            "cpu_power_w": 0.5,
            "power_w": 2.0,
            "gpu_clock_mhz": 444.0,
            "gpu_busy_s": 0.25,
            "gpu_active_pct": 50.0,
        }
    )
    s.close()
    for ref in (("sample", 2), "subscription", "subscribed dictionary"):
        assert ref in fake.released  # nothing leaks
    assert any(isinstance(r, dict) and "IOReportChannels" in r for r in fake.released)  # the channel dictionary


def test_ioreport_cpu_clusters_give_the_cpu_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU target subscribes the clusters' performance states, not the GPU's; each cluster's
    clock is its residency-weighted mean, the CPU's the clusters' weighted by busy time, over a
    reading and over a window."""
    fake = FakeLibs(GROUPS, PMGR)
    s = IOReportSampler("cpu", library=IOReport(fake.lib, fake.cf, fake.iokit), period_s=0.05)
    assert s.open() == ""
    assert [c.name for c in fake.subscribed] == ["GPU Energy", "CPU Energy", "ECPU", "PCPU"]
    s._open = True
    s.poll()
    s.poll()
    (first, second) = s.samples()
    v = second.values
    dt = v["interval_s"]
    # ECPU: 25 % busy, all at 1020 MHz; PCPU: 100 % busy, 1/4 at 1200 and 3/4 at 4000 MHz
    assert v["cpu_cluster_mhz.ECPU"] == pytest.approx(1020.0) and v["cpu_cluster_busy_s.ECPU"] == pytest.approx(
        0.25 * dt
    )
    assert v["cpu_cluster_mhz.PCPU"] == pytest.approx(3300.0) and v["cpu_cluster_busy_s.PCPU"] == pytest.approx(dt)
    assert v["cpu_clock_mhz"] == pytest.approx((1020 * 0.25 + 3300) / 1.25)
    assert "gpu_clock_mhz" not in v and "gpu_active_pct" not in v
    w = s.window(first.t, second.t)
    assert w["cpu_clock_mhz"] == pytest.approx(2844.0)
    assert w["cpu_cluster_clocks"] == "ECPU 1020 MHz, PCPU 3300 MHz"
    s.stop()


def test_ioreport_table_problems_are_notes_not_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    """SYNTHETIC M5-style layouts: the GPU's table found under another key; the E cluster's expected
    table one step too long and the P cluster's absent, so the table whose length fits is used;
    then a count mismatch no table resolves: the first steps paired. Each said once in the notes;
    power reads throughout."""
    pmgr = {
        "voltage-states9": dvfs_bytes([912e6, 1284e6]),
        "voltage-states11": dvfs_bytes([0, 444e6]),
        "voltage-states1-sram": dvfs_bytes([1020e3, 1500e3, 2000e3]),
    }
    fake = FakeLibs(GROUPS, pmgr)
    gpu = IOReportSampler("gpu", library=IOReport(fake.lib, fake.cf, fake.iokit))
    assert gpu.open() == ""
    gpu._open = True
    gpu.read()
    assert gpu.read()["gpu_clock_mhz"] == 444.0
    assert gpu.notes == [
        "GPU clock: voltage-states11 used: the expected voltage-states9 starts at 912 MHz, not 0 (the off state)"
    ]
    s = IOReportSampler("cpu", library=IOReport(fake.lib, fake.cf, fake.iokit))
    assert s.open() == ""
    s._open = True
    s.read()
    v = s.read()
    s.read()
    assert v["power_w"] > 0
    assert v["cpu_cluster_mhz.ECPU"] == 912.0  # all its time in its first state
    assert v["cpu_cluster_mhz.PCPU"] == pytest.approx((912 + 3 * 1284) / 4)
    assert s.notes == [
        "CPU cluster ECPU clock: voltage-states9 used: the expected voltage-states1-sram has 3 steps "
        "for 2 active states",
        "CPU cluster PCPU clock: voltage-states9 used: no expected key (voltage-states5-sram/voltage-states5) present",
    ]
    mismatch = FakeLibs(
        GROUPS, {"voltage-states9": dvfs_bytes([0, 444e6]), "voltage-states1-sram": dvfs_bytes([1020e3])}
    )
    s = IOReportSampler("cpu", library=IOReport(mismatch.lib, mismatch.cf, mismatch.iokit))
    assert s.open() == ""
    s._open = True
    s.read()
    v = s.read()
    # ECPU: its busy time all in its first state, paired with the one step; PCPU: the first paired only
    assert v["cpu_cluster_mhz.ECPU"] == 1020.0 and v["cpu_cluster_mhz.PCPU"] == 1020.0
    for cluster in ("ECPU", "PCPU"):  # the nearest table, the expected one where it is among them
        assert (
            f"CPU cluster {cluster} clock: no pmgr table has one step per active state (2); voltage-states1-sram "
            "has 1 steps for 2 active states: the first steps are paired"
        ) in s.notes
    # PCPU ran 3/4 of its busy time in its second state, which the table has no step for
    assert (
        "CPU cluster PCPU clock: 2 active states for 1 DVFS steps: 75.0 % of the active time was in states "
        "beyond the table (V1P1 on), left out of the clock"
    ) in s.notes


def test_ioreport_without_channels_or_library_is_a_reason() -> None:
    fake = FakeLibs({})
    s = IOReportSampler(library=IOReport(fake.lib, fake.cf)).start()
    assert s.reason == "IOReport cannot subscribe: IOReport has no channel in Energy Model, GPU Stats"
    only_dram = FakeLibs({"Energy Model": [Channel("Energy Model", "", "DRAM", "mJ")]})
    s = IOReportSampler(library=IOReport(only_dram.lib, only_dram.cf)).start()
    assert s.reason == "IOReport cannot subscribe: IOReport has none of the channels read in Energy Model, GPU Stats"
    no_tables = FakeLibs(GROUPS)
    s = IOReportSampler(library=IOReport(no_tables.lib, no_tables.cf))
    assert s.open() == "" and s.notes == ["no DVFS table (IORegistry pmgr voltage-states*): activity only, no clocks"]
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
    assert isinstance(
        graphics_sampler("wgpu", {"name": "llvmpipe", "adapter_type": "CPU"}, platform="linux"), RaplSampler
    )
    other = graphics_sampler("wgpu", {"name": "Radeon", "vendor": "4098"}, platform="linux").start()
    assert other.reason == "no clock or power sampler for the wgpu adapter Radeon on linux"


def test_ioreport_takes_the_cpu_tables_acc_clusters_names() -> None:
    """An M5-style pmgr entry without the M1-M4 E-cluster key: acc-clusters (M5_MAX_ACC) names
    voltage-states23-sram for the tier below the top one, so ECPU's table is expected, not a
    fallback; the property itself is no DVFS table."""
    pmgr = {
        "voltage-states23-sram": dvfs_bytes([1000e3, 2000e3]),
        "voltage-states5-sram": dvfs_bytes([1200e3, 4000e3]),
        "acc-clusters": M5_MAX_ACC,
    }
    fake = FakeLibs(GROUPS, pmgr)
    io_ = IOReport(fake.lib, fake.cf, fake.iokit)
    assert io_.pmgr_tables() == pmgr  # read with the tables
    s = IOReportSampler("cpu", library=io_)
    assert s.open() == ""
    s._open = True
    s.read()
    v = s.read()
    assert v["cpu_cluster_mhz.ECPU"] == 1000.0 and v["cpu_cluster_mhz.PCPU"] == pytest.approx(3300.0)
    assert s.notes == []
