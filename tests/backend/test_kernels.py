"""Backend tier: every kernel of every suite, on every backend with a device, at small sizes,
checked against its NumPy reference; and the timing contract of Kernel.time."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from apple_roofline.shaders import resolve
from apple_roofline.suites.base import KernelDef, SuiteContext
from apple_roofline.suites.chains import ChainKernel, chain_case
from apple_roofline.suites.fma import FMA_KERNELS
from apple_roofline.suites.gemm.suite import GemmSuite
from apple_roofline.suites.peak.suite import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream.suite import StreamSuite
from apple_roofline.suites.sweep.suite import SWEEP_KERNELS


def _ctx(backend: Any, array_bytes: int = 1 << 16, **options: Any) -> SuiteContext:
    info = dict(backend.info())
    return SuiteContext(backend, str(info["backend"]), info, True, array_bytes, options)


def _run_case(case: Any) -> None:
    kernel = case.make_kernel()
    samples = kernel.time(case.args, case.work_items, 1, 2)
    assert len(samples) == 2 and all(s > 0 for s in samples)


def test_stream_kernels_match_numpy(backend: Any) -> None:
    cases = list(StreamSuite(_ctx(backend, array_bytes=4 * 1000 * 4 + 64)).cases())
    assert [c.kernel.name for c in cases] == ["copy", "scale", "add", "triad"]
    # cases() writes inputs lazily per case, so run each before asking for the next one
    suite = StreamSuite(_ctx(backend, array_bytes=4 * 4096 * 3))
    for case in suite.cases():
        _run_case(case)
        ok, msg = case.check()
        assert ok, msg


#: The chain lengths test_fma_kernels_match_numpy builds each kernel at, and the sweep kernels' test.
FMA_F = (1, 3, 64)
SWEEP_F = (1, 2, 4, 1024)


@pytest.fixture(scope="module")
def chain_kernels_built(backend: Any, compile_ahead: Any) -> None:
    """The kernels test_fma_kernels_match_numpy and test_sweep_kernels_every_F_bounded_and_valid
    build (one per variant, dtype and F, 47 NVRTC programs on CUDA), compiled ahead on threads."""
    name = str(backend.info()["backend"])
    bufs = (backend.alloc(1 << 10), backend.alloc(1 << 10))
    makers = []
    for dtype, variant in PEAK_VARIANTS:
        kdef = kernel_def(dtype, variant)
        src = kdef.sources.get(name)
        if src is not None:
            consts = dict(kdef.constants.get(name, {}))
            fk = FMA_KERNELS[variant]
            chain = ChainKernel(kdef, fk, resolve(*src), backend, consts)
            makers += [chain_case(chain, F, 1, bufs).make_kernel for F in FMA_F]
    for sname, fk in SWEEP_KERNELS:
        raw = fk.sources("fp32").get(name)
        if raw is not None:
            kdef = KernelDef("sweep", sname, "fp32", {name: raw})
            chain = ChainKernel(kdef, fk, resolve(*raw), backend)
            makers += [chain_case(chain, F, 1, bufs).make_kernel for F in SWEEP_F]
    compile_ahead(makers)


@pytest.mark.usefixtures("chain_kernels_built")
@pytest.mark.parametrize("dtype,variant", PEAK_VARIANTS)
@pytest.mark.parametrize("F", FMA_F)
@pytest.mark.parametrize("items", [1, 37, 4096 + 5])
def test_fma_kernels_match_numpy(backend: Any, dtype: str, variant: str, F: int, items: int) -> None:
    """Every FMA-chain kernel, including ranges that are not a whole number of vectors (the tail)."""
    from apple_roofline._native import _core

    fk = FMA_KERNELS[variant]
    kdef = kernel_def(dtype, variant)
    src = kdef.sources.get(str(backend.info()["backend"]))
    if src is None:
        pytest.skip(f"{variant}/{dtype} has no source for this backend")
    src = resolve(*src)
    nbytes = items * fk.elems_per_item * 8
    bufs = (backend.alloc(nbytes), backend.alloc(nbytes))
    # The kernel as the suites build it on this backend (with the kernel table's constants).
    consts = dict(kdef.constants.get(str(backend.info()["backend"]), {}))
    case = chain_case(ChainKernel(kdef, fk, src, backend, consts), F, items, bufs)
    try:
        _run_case(case)
    except _core.UnsupportedError as exc:
        pytest.skip(str(exc))
    ok, msg = case.check()
    assert ok, msg
    # The check can fail: corrupt one output element and check again.
    out = bufs[1].read({"fp16": "float16", "fp32": "float32", "fp64": "float64"}[dtype], items * fk.elems_per_item)
    out[items * fk.elems_per_item // 2] += 0.25
    bufs[1].write(out)
    ok, msg = case.check()
    assert not ok, "a corrupted output element passed validation"


@pytest.mark.usefixtures("chain_kernels_built")
@pytest.mark.parametrize("name,fk", SWEEP_KERNELS)
def test_sweep_kernels_every_F_bounded_and_valid(backend: Any, name: str, fk: Any) -> None:
    name_ = str(backend.info()["backend"])
    raw = fk.sources("fp32").get(name_)
    if raw is None:
        pytest.skip("no source for this backend")
    kdef = KernelDef("sweep", name, "fp32", {name_: raw})
    src = resolve(*raw)
    bufs = (backend.alloc(1 << 16), backend.alloc(1 << 16))
    for F in SWEEP_F:
        case = chain_case(ChainKernel(kdef, fk, src, backend), F, 512, bufs)
        _run_case(case)
        ok, msg = case.check()
        assert ok, f"F={F}: {msg}"


def test_gemm_matches_numpy_and_stops_on_budget(backend: Any) -> None:
    """Every GEMM precision the backend's table names (CPU: fp32, fp64, fp16 on macOS; CUDA: all six
    and the tiled kernel; Metal: MPS fp32, fp16 and the tiled kernel) validates at
    N = 16, and fails once one element of C is corrupted in the device buffer."""
    from apple_roofline._native import _core
    from apple_roofline.study.records import Measurement
    from apple_roofline.suites.base import NUMPY_DTYPE
    from apple_roofline.suites.gemm.precisions import (
        GEMM_PRECISIONS,
        TILED_GEMM,
        bf16_bits,
        bf16_values,
        gemm_kernel_def,
        round_bf16,
    )

    name = str(backend.info()["backend"])
    suite = GemmSuite(_ctx(backend, gemm_max_launch_s=1e-12))
    seen = []
    unsupported = []
    for case in suite.cases():
        try:
            _run_case(case)
        except _core.UnsupportedError:
            unsupported.append(case.kernel.dtype)
            continue
        ok, msg = case.check()
        assert ok, msg
        suite.record(
            Measurement(
                suite="gemm",
                kernel=case.kernel.name,
                dtype=case.kernel.dtype,
                params=case.params,
                flops=case.flops,
                bytes=case.bytes,
                samples_s=(1.0,),
                valid=True,
            )
        )
        seen.append((case.kernel.dtype, case.params["m"]))
        # corrupt C[5, 3] in the device buffer: the check must fail
        out = GEMM_PRECISIONS[case.kernel.dtype].out_dtype
        n = case.params["m"]
        raw = case.args[2].read(NUMPY_DTYPE[out], n * n)
        if out == "bf16":
            raw[5 * n + 3] = bf16_bits(round_bf16(bf16_values(raw[5 * n + 3 : 5 * n + 4]) + 0.5))[0]
        else:
            raw[5 * n + 3] += 1 if out == "int32" else 0.5
        case.args[2].write(raw)
        ok, msg = case.check()
        assert not ok, f"{case.kernel.dtype}: a corrupted element passed validation"
    want = [d for d in GEMM_PRECISIONS if name in gemm_kernel_def(d).sources and d not in unsupported]
    if name in TILED_GEMM.sources:
        want.append("fp32")  # the tiled comparison kernel, last
    assert seen == [(d, 16) for d in want]  # the budget stops each precision after one size
    if name == "cpu":  # BLAS sgemm and dgemm everywhere; BNNS FP16 on macOS only
        assert seen[:2] == [("fp32", 16), ("fp64", 16)]
        assert unsupported == ([] if sys.platform == "darwin" else ["fp16"])
    if name == "metal":  # MPS fp32 and fp16, then the tiled MSL kernel
        assert seen == [("fp32", 16), ("fp16", 16), ("fp32", 16)] and not unsupported


def test_timing_contract(backend: Any) -> None:
    if backend.info()["backend"] != "cpu":
        pytest.skip("uses the CPU's built-in entry names")
    buf = backend.alloc(4096)
    k = backend.compile("kernels.cpp", "scalar_indep8_f32", {"F": 4})
    samples = k.time([buf, buf, -0.5], 128, 3, 4)
    assert len(samples) == 4 and all(np.isfinite(s) and s > 0 for s in samples)
    with pytest.raises(ValueError, match="work_items"):
        k.time([buf, buf, -0.5], 0, 1, 1)
    with pytest.raises(ValueError, match="reps"):
        k.time([buf, buf, -0.5], 1, 1, 0)
    with pytest.raises(ValueError, match="batch"):
        k.time([buf, buf, -0.5], 1, 0, 1)
    with pytest.raises(ValueError, match="takes 3 arguments"):
        k.time([buf, buf], 1, 1, 1)
    with pytest.raises(ValueError, match="bool"):
        k.time([buf, buf, True], 1, 1, 1)
    with pytest.raises(ValueError, match="need"):
        k.time([buf, buf, -0.5], 1 << 20, 1, 1)


def test_compile_errors(backend: Any) -> None:
    from apple_roofline._native import _core

    if backend.info()["backend"] != "cpu":
        pytest.skip("uses the CPU's built-in entry names")
    with pytest.raises(_core.CompileError) as err:
        backend.compile("kernels.cpp", "no_such_kernel", {})
    assert "no_such_kernel" in str(err.value) and "stream_triad_f32" in err.value.log
    with pytest.raises(_core.CompileError):
        backend.compile("kernel void f() {}", "f", {})
    with pytest.raises(ValueError, match="out of range"):
        backend.compile("kernels.cpp", "scalar_indep8_f32", {"F": 0})
    with pytest.raises(ValueError, match="no constant"):
        backend.compile("kernels.cpp", "stream_copy_f32", {"F": 2})
    with pytest.raises(_core.UnsupportedError):
        backend.gemm("fp16", 4, 4, 4)
    with pytest.raises(ValueError):
        backend.gemm("fp32", 0, 4, 4)
    feats = _core.cpu_features()
    if not feats["fp16_arithmetic"]:
        with pytest.raises(_core.UnsupportedError, match="FP16"):
            backend.compile("kernels.cpp", "scalar_indep8_f16", {"F": 2})


def test_buffers(backend: Any) -> None:
    buf = backend.alloc(64)
    assert buf.nbytes == 64
    np.testing.assert_array_equal(buf.read("float32"), np.zeros(16, np.float32))  # zero-filled
    buf.write(np.arange(16, dtype=np.float32))
    np.testing.assert_array_equal(buf.read("float32", 4, 8), np.arange(2, 6, dtype=np.float32))
    with pytest.raises(ValueError, match="out of range"):
        buf.write(np.zeros(17, np.float32))
    with pytest.raises(ValueError, match="unknown dtype"):
        buf.read("complex64")
    with pytest.raises(ValueError):
        backend.alloc(0)
    # DLPack export, no copy: the exported array aliases the buffer on its own device.
    arr = buf.dlpack("float32")
    dev_type, dev_id = arr.__dlpack_device__()
    assert (dev_type, dev_id) == buf.__dlpack_device__()
    assert dev_type == (2 if backend.info()["backend"] == "cuda" else 1)
    if dev_type == 1:
        np.testing.assert_array_equal(np.from_dlpack(arr), np.arange(16, dtype=np.float32))
        assert np.from_dlpack(buf).dtype == np.uint8 and np.from_dlpack(buf).size == 64
    with pytest.raises(ValueError, match="unknown dtype"):
        buf.dlpack("complex64")
    if backend.info()["backend"] == "cpu":
        v = buf.view("float32")
        v[0] = 42.0  # zero-copy: visible through read()
        assert buf.read("float32", 1)[0] == 42.0
        del buf
        assert v[0] == 42.0  # the view keeps the buffer alive


def test_concurrent_python_threads_are_serialised(backend: Any) -> None:
    """Kernel.time releases the GIL; two Python threads timing at once must both finish."""
    import threading

    if backend.info()["backend"] != "cpu":
        pytest.skip("uses the CPU's built-in entry names")
    k = backend.compile("kernels.cpp", "scalar_indep8_f32", {"F": 2})
    bufs = [backend.alloc(1 << 14) for _ in range(4)]
    done: list = []  # type: ignore[type-arg]

    def work(i: int, o: int) -> None:
        for _ in range(200):
            k.time([bufs[i], bufs[o], -0.75], 256, 1, 1)
            backend.alloc(4096)
        done.append(i)

    threads = [threading.Thread(target=work, args=(i, i + 1), daemon=True) for i in (0, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(done) == [0, 2], "a thread never finished: the pool deadlocked"


def test_fill_and_poison_in_chunks(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filling never copies a whole array: chunked writes must still tile the pattern exactly."""
    from apple_roofline.suites import base

    monkeypatch.setattr(base, "CHUNK", 10)
    values = np.arange(3, dtype=np.float32)
    buf = backend.alloc(4 * 25)
    base.fill(buf, values, 25)
    np.testing.assert_array_equal(buf.read("float32"), np.resize(values, 25))
    base.poison(buf, "fp32", 23)
    got = buf.read("float32")
    assert np.isnan(got[:23]).all() and not np.isnan(got[23:]).any()
