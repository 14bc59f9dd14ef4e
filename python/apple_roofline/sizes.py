"""Byte sizes on the command line: ``256MiB``, ``1GiB``, ``512MB``, ``4096``.

Binary suffixes (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (kB/KB, MB, GB, TB) powers of
1000, as in IEC 80000-13. A bare number is bytes. ``B`` alone is accepted.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["parse_size", "format_size", "MAX_BYTES"]

#: The largest size accepted (2**63 - 1 bytes).
MAX_BYTES = 2**63 - 1

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_PATTERN = re.compile(r"^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str) -> int:
    """Parse a byte size such as ``"256MiB"`` into bytes.

    Returns a positive int number of bytes (fractions are rounded down to a whole byte).
    Raises ValueError naming the text and the accepted form when it is not a size, is zero or
    negative, or is not finite.
    """
    m = _PATTERN.match(text)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise ValueError(
            f"'{text}' is not a size "
            "(valid: a positive number with an optional unit B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)"
        )
    mantissa = m.group(1)
    if abs(int(m.group(1).lower().partition("e")[2] or 0)) > 30:
        raise ValueError(f"size '{text}' is out of range (valid: 1 byte to {MAX_BYTES} bytes)")
    nbytes = Fraction(mantissa) * _UNITS[unit]  # exact: no float rounding of large sizes
    if nbytes < 1 or nbytes > MAX_BYTES:
        raise ValueError(f"size '{text}' is out of range (valid: 1 byte to {MAX_BYTES} bytes)")
    return int(nbytes)


def format_size(nbytes: int) -> str:
    """Format a byte count with the largest binary unit that keeps it >= 1 (``"256 MiB"``)."""
    if nbytes < 0:
        raise ValueError(f"byte count {nbytes} is negative")
    for unit, scale in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if nbytes >= scale:
            v = nbytes / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{nbytes} B"
