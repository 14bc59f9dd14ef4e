"""How a WGSL kernel takes its arguments (docs/design/backends.md, "The WebGPU backend"), read from its source.

The convention mirrors the Metal backend's ``[[buffer(i)]]``: argument ``i`` of a launch is
``@group(0) @binding(i)`` — a Buffer as ``var<storage, read>`` or ``var<storage, read_write>``, an
int as ``var<uniform> name: i32`` (or ``u32``), a float as ``var<uniform> name: f32`` (rounded to
fp32, as Metal's ``constant float&``) — and the binding after the last argument is the work-item
count, ``var<uniform> n: u32``. Compile-time constants are WGSL ``override`` declarations, set by
name (Metal's function constants); ``BLOCK`` is the workgroup size, ``@workgroup_size(BLOCK)``.

Pure text: no wgpu here, so the twin tests read the same declarations the backend binds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Tuple

__all__ = ["Binding", "bindings", "overrides", "strip_comments", "enables"]

_BINDING = re.compile(
    r"@group\(\s*0\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var\s*<\s*(storage|uniform)\s*(?:,\s*(read|read_write)\s*)?>"
    r"\s*(\w+)\s*:\s*([^;]+);"
)
_OVERRIDE = re.compile(r"\boverride\s+(\w+)\s*:\s*(\w+)")
_ENABLE = re.compile(r"^\s*enable\s+([\w\s,]+);", re.MULTILINE)


@dataclass(frozen=True)
class Binding:
    """One ``@group(0) @binding(i)`` declaration: its index, ``"storage"`` or ``"uniform"``, the
    access (``"read"``, ``"read_write"``; ``""`` for a uniform), the variable's name and its WGSL type."""

    index: int
    space: str
    access: str
    name: str
    type: str

    @property
    def kind(self) -> str:
        """The backend-level kind of argument it takes: ``const-ptr`` (read-only storage), ``ptr``
        (read-write storage), ``float`` (an f32 uniform), ``int`` (an i32 or u32 uniform)."""
        if self.space == "storage":
            return "ptr" if self.access == "read_write" else "const-ptr"
        if self.type == "f32":
            return "float"
        if self.type in ("i32", "u32"):
            return "int"
        raise ValueError(f"binding {self.index} ({self.name}: {self.type}) is a uniform of a type no argument has")


def strip_comments(src: str) -> str:
    """``src`` without ``//`` and ``/* */`` comments (WGSL has no string literals)."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


def bindings(source: str) -> Tuple[Binding, ...]:
    """Every group-0 binding of ``source``, by index.

    Raises:
        ValueError: two declarations share an index, or the indices have a gap (argument ``i`` is
            binding ``i``: a gap is an argument nothing declares).
    """
    found: Dict[int, Binding] = {}
    for m in _BINDING.finditer(strip_comments(source)):
        b = Binding(
            int(m.group(1)),
            m.group(2),
            m.group(3) or ("" if m.group(2) == "uniform" else "read"),
            m.group(4),
            m.group(5).strip(),
        )
        if b.index in found:
            raise ValueError(f"@binding({b.index}) is declared twice ({found[b.index].name} and {b.name})")
        found[b.index] = b
    if sorted(found) != list(range(len(found))):
        raise ValueError(f"the bindings {sorted(found)} are not 0 to {len(found) - 1}: argument i is @binding(i)")
    return tuple(found[i] for i in range(len(found)))


def overrides(source: str) -> Dict[str, str]:
    """``override NAME: T`` declarations of ``source``: name -> WGSL type."""
    return {m.group(1): m.group(2) for m in _OVERRIDE.finditer(strip_comments(source))}


def enables(source: str) -> Tuple[str, ...]:
    """The extensions ``source`` enables (``enable f16;`` -> ``("f16",)``)."""
    names = []
    for m in _ENABLE.finditer(strip_comments(source)):
        names += [n.strip() for n in m.group(1).split(",") if n.strip()]
    return tuple(names)
