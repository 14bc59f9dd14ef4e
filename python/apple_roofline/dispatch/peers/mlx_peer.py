"""MLX: the study's kernels on the default Metal device (``mlx.core.fast.metal_kernel``) and on the CPU.

MLX builds a lazy graph: a launch is the kernel call and ``mx.async_eval`` of its output (``mx.eval``
where MLX has no ``async_eval``), the wait is ``mx.eval`` of the last output, and the round trip is
``mx.eval`` of one call, as MLX's users write it. MLX outputs are new arrays, so the tiny kernel runs
out of place, each launch reading the previous launch's output (:class:`TinyChain`).

* Metal (:func:`open_metal_kernels`, macOS on Apple silicon): both kernels are ``metal_kernel``
  bodies on ``mx.gpu``; the tiny body uses scalar loads and stores of 4 floats per thread where
  ``dispatch.metal`` uses a float4.
* CPU (:func:`open_cpu_kernels`, wherever MLX runs, Linux's ``mlx[cpu]`` included): the tiny kernel
  is ``mx.add(x, 1.0)`` on the CPU device (``mx.Device(mx.cpu, 0)``), one elementwise operation of
  MLX's own; the null kernel is reported skipped (:data:`CPU_NULL_SKIP`): ``metal_kernel`` needs Metal,
  and MLX has no other way to launch an empty kernel.

Every series' note names the device MLX ran on (``Device(cpu, 0)`` and, where MLX reports it, the
processor's name).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Dict, Iterator

import numpy as np

from ..kernels import TINY_FLOATS, TINY_ITEMS, check_tiny_counts
from ..model import PeerSkipped
from .common import (
    OpenedKernels,
    Opener,
    PeerKernel,
    PeerUnavailable,
    import_library,
    library_version,
    no_output_check,
)

__all__ = [
    "CPU_NULL_SKIP",
    "NAME",
    "OPENERS",
    "TINY_BODY",
    "TinyChain",
    "device_text",
    "open_cpu_kernels",
    "open_metal_kernels",
]

#: The peer's name: the path of its series.
NAME = "mlx"

#: The tiny kernel's body for ``metal_kernel`` (inputs ``inp``, output ``out``).
TINY_BODY = """
    uint i = thread_position_in_grid.x;
    if (i < 256) {
        uint j = 4 * i;
        out[j] = inp[j] + 1.0f;
        out[j + 1] = inp[j + 1] + 1.0f;
        out[j + 2] = inp[j + 2] + 1.0f;
        out[j + 3] = inp[j + 3] + 1.0f;
    }
"""

#: The null kernel's skip on the CPU device.
CPU_NULL_SKIP = (
    "null kernel: MLX has no empty kernel on the CPU device (its custom kernels, mx.fast.metal_kernel, need Metal)"
)


class TinyChain:
    """The MLX tiny kernel's current output: each launch's input is the previous launch's output."""

    def __init__(self, x: Any) -> None:
        self.x = x


def device_text(mx: Any, device: Any) -> str:
    """``device`` as MLX prints it, with the name ``mx.device_info`` gives where this MLX has it:
    ``"Device(cpu, 0) (Intel(R) Xeon(R) Processor)"``."""
    info = getattr(mx, "device_info", None)
    name = ""
    if info is not None:
        with contextlib.suppress(Exception):  # an MLX whose device_info does not take this device
            name = str(info(device).get("device_name", ""))
    return f"{device} ({name})" if name else str(device)


def _submitter(mx: Any) -> tuple[Callable[[Any], None], str]:
    """How a launch is submitted without waiting: ``mx.async_eval``, or ``mx.eval`` without it."""
    async_eval = getattr(mx, "async_eval", None)
    if async_eval is not None:
        return async_eval, "mx.async_eval(out)"
    return mx.eval, "mx.eval(out) (this MLX has no async_eval)"


def _launches(mx: Any, build: Callable[[], Any]) -> tuple[Callable[[], Any], Callable[[Any], None], Callable[[], None]]:
    """``(launch, wait, round_trip)`` of a kernel whose call is ``build()``: submit it, ``mx.eval`` the
    last output, ``mx.eval`` of one call."""
    submit, _ = _submitter(mx)
    eval_ = mx.eval

    def launch() -> Any:
        out = build()
        submit(out)
        return out

    def wait(handle: Any) -> None:
        eval_(handle)

    def round_trip() -> None:
        eval_(build())

    return launch, wait, round_trip


def _tiny_kernel(mx: Any, stream: Any, step: Callable[[Any], Any], *, what: str, build_text: str) -> PeerKernel:
    """The tiny kernel as a chain: ``x = step(x)`` per launch, from zeros made on ``stream``; valid when
    every float of the last output counts the launches made."""
    f32 = mx.float32
    chain = TinyChain(mx.zeros((TINY_FLOATS,), dtype=f32, stream=stream))
    mx.eval(chain.x)

    def build() -> Any:
        chain.x = step(chain.x)
        return chain.x

    def reset() -> None:
        chain.x = mx.zeros((TINY_FLOATS,), dtype=f32, stream=stream)
        mx.eval(chain.x)

    def check(count: int) -> tuple[bool, str]:
        return check_tiny_counts(np.array(chain.x, copy=True), count)

    launch, wait, round_trip = _launches(mx, build)
    _, submit_name = _submitter(mx)
    return PeerKernel(
        kernel="tiny",
        launch=launch,
        wait=wait,
        what=what,
        launch_calls=f"{build_text}, then {submit_name}",
        wait_calls="mx.eval(out) of the last launch",
        check=check,
        reset=reset,
        round_trip=round_trip,
        round_trip_calls=f"mx.eval({build_text})",
    )


