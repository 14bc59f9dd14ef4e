"""Peer libraries of the dispatch-latency study (apple_roofline.dispatch.peers) and the MLX /
PyTorch+CuPy examples.

CuPy, PyTorch, MLX and PyObjC are replaced by small fakes put in ``sys.modules``: each fake
implements only the calls the peer modules make, with the real signatures, and runs the study's
kernels on NumPy arrays (the tiny kernel adds 1.0 to 256 float4), so validation sees real counts.
A library is made missing with ``sys.modules[name] = None`` (import then raises ImportError), which
also hides a real installation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import runpy
import struct
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from apple_roofline.dispatch import LatencySeries, PeerSkipped
from apple_roofline.dispatch.kernels import check_tiny_counts
from apple_roofline.dispatch.peers import PEERS, cupy_peer, measure_peers, mlx_peer, pyobjc_peer, torch_peer
from apple_roofline.errors import OptionError
from apple_roofline.roofline import Run, derive_ceilings

ROOT = Path(__file__).resolve().parents[2]
REPS, LAUNCHES, WARMUP = 3, 5, 2
THROUGHPUT_COUNT = WARMUP + REPS * LAUNCHES  # launches on the tiny buffer in one throughput measure
ROUND_TRIP_COUNT = WARMUP + REPS


def _tiny(x: np.ndarray, threads: int, n: int) -> None:
    """dispatch_tiny on a float32 array: threads i < n add 1.0 to float4 i."""
    m = min(threads, n, x.size // 4)
    x[: 4 * m] += np.float32(1.0)


# -- fakes ------------------------------------------------------------------------------------


class FakeCupyArray:
    def __init__(self, n: int, dtype: Any) -> None:
        self.data = np.zeros(n, dtype=dtype)

    def fill(self, value: float) -> None:
        self.data.fill(value)


def _cupy_raw_kernel(log: dict[str, Any], skip_every: int, fail: str) -> type:
    """The fake's ``cupy.RawKernel``: checks dispatch.cu's source and options, counts its launches in
    log and runs dispatch_tiny on NumPy (every ``skip_every``-th launch dropped); raises on
    construction with ``fail == "compile"``."""

    class RawKernel:
        def __init__(self, code: str, name: str, options: Sequence[str] = (), **kwargs: Any) -> None:
            if fail == "compile":
                raise RuntimeError("nvrtc: error: fake compile failure")
            assert f" {name}(" in code and "-DBLOCK=256" in options
            self.name = name
            log["kernels"].append(name)

        def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], **kwargs: Any) -> None:
            n = args[-1]
            assert isinstance(n, np.uint64)
            log["launches"] += 1
            log["gc_during_launch"].append(gc.isenabled())
            if self.name == "dispatch_tiny":
                (x,) = args[:-1]
                assert isinstance(x, FakeCupyArray)
                if skip_every and log["launches"] % skip_every == 0:
                    return
                _tiny(x.data, grid[0] * block[0], int(n))
            else:
                assert len(args) == 1

    return RawKernel


def _cupy_device(devices: int, fail: str) -> type:
    """The fake's ``cupy.cuda.Device``: ``devices`` of them; synchronize raises with ``fail == "sync"``."""

    class Device:
        def __init__(self, index: int = 0) -> None:
            if index >= devices:
                raise RuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
            self.id = index

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def synchronize(self) -> None:
            if fail == "sync":
                raise RuntimeError("cudaErrorLaunchFailure: unspecified launch failure")

        def use(self) -> None:
            return None

    return Device


def fake_cupy(*, skip_every: int = 0, fail: str = "", devices: int = 1) -> types.ModuleType:
    """``cupy`` with RawKernel (runs dispatch.cu's kernels), zeros, asnumpy, uint64 and cuda.Device.

    ``skip_every``: every k-th tiny launch does nothing (a dropped launch). ``fail``: ``"compile"``
    makes RawKernel raise, ``"sync"`` makes Device.synchronize raise."""
    cp = types.ModuleType("cupy")
    cp.__version__ = "13.0.0+fake"  # type: ignore[attr-defined]
    cp.float32 = np.float32  # type: ignore[attr-defined]
    cp.uint64 = np.uint64  # type: ignore[attr-defined]
    log: dict[str, Any] = {"launches": 0, "gc_during_launch": [], "kernels": []}
    cp.log = log  # type: ignore[attr-defined]
    cp.RawKernel = _cupy_raw_kernel(log, skip_every, fail)  # type: ignore[attr-defined]
    cp.zeros = lambda shape, dtype=float: FakeCupyArray(shape, dtype)  # type: ignore[attr-defined]
    cp.asnumpy = lambda a: a.data.copy()  # type: ignore[attr-defined]
    cp.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        Device=_cupy_device(devices, fail), runtime=types.SimpleNamespace(getDeviceCount=lambda: devices)
    )
    return cp


