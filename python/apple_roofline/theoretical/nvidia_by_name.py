"""What NVIDIA's driver says of the GPUs of one name: the compute capability and the L2 size, for a
device that reports neither, a WebGPU adapter (docs/design/hierarchy.md, "The memory hierarchy";
:func:`.caches.cache_levels` names a ``wgpu:N`` adapter's levels by them).

A wgpu adapter gives its GPU's name (``"NVIDIA H200"``), no bus id; the same name is what the CUDA
driver's ``cuDeviceGetName`` and NVML's ``nvmlDeviceGetName`` report (both ``"NVIDIA H200"`` on an H200,
driver 580.159.04, its Vulkan adapter's too), so the GPU is found by name,
as the wgpu clock reader finds it in NVML (:mod:`apple_roofline.webgpu.clock`). Where several GPUs
have the name, their facts are used only where all of them report the same ones: whichever is behind
the adapter then has them.

* The package's CUDA backend, where it is built and finds GPUs: each GPU's ``info()`` (its
  ``compute_capability`` and ``llc_bytes``, the driver's ``CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE``).
  This opens every CUDA device once (its primary context, released again at once: 0.7 s on an H200).
* Else NVML (``nvidia-ml-py``): ``nvmlDeviceGetCudaComputeCapability``; NVML reports no L2 size.

:func:`driver_facts` asks once per process and name; a failure is a reason, never an exception.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..telemetry.base import one_line
from ..telemetry.nvml import MISSING, handles_named

__all__ = ["DriverFacts", "driver_facts", "cuda_backend_facts", "nvml_facts"]


@dataclass(frozen=True)
class DriverFacts:
    """The facts of the GPUs named like the adapter: ``compute_capability`` (``"9.0"``, ``""`` when not
    known) and ``l2_bytes`` (0 when not known), each with ``*_source``: where it came from, or why it
    is not known."""

    compute_capability: str
    capability_source: str
    l2_bytes: int
    l2_source: str


def _unknown(why: str) -> DriverFacts:
    return DriverFacts("", why, 0, why)


@functools.lru_cache(maxsize=None)
def driver_facts(name: str) -> DriverFacts:
    """The facts of the GPU named ``name``: the CUDA backend's (:func:`cuda_backend_facts`), else NVML's
    compute capability (:func:`nvml_facts`). Asked once per process and name. Never raises."""
    cuda = cuda_backend_facts(name)
    if cuda.compute_capability or cuda.l2_bytes:
        return cuda
    nvml = nvml_facts(name)
    if not nvml.compute_capability:
        return _unknown(f"{cuda.capability_source}; {nvml.capability_source}")
    return DriverFacts(
        nvml.compute_capability, nvml.capability_source, 0, f"NVML reports no L2 size, and {cuda.l2_source}"
    )


def _which(found: List[int], prefix: str, name: str) -> str:
    """``"cuda:0, the same GPU by name (NVIDIA H200)"``, or of all the GPUs of that name."""
    if len(found) == 1:
        return f"{prefix}{found[0]}, the same GPU by name ({name})"
    devices = ", ".join(f"{prefix}{i}" for i in found)
    return f"{devices}, the {len(found)} GPUs named {name} (each reports the same)"


def _agreed(
    name: str, facts: Dict[int, Tuple[str, int]], where: str
) -> Tuple[Optional[Tuple[str, int]], List[int], str]:
    """``(facts, indices, "")`` where every GPU of ``name`` (``facts``: index -> facts) reports the same,
    else ``(None, [], why)``; ``where`` names the GPUs looked at."""
    if not facts:
        return None, [], f"none of {where} is named {name!r}"
    if len(set(facts.values())) > 1:
        return None, [], f"the {len(facts)} GPUs named {name!r} of {where} differ; cannot tell which one is measured"
    return next(iter(facts.values())), sorted(facts), ""


def _core() -> Any:
    from .._native import _core as core

    return core


def cuda_backend_facts(name: str, core: Optional[Any] = None) -> DriverFacts:
    """The compute capability and L2 size that the package's CUDA backend (``core``: ``_core``, or a stand-in
    for tests) reports of the GPUs named ``name``. Never raises: what went wrong is the sources' reason."""
    try:
        core = core if core is not None else _core()
        entry = next((b for b in core.backends() if b["name"] == "cuda"), None)
    except Exception as exc:  # noqa: BLE001 - the extension or its registry did not load: said, not raised
        return _unknown(f"the CUDA backend did not load: {one_line(exc)}")
    count = int(entry["devices"]) if entry is not None and entry["compiled"] else 0
    if not count:
        why = str(entry["reason"]) if entry is not None and entry["reason"] else "it finds no GPU"
        return _unknown(f"the CUDA backend is not usable here: {why}")
    found, failed = _cuda_named(core, count, name)
    facts, which, why = _agreed(name, found, f"the CUDA backend's {count} GPU{'s' if count != 1 else ''}")
    unopened = f" ({'; '.join(failed)})" if failed else ""
    if facts is None:
        return _unknown(why + unopened)
    of = _which(which, "cuda:", name) + unopened
    cc, l2 = facts
    cc_source = "the CUDA driver's compute capability" if cc else "the CUDA driver gives no compute capability"
    l2_source = "the CUDA driver's CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE" if l2 else "the CUDA driver reports no L2 size"
    return DriverFacts(cc, f"{cc_source} of {of}", l2, f"{l2_source} of {of}")


