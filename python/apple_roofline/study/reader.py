"""Strict reading of parsed JSON: typed accessors that fail with one line naming the field.

Every results file is read through a :class:`Reader`, so every kind of study reports a bad file the
same way: ``"run.json: measurements[2].flops must be a non-negative integer, not -1"``.
"""

from __future__ import annotations

import math
from typing import Any, List, Mapping, NoReturn, Optional, Tuple

from .files import ResultsError

__all__ = ["Reader", "json_type", "join"]


def json_type(v: Any) -> str:
    """How a JSON value is named in an error message (``"null"``, ``"a string"``, ``"the number 3"``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, Mapping):
        return "an object"
    return type(v).__name__


def join(where: str, key: str) -> str:
    """The path of ``key`` inside ``where`` (``"device" + "name" -> "device.name"``)."""
    return f"{where}.{key}" if where else key


class Reader:
    """Type-checking accessors for one source (a file name or ``"<dict>"``); each raises
    :class:`~.files.ResultsError` ``"<source>: <field> must be ..."``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, msg: str) -> NoReturn:
        """Raise ResultsError ``"<source>: <msg>"``."""
        raise ResultsError(f"{self.source}: {msg}")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        """``value`` as an object with string keys."""
        if not isinstance(value, Mapping):
            self.fail(f"{where} must be an object, not {json_type(value)}")
        for k in value:
            if not isinstance(k, str):
                self.fail(f"{where} must have string keys, found {k!r}")
        return value

    def req(self, d: Mapping[str, Any], key: str, where: str) -> Any:
        """``d[key]``; a required key."""
        if key not in d:
            self.fail(f"{join(where, key)} is missing (required key)")
        return d[key]

    def string(self, d: Mapping[str, Any], key: str, where: str, *, default: Optional[str] = None) -> str:
        """``d[key]`` as a string; ``default`` when given and the key is absent."""
        if default is not None and key not in d:
            return default
        v = self.req(d, key, where)
        if not isinstance(v, str):
            self.fail(f"{join(where, key)} must be a string, not {json_type(v)}")
        return v

    def opt_string(self, d: Mapping[str, Any], key: str, where: str) -> Optional[str]:
        """``d[key]`` as a string, or None when absent or null."""
        v = d.get(key)
        if v is not None and not isinstance(v, str):
            self.fail(f"{join(where, key)} must be a string or null, not {json_type(v)}")
        return v

    def boolean(self, d: Mapping[str, Any], key: str, where: str) -> bool:
        """``d[key]`` as true or false."""
        v = self.req(d, key, where)
        if not isinstance(v, bool):
            self.fail(f"{join(where, key)} must be true or false, not {json_type(v)}")
        return v

    def nonneg_int(self, d: Mapping[str, Any], key: str, where: str, *, positive: bool = False) -> int:
        """``d[key]`` as an integer >= 0 (> 0 with ``positive``)."""
        v = self.req(d, key, where)
        ok = isinstance(v, int) and not isinstance(v, bool) and (v > 0 if positive else v >= 0)
        if not ok:
            what = "a positive integer" if positive else "a non-negative integer"
            self.fail(f"{join(where, key)} must be {what}, not {v!r}")
        return int(v)

    def number(self, d: Mapping[str, Any], key: str, where: str) -> float:
        """``d[key]`` as a finite number."""
        v = self.req(d, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(f"{join(where, key)} must be a finite number, not {v!r}")
        return float(v)

    def array(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> List[Any]:
        """``d[key]`` as an array; an empty list when not ``required`` and absent."""
        if not required and key not in d:
            return []
        v = self.req(d, key, where)
        if not isinstance(v, list):
            self.fail(f"{join(where, key)} must be an array, not {json_type(v)}")
        return v

    def strings(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> Tuple[str, ...]:
        """``d[key]`` as an array of strings."""
        items = self.array(d, key, where, required=required)
        for i, s in enumerate(items):
            if not isinstance(s, str):
                self.fail(f"{join(where, key)}[{i}] must be a string, not {json_type(s)}")
        return tuple(items)

    def numbers(self, d: Mapping[str, Any], key: str, where: str) -> Tuple[float, ...]:
        """``d[key]`` as an array of numbers (finiteness is the caller's to check)."""
        items = self.array(d, key, where)
        for i, s in enumerate(items):
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                self.fail(f"{join(where, key)}[{i}] must be a number, not {json_type(s)}")
        return tuple(float(s) for s in items)