class FakeTensor:
    def __init__(self, data: np.ndarray, fail: bool = False) -> None:
        self.data = data
        self.fail = fail

    def add_(self, value: float) -> FakeTensor:
        if self.fail:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        self.data += np.float32(value)
        return self

    def zero_(self) -> FakeTensor:
        self.data[:] = 0
        return self

    def cpu(self) -> FakeTensor:
        return FakeTensor(self.data.copy())

    def numpy(self) -> np.ndarray:
        return self.data

    def float(self) -> FakeTensor:
        return FakeTensor(self.data.astype(np.float32))


def fake_torch(*, fail: bool = False, cuda: bool = True, wrong_product: bool = False) -> types.ModuleType:
    """``torch`` with cuda.{is_available, device_count, synchronize}, device, zeros, float32 (and
    randn, matmul and float16/bfloat16 for the matmul example)."""
    torch = types.ModuleType("torch")
    torch.__version__ = "2.5.0+fake"  # type: ignore[attr-defined]
    for name in ("float32", "float16", "bfloat16"):
        setattr(torch, name, name)
    torch.device = lambda spec: spec  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        is_available=lambda: cuda, device_count=lambda: 1 if cuda else 0, synchronize=lambda device=None: None
    )

    def zeros(n: int, *, dtype: Any, device: Any) -> FakeTensor:
        assert dtype == "float32" and str(device).startswith("cuda:")
        return FakeTensor(np.zeros(n, dtype=np.float32), fail=fail)

    def randn(*shape: int, device: Any, dtype: Any) -> FakeTensor:
        return FakeTensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))

    torch.zeros = zeros  # type: ignore[attr-defined]
    torch.randn = randn  # type: ignore[attr-defined]
    torch.matmul = lambda a, b: FakeTensor(a.data @ b.data + (1.0 if wrong_product else 0.0))  # type: ignore[attr-defined]
    return torch


class FakeMxArray:
    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self.data, dtype=dtype)

    def astype(self, dtype: Any) -> FakeMxArray:
        return FakeMxArray(self.data.astype(np.float32))


class FakeMxDevice:
    """``mx.Device(type, index)``; prints as MLX's does."""

    def __init__(self, kind: str, index: int = 0) -> None:
        self.type, self.index = kind, index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeMxDevice) and (self.type, self.index) == (other.type, other.index)

    def __str__(self) -> str:
        return f"Device({self.type}, {self.index})"


#: The optional keywords of the call metal_kernel returns (MLX's documented signature, beside inputs,
#: output_shapes, output_dtypes, grid, threadgroup and stream).
METAL_KERNEL_OPTIONS = ("template", "init_value", "verbose")


def _mlx_metal_kernel(metal: bool, log: dict[str, Any], dropped: Callable[[int], bool]) -> Callable[..., Any]:
    """The fake's ``mx.fast.metal_kernel``: the call it returns runs the tiny body on NumPy (a
    dropped call leaves it undone), counts the calls in log, and raises as MLX does without Metal."""

    def metal_kernel(
        name: str,
        input_names: Sequence[str],
        output_names: Sequence[str],
        source: str,
        header: str = "",
        ensure_row_contiguous: bool = True,
        atomic_outputs: bool = False,
    ) -> Any:
        assert output_names, "[metal_kernel] Must specify at least one output."

        def call(
            *,
            inputs: Sequence[Any],
            output_shapes: Sequence[Sequence[int]],
            output_dtypes: Sequence[Any],
            grid: tuple[int, int, int],
            threadgroup: tuple[int, int, int],
            stream: Any = None,
            **options: Any,
        ) -> list[FakeMxArray]:
            unknown = sorted(set(options) - set(METAL_KERNEL_OPTIONS))
            if unknown:
                raise TypeError(f"call() got an unexpected keyword argument {unknown[0]!r}")
            if not metal:
                raise RuntimeError("[metal_kernel] No Metal back-end.")
            assert len(inputs) == len(input_names) and len(output_shapes) == len(output_names)
            assert len(output_dtypes) == len(output_names) and stream == "gpu"
            log["calls"] += 1
            outs = [FakeMxArray(np.zeros(tuple(s), dtype=np.float32)) for s in output_shapes]
            if "inp[j] + 1.0f" in source:
                assert "thread_position_in_grid" in source and grid == (256, 1, 1) and threadgroup == (256, 1, 1)
                outs[0].data[:] = inputs[0].data
                if not dropped(log["calls"]):
                    _tiny(outs[0].data, grid[0], 256)
            else:
                assert source.strip() == "" and grid == (1, 1, 1)
            return outs

        return call

    return metal_kernel


