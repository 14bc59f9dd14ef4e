"""Nsight Compute's units and numbers, as its raw CSV writes them.

``ncu --csv --page raw`` writes a second header row of units (``byte``, ``Kbyte``, ``Mbyte``;
``nsecond``, ``usecond``, ``msecond``; ``inst``, ``inst/cycle``; ``byte/second``,
``Tbyte/second``; ``cycle/nsecond``, ``Ghz``; ``%``) and numbers with thousands separators
(``1,073,741,824``). :func:`unit_scale` turns a unit into the factor to its base unit (bytes,
seconds, cycles, instructions, and their ratios); :func:`parse_number` a cell into a float.
Prefixes are decimal (ncu prints 256 MiB as ``268.44 Mbyte``); the binary ``Kibyte``/``KiB``
forms are read as powers of 1024. A cell that is no number, or not finite, is an error
(:class:`NumberError`), never read as a metric not collected.
"""

from __future__ import annotations

import math
import re
from typing import Dict, Optional

__all__ = ["unit_scale", "parse_number", "UnitError", "NumberError"]

#: Decimal and sub-unit prefixes (``K`` and ``k`` alike; ``u`` and ``µ`` for micro).
_PREFIX: Dict[str, float] = {
    "": 1.0,
    "K": 1e3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "m": 1e-3,
    "u": 1e-6,
    "\u00b5": 1e-6,
    "n": 1e-9,
    "p": 1e-12,
}
_BINARY: Dict[str, float] = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
#: Base units, each with the factor to the unit it is counted in (hertz is cycles per second).
_BASE: Dict[str, float] = {
    "byte": 1.0,
    "B": 1.0,
    "second": 1.0,
    "s": 1.0,
    "cycle": 1.0,
    "inst": 1.0,
    "warp": 1.0,
    "thread": 1.0,
    "request": 1.0,
    "sector": 1.0,
    "hz": 1.0,
    "Hz": 1.0,
    "op": 1.0,
    "flop": 1.0,
    "block": 1.0,
    "register": 1.0,
    "wavefront": 1.0,
}
_PART = re.compile(
    r"^(Ki|Mi|Gi|Ti|[KkMGTPmu\u00b5np]?)(byte|B|second|s|cycle|inst|warp|thread|request|sector|hz|Hz|op|flop"
    r"|block|register|wavefront)$"
)
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class UnitError(ValueError):
    """A unit ncu's raw page does not write."""


class NumberError(ValueError):
    """A cell that is neither a finite number nor ncu's mark of a metric not collected."""


def _part(text: str) -> float:
    if text == "":
        return 1.0
    m = _PART.match(text.strip())
    if m is None:
        # a bare prefixed word is tried as the whole (``ms``, ``us`` ...) before giving up
        raise UnitError(f"unknown unit {text!r}")
    prefix, base = m.group(1), m.group(2)
    scale = _BINARY.get(prefix, _PREFIX.get(prefix, 1.0))
    return scale * _BASE[base]


def unit_scale(unit: str) -> float:
    """The factor that turns a value in ``unit`` into its base unit: ``"Mbyte"`` -> 1e6,
    ``"usecond"`` -> 1e-6, ``"Tbyte/second"`` -> 1e12, ``"cycle/nsecond"`` -> 1e9,
    ``"Ghz"`` -> 1e9, ``"inst"``, ``"%"`` or ``""`` -> 1.

    Raises:
        UnitError: a unit with a part that is no prefix and base unit ncu writes.
    """
    u = unit.strip()
    if u in ("", "%", "(!)"):
        return 1.0
    if u.lower().endswith("hz") and u[:-2] in _PREFIX:  # Ghz, Mhz, hz: cycles per second
        return _PREFIX[u[:-2]]
    num, _, den = u.partition("/")
    return _part(num) / (_part(den) if den else 1.0)


def parse_number(cell: str) -> Optional[float]:
    """A cell as a finite float, thousands separators dropped (``"1,234.5"`` -> 1234.5); None for
    an empty cell or ncu's ``n/a`` or ``-`` (a metric not collected for that launch).

    Raises:
        NumberError: a cell that is no number (``"12abc"``) or not finite (``"inf"``, ``"nan"``,
            ``"1e999"``).
    """
    text = cell.strip().replace(",", "")
    if text.startswith("(!)"):
        text = text[3:].strip()
    if not text or text.lower() in ("n/a", "-"):
        return None
    if not _NUMBER.match(text):
        raise NumberError(f"{cell.strip()!r} is not a number")
    v = float(text)
    if not math.isfinite(v):
        raise NumberError(f"{cell.strip()!r} is not a finite number")
    return v
