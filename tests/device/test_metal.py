"""Device tier, Metal backend: runtime MSL compilation and its errors, function constants, the
kernel argument convention, GPU timing, zero-copy shared buffers, MPS GEMM, and a quick roofline run
end to end. Runs on macOS with an Apple GPU; skips elsewhere with the backend's reason."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

_core = pytest.importorskip("apple_roofline._native")._core

_ROW = next(b for b in _core.backends() if b["name"] == "metal")
if not (_ROW["compiled"] and _ROW["devices"] > 0):
    pytest.skip(f"no Metal device: {_ROW['reason']}", allow_module_level=True)

AXPY = r"""
#include <metal_stdlib>
using namespace metal;
constant int SHIFT [[function_constant(0)]];
constant float SCALE [[function_constant(1)]];
kernel void axpy(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]], constant long& offset [[buffer(3)]],
                 constant ulong& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  y[i] = a * x[i] + float(offset + SHIFT) * SCALE;
}
"""


@pytest.fixture(scope="module")
def metal() -> Any:
    backend = _core.Backend("metal", 0)
    if int(backend.info().get("gpu_family_raw", 0)) < 1007:
        pytest.skip(f"{backend.info()['name']} is not an Apple-family GPU (Apple7 or newer)")
    return backend


def test_info_describes_the_device(metal: Any) -> None:
    info = metal.info()
    assert info["backend"] == "metal" and info["index"] == 0 and info["name"]
    assert str(info["gpu_family"]).startswith("Apple") and int(info["gpu_family_raw"]) >= 1007
    assert info["unified_memory"] is True and int(info["memory_bytes"]) > 1 << 30
    assert 0 < int(info["recommended_working_set_bytes"]) <= int(info["memory_bytes"])
    assert int(info["max_threads_per_threadgroup"]) >= 256
    if "gpu_cores" in info:  # the IORegistry's gpu-core-count (absent in some virtual machines)
        assert 1 <= int(info["gpu_cores"]) <= 256 and info["compute_units"] == info["gpu_cores"]
    assert info["msl_version"] == _core.metal_msl_versions(int(str(info["os_version"]).split(".")[0]))
    assert str(info["math_mode"]).startswith("safe")
    assert str(info["chip"]).startswith("Apple")  # sysctl machdep.cpu.brand_string


def test_arguments_function_constants_and_tail(metal: Any) -> None:
    """Buffers, a float, a long and the appended work-item count reach the kernel at [[buffer(i)]] in
    order; function constants are set by name in their declared types; exactly `work_items` threads run."""
    n = 1000
    x = np.arange(n, dtype=np.float32)
    xb, yb = metal.alloc(4 * n), metal.alloc(4 * (n + 24))
    xb.write(x)
    k = metal.compile(AXPY, "axpy", {"SHIFT": 5, "SCALE": 0.5, "BLOCK": 128})
    samples = k.time([xb, yb, 2.5, 7], n, 3, 4)
    assert len(samples) == 4 and all(np.isfinite(s) and s > 0 for s in samples)
    y = yb.view("float32")  # zero copy: the buffer's shared memory
    np.testing.assert_array_equal(y[:n], 2.5 * x + 6.0)
    assert not y[n:].any(), "threads past the work-item count wrote"
    assert k.timer, "Metal says how it timed the samples"
    # another constant is another pipeline, not a stale cache entry
    k2 = metal.compile(AXPY, "axpy", {"SHIFT": 9, "SCALE": 0.5, "BLOCK": 128})
    k2.time([xb, yb, 2.5, 7], n, 1, 1)
    np.testing.assert_array_equal(yb.view("float32")[:n], 2.5 * x + 8.0)


def test_shared_buffers_are_zero_copy_and_zero_filled(metal: Any) -> None:
    b = metal.alloc(4096)
    v = b.view("float32")
    assert not v.any()
    v[:4] = [1, 2, 3, 4]
    np.testing.assert_array_equal(b.read("float32", 4), [1, 2, 3, 4])  # the same memory
    assert b.__dlpack_device__() == (1, 0)  # host-visible unified memory


def test_compile_errors_carry_the_log(metal: Any) -> None:
    with pytest.raises(_core.CompileError) as e:
        metal.compile("kernel void broken(device float* x [[buffer(0)]]) { x[0] = undefined_name; }", "broken", {})
    assert "undefined_name" in e.value.log
    with pytest.raises(_core.CompileError, match="no function 'missing'"):
        metal.compile(AXPY, "missing", {"SHIFT": 1, "SCALE": 1.0})


def test_bad_constants_are_value_errors(metal: Any) -> None:
    with pytest.raises(ValueError, match="declares no function constant 'NOPE'"):
        metal.compile(AXPY, "axpy", {"SHIFT": 1, "SCALE": 1.0, "NOPE": 3})
    with pytest.raises(ValueError, match="needs an integer"):
        metal.compile(AXPY, "axpy", {"SHIFT": 1.5, "SCALE": 1.0})
    with pytest.raises(ValueError, match="BLOCK"):
        metal.compile(AXPY, "axpy", {"SHIFT": 1, "SCALE": 1.0, "BLOCK": 100})


def test_bad_arguments_are_value_errors(metal: Any) -> None:
    k = metal.compile(AXPY, "axpy", {"SHIFT": 1, "SCALE": 1.0})
    b = metal.alloc(64)
    cpu_buf = _core.Backend("cpu", 0).alloc(64)
    with pytest.raises(ValueError, match="not a Metal buffer"):
        k.time([cpu_buf, b, 1.0, 0], 16, 1, 1)
    with pytest.raises(ValueError, match="out of range"):
        k.time([b, b, 1.0, 0], 1 << 33, 1, 1)


@pytest.mark.parametrize("dtype,np_dtype", [("fp32", np.float32), ("fp16", np.float16)])
def test_mps_gemm(metal: Any, dtype: str, np_dtype: Any) -> None:
    from apple_roofline.suites.gemm.checks import check_fp16_accumulation, check_gemm

    n = 64
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (n, n)).astype(np_dtype)
    b = rng.uniform(-1, 1, (n, n)).astype(np_dtype)
    bufs = [metal.alloc(a.nbytes), metal.alloc(b.nbytes), metal.alloc(a.nbytes)]
    bufs[0].write(a.ravel())
    bufs[1].write(b.ravel())
    k = metal.gemm(dtype, n, n, n)
    assert k.time(bufs, 1, 2, 3)
    c = bufs[2].view(np.dtype(np_dtype).name)[: n * n].reshape(n, n)
    ok, msg = check_gemm(a, b, c, dtype)
    if not ok and dtype == "fp16":  # MPS does not document its FP16 accumulator
        ok, msg = check_fp16_accumulation(a, b, c)
    assert ok, msg
    with pytest.raises(_core.UnsupportedError):
        metal.gemm("fp64", n, n, n)


def test_quick_roofline_run(tmp_path: Any) -> None:
    """Every suite on the Metal device at a small size, end to end: every measurement valid, the
    bandwidth and compute ceilings measured, the theoretical ceilings from the chip table."""
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    run = run_roofline(RunOptions(device="metal:0", quick=True, reps=3, array_bytes=8 << 20))
    bad = [f"{m.label}: {m.validation}" for m in run.measurements if not m.valid]
    assert not bad, bad
    suites = {m.suite for m in run.measurements}
    assert suites == {"stream", "sweep", "peak", "gemm"}
    kinds = {c.kind for c in run.ceilings if c.source == "measured"}
    assert kinds == {"bandwidth", "compute"}
    assert any(m.kernel == "sgemm_tiled16" for m in run.measurements)
    assert any(m.kernel.startswith("cpu_") for m in run.measurements)  # the AMX GEMMs beside the GPU
    assert all("timer" in m.params for m in run.measurements if m.suite in ("stream", "peak"))
