"""MLX: the study's kernels through ``mlx.core.fast.metal_kernel`` on the default Metal device.

MLX builds a lazy graph: a launch is the kernel call and ``mx.async_eval`` of its output (``mx.eval``
where MLX has no ``async_eval``), the wait is ``mx.eval`` of the last output, and the round trip is
``mx.eval`` of one call, as MLX's users write it. MLX outputs are new arrays, so the tiny kernel runs
out of place, each launch reading the previous launch's output (:class:`TinyChain`); its body uses
scalar loads and stores of 4 floats per thread where ``dispatch.metal`` uses a float4.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from ..kernels import TINY_FLOATS, TINY_ITEMS, check_tiny_counts
from .common import OpenedKernels, PeerKernel, PeerUnavailable, import_library, library_version, no_output_check

__all__ = ["NAME", "BACKEND", "TINY_BODY", "TinyChain", "open_kernels"]

#: The peer's name: the path of its series.
NAME = "mlx"
#: The backend whose devices it drives.
BACKEND = "metal"

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


class TinyChain:
    """The MLX tiny kernel's current output: each launch's input is the previous launch's output."""

    def __init__(self, x: Any) -> None:
        self.x = x


@contextlib.contextmanager
def open_kernels(device_index: int) -> Iterator[OpenedKernels]:
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
    f32 = mx.float32
    eval_ = mx.eval
    async_eval = getattr(mx, "async_eval", None)
    null = mx.fast.metal_kernel(name="apple_roofline_dispatch_null", input_names=[], output_names=["out"], source="")
    tiny = mx.fast.metal_kernel(
        name="apple_roofline_dispatch_tiny", input_names=["inp"], output_names=["out"], source=TINY_BODY
    )
    chain = TinyChain(mx.zeros((TINY_FLOATS,), dtype=f32))
    eval_(chain.x)

    def build_null() -> Any:
        return null(
            inputs=[], grid=(1, 1, 1), threadgroup=(1, 1, 1), output_shapes=[(1,)], output_dtypes=[f32], stream=gpu
        )[0]

    def build_tiny() -> Any:
        chain.x = tiny(
            inputs=[chain.x],
            grid=(TINY_ITEMS, 1, 1),
            threadgroup=(TINY_ITEMS, 1, 1),
            output_shapes=[(TINY_FLOATS,)],
            output_dtypes=[f32],
            stream=gpu,
        )[0]
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
        PeerKernel(
            kernel="null",
            launch=launch_null,
            wait=wait,
            what=(
                f"{lib}: mx.fast.metal_kernel with an empty body and one float32 output of shape (1,) "
                f"(not written), grid (1,1,1), threadgroup (1,1,1)"
            ),
            launch_calls=f"{build}, then {submit_name}",
            wait_calls="mx.eval(out) of the last launch",
            check=no_output_check(lib),
            round_trip=round_trip_null,
            round_trip_calls=f"mx.eval({build})",
        ),
        PeerKernel(
            kernel="tiny",
            launch=launch_tiny,
            wait=wait,
            what=(
                f"{lib}: mx.fast.metal_kernel, grid ({TINY_ITEMS},1,1), threadgroup ({TINY_ITEMS},1,1): each of "
                f"{TINY_ITEMS} threads adds 1.0 to 4 consecutive floats with scalar loads and stores (16 bytes, "
                f"as dispatch.metal's float4), out of place: out = kernel(prev) reads 4 KiB and writes a new "
                f"4 KiB array, chained so that after k launches every float is k"
            ),
            launch_calls=f"{build}, then {submit_name}",
            wait_calls="mx.eval(out) of the last launch",
            check=check_tiny,
            reset=reset,
            round_trip=round_trip_tiny,
            round_trip_calls=f"mx.eval({build})",
        ),
    ]
    yield kernels, []