def _mlx_ops(log: dict[str, Any], dropped: Callable[[int], bool], wrong_product: bool) -> dict[str, Any]:
    """The fake's add (a dropped add leaves its input as it was), zeros, eval, async_eval, random and
    matmul (A·B + 1 with ``wrong_product``), each logging the stream it was given and its calls."""

    def add(a: FakeMxArray, b: float, *, stream: Any = None) -> FakeMxArray:
        log["adds"] += 1
        log["streams"].append(stream)
        out = a.data.copy()
        if not dropped(log["adds"]):
            out += np.float32(b)
        return FakeMxArray(out)

    def eval_(*arrays: Any) -> None:
        log["evals"] += 1

    def async_eval(*arrays: Any) -> None:
        log["async_evals"] += 1

    def zeros(shape: Any, dtype: Any = None, *, stream: Any = None) -> FakeMxArray:
        log["streams"].append(stream)
        return FakeMxArray(np.zeros(shape, dtype=np.float32))

    def normal(shape: Any, dtype: Any = "float32", *, key: Any = None, stream: Any = None) -> FakeMxArray:
        log["streams"].append(stream)
        return FakeMxArray(np.asarray(np.random.default_rng(key).standard_normal(shape), dtype=np.float32))

    def matmul(a: FakeMxArray, b: FakeMxArray, *, stream: Any = None) -> FakeMxArray:
        log["streams"].append(stream)
        return FakeMxArray(a.data @ b.data + (np.float32(1.0) if wrong_product else np.float32(0.0)))

    return {
        "add": add,
        "zeros": zeros,
        "eval": eval_,
        "async_eval": async_eval,
        "random": types.SimpleNamespace(key=lambda seed: seed, split=lambda key: (2 * key, 2 * key + 1), normal=normal),
        "matmul": matmul,
    }


def fake_mlx(
    *, metal: bool = True, skip_every: int = 0, wrong_product: bool = False
) -> tuple[types.ModuleType, types.ModuleType]:
    """``mlx`` and ``mlx.core`` with metal.is_available, fast.metal_kernel (documented signature;
    runs the tiny body on NumPy, and raises as MLX does without Metal), add, zeros, eval, async_eval,
    Device, gpu, cpu, float32 (and random.key/split/normal, matmul, float16/bfloat16 for the matmul
    example). ``skip_every``: every k-th tiny launch (a metal_kernel call or an add) does nothing;
    ``wrong_product``: matmul returns A·B + 1."""
    mx = types.ModuleType("mlx.core")
    mx.__version__ = "0.25.0+fake"  # type: ignore[attr-defined]
    for name in ("float32", "float16", "bfloat16"):
        setattr(mx, name, name)
    mx.gpu, mx.cpu = "gpu", "cpu"  # type: ignore[attr-defined]
    mx.Device = FakeMxDevice  # type: ignore[attr-defined]
    mx.metal = types.SimpleNamespace(is_available=lambda: metal)  # type: ignore[attr-defined]
    log: dict[str, Any] = {"calls": 0, "adds": 0, "evals": 0, "async_evals": 0, "streams": []}
    mx.log = log  # type: ignore[attr-defined]

    def dropped(count: int) -> bool:
        return bool(skip_every and count % skip_every == 0)

    mx.fast = types.SimpleNamespace(metal_kernel=_mlx_metal_kernel(metal, log, dropped))  # type: ignore[attr-defined]
    for name, op in _mlx_ops(log, dropped, wrong_product).items():
        setattr(mx, name, op)
    mlx = types.ModuleType("mlx")
    mlx.core = mx  # type: ignore[attr-defined]
    return mlx, mx


class FakeMTLBuffer:
    def __init__(self, length: int) -> None:
        self.mem = bytearray(length)

    def contents(self) -> Any:
        return types.SimpleNamespace(as_buffer=lambda n: memoryview(self.mem)[:n])

    def length(self) -> int:
        return len(self.mem)


class FakeEncoder:
    def __init__(self, cb: FakeCommandBuffer) -> None:
        self.cb = cb
        self.pso: Any = None
        self.buffers: dict[int, FakeMTLBuffer] = {}
        self.bytes: dict[int, bytes] = {}

    def setComputePipelineState_(self, pso: Any) -> None:
        self.pso = pso

    def setBuffer_offset_atIndex_(self, buf: FakeMTLBuffer, offset: int, index: int) -> None:
        assert offset == 0
        self.buffers[index] = buf

    def setBytes_length_atIndex_(self, data: bytes, length: int, index: int) -> None:
        assert len(data) == length
        self.bytes[index] = bytes(data)

    def dispatchThreads_threadsPerThreadgroup_(self, grid: tuple[int, int, int], group: tuple[int, int, int]) -> None:
        assert group[0] <= grid[0] and group[0] <= 256
        name = self.pso.name
        if name == "dispatch_tiny":
            (n,) = struct.unpack("<Q", self.bytes[1])
            x = np.frombuffer(self.buffers[0].mem, dtype=np.float32)
            self.cb.work.append(lambda: _tiny(x, grid[0], n))
        else:
            assert name == "dispatch_null" and len(self.bytes[0]) == 8 and not self.buffers

    def endEncoding(self) -> None:
        return None


