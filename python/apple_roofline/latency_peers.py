"""Peer libraries in a dispatch-latency study: what one launch costs through CuPy, PyTorch, MLX, PyObjC.

Each peer launches the study's kernels (:mod:`apple_roofline.latency`: ``null``, one thread and no
memory; ``tiny``, one threadgroup/block of 256 threads adding 1.0 to 4 KiB of float32) through its
own public API, timed with the host clock as the ``python`` path is, so the series compare the
libraries' launch paths with the extension's. Two measures per kernel:

* ``throughput``: per sample, ``launches`` launches back to back, then one wait;
  seconds per launch = sample / ``launches`` (``launches_per_sample = launches``);
* ``round_trip``: per sample, one launch and its wait.

Each measure runs ``warmup`` untimed launches (then a wait) before its ``reps`` samples; samples
are :func:`time.perf_counter_ns` differences taken with the garbage collector disabled (as
:mod:`timeit` does; its previous state is restored). The ``tiny`` output is zeroed before each
measure and checked after it: every float must equal the number of launches that measure made
(warm-up included), so a launch that was dropped, or ran twice, fails validation.

Every library is optional and imported only here, inside the functions: a peer that is not
installed, fails to import, finds no device or raises while being measured becomes a
:class:`~apple_roofline.latency.PeerSkipped` with the reason, and the other peers still run.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import struct
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .latency import TINY_FLOATS, LatencySeries, PeerSkipped, check_tiny_counts
from .shaders import shader_source

__all__ = ["PEERS", "TINY_FLOATS", "gc_paused", "measure_peers"]

#: Peer name -> the backend whose devices it drives.
PEERS: dict[str, str] = {"cupy": "cuda", "torch": "cuda", "mlx": "metal", "pyobjc": "metal"}

_TINY_THREADS = 256
_BLOCK = 256

_BACKENDS = ("metal", "cuda", "cpu")


class _Unavailable(Exception):
    """The peer cannot run here (not installed, no device); the message is the whole reason."""


def _noop() -> None:
    return None


@dataclass
class _Kernel:
    """One kernel as a peer launches it."""

    kernel: str  # "null" or "tiny"
    launch: Callable[[], Any]  # one launch, not waited for; returns what ``wait`` takes
    wait: Callable[[Any], None]  # waits for that launch and everything queued before it
    what: str  # the kernel and its launch shape, for the notes
    launch_calls: str  # the API calls of one launch
    wait_calls: str  # the API call of the wait
    check: Callable[[int], tuple[bool, str]]  # validation after ``count`` launches since ``reset``
    reset: Callable[[], None] = _noop  # zero the output (and forget errors); waits for it
    round_trip: Callable[[], None] | None = None  # launch + wait as the library's users write it
    round_trip_calls: str = ""
    scope: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext  # wraps each sample, untimed


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the garbage collector (as :mod:`timeit` does), restoring its previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _throughput(k: _Kernel, *, reps: int, launches: int, warmup: int) -> list[float]:
    launch, wait, clock = k.launch, k.wait, time.perf_counter_ns
    if warmup:
        with k.scope():
            handle = None
            for _ in range(warmup):
                handle = launch()
            wait(handle)
    samples: list[float] = []
    with gc_paused():
        for _ in range(reps):
            with k.scope():
                t0 = clock()
                for _ in range(launches):
                    handle = launch()
                wait(handle)
                t1 = clock()
            samples.append((t1 - t0) * 1e-9 / launches)
    return samples


def _round_trip(k: _Kernel, *, reps: int, warmup: int) -> list[float]:
    launch, wait, clock = k.launch, k.wait, time.perf_counter_ns

    def launch_and_wait() -> None:
        wait(launch())

    one = k.round_trip or launch_and_wait
    if warmup:
        with k.scope():
            for _ in range(warmup):
                one()
    samples: list[float] = []
    with gc_paused():
        for _ in range(reps):
            with k.scope():
                t0 = clock()
                one()
                t1 = clock()
            samples.append((t1 - t0) * 1e-9)
    return samples


def _measure_kernel(path: str, k: _Kernel, out: list[LatencySeries], *, reps: int, launches: int, warmup: int,
                    progress: Callable[[str], None] | None) -> None:
    """Append ``k``'s throughput and round-trip series to ``out``, each as soon as it is measured."""
    clock_note = "Host clock: time.perf_counter_ns, garbage collector disabled"

    if progress:
        progress(f"{path} {k.kernel} throughput")
    k.reset()
    samples = _throughput(k, reps=reps, launches=launches, warmup=warmup)
    ok, message = k.check(warmup + reps * launches)
    out.append(LatencySeries(
        kernel=k.kernel, measure="throughput", path=path, clock="host", samples_s=tuple(samples),
        launches_per_sample=launches, valid=ok, validation=message,
        note=(f"{k.what}. {clock_note}; per sample {launches} launches back to back, then one wait, "
              f"divided by {launches}. Launch: {k.launch_calls}. Wait: {k.wait_calls}."),
    ))

    if progress:
        progress(f"{path} {k.kernel} round_trip")
    k.reset()
    samples = _round_trip(k, reps=reps, warmup=warmup)
    ok, message = k.check(warmup + reps)
    timed = k.round_trip_calls or f"{k.launch_calls}, then {k.wait_calls}"
    out.append(LatencySeries(
        kernel=k.kernel, measure="round_trip", path=path, clock="host", samples_s=tuple(samples),
        launches_per_sample=1, valid=ok, validation=message,
        note=f"{k.what}. {clock_note}; per sample one launch and its wait: {timed}.",
    ))


