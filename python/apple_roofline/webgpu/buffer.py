"""Device memory of the WebGPU backend: a storage buffer with ``_core.Buffer``'s calls.

A wgpu queue runs its work in submission order, so a write (``queue.write_buffer``), a fill (a
dispatch of ``shaders/wgsl/fill.wgsl``) or a read (a copy into a mappable buffer, mapped within the
watchdog's bound) is ordered after every launch submitted before it: no ``synchronize()`` is needed
between a launch and a read (docs/design/measurement.md, "The backend interface"). The memory is not host-visible,
so :meth:`WgpuBuffer.view` raises ValueError, as a CUDA buffer's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["WgpuBuffer", "READ_CHUNK_BYTES"]

#: Bytes copied through one mappable staging buffer at a time: a read of a 256 MiB array maps 64 MiB
#: pieces, so it costs 64 MiB of extra memory, not a second array.
READ_CHUNK_BYTES = 64 << 20


class WgpuBuffer:
    """``nbytes`` bytes of a wgpu storage buffer (``buffer``, its size rounded up to 4 bytes) of
    ``backend`` (a :class:`~.backend.WgpuBackend`), zero-filled as WebGPU creates every buffer."""

    def __init__(self, backend: Any, buffer: Any, nbytes: int) -> None:
        self.backend = backend
        self.buffer = buffer
        self._nbytes = nbytes

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self._nbytes

    def _range(self, offset: int, n: int) -> None:
        if offset < 0 or n < 0 or offset + n > self._nbytes:
            raise ValueError(f"bytes {offset} to {offset + n} are outside the buffer's 0 to {self._nbytes}")

    def write(self, array: np.ndarray, offset: int = 0) -> None:
        """Copy a C-contiguous array's bytes into the buffer at byte ``offset``, after the launches
        submitted before. Raises ValueError out of range or for a non-contiguous array."""
        if not array.flags.c_contiguous:
            raise ValueError("write takes a C-contiguous array")
        data: Any = array.reshape(-1).view(np.uint8)  # the array's bytes, no copy
        n = int(data.size)
        self._range(offset, n)
        if n == 0:
            return
        lo, hi = offset - offset % 4, -(-(offset + n) // 4) * 4
        if (lo, hi) != (offset, offset + n):  # WebGPU writes whole words: merge the edge words
            hi = min(hi, int(self.buffer.size))
            words = bytearray(self.backend.queue.read_back(self.buffer, lo, hi - lo))
            words[offset - lo : offset - lo + n] = data.tobytes()
            data, offset = np.frombuffer(bytes(words), np.uint8), lo
        self.backend.device.queue.write_buffer(self.buffer, offset, data)

    def fill32(self, value: int, nbytes: int, offset: int = 0) -> None:
        """Fill ``nbytes`` at byte ``offset`` with the 32-bit word ``value`` repeated, on the device (a
        dispatch of ``fill32`` in ``shaders/wgsl/fill.wgsl``). ValueError unless ``nbytes`` and
        ``offset`` are multiples of 4 within the buffer."""
        if nbytes % 4 or offset % 4:
            raise ValueError(f"fill32 takes multiples of 4 bytes, not {nbytes} bytes at offset {offset}")
        self._range(offset, nbytes)
        if not 0 <= value < 1 << 32:
            raise ValueError(f"fill32's value is a 32-bit word (0 to 2^32 - 1), not {value}")
        if nbytes:
            self.backend.fill_kernel().launch([self, int(value), offset // 4], nbytes // 4)

    def read(self, dtype: str, count: int = -1, offset: int = 0) -> np.ndarray:
        """``count`` elements (default: all) of NumPy dtype ``dtype`` from byte ``offset``, copied to a
        new array after the launches submitted before (their wait bounded by the watchdog)."""
        item = np.dtype(dtype).itemsize
        if count < 0:
            count = (self._nbytes - offset) // item
        out = np.empty(count, dtype)
        self.read_into(out, offset)
        return out

    def read_into(self, array: np.ndarray, offset: int = 0) -> None:
        """Fill the writable C-contiguous ``array`` with the buffer's bytes from byte ``offset``, in
        pieces of :data:`READ_CHUNK_BYTES`, after the launches submitted before."""
        if not (array.flags.c_contiguous and array.flags.writeable):
            raise ValueError("read_into takes a writable C-contiguous array")
        out = array.reshape(-1).view(np.uint8)  # the array's bytes, written in place
        n = int(out.size)
        self._range(offset, n)
        done = 0
        while done < n:
            lo = offset + done - (offset + done) % 4
            hi = min(-(-(offset + n) // 4) * 4, lo + READ_CHUNK_BYTES, int(self.buffer.size))
            got = self.backend.queue.read_back(self.buffer, lo, hi - lo)
            skip = offset + done - lo
            take = min(n - done, hi - lo - skip)
            out[done : done + take] = np.frombuffer(got, np.uint8)[skip : skip + take]
            done += take

    def view(self, dtype: str) -> np.ndarray:
        """Raises ValueError: a wgpu buffer is not host-visible (read or read_into copies it)."""
        raise ValueError("a wgpu buffer is not host-visible: read() or read_into() copies it")

    def dlpack(self, dtype: str = "uint8") -> Any:
        """Raises UnsupportedError: WebGPU exports no memory to other libraries."""
        from .._native import _core

        raise _core.UnsupportedError("[wgpu::dlpack] WebGPU exports no device memory (no DLPack)")