class FakeCommandBuffer:
    def __init__(self, queue: FakeQueue) -> None:
        self.queue = queue
        self.work: list[Any] = []
        self._status = 0  # MTLCommandBufferStatusNotEnqueued

    def computeCommandEncoder(self) -> FakeEncoder:
        return FakeEncoder(self)

    def commit(self) -> None:
        self.queue.committed += 1
        if self.queue.fail_every and self.queue.committed % self.queue.fail_every == 0:
            self._status = 5  # MTLCommandBufferStatusError
            return
        for w in self.work:
            w()
        self._status = 4

    def waitUntilCompleted(self) -> None:
        return None

    def status(self) -> int:
        return self._status

    def error(self) -> Any:
        if self._status == 5:
            return types.SimpleNamespace(localizedDescription=lambda: "Execution of the command buffer was aborted")
        return None


class FakeQueue:
    def __init__(self, fail_every: int) -> None:
        self.fail_every = fail_every
        self.committed = 0

    def commandBuffer(self) -> FakeCommandBuffer:
        return FakeCommandBuffer(self)


class FakeMTLDevice:
    def __init__(self, fail_every: int = 0) -> None:
        self.fail_every = fail_every

    def registryID(self) -> int:
        return 1

    def newLibraryWithSource_options_error_(self, source: str, options: Any, error: Any) -> tuple[Any, Any]:
        assert "#include <metal_stdlib>" in source and options is None and error is None

        def function(name: str) -> Any:
            return types.SimpleNamespace(name=name) if f"kernel void {name}(" in source else None

        return types.SimpleNamespace(newFunctionWithName_=function), None

    def newComputePipelineStateWithFunction_error_(self, fn: Any, error: Any) -> tuple[Any, Any]:
        return types.SimpleNamespace(name=fn.name), None

    def newCommandQueue(self) -> FakeQueue:
        return FakeQueue(self.fail_every)

    def newBufferWithLength_options_(self, length: int, options: int) -> FakeMTLBuffer:
        assert options == 0  # MTLResourceStorageModeShared
        return FakeMTLBuffer(length)


def fake_metal(*, fail_every: int = 0) -> tuple[types.ModuleType, types.ModuleType]:
    """``Metal`` (pyobjc-framework-Metal) and ``objc`` with the calls the PyObjC peer makes."""
    metal = types.ModuleType("Metal")
    device = FakeMTLDevice(fail_every)
    metal.MTLCreateSystemDefaultDevice = lambda: device  # type: ignore[attr-defined]
    metal.MTLCopyAllDevices = lambda: [device]  # type: ignore[attr-defined]
    metal.MTLSizeMake = lambda w, h, d: (w, h, d)  # type: ignore[attr-defined]
    metal.MTLCommandBufferStatusCompleted = 4  # type: ignore[attr-defined]
    metal.MTLResourceStorageModeShared = 0  # type: ignore[attr-defined]
    objc = types.ModuleType("objc")
    objc.__version__ = "10.3+fake"  # type: ignore[attr-defined]
    objc.autorelease_pool = contextlib.nullcontext  # type: ignore[attr-defined]
    return metal, objc


def install(monkeypatch: pytest.MonkeyPatch, **modules: Any) -> None:
    """Put fakes (or None: missing) in sys.modules for this test."""
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name.replace("__", "."), module)


def run(backend: str, **kwargs: Any) -> tuple[list[LatencySeries], list[PeerSkipped]]:
    return measure_peers(backend, kwargs.pop("device_index", 0), reps=REPS, launches=LAUNCHES, warmup=WARMUP, **kwargs)


def by_key(series: list[LatencySeries]) -> dict[tuple[str, str, str], LatencySeries]:
    return {(s.path, s.kernel, s.measure): s for s in series}


# -- measure_peers ----------------------------------------------------------------------------


def test_peers_table() -> None:
    assert PEERS == {"cupy": ("cuda",), "torch": ("cuda",), "mlx": ("metal", "cpu"), "pyobjc": ("metal",)}
    assert list(PEERS) == ["cupy", "torch", "mlx", "pyobjc"]  # the order the peers are measured in
    for module in (cupy_peer, torch_peer, mlx_peer, pyobjc_peer):
        assert PEERS[module.NAME] == tuple(module.OPENERS)
        # named so that they never shadow the libraries they drive
        assert module.__name__ == f"apple_roofline.dispatch.peers.{module.NAME}_peer"


@pytest.mark.parametrize(
    "backend,names", [("cuda", ("cupy", "torch")), ("metal", ("mlx", "pyobjc")), ("cpu", ("mlx",))]
)
def test_missing_library_is_skipped_naming_it(
    monkeypatch: pytest.MonkeyPatch, backend: str, names: tuple[str, ...]
) -> None:
    install(monkeypatch, cupy=None, torch=None, mlx=None, mlx__core=None, Metal=None, objc=None)
    series, skipped = run(backend)
    assert series == []
    assert [s.path for s in skipped] == list(names)
    for s in skipped:
        assert "not installed" in s.reason and s.path in s.reason