def _no_output(library: str) -> Callable[[int], tuple[bool, str]]:
    def check(count: int) -> tuple[bool, str]:
        return True, f"no output: the launch completed without an error from {library}"

    return check


def _import(module: str, peer: str) -> Any:
    """Import ``module`` for ``peer``; :class:`_Unavailable` naming it when missing or broken."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _Unavailable(f"{peer} is not installed (import {module}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - a broken install: missing shared libraries, version clashes ...
        raise _Unavailable(f"{peer} failed to import ({module}: {type(exc).__name__}: {exc})") from None


def _version(mod: Any) -> str:
    return str(getattr(mod, "__version__", "") or "(version unknown)")


# -- CuPy -------------------------------------------------------------------------------------


@contextlib.contextmanager
def _cupy(device_index: int) -> Iterator[tuple[list[_Kernel], list[PeerSkipped]]]:
    cp = _import("cupy", "cupy")
    lib = f"CuPy {_version(cp)}"
    device = cp.cuda.Device(device_index)
    with device:
        source = shader_source("dispatch.cu")
        options = (f"-DBLOCK={_BLOCK}",)
        null = cp.RawKernel(source, "dispatch_null", options=options)
        tiny = cp.RawKernel(source, "dispatch_tiny", options=options)
        x = cp.zeros(TINY_FLOATS, dtype=cp.float32)

        def wait(_handle: Any) -> None:
            device.synchronize()

        def reset() -> None:
            x.fill(0)
            device.synchronize()

        def check_tiny(count: int) -> tuple[bool, str]:
            return check_tiny_counts(cp.asnumpy(x), count)

        sync = f"cupy.cuda.Device({device_index}).synchronize()"
        kernels = [
            _Kernel(
                kernel="null",
                launch=functools.partial(null, (1,), (_BLOCK,), (cp.uint64(1),)),
                wait=wait,
                what=(f"{lib}: RawKernel over shaders/cuda/dispatch.cu dispatch_null (NVRTC, -DBLOCK={_BLOCK}), "
                      f"grid (1,), block ({_BLOCK},), n = 1"),
                launch_calls="RawKernel.__call__((1,), (256,), (uint64(1),))",
                wait_calls=sync,
                check=_no_output(lib),
            ),
            _Kernel(
                kernel="tiny",
                launch=functools.partial(tiny, (1,), (_BLOCK,), (x, cp.uint64(_TINY_THREADS))),
                wait=wait,
                what=(f"{lib}: RawKernel over shaders/cuda/dispatch.cu dispatch_tiny (NVRTC, -DBLOCK={_BLOCK}), "
                      f"grid (1,), block ({_BLOCK},), n = {_TINY_THREADS}: 256 float4 += 1.0 in place"),
                launch_calls=f"RawKernel.__call__((1,), (256,), (x, uint64({_TINY_THREADS})))",
                wait_calls=sync,
                check=check_tiny,
                reset=reset,
            ),
        ]
        yield kernels, []


# -- PyTorch ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _torch(device_index: int) -> Iterator[tuple[list[_Kernel], list[PeerSkipped]]]:
    torch = _import("torch", "torch")
    lib = f"PyTorch {_version(torch)}"
    if not torch.cuda.is_available():
        raise _Unavailable(f"{lib} has no CUDA device (torch.cuda.is_available() is False)")
    count = int(torch.cuda.device_count())
    if device_index >= count:
        raise _Unavailable(f"{lib} sees {count} CUDA device(s); cuda:{device_index} is not one of them")
    device = torch.device(f"cuda:{device_index}")
    x = torch.zeros(TINY_FLOATS, dtype=torch.float32, device=device)

    def wait(_handle: Any) -> None:
        torch.cuda.synchronize(device)

    def reset() -> None:
        x.zero_()
        torch.cuda.synchronize(device)

    def check_tiny(n: int) -> tuple[bool, str]:
        return check_tiny_counts(x.cpu().numpy(), n)

    kernels = [
        _Kernel(
            kernel="tiny",
            launch=functools.partial(x.add_, 1.0),
            wait=wait,
            what=(f"{lib}: x.add_(1.0) on a float32 tensor of {TINY_FLOATS} elements (4 KiB) on cuda:{device_index}, "
                  f"one elementwise kernel of PyTorch's choosing (not dispatch.cu)"),
            launch_calls="Tensor.add_(1.0)",
            wait_calls=f"torch.cuda.synchronize(cuda:{device_index})",
            check=check_tiny,
            reset=reset,
        ),
    ]
    skipped = [PeerSkipped(path="torch", reason="null kernel: PyTorch has no public API that launches an empty kernel")]
    yield kernels, skipped


# -- MLX --------------------------------------------------------------------------------------

_MLX_TINY_BODY = """
    uint i = thread_position_in_grid.x;
    if (i < 256) {
        uint j = 4 * i;
        out[j] = inp[j] + 1.0f;
        out[j + 1] = inp[j + 1] + 1.0f;
        out[j + 2] = inp[j + 2] + 1.0f;
        out[j + 3] = inp[j + 3] + 1.0f;
    }
