"""PyObjC: the study's ``dispatch.metal`` kernels through the Metal framework's own API, one command
buffer per launch.

A launch creates a command buffer and a compute encoder, sets the pipeline and arguments, dispatches,
ends encoding and commits; the wait is ``waitUntilCompleted`` of the last command buffer, whose
status must be Completed (a failed command buffer makes the series invalid). Each sample runs in an
autorelease pool, untimed. Devices are numbered as the extension numbers them (:func:`metal_device`).
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Dict, Iterator, NamedTuple

import numpy as np

from ...shaders import shader_source
from ..kernels import TINY_FLOATS, TINY_ITEMS, check_tiny_counts
from .common import OpenedKernels, Opener, PeerKernel, PeerUnavailable, import_library, library_version

__all__ = ["NAME", "OPENERS", "describe_ns_error", "metal_device", "open_kernels"]

#: The peer's name: the path of its series.
NAME = "pyobjc"


def describe_ns_error(err: Any) -> str:
    """An ``NSError``'s localized description (``"no NSError"`` for nil)."""
    if err is None:
        return "no NSError"
    try:
        return str(err.localizedDescription())
    except Exception:  # noqa: BLE001 - an unexpected object: its repr is better than nothing
        return repr(err)


def metal_device(metal: Any, device_index: int) -> Any:
    """The device ``metal:N`` names, in the extension's order: the system default first, then the
    others MTLCopyAllDevices() lists.

    Raises:
        PeerUnavailable: no Metal device, or fewer than ``device_index + 1``.
    """
    default = metal.MTLCreateSystemDefaultDevice()
    if default is None:
        raise PeerUnavailable("no Metal device (MTLCreateSystemDefaultDevice returned nil)")
    if device_index == 0:
        return default
    devices = [default] + [d for d in metal.MTLCopyAllDevices() if d.registryID() != default.registryID()]
    if device_index >= len(devices):
        raise PeerUnavailable(f"Metal lists {len(devices)} device(s); metal:{device_index} is not one of them")
    return devices[device_index]


@contextlib.contextmanager
def open_kernels(device_index: int) -> Iterator[OpenedKernels]:
    """The null and tiny kernels on ``metal:device_index``.

    Raises:
        PeerUnavailable: PyObjC's Metal or objc is not installed, or the device is missing.
        RuntimeError: compiling dispatch.metal or allocating its buffer failed.
    """
    metal = import_library("Metal", NAME)
    objc = import_library("objc", NAME)
    lib = f"Metal through PyObjC {library_version(objc)}"
    scope: Callable[[], AbstractContextManager[Any]] = getattr(objc, "autorelease_pool", contextlib.nullcontext)
    completed = int(getattr(metal, "MTLCommandBufferStatusCompleted", 4))
    device = metal_device(metal, device_index)
    library, err = device.newLibraryWithSource_options_error_(shader_source("dispatch.metal"), None, None)
    if library is None:
        raise RuntimeError(f"newLibraryWithSource failed for shaders/metal/dispatch.metal: {describe_ns_error(err)}")
    queue = device.newCommandQueue()
    null_pso = _pipeline(device, library, "dispatch_null")
    tiny_pso = _pipeline(device, library, "dispatch_tiny")
    buf, x = _shared_buffer(metal, device)
    launch_null, launch_tiny = _launchers(metal, queue, null_pso, tiny_pso, buf)
    yield _peer_kernels(lib, scope, launch_null, launch_tiny, _checks(completed, x, lib)), []


def _pipeline(device: Any, library: Any, entry: str) -> Any:
    """The compute pipeline state of dispatch.metal's function ``entry``.

    Raises:
        RuntimeError: the library has no such function, or the pipeline failed (the NSError's text).
    """
    fn = library.newFunctionWithName_(entry)
    if fn is None:
        raise RuntimeError(f"dispatch.metal has no function {entry}")
    pso, perr = device.newComputePipelineStateWithFunction_error_(fn, None)
    if pso is None:
        raise RuntimeError(f"newComputePipelineStateWithFunction failed for {entry}: {describe_ns_error(perr)}")
    return pso


def _shared_buffer(metal: Any, device: Any) -> tuple[Any, np.ndarray]:
    """The tiny kernel's :data:`TINY_FLOATS` float32 buffer in shared storage, and a NumPy view of
    its contents (float32, the host's side of the same memory).

    Raises:
        RuntimeError: the allocation failed.
    """
    buf = device.newBufferWithLength_options_(TINY_FLOATS * 4, int(getattr(metal, "MTLResourceStorageModeShared", 0)))
    if buf is None:
        raise RuntimeError(f"newBufferWithLength failed for {TINY_FLOATS * 4} bytes")
    return buf, np.frombuffer(buf.contents().as_buffer(TINY_FLOATS * 4), dtype=np.float32)