def test_cupy_and_torch_series(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, cupy=fake_cupy(), torch=fake_torch())
    series, skipped = run("cuda")
    keys = by_key(series)
    assert sorted(keys) == sorted(
        [
            ("cupy", "null", "throughput"),
            ("cupy", "null", "round_trip"),
            ("cupy", "tiny", "throughput"),
            ("cupy", "tiny", "round_trip"),
            ("torch", "tiny", "throughput"),
            ("torch", "tiny", "round_trip"),
        ]
    )
    assert skipped == [PeerSkipped("torch", "null kernel: PyTorch has no public API that launches an empty kernel")]
    for (path, kernel, measure), s in keys.items():
        assert s.clock == "host" and s.path == path and s.step == ""
        assert len(s.samples_s) == REPS and all(t >= 0 for t in s.samples_s)
        assert s.launches_per_sample == (LAUNCHES if measure == "throughput" else 1)
        assert s.valid, s.validation
        assert s.note
        assert LatencySeries.from_dict(s.to_dict()) == s  # JSON-ready and accepted by the reader
    assert keys["cupy", "tiny", "throughput"].validation == (
        f"all 1024 floats == {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches"
    )
    assert keys["torch", "tiny", "round_trip"].validation == (
        f"all 1024 floats == {ROUND_TRIP_COUNT} after {ROUND_TRIP_COUNT} launches"
    )
    assert keys["cupy", "null", "round_trip"].validation.startswith(
        "no output: the launch completed without an error from CuPy"
    )
    assert "RawKernel" in keys["cupy", "tiny", "throughput"].note
    assert "add_(1.0)" in keys["torch", "tiny", "round_trip"].note


def test_launch_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = fake_cupy()
    install(monkeypatch, cupy=cp, torch=None)
    run("cuda")
    # null and tiny, each: throughput (warmup + reps x launches) and round trip (warmup + reps)
    assert cp.log["launches"] == 2 * (THROUGHPUT_COUNT + ROUND_TRIP_COUNT)


def test_dropped_launch_fails_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, cupy=fake_cupy(skip_every=4), torch=None)
    series, _ = run("cuda")
    keys = by_key(series)
    tiny = keys["cupy", "tiny", "throughput"]
    assert not tiny.valid
    assert f"!= {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches" in tiny.validation
    assert keys["cupy", "null", "throughput"].valid  # null has no output to get wrong


def test_raising_peer_is_skipped_and_others_run(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, cupy=fake_cupy(), torch=fake_torch(fail=True))
    series, skipped = run("cuda")
    assert {s.path for s in series} == {"cupy"} and len(series) == 4
    assert PeerSkipped("torch", "RuntimeError: CUDA error: an illegal memory access was encountered") in skipped

    install(monkeypatch, cupy=fake_cupy(fail="compile"), torch=fake_torch())
    series, skipped = run("cuda")
    assert {s.path for s in series} == {"torch"}
    assert PeerSkipped("cupy", "RuntimeError: nvrtc: error: fake compile failure") in skipped


def test_series_before_an_exception_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    cp = fake_cupy()
    real_kernel = cp.RawKernel

    class TinyFails(real_kernel):  # type: ignore[misc, valid-type]
        def __call__(self, grid: Any, block: Any, args: Any, **kwargs: Any) -> None:
            if self.name == "dispatch_tiny":
                raise RuntimeError("cudaErrorIllegalAddress")
            super().__call__(grid, block, args, **kwargs)

    cp.RawKernel = TinyFails  # type: ignore[attr-defined]
    install(monkeypatch, cupy=cp, torch=None)
    series, skipped = run("cuda")
    assert [(s.kernel, s.measure) for s in series] == [("null", "throughput"), ("null", "round_trip")]
    assert PeerSkipped("cupy", "RuntimeError: cudaErrorIllegalAddress") in skipped


def test_no_device(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, cupy=fake_cupy(devices=1), torch=fake_torch(cuda=False))
    series, skipped = run("cuda", device_index=1)
    assert series == []
    reasons = {s.path: s.reason for s in skipped}
    assert "invalid device ordinal" in reasons["cupy"]
    assert "no CUDA device" in reasons["torch"]


def test_backend_filtering(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cuda study never imports MLX or PyObjC, a metal study never CuPy or PyTorch, a cpu study MLX alone."""
    requested: list[str] = []

    class Recorder:
        """Records the peers' imports and fails them, so that installed libraries stay unused."""

        def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
            if fullname.split(".")[0] in ("cupy", "torch", "mlx", "Metal", "objc"):
                requested.append(fullname)
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)

    for name in ("cupy", "torch", "mlx", "mlx.core", "Metal", "objc"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "meta_path", [Recorder(), *sys.meta_path])
    run("cuda")
    assert {"cupy", "torch"} <= set(requested)
    assert not {"mlx", "Metal", "objc"} & set(requested)
    requested.clear()
    run("metal")
    assert {"mlx", "Metal"} <= set(requested)
    assert not {"cupy", "torch"} & set(requested)
    requested.clear()
    assert run("cpu") == ([], [PeerSkipped("mlx", "mlx is not installed (import mlx.core: No module named 'mlx')")])
    assert {"mlx"} <= set(requested)  # a cpu study imports MLX alone
    assert not {"cupy", "torch", "Metal", "objc"} & set(requested)


