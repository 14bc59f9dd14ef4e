"""Device discovery and selection: ``"cpu"``, ``"cuda:0"``, ``"metal:0"``.

A device string is a backend name with an optional ``:index`` (default 0). The best available
device is the first of metal:0, cuda:0, cpu that has a device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

__all__ = ["BACKENDS", "DeviceStatus", "list_devices", "parse_device", "default_device", "open_device"]

#: Backends known to the tool, in order of preference for the default device.
BACKENDS: Tuple[str, ...] = ("metal", "cuda", "cpu")
_SPEC = re.compile(r"^([a-z]+)(?::([0-9]+))?$")


@dataclass(frozen=True)
class DeviceStatus:
    """One backend of this build: whether it was compiled in, how many devices it found, the first
    device's name and info dict (None when absent) and, when unusable, why."""

    backend: str
    compiled: bool
    devices: int
    reason: str
    name: Optional[str] = None
    details: Mapping[str, Any] = field(default_factory=dict)


def parse_device(spec: str) -> Tuple[str, int]:
    """Split ``"cuda:1"`` into ``("cuda", 1)``; ``"cpu"`` is ``("cpu", 0)``.

    Raises ValueError naming the string and the valid forms when the backend is unknown or the
    index is not a non-negative integer. Does not check that the device exists (open_device does).
    """
    m = _SPEC.match(spec.strip().lower())
    if not m or m.group(1) not in BACKENDS:
        raise ValueError(f"unknown device '{spec}' (valid: cpu, cuda:N, metal:N)")
    return m.group(1), int(m.group(2) or 0)


def list_devices() -> List[DeviceStatus]:
    """Every backend known to this build, with its first device's info where one was found."""
    from ._native import _core

    out: List[DeviceStatus] = []
    for b in _core.backends():
        name: Optional[str] = None
        details: Dict[str, Any] = {}
        reason = str(b["reason"])
        if b["compiled"] and int(b["devices"]) > 0:
            try:
                details = dict(_core.Backend(str(b["name"]), 0).info())
                name = str(details.get("name"))
            except _core.BackendError as exc:  # a device that vanished or failed to open
                reason = str(exc)
        out.append(DeviceStatus(str(b["name"]), bool(b["compiled"]), int(b["devices"]), reason, name, details))
    return out


def default_device() -> str:
    """The best available device: metal:0, then cuda:0, then cpu."""
    from ._native import _core

    avail = {str(b["name"]): int(b["devices"]) for b in _core.backends() if b["compiled"]}
    for backend in BACKENDS:
        if avail.get(backend, 0) > 0:
            return "cpu" if backend == "cpu" else f"{backend}:0"
    return "cpu"


def open_device(spec: str) -> Any:
    """Open the device named by ``spec`` and return its ``_core.Backend``.

    Raises ValueError for a malformed string, ``_core.UnsupportedError`` when the backend was not
    built, ``_core.DeviceError`` when the index names no device.
    """
    from ._native import _core

    backend, index = parse_device(spec)
    return _core.Backend(backend, index)
