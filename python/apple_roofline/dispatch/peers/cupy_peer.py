"""CuPy: the study's ``dispatch.cu`` kernels through ``cupy.RawKernel`` (NVRTC), on one CUDA device.

Both kernels are the source the native path compiles, so the CuPy series and the ``python`` series
differ only in the launch path. The wait is ``cupy.cuda.Device(N).synchronize()``.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Dict, Iterator

from ...shaders import shader_source
from ..kernels import TINY_FLOATS, TINY_ITEMS, check_tiny_counts
from .common import OpenedKernels, Opener, PeerKernel, import_library, library_version, no_output_check

__all__ = ["NAME", "OPENERS", "BLOCK", "open_kernels"]

#: The peer's name: the path of its series.
NAME = "cupy"
#: Threads per block, compiled into dispatch.cu as ``-DBLOCK``.
BLOCK = 256


@contextlib.contextmanager
def open_kernels(device_index: int) -> Iterator[OpenedKernels]:
    """The null and tiny kernels on ``cuda:device_index``.

    Raises:
        PeerUnavailable: CuPy is not installed or fails to import.
        Exception: whatever CuPy raises for a missing device or a failed compile.
    """
    cp = import_library("cupy", NAME)
    lib = f"CuPy {library_version(cp)}"
    device = cp.cuda.Device(device_index)
    with device:
        source = shader_source("dispatch.cu")
        options = (f"-DBLOCK={BLOCK}",)
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
            PeerKernel(
                kernel="null",
                launch=functools.partial(null, (1,), (BLOCK,), (cp.uint64(1),)),
                wait=wait,
                what=(
                    f"{lib}: RawKernel over shaders/cuda/dispatch.cu dispatch_null (NVRTC, -DBLOCK={BLOCK}), "
                    f"grid (1,), block ({BLOCK},), n = 1"
                ),
                launch_calls=f"RawKernel.__call__((1,), ({BLOCK},), (uint64(1),))",
                wait_calls=sync,
                check=no_output_check(lib),
            ),
            PeerKernel(
                kernel="tiny",
                launch=functools.partial(tiny, (1,), (BLOCK,), (x, cp.uint64(TINY_ITEMS))),
                wait=wait,
                what=(
                    f"{lib}: RawKernel over shaders/cuda/dispatch.cu dispatch_tiny (NVRTC, -DBLOCK={BLOCK}), "
                    f"grid (1,), block ({BLOCK},), n = {TINY_ITEMS}: {TINY_ITEMS} float4 += 1.0 in place"
                ),
                launch_calls=f"RawKernel.__call__((1,), ({BLOCK},), (x, uint64({TINY_ITEMS})))",
                wait_calls=sync,
                check=check_tiny,
                reset=reset,
            ),
        ]
        yield kernels, []


#: Backend -> how the peer opens its kernels on a device of that backend (its index).
OPENERS: Dict[str, Opener] = {"cuda": open_kernels}
