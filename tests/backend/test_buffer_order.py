"""The backend contract (core/backend.h; docs/design/measurement.md, "The backend interface"): Buffer.read,
read_into, write, view and dlpack wait for the backend's outstanding launches, so a launch followed
by a read returns the launch's result with no synchronize() between them, on every backend (the CPU
launches synchronously, CUDA orders copies on its stream and synchronizes before handing out an
address, Metal waits for the launches' command buffers). The tiny kernel adds 1 to each of 1024
floats, so after k launches every float is k."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from apple_roofline.shaders import resolve

SOURCES = {"cpu": "kernels.cpp", "cuda": "dispatch.cu", "metal": "dispatch.metal"}
FLOATS = 1024  # 256 threads × one float4 each
LAUNCHES = 200  # more than the GPU finishes while the host returns from launch(): work in flight


def _name(backend: Any) -> str:
    return str(backend.info()["backend"])


def _tiny(backend: Any) -> Any:
    src = SOURCES[_name(backend)]
    return backend.compile(*resolve(src, "dispatch_tiny"))


def _launched(backend: Any, launches: int = LAUNCHES) -> Any:
    """A zeroed buffer after `launches` launches of the tiny kernel, not synchronized."""
    x = backend.alloc(4 * FLOATS)
    x.write(np.zeros(FLOATS, dtype=np.float32))
    k = _tiny(backend)
    for _ in range(launches):
        k.launch((x,), 256)
    return x


def _expect(got: np.ndarray, value: float) -> None:
    assert got.shape == (FLOATS,) and bool(np.all(got == value)), f"want {value} everywhere, got {got[:8]}..."


def test_read_after_launch_needs_no_synchronize(backend: Any) -> None:
    _expect(_launched(backend).read("float32"), LAUNCHES)


def test_read_into_after_launch_needs_no_synchronize(backend: Any) -> None:
    out = np.full(FLOATS, -1.0, dtype=np.float32)
    _launched(backend).read_into(out)
    _expect(out, LAUNCHES)


def test_write_after_launch_lands_after_it(backend: Any) -> None:
    """The write waits for the launches: were it to land first, the launches still in flight would
    add to the written zeros."""
    x = _launched(backend)
    x.write(np.zeros(FLOATS, dtype=np.float32))
    backend.synchronize()
    _expect(x.read("float32"), 0.0)


def test_fill32_after_launch_lands_after_it_and_only_where_asked(backend: Any) -> None:
    """Buffer.fill32 waits for the launches before it (on CUDA it fills on the device, on the stream),
    sets exactly the words asked for, and refuses a span that is not whole words within the buffer."""
    x = _launched(backend)
    nan = 0x7FC00000  # a float32 NaN
    x.fill32(nan, 4 * (FLOATS - 8), 16)
    got = x.read("float32")
    assert np.all(got[:4] == LAUNCHES) and np.all(got[-4:] == LAUNCHES)
    assert np.all(np.isnan(got[4:-4])) and got[4:-4].view(np.uint32)[0] == nan
    with pytest.raises(ValueError, match="whole 32-bit words"):
        x.fill32(0, 6, 0)
    with pytest.raises(ValueError, match="out of range"):
        x.fill32(0, 4 * FLOATS, 4)


def _host_visible(backend: Any) -> bool:
    return _name(backend) != "cuda"


@pytest.mark.parametrize("export", ["view", "dlpack"])
def test_host_views_after_launch_need_no_synchronize(backend: Any, export: str) -> None:
    if not _host_visible(backend):
        pytest.skip("CUDA device memory has no host view; its DLPack export is checked with a GPU consumer below")
    x = _launched(backend)
    views: dict[str, Callable[[], np.ndarray]] = {
        "view": lambda: x.view("float32"),
        "dlpack": lambda: np.from_dlpack(x.dlpack("float32")),
    }
    _expect(np.array(views[export](), copy=True), LAUNCHES)


def test_cuda_dlpack_export_after_launch_needs_no_synchronize(backend: Any) -> None:
    """CUDA's address() synchronizes the stream before a DLPack consumer (which reads on a stream of
    its own) gets the pointer."""
    if _name(backend) != "cuda":
        pytest.skip("the device-memory DLPack export is CUDA's")
    torch = pytest.importorskip("torch", reason="a CUDA DLPack consumer (PyTorch) is needed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    x = _launched(backend)
    got = torch.from_dlpack(x.dlpack("float32")).cpu().numpy()
    _expect(got, LAUNCHES)
