"""PyTorch: the tiny kernel as ``x.add_(1.0)`` on a 4 KiB float32 tensor of one CUDA device.

PyTorch has no public API that launches an empty kernel, so the null kernel is reported skipped. The
tiny launch is one elementwise kernel of PyTorch's choosing, not ``dispatch.cu``; the wait is
``torch.cuda.synchronize``.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Dict, Iterator

from ..kernels import TINY_FLOATS, check_tiny_counts
from ..model import PeerSkipped
from .common import OpenedKernels, Opener, PeerKernel, PeerUnavailable, import_library, library_version

__all__ = ["NAME", "OPENERS", "open_kernels"]

#: The peer's name: the path of its series.
NAME = "torch"


@contextlib.contextmanager
def open_kernels(device_index: int) -> Iterator[OpenedKernels]:
    """The tiny kernel on ``cuda:device_index`` (and the null kernel skipped, with the reason).

    Raises:
        PeerUnavailable: PyTorch is not installed, has no CUDA, or lacks that device.
    """
    torch = import_library("torch", NAME)
    lib = f"PyTorch {library_version(torch)}"
    if not torch.cuda.is_available():
        raise PeerUnavailable(f"{lib} has no CUDA device (torch.cuda.is_available() is False)")
    count = int(torch.cuda.device_count())
    if device_index >= count:
        raise PeerUnavailable(f"{lib} sees {count} CUDA device(s); cuda:{device_index} is not one of them")
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
        PeerKernel(
            kernel="tiny",
            launch=functools.partial(x.add_, 1.0),
            wait=wait,
            what=(
                f"{lib}: x.add_(1.0) on a float32 tensor of {TINY_FLOATS} elements (4 KiB) on cuda:{device_index}, "
                f"one elementwise kernel of PyTorch's choosing (not dispatch.cu)"
            ),
            launch_calls="Tensor.add_(1.0)",
            wait_calls=f"torch.cuda.synchronize(cuda:{device_index})",
            check=check_tiny,
            reset=reset,
        ),
    ]
    skipped = [PeerSkipped(path=NAME, reason="null kernel: PyTorch has no public API that launches an empty kernel")]
    yield kernels, skipped


#: Backend -> how the peer opens its kernels on a device of that backend (its index).
OPENERS: Dict[str, Opener] = {"cuda": open_kernels}