"""


class _Chain:
    """The MLX tiny kernel's current output: each launch's input is the previous launch's output."""

    def __init__(self, x: Any) -> None:
        self.x = x


@contextlib.contextmanager
def _mlx(device_index: int) -> Iterator[tuple[list[_Kernel], list[PeerSkipped]]]:
    mx = _import("mlx.core", "mlx")
    lib = f"MLX {_version(mx)}"
    if not mx.metal.is_available():
        raise _Unavailable(f"{lib} has no Metal device (mlx.core.metal.is_available() is False)")
    if device_index != 0:
        raise _Unavailable(f"{lib} runs on the default Metal device only; metal:{device_index} was asked for")
    gpu = mx.gpu
    f32 = mx.float32
    eval_ = mx.eval
    async_eval = getattr(mx, "async_eval", None)
    null = mx.fast.metal_kernel(name="apple_roofline_dispatch_null", input_names=[], output_names=["out"], source="")
    tiny = mx.fast.metal_kernel(name="apple_roofline_dispatch_tiny", input_names=["inp"], output_names=["out"],
                                source=_MLX_TINY_BODY)
    chain = _Chain(mx.zeros((TINY_FLOATS,), dtype=f32))
    eval_(chain.x)

    def build_null() -> Any:
        return null(inputs=[], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(1,)],
                    output_dtypes=[f32], stream=gpu)[0]

    def build_tiny() -> Any:
        chain.x = tiny(inputs=[chain.x], grid=(_TINY_THREADS, 1, 1), threadgroup=(_TINY_THREADS, 1, 1),
                       output_shapes=[(TINY_FLOATS,)], output_dtypes=[f32], stream=gpu)[0]
        return chain.x

    submit = async_eval if async_eval is not None else eval_
    submit_name = "mx.async_eval(out)" if async_eval is not None else "mx.eval(out) (this MLX has no async_eval)"

    def launch_null() -> Any:
        out = build_null()
        submit(out)
        return out

    def launch_tiny() -> Any:
        out = build_tiny()
        submit(out)
        return out

    def wait(handle: Any) -> None:
        eval_(handle)

    def round_trip_null() -> None:
        eval_(build_null())

    def round_trip_tiny() -> None:
        eval_(build_tiny())

    def reset() -> None:
        chain.x = mx.zeros((TINY_FLOATS,), dtype=f32)
        eval_(chain.x)

    def check_tiny(count: int) -> tuple[bool, str]:
        return check_tiny_counts(np.array(chain.x, copy=True), count)

    build = "mx.fast.metal_kernel(...)(inputs=..., grid=..., threadgroup=..., output_shapes=..., output_dtypes=...)"
    kernels = [
        _Kernel(
            kernel="null",
            launch=launch_null,
            wait=wait,
            what=(f"{lib}: mx.fast.metal_kernel with an empty body and one float32 output of shape (1,) "
                  f"(not written), grid (1,1,1), threadgroup (1,1,1)"),
            launch_calls=f"{build}, then {submit_name}",
            wait_calls="mx.eval(out) of the last launch",
            check=_no_output(lib),
            round_trip=round_trip_null,
            round_trip_calls=f"mx.eval({build})",
        ),
        _Kernel(
            kernel="tiny",
            launch=launch_tiny,
            wait=wait,
            what=(f"{lib}: mx.fast.metal_kernel, grid (256,1,1), threadgroup (256,1,1): each of 256 threads adds "
                  f"1.0 to 4 consecutive floats with scalar loads and stores (16 bytes, as dispatch.metal's float4), "
                  f"out of place: out = kernel(prev) reads 4 KiB and writes a new 4 KiB array, chained so that "
                  f"after k launches every float is k"),
            launch_calls=f"{build}, then {submit_name}",
            wait_calls="mx.eval(out) of the last launch",
            check=check_tiny,
            reset=reset,
            round_trip=round_trip_tiny,
            round_trip_calls=f"mx.eval({build})",
        ),
    ]
    yield kernels, []


