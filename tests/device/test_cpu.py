"""Device tier, CPU backend: facts only the CPU backend has (thread pool, host memory, clock)."""

from __future__ import annotations

import os
import sys

import pytest

_core = pytest.importorskip("apple_roofline._native")._core


def test_one_worker_per_usable_cpu() -> None:
    info = _core.Backend("cpu").info()
    if hasattr(os, "sched_getaffinity"):
        assert info["threads"] == len(os.sched_getaffinity(0))
    else:
        assert 1 <= info["threads"] <= (os.cpu_count() or 1)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/meminfo (Linux only)")
def test_memory_matches_the_os() -> None:
    with open("/proc/meminfo") as f:
        total_kib = int(next(line for line in f if line.startswith("MemTotal:")).split()[1])
    assert abs(_core.Backend("cpu").info()["memory_bytes"] - total_kib * 1024) <= 64 << 20


def test_buffers_are_page_aligned_and_shared_with_numpy() -> None:
    import numpy as np

    buf = _core.Backend("cpu").alloc(1 << 20)
    v = buf.view("float32")
    assert v.ctypes.data % 64 == 0 and v.ctypes.data % os.sysconf("SC_PAGESIZE") == 0
    v[:] = np.arange(v.size, dtype=np.float32)
    assert float(buf.read("float32", 1, 4 * 1000)[0]) == 1000.0


def test_clock_readings_are_physically_possible() -> None:
    single = _core.measure_cpu_clock_hz(0.02, False)
    all_cores = _core.measure_cpu_clock_hz(0.02, True)
    # No x86-64 or arm64 core runs above ~6.5 GHz: a higher reading means the chain was not one add
    # per cycle (Golden Cove folds immediate adds at rename; seen as "13 GHz" on an Emerald Rapids).
    assert 0 < single < 7e9 and 0 < all_cores < 7e9


def test_kernel_clock_is_counted_cycles_or_says_why_not() -> None:
    """Kernel.clock after time(): per-sample MHz from each worker's cycles / time on the CPU where
    perf_event_open is allowed, else no values and the refusal (on a VM without a PMU: ENOENT, with
    perf_event_paranoid) — the fallback apple_roofline.timing.clocks labels as reported. No machine the tests
    run on takes the measured branch: tests/unit/test_clocks.py runs it on a stand-in reading."""
    be = _core.Backend("cpu")
    k = be.compile("kernels.cpp", "stream_triad_f32", {})
    n = 1 << 14
    bufs = [be.alloc(n * 16) for _ in range(3)]
    k.time([*bufs, 3.0], n, 2, 3)
    c = k.clock
    if c["mhz"]:
        assert len(c["mhz"]) == 3 and all(100 < v < 7000 for v in c["mhz"])
        assert "perf_event_open" in c["method"] and not c["method"].startswith("not measured")
    else:
        assert c["method"].startswith("not measured: perf_event_open") or "Linux's" in c["method"]
    k.time([*bufs, 3.0], n, 2, 3, clock=False)  # the measurement loop's warm-up: no counters read
    assert k.clock == {
        "mhz": [],
        "method": "not measured: the samples were timed without their clock (warm-up, calibration or spin-up)",
    }
