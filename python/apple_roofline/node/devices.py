"""Device lists: ``cuda:all`` and ``cuda:0,2,3`` name several GPUs of this host at once.

A list is parsed against the registry's device counts (``_core.backends()``, nothing opened, as
:func:`apple_roofline.devices.resolve_device`). ``cpu`` is one device and never a list.
"""

from __future__ import annotations

from typing import List, Mapping, Optional

from ..devices import BACKENDS, DeviceSpec, backend_registry
from ..errors import OptionError, check_int

__all__ = ["LIST_FORMS", "is_device_list", "parse_device_list", "child_name"]

#: The forms of a device list, as the messages write them.
LIST_FORMS = "cuda:all, cuda:0,2,3 (metal the same)"


def is_device_list(text: Optional[str]) -> bool:
    """Whether ``text`` names several devices (``<backend>:all`` or indices separated by commas)."""
    return text is not None and (text.strip().lower().endswith(":all") or "," in text)


def parse_device_list(text: str, counts: Optional[Mapping[str, int]] = None) -> List[DeviceSpec]:
    """The devices ``text`` names, in order, each once: ``cuda:all`` every CUDA device found,
    ``cuda:0,2,3`` those indices. ``counts`` (backend -> devices found; default the registry's, of
    the compiled backends) is the seam for tests.

    Raises:
        OptionError: (option ``device``) a backend that is not a GPU backend of the tool, a
            backend without devices, an index that is not an integer or beyond the devices found.
    """
    raw = text.strip().lower()
    backend, _, rest = raw.partition(":")
    gpus = [b for b in BACKENDS if b != "cpu"]
    if backend not in gpus:
        raise OptionError(
            "device",
            text,
            LIST_FORMS,
            problem="is not a device list",
            reason="a list names GPUs of one backend; cpu is one device" if backend == "cpu" else "",
        )
    if counts is None:
        counts = {str(b["name"]): int(b["devices"]) for b in backend_registry() if b["compiled"]}
    found = int(counts.get(backend, 0))
    if found == 0:
        raise OptionError("device", text, LIST_FORMS, problem="names no device", reason=f"no {backend} device found")
    if rest == "all":
        return [DeviceSpec(backend, i) for i in range(found)]
    indices: List[int] = []
    for part in rest.split(","):
        try:
            index = check_int(int(part) if part.strip().isdigit() else part, "device", 0, found - 1)
        except OptionError:
            raise OptionError(
                "device",
                text,
                f"{backend} indices 0 to {found - 1}, or {backend}:all",
                problem="is not a device list",
                reason=f"{part.strip() or 'an empty index'!s} is no {backend} device of the {found} found",
            ) from None
        if index not in indices:
            indices.append(index)
    return [DeviceSpec(backend, i) for i in indices]


def child_name(spec: DeviceSpec) -> str:
    """The folder of one device's results in a node run: ``cuda0``, ``cuda1`` ..."""
    return f"{spec.backend}{spec.index}"