def _launchers(
    metal: Any, queue: Any, null_pso: Any, tiny_pso: Any, buf: Any
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``(launch_null, launch_tiny)``: one launch each, one command buffer on ``queue`` committed and
    returned, not waited for (null: one thread, n = 1; tiny: :data:`TINY_ITEMS` threads in one
    threadgroup, ``buf`` and n = :data:`TINY_ITEMS`)."""
    n_null = struct.pack("<Q", 1)
    n_tiny = struct.pack("<Q", TINY_ITEMS)
    grid_null, group_null = metal.MTLSizeMake(1, 1, 1), metal.MTLSizeMake(1, 1, 1)
    grid_tiny, group_tiny = metal.MTLSizeMake(TINY_ITEMS, 1, 1), metal.MTLSizeMake(TINY_ITEMS, 1, 1)

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

    return launch_null, launch_tiny


class _Checks(NamedTuple):
    """The wait both kernels share and each kernel's reset and validation, over one list of the
    waits that failed since the last reset."""

    wait: Callable[[Any], None]
    reset_null: Callable[[], None]
    reset_tiny: Callable[[], None]
    check_null: Callable[[int], tuple[bool, str]]
    check_tiny: Callable[[int], tuple[bool, str]]


def _checks(completed: int, x: np.ndarray, lib: str) -> _Checks:
    """The wait (``waitUntilCompleted``; a status other than ``completed`` is kept as a failed wait),
    the resets (forget the failed waits; tiny: also zero its output ``x``) and the checks (invalid
    after a failed wait; null: else no output to check; tiny: every float of ``x`` equal to the
    launches made). Closures, as the other peers' are: the wait is inside the timed loops."""
    errors: list[str] = []

    def wait(cb: Any) -> None:
        cb.waitUntilCompleted()
        status = int(cb.status())
        if status != completed:
            errors.append(
                f"a command buffer ended with status {status}, not {completed} (Completed): "
                f"{describe_ns_error(cb.error())}"
            )

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

    return _Checks(wait, reset_null, reset_tiny, check_null, check_tiny)


def _peer_kernels(
    lib: str,
    scope: Callable[[], AbstractContextManager[Any]],
    launch_null: Callable[[], Any],
    launch_tiny: Callable[[], Any],
    checks: _Checks,
) -> list[PeerKernel]:
    """The null and tiny kernels as the peer launches them, with the notes' text of their calls."""
    encode = (
        "queue.commandBuffer(), computeCommandEncoder(), setComputePipelineState_, {args}"
        "dispatchThreads_threadsPerThreadgroup_({n}, {g}), endEncoding(), commit(): one command buffer"
    )
    waited = "waitUntilCompleted() of the last command buffer, status() == Completed"
    return [
        PeerKernel(
            kernel="null",
            launch=launch_null,
            wait=checks.wait,
            what=(
                f"{lib}: shaders/metal/dispatch.metal dispatch_null (newLibraryWithSource, default options), "
                f"dispatchThreads 1, threadgroup 1, n = 1; an autorelease pool per sample (untimed)"
            ),
            launch_calls=encode.format(args="setBytes_length_atIndex_(n, 8, 0), ", n=1, g=1),
            wait_calls=waited,
            check=checks.check_null,
            reset=checks.reset_null,
            scope=scope,
        ),
        PeerKernel(
            kernel="tiny",
            launch=launch_tiny,
            wait=checks.wait,
            what=(
                f"{lib}: shaders/metal/dispatch.metal dispatch_tiny (newLibraryWithSource, default options), "
                f"dispatchThreads {TINY_ITEMS}, threadgroup {TINY_ITEMS}, n = {TINY_ITEMS}: {TINY_ITEMS} float4 "
                f"+= 1.0 in a 4 KiB shared-storage buffer; an autorelease pool per sample (untimed)"
            ),
            launch_calls=encode.format(
                args="setBuffer_offset_atIndex_(x, 0, 0), setBytes_length_atIndex_(n, 8, 1), ",
                n=TINY_ITEMS,
                g=TINY_ITEMS,
            ),
            wait_calls=waited,
            check=checks.check_tiny,
            reset=checks.reset_tiny,
            scope=scope,
        ),
    ]


#: Backend -> how the peer opens its kernels on a device of that backend (its index).
OPENERS: Dict[str, Opener] = {"metal": open_kernels}
