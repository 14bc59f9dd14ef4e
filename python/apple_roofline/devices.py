"""Device names and discovery: ``"cpu"``, ``"cuda:0"``, ``"metal:0"``, ``"wgpu:0"``.

A device string is a backend name with an optional ``:index`` (default 0). It is parsed once into
a :class:`DeviceSpec`; :func:`resolve_device` checks that the backend was built and has that device
from the registry's counts alone (``_core.backends()``), without opening any device — so naming
``cpu`` never creates a CUDA context. The default device is the first of metal:0, cuda:0, cpu that
has a device. Only :func:`open_device` and :func:`list_devices` open devices. ``wgpu:N`` is the
N-th wgpu adapter (the graphics study's numbering), run by the WebGPU backend
(:mod:`apple_roofline.webgpu`); it is never the default device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple, Union

from .errors import OptionError

__all__ = [
    "BACKENDS",
    "DeviceSpec",
    "DeviceStatus",
    "parse_device",
    "resolve_device",
    "default_device",
    "open_device",
    "list_devices",
    "backend_registry",
]

#: Backends known to the tool, in order of preference for the default device.
BACKENDS: Tuple[str, ...] = ("metal", "cuda", "cpu")
#: The WebGPU backend's name: Python over wgpu, not in the native registry.
WGPU = "wgpu"
_SPEC = re.compile(r"^([a-z]+)(?::([0-9]+))?$")
_FORMS = "cpu, cuda:N, metal:N, wgpu:N"


class DeviceSpec(NamedTuple):
    """A parsed device name: the backend (``"cpu"``, ``"cuda"``, ``"metal"``) and the device's index
    (a tuple, so ``backend, index = parse_device(...)`` works as it always has)."""

    backend: str
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index, as the device index should

    def __str__(self) -> str:
        return self.backend if self.backend == "cpu" and self.index == 0 else f"{self.backend}:{self.index}"


def parse_device(spec: Union[str, DeviceSpec]) -> DeviceSpec:
    """Parse ``"cuda:1"`` into ``DeviceSpec("cuda", 1)``; ``"cpu"`` is ``DeviceSpec("cpu", 0)``.
    A DeviceSpec is returned as it is.

    Raises:
        OptionError: (option ``device``) an unknown backend or an index that is not a non-negative
            integer; the message lists the valid forms. Whether the device exists is
            :func:`resolve_device`'s to check.
    """
    if isinstance(spec, DeviceSpec):
        return spec
    m = _SPEC.match(str(spec).strip().lower())
    if not m or m.group(1) not in BACKENDS + (WGPU,):
        raise OptionError("device", spec, _FORMS, problem="is not a device")
    return DeviceSpec(m.group(1), int(m.group(2) or 0))


def backend_registry() -> List[Mapping[str, Any]]:
    """Every backend of this build as ``_core.backends()`` reports it (name, compiled, devices,
    reason); nothing is opened."""
    from ._native import _core

    return [dict(b) for b in _core.backends()]


def _available(registry: List[Mapping[str, Any]]) -> List[str]:
    names = []
    for b in registry:
        if b["compiled"] and int(b["devices"]) > 0:
            n = 1 if b["name"] == "cpu" else int(b["devices"])
            names += [str(DeviceSpec(str(b["name"]), i)) for i in range(n)]
    return names


def default_device() -> str:
    """The best available device's name: metal:0, then cuda:0, then cpu (from the registry's
    counts; nothing is opened)."""
    counts = {str(b["name"]): int(b["devices"]) for b in backend_registry() if b["compiled"]}
    for backend in BACKENDS:
        if counts.get(backend, 0) > 0:
            return str(DeviceSpec(backend, 0))
    return "cpu"


def resolve_device(spec: Union[str, DeviceSpec, None]) -> DeviceSpec:
    """The device ``spec`` names (the default device when None), checked against the registry
    without opening any device.

    Raises:
        OptionError: (option ``device``) a malformed name, a backend not built into this
            installation or without devices, or an index beyond the devices found; the message says
            why and lists the available devices.
    """
    if spec is None:
        return parse_device(default_device())
    parsed = parse_device(spec)
    if parsed.backend == WGPU:
        return _resolve_wgpu(parsed)
    registry = backend_registry()
    available = ", ".join(_available(registry)) or "none"
    for b in registry:
        if b["name"] != parsed.backend:
            continue
        devices = int(b["devices"])
        if b["compiled"] and parsed.index < devices:
            return parsed
        why = str(b["reason"]) if (not b["compiled"] or devices == 0) and b["reason"] else f"{devices} device(s) found"
        raise OptionError("device", str(spec), available, problem="is not available", shown=repr(str(spec)), reason=why)
    raise OptionError("device", str(spec), available, problem="is not available")  # pragma: no cover


def _resolve_wgpu(parsed: DeviceSpec) -> DeviceSpec:
    """``wgpu:N`` checked against the adapters wgpu finds (enumerated, none opened)."""
    from .webgpu import adapter_count

    count = adapter_count()
    if parsed.index < count:
        return parsed
    available = f"wgpu:0 to wgpu:{count - 1}" if count else "none"
    why = f"wgpu finds {count} adapter(s)" if count else "wgpu is not installed or finds no adapter"
    raise OptionError("device", str(parsed), available, problem="is not available", shown=repr(str(parsed)), reason=why)


def open_device(spec: Union[str, DeviceSpec]) -> Any:
    """Open the device named by ``spec`` and return its ``_core.Backend``.

    Raises:
        OptionError: a malformed name.
        _core.UnsupportedError: the backend was not built.
        _core.DeviceError: the index names no device, or the device failed to open.
    """
    from ._native import _core

    parsed = parse_device(spec)
    if parsed.backend == WGPU:
        from .webgpu import WgpuBackend

        return WgpuBackend(parsed.index)
    return _core.Backend(parsed.backend, parsed.index)


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


def list_devices() -> List[DeviceStatus]:
    """Every backend known to this build, with its first device's info where one was found (this
    opens device 0 of every backend that has one: it is what ``apple-roofline devices`` shows)."""
    from ._native import _core

    out: List[DeviceStatus] = []
    for b in backend_registry():
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
