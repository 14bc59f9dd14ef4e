"""Kernel.launch, Backend.synchronize, Kernel.timeline and the native launch loops (core/backend.h),
on every backend with a device: the dispatch-latency study's building blocks. The tiny kernel adds 1
to each of 1024 floats, so after k launches every float must be k."""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np
import pytest

_core = pytest.importorskip("apple_roofline._native")._core

from apple_roofline.shaders import resolve  # noqa: E402

SOURCES = {"cpu": "kernels.cpp", "cuda": "dispatch.cu", "metal": "dispatch.metal"}
HOST_EVENTS = {
    "cpu": ("call", "join"),
    "cuda": ("call", "launch", "complete"),
    "metal": ("call", "create", "encode", "commit", "complete"),
}


def _backends() -> List[Any]:
    out = []
    for row in _core.backends():
        name = row["name"]
        usable = row["compiled"] and row["devices"] > 0
        out.append(
            pytest.param(name, marks=pytest.mark.skipif(not usable, reason=f"no {name} device: {row['reason']}"))
        )
    return out


@pytest.fixture(params=_backends())
def dev(request: Any) -> Tuple[str, Any]:
    return request.param, _core.Backend(request.param, 0)


def _compile(name: str, backend: Any, entry: str) -> Any:
    src = SOURCES[name]
    return backend.compile(*resolve(src, entry))


def _tiny(backend: Any) -> Any:
    x = backend.alloc(4096)
    x.write(np.zeros(1024, dtype=np.float32))
    return x


def test_launch_then_synchronize_runs_every_launch(dev: Tuple[str, Any]) -> None:
    name, b = dev
    k = _compile(name, b, "dispatch_tiny")
    x = _tiny(b)
    for _ in range(37):
        k.launch((x,), 256)
    b.synchronize()
    got = x.read("float32")
    assert got.shape == (1024,) and np.all(got == 37.0), got[:8]
    null = _compile(name, b, "dispatch_null")
    for _ in range(5):
        null.launch((), 1)
    b.synchronize()


def test_launch_rejects_bad_arguments(dev: Tuple[str, Any]) -> None:
    name, b = dev
    k = _compile(name, b, "dispatch_tiny")
    with pytest.raises(ValueError, match="work_items"):
        k.launch((_tiny(b),), 0)
    with pytest.raises(ValueError):
        k.launch(("not a buffer",), 256)
    with pytest.raises(TypeError):
        k.launch(None, 256)


def test_vendor_gemm_launches_one_product(dev: Tuple[str, Any]) -> None:
    """Backend.gemm's kernel launches one product; synchronize waits for it (the per-call study's
    round trip); a wrong work-item count or buffer is a ValueError."""
    name, b = dev
    m, n, k = 3, 5, 4
    try:
        g = b.gemm("fp32", m, n, k)
    except _core.UnsupportedError as exc:
        pytest.skip(f"no fp32 GEMM: {exc}")
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (m, k)).astype(np.float32)
    w = rng.integers(-3, 4, (k, n)).astype(np.float32)
    bufs = (b.alloc(a.nbytes), b.alloc(w.nbytes), b.alloc(m * n * 4))
    bufs[0].write(a.ravel())
    bufs[1].write(w.ravel())
    bufs[2].write(np.full(m * n, np.nan, dtype=np.float32))
    g.launch(bufs, 1)
    b.synchronize()
    assert np.array_equal(bufs[2].read("float32").reshape(m, n), a @ w)
    r = _core.launch_round_trip(b, g, bufs, 1, 3)
    assert len(r) == 3 and all(s > 0 for s in r)
    with pytest.raises(ValueError, match="work_items must be 1"):
        g.launch(bufs, 2)
    with pytest.raises(ValueError, match="bytes"):
        g.launch((b.alloc(4), bufs[1], bufs[2]), 1)


def test_native_loops_time_every_launch(dev: Tuple[str, Any]) -> None:
    name, b = dev
    k = _compile(name, b, "dispatch_tiny")
    x = _tiny(b)
    t = _core.launch_throughput(b, k, (x,), 256, 7, 3)
    r = _core.launch_round_trip(b, k, (x,), 256, 4)
    assert len(t) == 3 and len(r) == 4 and all(s > 0 for s in t + r)
    assert np.all(x.read("float32") == 7 * 3 + 4)
    for bad in ({"launches": 0}, {"reps": 0}, {"work_items": 0}):
        kw = {"work_items": 256, "launches": 1, "reps": 1, **bad}
        with pytest.raises(ValueError):
            _core.launch_throughput(b, k, (x,), kw["work_items"], kw["launches"], kw["reps"])


def test_timeline_orders_the_steps_of_each_launch(dev: Tuple[str, Any]) -> None:
    name, b = dev
    if name == "cuda":
        stamp = b.alloc(8)
        k = _compile(name, b, "dispatch_tiny_stamp")
        x = _tiny(b)
        args: Tuple[Any, ...] = (stamp, x)
    else:
        k = _compile(name, b, "dispatch_tiny")
        x = _tiny(b)
        args = (x,)
    tl = k.timeline(args, 256, 9)
    events = tl["events"]
    assert events[0] == "call" and tl["submit"] in events and tl["start"] in events
    assert len(tl["t"]) == 9 and all(len(row) == len(events) for row in tl["t"])
    host = [events.index(e) for e in HOST_EVENTS[name]]
    unc = tl["uncertainty_s"]
    for row in tl["t"]:
        assert row[0] == 0.0
        assert all(row[i] <= row[j] for i, j in zip(host, host[1:])), row  # one host clock: in order
        start = row[events.index(tl["start"])]
        assert -unc <= start - row[events.index(tl["submit"])] and start <= row[-1] + unc, (row, unc)
    assert np.all(x.read("float32") == 9.0)
    assert tl["clock"]


def test_cuda_timeline_needs_a_stamp_kernel() -> None:
    row = next(r for r in _core.backends() if r["name"] == "cuda")
    if not (row["compiled"] and row["devices"] > 0):
        pytest.skip(f"no CUDA device: {row['reason']}")
    b = _core.Backend("cuda", 0)
    k = _compile("cuda", b, "dispatch_null")
    with pytest.raises(ValueError, match="globaltimer"):
        k.timeline((), 1, 1)
    tiny = _compile("cuda", b, "dispatch_tiny")
    with pytest.raises(ValueError, match="globaltimer"):
        tiny.timeline((_tiny(b),), 256, 2)  # writes floats, not a timer, into its first argument


def test_read_into_fills_an_array_at_an_offset_and_rejects_what_does_not_fit(dev: Tuple[str, Any]) -> None:
    _, backend = dev
    x = backend.alloc(64)
    x.write(np.arange(16, dtype=np.float32))
    out = np.full(4, -1.0, np.float32)
    x.read_into(out, 8)  # bytes 8..23: elements 2..5
    assert out.tolist() == [2.0, 3.0, 4.0, 5.0]
    x.read_into(out)
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0]
    for bad_offset in (-4, 56, 65):
        with pytest.raises(ValueError, match="do not fit the buffer's 64 bytes"):
            x.read_into(out, bad_offset)