@contextlib.contextmanager
def open_metal_kernels(device_index: int) -> Iterator[OpenedKernels]:
    """The null and tiny kernels on the default Metal device (``device_index`` must be 0).

    Raises:
        PeerUnavailable: MLX is not installed, has no Metal device, or another device was asked for.
    """
    mx = import_library("mlx.core", NAME)
    lib = f"MLX {library_version(mx)}"
    if not mx.metal.is_available():
        raise PeerUnavailable(f"{lib} has no Metal device (mlx.core.metal.is_available() is False)")
    if device_index != 0:
        raise PeerUnavailable(f"{lib} runs on the default Metal device only; metal:{device_index} was asked for")
    gpu = mx.gpu
    on = device_text(mx, mx.Device(gpu, 0))
    f32 = mx.float32
    null = mx.fast.metal_kernel(name="apple_roofline_dispatch_null", input_names=[], output_names=["out"], source="")
    tiny = mx.fast.metal_kernel(
        name="apple_roofline_dispatch_tiny", input_names=["inp"], output_names=["out"], source=TINY_BODY
    )

    def build_null() -> Any:
        return null(
            inputs=[], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(1,)], output_dtypes=[f32], stream=gpu
        )[0]

    def step_tiny(x: Any) -> Any:
        return tiny(
            inputs=[x],
            grid=(TINY_ITEMS, 1, 1),
            threadgroup=(TINY_ITEMS, 1, 1),
            output_shapes=[(TINY_FLOATS,)],
            output_dtypes=[f32],
            stream=gpu,
        )[0]

    build = "mx.fast.metal_kernel(...)(inputs=..., grid=..., threadgroup=..., output_shapes=..., output_dtypes=...)"
    _, submit_name = _submitter(mx)
    launch_null, wait, round_trip_null = _launches(mx, build_null)
    null_kernel = PeerKernel(
        kernel="null",
        launch=launch_null,
        wait=wait,
        what=(
            f"{lib} on {on}: mx.fast.metal_kernel with an empty body and one float32 output of shape (1,) "
            f"(not written), grid (1,1,1), threadgroup (1,1,1)"
        ),
        launch_calls=f"{build}, then {submit_name}",
        wait_calls="mx.eval(out) of the last launch",
        check=no_output_check(lib),
        round_trip=round_trip_null,
        round_trip_calls=f"mx.eval({build})",
    )
    tiny_kernel = _tiny_kernel(
        mx,
        gpu,
        step_tiny,
        what=(
            f"{lib} on {on}: mx.fast.metal_kernel, grid ({TINY_ITEMS},1,1), threadgroup ({TINY_ITEMS},1,1): each "
            f"of {TINY_ITEMS} threads adds 1.0 to 4 consecutive floats with scalar loads and stores (16 bytes, "
            f"as dispatch.metal's float4), out of place: out = kernel(prev) reads 4 KiB and writes a new "
            f"4 KiB array, chained so that after k launches every float is k"
        ),
        build_text=build,
    )
    yield [null_kernel, tiny_kernel], []


@contextlib.contextmanager
def open_cpu_kernels(device_index: int) -> Iterator[OpenedKernels]:
    """The tiny kernel on MLX's CPU device (and the null kernel skipped, with the reason); the CPU
    backend has one device, so ``device_index`` must be 0.

    Raises:
        PeerUnavailable: MLX is not installed, or another device was asked for.
    """
    mx = import_library("mlx.core", NAME)
    lib = f"MLX {library_version(mx)}"
    if device_index != 0:
        raise PeerUnavailable(f"{lib} has one CPU device; cpu:{device_index} was asked for")
    cpu = mx.Device(mx.cpu, 0)
    on = device_text(mx, cpu)

    def step_tiny(x: Any) -> Any:
        return mx.add(x, 1.0, stream=cpu)

    tiny_kernel = _tiny_kernel(
        mx,
        cpu,
        step_tiny,
        what=(
            f"{lib} on {on}: mx.add(x, 1.0) on a float32 array of {TINY_FLOATS} elements (4 KiB), one "
            f"elementwise operation of MLX's choosing (not the CPU backend's built-in kernel), out of place: "
            f"each launch reads the previous output and writes a new 4 KiB array, chained so that after k "
            f"launches every float is k"
        ),
        build_text=f"mx.add(x, 1.0, stream={cpu})",
    )
    yield [tiny_kernel], [PeerSkipped(path=NAME, reason=CPU_NULL_SKIP)]


#: Backend -> how the peer opens its kernels on a device of that backend (its index).
OPENERS: Dict[str, Opener] = {"metal": open_metal_kernels, "cpu": open_cpu_kernels}