# -- PyObjC (Metal) ---------------------------------------------------------------------------


def _ns_error(err: Any) -> str:
    if err is None:
        return "no NSError"
    try:
        return str(err.localizedDescription())
    except Exception:  # noqa: BLE001 - an unexpected object: its repr is better than nothing
        return repr(err)


def _metal_device(metal: Any, device_index: int) -> Any:
    """The device ``metal:N`` names, in the extension's order: the system default first, then the
    others MTLCopyAllDevices() lists."""
    default = metal.MTLCreateSystemDefaultDevice()
    if default is None:
        raise _Unavailable("no Metal device (MTLCreateSystemDefaultDevice returned nil)")
    if device_index == 0:
        return default
    devices = [default] + [d for d in metal.MTLCopyAllDevices() if d.registryID() != default.registryID()]
    if device_index >= len(devices):
        raise _Unavailable(f"Metal lists {len(devices)} device(s); metal:{device_index} is not one of them")
    return devices[device_index]


@contextlib.contextmanager
def _pyobjc(device_index: int) -> Iterator[tuple[list[_Kernel], list[PeerSkipped]]]:
    metal = _import("Metal", "pyobjc")
    objc = _import("objc", "pyobjc")
    lib = f"Metal through PyObjC {_version(objc)}"
    scope: Callable[[], AbstractContextManager[Any]] = getattr(objc, "autorelease_pool", contextlib.nullcontext)
    completed = int(getattr(metal, "MTLCommandBufferStatusCompleted", 4))
    device = _metal_device(metal, device_index)
    library, err = device.newLibraryWithSource_options_error_(shader_source("dispatch.metal"), None, None)
    if library is None:
        raise RuntimeError(f"newLibraryWithSource failed for shaders/metal/dispatch.metal: {_ns_error(err)}")
    queue = device.newCommandQueue()
    errors: list[str] = []

    def pipeline(entry: str) -> Any:
        fn = library.newFunctionWithName_(entry)
        if fn is None:
            raise RuntimeError(f"dispatch.metal has no function {entry}")
        pso, perr = device.newComputePipelineStateWithFunction_error_(fn, None)
        if pso is None:
            raise RuntimeError(f"newComputePipelineStateWithFunction failed for {entry}: {_ns_error(perr)}")
        return pso

    null_pso = pipeline("dispatch_null")
    tiny_pso = pipeline("dispatch_tiny")
    buf = device.newBufferWithLength_options_(TINY_FLOATS * 4, int(getattr(metal, "MTLResourceStorageModeShared", 0)))
    if buf is None:
        raise RuntimeError("newBufferWithLength failed for 4096 bytes")
    x = np.frombuffer(buf.contents().as_buffer(TINY_FLOATS * 4), dtype=np.float32)
    n_null = struct.pack("<Q", 1)
    n_tiny = struct.pack("<Q", _TINY_THREADS)
    grid_null, group_null = metal.MTLSizeMake(1, 1, 1), metal.MTLSizeMake(1, 1, 1)
    grid_tiny, group_tiny = metal.MTLSizeMake(_TINY_THREADS, 1, 1), metal.MTLSizeMake(_TINY_THREADS, 1, 1)

    def launch_null() -> Any:
        cb = queue.commandBuffer()
        enc = cb.computeCommandEncoder()
        enc.setComputePipelineState_(null_pso)
        enc.setBytes_length_atIndex_(n_null, 8, 0)
        enc.dispatchThreads_threadsPerThreadgroup_(grid_null, group_null)
        enc.endEncoding()
        cb.commit()
        return cb

    def launch_tiny() -> Any:
        cb = queue.commandBuffer()
        enc = cb.computeCommandEncoder()
        enc.setComputePipelineState_(tiny_pso)
        enc.setBuffer_offset_atIndex_(buf, 0, 0)
        enc.setBytes_length_atIndex_(n_tiny, 8, 1)
        enc.dispatchThreads_threadsPerThreadgroup_(grid_tiny, group_tiny)
        enc.endEncoding()
        cb.commit()
        return cb

    def wait(cb: Any) -> None:
        cb.waitUntilCompleted()
        status = int(cb.status())
        if status != completed:
            errors.append(f"a command buffer ended with status {status}, not {completed} (Completed): "
                          f"{_ns_error(cb.error())}")

    def reset_null() -> None:
        errors.clear()

    def reset_tiny() -> None:
        errors.clear()
        x[:] = 0.0

    def check_null(count: int) -> tuple[bool, str]:
        if errors:
            return False, f"{len(errors)} failed wait(s); first: {errors[0]}"
        return True, f"no output: the launch completed without an error from {lib}"

    def check_tiny(count: int) -> tuple[bool, str]:
        if errors:
            return False, f"{len(errors)} failed wait(s); first: {errors[0]}"
        return check_tiny_counts(x.copy(), count)

    encode = ("queue.commandBuffer(), computeCommandEncoder(), setComputePipelineState_, {args}"
              "dispatchThreads_threadsPerThreadgroup_({n}, {g}), endEncoding(), commit(): one command buffer")
    waited = "waitUntilCompleted() of the last command buffer, status() == Completed"
    kernels = [
        _Kernel(
            kernel="null",
            launch=launch_null,
            wait=wait,
            what=(f"{lib}: shaders/metal/dispatch.metal dispatch_null (newLibraryWithSource, default options), "
                  f"dispatchThreads 1, threadgroup 1, n = 1; an autorelease pool per sample (untimed)"),
            launch_calls=encode.format(args="setBytes_length_atIndex_(n, 8, 0), ", n=1, g=1),
            wait_calls=waited,
            check=check_null,
            reset=reset_null,
            scope=scope,
        ),
        _Kernel(
            kernel="tiny",
            launch=launch_tiny,
            wait=wait,
            what=(f"{lib}: shaders/metal/dispatch.metal dispatch_tiny (newLibraryWithSource, default options), "
                  f"dispatchThreads {_TINY_THREADS}, threadgroup {_TINY_THREADS}, n = {_TINY_THREADS}: 256 float4 "
                  f"+= 1.0 in a 4 KiB shared-storage buffer; an autorelease pool per sample (untimed)"),
            launch_calls=encode.format(args="setBuffer_offset_atIndex_(x, 0, 0), setBytes_length_atIndex_(n, 8, 1), ",
                                       n=_TINY_THREADS, g=_TINY_THREADS),
            wait_calls=waited,
            check=check_tiny,
            reset=reset_tiny,
            scope=scope,
        ),
    ]
    yield kernels, []