def _cuda_named(core: Any, count: int, name: str) -> Tuple[Dict[int, Tuple[str, int]], List[str]]:
    """``({index: (compute capability, L2 bytes)} of the CUDA GPUs named name, ["cuda:N did not open: why"])``:
    each of the ``count`` GPUs opened once (its primary context, released when its info is read)."""
    found: Dict[int, Tuple[str, int]] = {}
    failed: List[str] = []
    for i in range(count):
        try:
            info = core.Backend("cuda", i).info()
        except Exception as exc:  # noqa: BLE001 - a GPU that does not open is named in the sources
            failed.append(f"cuda:{i} did not open: {one_line(exc)}")
            continue
        if str(info.get("name", "")).strip() == name.strip():
            found[i] = (str(info.get("compute_capability", "")), int(info.get("llc_bytes", 0) or 0))
    return found, failed


def nvml_facts(name: str, nvml: Optional[Any] = None) -> DriverFacts:
    """The compute capability NVML (``nvml``: ``pynvml``, or a stand-in for tests) reports of the GPUs named
    ``name`` (``nvmlDeviceGetCudaComputeCapability``); no L2 size, which NVML does not report. Never
    raises."""
    try:
        nvml = nvml if nvml is not None else importlib.import_module("pynvml")
    except ImportError:
        return _unknown(MISSING)
    try:
        nvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - NVML's errors, said in one line
        return _unknown(f"NVML cannot start: {one_line(exc)}")
    try:
        count, found = _nvml_named(nvml, name)
    except Exception as exc:  # noqa: BLE001
        return _unknown(f"NVML cannot read the GPUs: {one_line(exc)}")
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # noqa: BLE001, S110 - shutting down is best effort
            pass
    facts, which, why = _agreed(name, found, f"NVML's {count} GPU{'s' if count != 1 else ''}")
    if facts is None:
        return _unknown(why)
    of = _which(which, "NVML GPU ", name)
    return DriverFacts(facts[0], f"NVML's nvmlDeviceGetCudaComputeCapability of {of}", 0, "NVML reports no L2 size")


def _nvml_named(nvml: Any, name: str) -> Tuple[int, Dict[int, Tuple[str, int]]]:
    """``(GPUs NVML finds, {index: (compute capability, 0)} of those named name)``. Raises NVML's errors."""
    found: Dict[int, Tuple[str, int]] = {}
    for i, h in handles_named(nvml, name):
        major, minor = nvml.nvmlDeviceGetCudaComputeCapability(h)
        found[i] = (f"{int(major)}.{int(minor)}", 0)
    return int(nvml.nvmlDeviceGetCount()), found