def test_mlx_and_pyobjc_series(monkeypatch: pytest.MonkeyPatch) -> None:
    mlx, mx = fake_mlx()
    metal, objc = fake_metal()
    install(monkeypatch, mlx=mlx, mlx__core=mx, Metal=metal, objc=objc)
    series, skipped = run("metal")
    assert skipped == []
    keys = by_key(series)
    assert sorted(keys) == sorted(
        (path, kernel, measure)
        for path in ("mlx", "pyobjc")
        for kernel in ("null", "tiny")
        for measure in ("throughput", "round_trip")
    )
    for s in series:
        assert s.valid, (s.label, s.validation)
        assert len(s.samples_s) == REPS and s.clock == "host"
    assert keys["pyobjc", "tiny", "throughput"].validation == (
        f"all 1024 floats == {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches"
    )
    assert keys["mlx", "tiny", "round_trip"].validation == (
        f"all 1024 floats == {ROUND_TRIP_COUNT} after {ROUND_TRIP_COUNT} launches"
    )
    assert "scalar" in keys["mlx", "tiny", "throughput"].note  # the MLX body's deviation from float4 is stated
    assert "async_eval" in keys["mlx", "null", "throughput"].note
    assert keys["mlx", "tiny", "throughput"].note.startswith("MLX 0.25.0+fake on Device(gpu, 0): mx.fast.metal_kernel")
    assert "commandBuffer()" in keys["pyobjc", "null", "round_trip"].note
    # MLX: throughput submits each launch with async_eval; round trips eval each one
    assert mx.log["async_evals"] == 2 * THROUGHPUT_COUNT


def test_mlx_dropped_launch_and_device_index(monkeypatch: pytest.MonkeyPatch) -> None:
    mlx, mx = fake_mlx(skip_every=3)
    install(monkeypatch, mlx=mlx, mlx__core=mx, Metal=None)
    series, _ = run("metal")
    assert not by_key(series)["mlx", "tiny", "throughput"].valid
    series, skipped = run("metal", device_index=1)
    assert series == [] and "default Metal device" in {s.path: s.reason for s in skipped}["mlx"]
    mlx, mx = fake_mlx(metal=False)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    series, skipped = run("metal")
    assert series == [] and "no Metal device" in {s.path: s.reason for s in skipped}["mlx"]