_OPENERS: dict[str, Callable[[int], AbstractContextManager[tuple[list[_Kernel], list[PeerSkipped]]]]] = {
    "cupy": _cupy,
    "torch": _torch,
    "mlx": _mlx,
    "pyobjc": _pyobjc,
}


def _positive(value: Any, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise ValueError(f"{name} {value!r} is out of range (valid: an integer, {lo} or more)")
    return int(value)


def measure_peers(
    backend: str,
    device_index: int,
    *,
    reps: int,
    launches: int,
    warmup: int,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[LatencySeries], list[PeerSkipped]]:
    """Measure every peer library of ``backend`` on device ``device_index``.

    For each peer of :data:`PEERS` whose backend is ``backend`` (in that order), and each kernel
    the peer can express (``null``, ``tiny``): a ``throughput`` series (``reps`` samples of
    ``launches`` back-to-back launches and one wait, in seconds per launch,
    ``launches_per_sample = launches``) and a ``round_trip`` series (``reps`` samples of one
    launch and its wait, seconds), both ``clock="host"``, ``path`` = the peer's name, each after
    ``warmup`` untimed launches. ``tiny`` series are validated (every float equals the launches
    made since the output was zeroed); ``null`` series only record that no error was raised.

    Args:
        backend: ``"cuda"``, ``"metal"`` or ``"cpu"`` (no peers).
        device_index: the device's index within the backend (``cuda:N``, ``metal:N``), >= 0.
        reps: samples per series, >= 1.
        launches: launches per ``throughput`` sample, >= 1.
        warmup: untimed launches before each series, >= 0.
        progress: called with a one-line description (``"cupy tiny round_trip"``, or a skip and
            its reason) before each series.

    Returns:
        ``(series, skipped)``: the series measured (valid or not, in peer order) and the peers
        (or kernels) not measured, with reasons: not installed or broken (naming the library), no
        device, or ``"<ExceptionType>: <message>"`` when measuring raised; a peer's series
        measured before such an exception are kept.

    Raises:
        ValueError: unknown ``backend``, or ``device_index``, ``reps``, ``launches`` or
            ``warmup`` out of range (nothing is measured). Nothing a peer raises propagates
            except ``KeyboardInterrupt`` and other ``BaseException`` that are not ``Exception``.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (valid: {', '.join(_BACKENDS)})")
    device_index = _positive(device_index, "device_index", 0)
    reps = _positive(reps, "reps", 1)
    launches = _positive(launches, "launches", 1)
    warmup = _positive(warmup, "warmup", 0)

    series: list[LatencySeries] = []
    skipped: list[PeerSkipped] = []

    def skip(path: str, reason: str) -> None:
        skipped.append(PeerSkipped(path=path, reason=reason))
        if progress:
            progress(f"{path}: skipped, {reason}")

    for path, peer_backend in PEERS.items():
        if peer_backend != backend:
            continue
        try:
            with _OPENERS[path](device_index) as (kernels, kernel_skips):
                for s in kernel_skips:
                    skip(s.path, s.reason)
                for k in kernels:
                    _measure_kernel(path, k, series, reps=reps, launches=launches, warmup=warmup,
                                    progress=progress)
        except _Unavailable as exc:
            skip(path, str(exc))
        except Exception as exc:  # noqa: BLE001 - one peer's failure must not stop the others
            skip(path, f"{type(exc).__name__}: {exc}")
    return series, skipped
