"""``Buffer.fill32`` for the unit tier's stand-in buffers, whose memory is what their ``write()`` is
given (native/core/backend.h: n bytes at a byte offset set to a 32-bit word repeated as it lies in
memory; n and offset multiples of 4). The suites poison every output through it
(``suites.base.fill_constant``), so a stand-in needs it as a backend's buffer has it."""

from __future__ import annotations

import numpy as np


class WriteFill32:
    """A stand-in's ``fill32``, through its own ``write(array, offset)``."""

    def write(self, array: np.ndarray, offset: int) -> None:  # pragma: no cover - the stand-in's own
        raise NotImplementedError

    def fill32(self, value: int, nbytes: int, offset: int = 0) -> None:
        """Set ``nbytes`` bytes from byte ``offset`` to the 32-bit word ``value`` repeated.

        Raises:
            ValueError: ``nbytes`` or ``offset`` not a multiple of 4 (the native buffer's
                std::invalid_argument).
        """
        if nbytes % 4 or offset % 4:
            raise ValueError(f"fill32 takes multiples of 4 bytes (got {nbytes} bytes at offset {offset})")
        self.write(np.full(nbytes // 4, value, np.uint32), offset)