def test_mlx_cpu_series(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the CPU backend MLX runs the tiny kernel as mx.add on its CPU device, says so, and skips null."""
    mlx, mx = fake_mlx(metal=False)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    series, skipped = run("cpu")
    assert skipped == [PeerSkipped("mlx", mlx_peer.CPU_NULL_SKIP)]
    keys = by_key(series)
    assert sorted(keys) == [("mlx", "tiny", "round_trip"), ("mlx", "tiny", "throughput")]
    for s in series:
        assert s.valid, (s.label, s.validation)
        assert len(s.samples_s) == REPS and s.clock == "host"
        assert s.note.startswith("MLX 0.25.0+fake on Device(cpu, 0): mx.add(x, 1.0)")
        assert LatencySeries.from_dict(s.to_dict()) == s
    assert keys["mlx", "tiny", "throughput"].validation == (
        f"all 1024 floats == {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches"
    )
    assert keys["mlx", "tiny", "round_trip"].validation == (
        f"all 1024 floats == {ROUND_TRIP_COUNT} after {ROUND_TRIP_COUNT} launches"
    )
    assert mx.log["calls"] == 0 and mx.log["adds"] == THROUGHPUT_COUNT + ROUND_TRIP_COUNT
    assert mx.log["async_evals"] == THROUGHPUT_COUNT  # throughput submits each launch; round trips eval
    assert {str(d) for d in mx.log["streams"]} == {"Device(cpu, 0)"}


def test_mlx_cpu_dropped_launch_and_device_index(monkeypatch: pytest.MonkeyPatch) -> None:
    mlx, mx = fake_mlx(metal=False, skip_every=4)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    series, _ = run("cpu")
    tiny = by_key(series)["mlx", "tiny", "throughput"]
    assert not tiny.valid and f"!= {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches" in tiny.validation
    series, skipped = run("cpu", device_index=1)
    assert series == [] and skipped == [PeerSkipped("mlx", "MLX 0.25.0+fake has one CPU device; cpu:1 was asked for")]


def test_pyobjc_failed_command_buffer_is_invalid(monkeypatch: pytest.MonkeyPatch) -> None:
    metal, objc = fake_metal(fail_every=7)
    install(monkeypatch, mlx=None, mlx__core=None, Metal=metal, objc=objc)
    series, skipped = run("metal")
    keys = by_key(series)
    assert [s.path for s in skipped] == ["mlx"]
    assert not keys["pyobjc", "tiny", "round_trip"].valid
    assert "status 5" in keys["pyobjc", "tiny", "round_trip"].validation
    assert "aborted" in keys["pyobjc", "tiny", "round_trip"].validation
    assert not keys["pyobjc", "null", "round_trip"].valid


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_disabled_while_timing_and_restored(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    cp = fake_cupy()
    install(monkeypatch, cupy=cp, torch=None)
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        run("cuda")
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    states = cp.log["gc_during_launch"]
    assert states.count(False) >= 2 * (REPS * LAUNCHES + REPS)  # every timed launch
    if enabled:
        assert True in states  # warm-up launches run with the collector as it was


def test_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, cupy=fake_cupy(), torch=None)
    lines: list[str] = []
    run("cuda", progress=lines.append)
    assert "cupy null throughput" in lines and "cupy tiny round_trip" in lines
    assert any(line.startswith("torch: skipped") for line in lines)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"backend": "rocm"}, "backend 'rocm' is not a known backend"),
        ({"device_index": -1}, "device_index"),
        ({"reps": 0}, "reps"),
        ({"launches": 0}, "launches"),
        ({"warmup": -1}, "warmup"),
        ({"reps": True}, "reps"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"backend": "cuda", "device_index": 0, "reps": 1, "launches": 1, "warmup": 0, **kwargs}
    with pytest.raises(OptionError, match=match) as exc:
        measure_peers(args.pop("backend"), args.pop("device_index"), **args)
    assert exc.value.option == next(iter(kwargs))  # the parameter, named as in the Python API


def test_check_counts_saturates_at_2_24() -> None:
    ok, message = check_tiny_counts(np.full(1024, 2.0**24, dtype=np.float32), 2**24 + 5)
    assert ok and "2^24" in message
    ok, message = check_tiny_counts(np.zeros(512, dtype=np.float32), 0)
    assert not ok and "512 floats" in message


# -- the examples -----------------------------------------------------------------------------


def run_example(name: str, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> int:
    monkeypatch.setattr(sys, "argv", [name, *argv])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "examples" / name), run_name="__main__")
    return int(exc.value.code or 0)


def test_mlx_example_without_mlx(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    install(monkeypatch, mlx=None, mlx__core=None)
    assert run_example("mlx_matmul_sweep.py", monkeypatch, []) == 2
    assert "MLX is not installed" in capsys.readouterr().err


def test_mlx_example_gpu_without_metal(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    mlx, mx = fake_mlx(metal=False)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    assert run_example("mlx_matmul_sweep.py", monkeypatch, ["--device", "gpu"]) == 2
    err = capsys.readouterr().err
    assert "needs a Mac" in err and "--device cpu" in err


def example_rows(out: str) -> list[list[str]]:
    """The example's table rows: dtype, N, GFLOP/s, FLOP/B, attainable, efficiency, roof: verdict."""
    return [ln.split() for ln in out.splitlines() if ln.split()[:1] in (["fp32"], ["fp16"], ["bf16"])]


def test_mlx_example_places_points(monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run) -> None:
    mlx, mx = fake_mlx()
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    run_json = tmp_path / "run.json"
    m5_run.save(run_json)
    code = run_example("mlx_matmul_sweep.py", monkeypatch, [str(run_json), "--sizes", "16,32", "--reps", "2"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("MLX 0.25.0+fake on Device(gpu, 0): the Metal GPU")  # the device it ran on
    rows = example_rows(out)
    assert [(r[0], r[1]) for r in rows] == [("fp32", "16"), ("fp32", "32"), ("fp16", "16"), ("fp16", "32")]
    assert all(r[-1].endswith("-bound") for r in rows)
    assert out.count("valid: all ") == 4  # each product checked against NumPy before its row
    assert {str(s) for s in mx.log["streams"]} == {"Device(gpu, 0)"}
    assert (tmp_path / "mlx_matmul.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mlx_example_on_the_cpu(monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run) -> None:
    """Without Metal the example runs on MLX's CPU device, says so, and takes a CPU run only."""
    mlx, mx = fake_mlx(metal=False)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    metal_json, cpu_json = tmp_path / "metal.json", tmp_path / "cpu.json"
    m5_run.save(metal_json)
    assert run_example("mlx_matmul_sweep.py", monkeypatch, [str(metal_json)]) == 1
    assert "is a metal run" in capsys.readouterr().err
    dataclasses.replace(m5_run, device={**m5_run.device, "backend": "cpu", "name": "Fake CPU"}).save(cpu_json)
    plot = tmp_path / "mm.svg"
    code = run_example(
        "mlx_matmul_sweep.py", monkeypatch, [str(cpu_json), "--sizes", "16", "--dtypes", "bf16", "-o", str(plot)]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("MLX 0.25.0+fake on Device(cpu, 0): the CPU, since mlx.core.metal.is_available() is False")
    assert [(r[0], r[1]) for r in example_rows(out)] == [("bf16", "16")]
    assert {str(s) for s in mx.log["streams"]} == {"Device(cpu, 0)"}
    assert plot.read_text().lstrip().startswith("<?xml")


def test_mlx_example_invalid_product_is_not_placed(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run
) -> None:
    mlx, mx = fake_mlx(wrong_product=True)
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    run_json = tmp_path / "run.json"
    m5_run.save(run_json)
    assert run_example("mlx_matmul_sweep.py", monkeypatch, [str(run_json), "--sizes", "16", "--dtypes", "fp32"]) == 1
    out = capsys.readouterr().out
    assert "fp32      16  invalid, not placed: 256 of 256 elements exceed the bound" in out
    assert [r[:3] for r in example_rows(out)] == [["fp32", "16", "invalid,"]]  # no rate reported
    assert "valid: " not in out and not (tmp_path / "mlx_matmul.png").exists()  # no figure of no valid point


def test_mlx_example_flags_a_point_above_every_roof(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run
) -> None:
    """A roofline a billion times too low: every point lies above every roof and shows no share."""
    mlx, mx = fake_mlx()
    install(monkeypatch, mlx=mlx, mlx__core=mx)
    slow = tuple(dataclasses.replace(m, samples_s=tuple(t * 1e9 for t in m.samples_s)) for m in m5_run.measurements)
    run_json = tmp_path / "run.json"
    dataclasses.replace(m5_run, measurements=slow, ceilings=tuple(derive_ceilings(slow))).save(run_json)
    assert run_example("mlx_matmul_sweep.py", monkeypatch, [str(run_json), "--sizes", "16", "--dtypes", "fp32"]) == 0
    (row,) = example_rows(capsys.readouterr().out)
    flag = " ".join(row[6:])
    assert row[5] == "-" and flag.startswith("above every roof: ") and "GEMM FP32 ceiling" in flag  # no share


def test_torch_cupy_example_without_either(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    install(monkeypatch, torch=None, cupy=None)
    assert run_example("torch_cupy_matmul.py", monkeypatch, []) == 2
    err = capsys.readouterr().err
    assert "PyTorch is not installed" in err and "CuPy is not installed" in err


def test_torch_cupy_example_named_library_missing(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    install(monkeypatch, torch=fake_torch(), cupy=None)
    assert run_example("torch_cupy_matmul.py", monkeypatch, ["--library", "cupy"]) == 2
    assert "CuPy is not installed" in capsys.readouterr().err


def test_torch_cupy_example_places_points(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run
) -> None:
    install(monkeypatch, torch=fake_torch(), cupy=None)
    run_json = tmp_path / "cuda.json"
    dataclasses.replace(m5_run, device={**m5_run.device, "backend": "cuda", "name": "Fake GPU"}).save(run_json)
    plot = tmp_path / "plot.svg"
    code = run_example(
        "torch_cupy_matmul.py",
        monkeypatch,
        [str(run_json), "--sizes", "16", "--dtypes", "fp32,bf16", "--reps", "2", "-o", str(plot)],
    )
    assert code == 0
    captured = capsys.readouterr()
    rows = [ln.split() for ln in captured.out.splitlines() if ln.split()[:1] == ["torch"]]
    assert [(r[1], r[2]) for r in rows] == [("fp32", "16"), ("bf16", "16")]
    assert "CuPy is not installed" in captured.err  # named, and the example went on with PyTorch
    assert plot.read_text().lstrip().startswith("<?xml")


def test_torch_cupy_example_reports_an_invalid_product_and_places_none(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run
) -> None:
    """Every timed product is checked against NumPy float64 before its number is reported."""
    install(monkeypatch, torch=fake_torch(wrong_product=True), cupy=None)
    run_json = tmp_path / "cuda.json"
    dataclasses.replace(m5_run, device={**m5_run.device, "backend": "cuda", "name": "Fake GPU"}).save(run_json)
    code = run_example("torch_cupy_matmul.py", monkeypatch, [str(run_json), "--sizes", "16", "--dtypes", "fp32"])
    captured = capsys.readouterr()
    assert code == 1 and "torch fp32 N=16 failed validation: " in captured.err
    assert not [ln for ln in captured.out.splitlines() if ln.split()[:1] == ["torch"]]  # no rate reported


def test_torch_cupy_example_rejects_a_metal_run(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path, m5_run: Run
) -> None:
    install(monkeypatch, torch=fake_torch(), cupy=None)
    run_json = tmp_path / "run.json"
    m5_run.save(run_json)
    assert run_example("torch_cupy_matmul.py", monkeypatch, [str(run_json)]) == 1
    assert "is a metal run" in capsys.readouterr().err


@pytest.fixture(autouse=True)
def _no_stray_modules() -> Iterator[None]:
    """The fakes never outlive their test (monkeypatch restores sys.modules)."""
    yield
    for name in ("cupy", "torch", "mlx.core", "Metal"):
        module = sys.modules.get(name)
        assert module is None or "fake" not in str(getattr(module, "__version__", ""))
