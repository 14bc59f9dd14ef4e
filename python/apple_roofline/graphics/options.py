"""The graphics study's options, checked before anything is measured: the device name, the render
target, lists of suites, patterns and filters, F values, texture sizes and fetch counts. Each bad
value raises :class:`~apple_roofline.errors.OptionError` naming the option and its valid range (the
CLI prints it as one line and exits 2)."""

from __future__ import annotations

import re
from typing import Any, Sequence, Tuple, Union

from ..errors import OptionError, check_int, check_ints
from .kernels import MAX_F

__all__ = [
    "MAX_OVERDRAW",
    "MAX_FETCHES",
    "parse_graphics_device",
    "parse_resolution",
    "parse_choices",
    "check_f_values",
    "check_sizes",
    "check_fetches",
]

#: The most layers of overdraw.
MAX_OVERDRAW = 4096
#: The most fetches per pixel.
MAX_FETCHES = 64
_DEVICE = re.compile(r"^(wgpu|metal)(?::([0-9]+))?$")


def parse_graphics_device(text: str) -> Tuple[str, int]:
    """``"wgpu:1"`` -> ``("wgpu", 1)``; ``"wgpu"`` is adapter 0; ``"metal:N"`` the native path.

    Raises:
        OptionError: (option ``device``) any other name.
    """
    m = _DEVICE.match(text.strip().lower())
    if not m:
        raise OptionError("device", text, "wgpu:N (a wgpu adapter) or metal:N", problem="is not a graphics device")
    return m.group(1), int(m.group(2) or 0)


def parse_resolution(text: str) -> Tuple[int, int]:
    """``"1920x1080"`` -> (1920, 1080).

    Raises:
        OptionError: (option ``resolution``) not WIDTHxHEIGHT with each side 16 to 16384.
    """
    m = re.fullmatch(r"\s*([0-9]+)\s*[xX]\s*([0-9]+)\s*", text)
    if not m or not all(16 <= int(v) <= 16384 for v in m.groups()):
        raise OptionError("resolution", text, "WIDTHxHEIGHT, each 16 to 16384", problem="is not a resolution")
    return int(m.group(1)), int(m.group(2))


def parse_choices(
    text: Union[str, Sequence[str]], option: str, valid: Sequence[str], noun: str = "choice"
) -> Tuple[str, ...]:
    """A comma-separated list (or a sequence) of names from ``valid`` (each a ``noun``), in
    ``valid``'s order.

    Raises:
        OptionError: (``option``) an unknown name or an empty list.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [s.strip().lower() for s in items if s.strip()]
    if not names:
        raise OptionError(option, text, ", ".join(valid), problem="names nothing")
    for n in names:
        if n not in valid:
            raise OptionError(option, n, ", ".join(valid), problem=f"is not a {noun}", shown=repr(n))
    return tuple(v for v in valid if v in names)


def check_f_values(values: Sequence[Any]) -> Tuple[int, ...]:
    """FMA iterations per pixel, each 0 to :data:`MAX_F`, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``f``) a value that is not an integer in range, or none.
    """
    return check_ints(values, "f", 0, MAX_F)


def check_sizes(values: Sequence[Any]) -> Tuple[int, ...]:
    """Texture sizes (texels on a side), each a power of two from 4 to 16384, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``sizes``) none, or a value that is not such a power of two.
    """
    valid = "powers of two, 4 to 16384"
    if not values:
        raise OptionError("sizes", "", valid, problem="names no value")
    out = set()
    for v in values:
        n = check_int(v, "sizes", 4, 16384)
        if n & (n - 1):
            raise OptionError("sizes", v, valid, problem="is not a power of two")
        out.add(n)
    return tuple(sorted(out))


def check_fetches(values: Sequence[Any]) -> Tuple[int, ...]:
    """Fetches per pixel, each 1 to :data:`MAX_FETCHES`, sorted, duplicates dropped.

    Raises:
        OptionError: (option ``fetches``) none, or a value that is not an integer in range.
    """
    return check_ints(values, "fetches", 1, MAX_FETCHES)
