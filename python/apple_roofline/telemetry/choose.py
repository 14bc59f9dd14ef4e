"""Which sampler measures a device (docs/design/power.md, "Clocks and power"): NVML for a CUDA GPU, RAPL
and cpufreq for a CPU on Linux, on macOS ``powermetrics`` when running as root and IOReport
otherwise (for the GPU or the CPU), none (with the reason) elsewhere."""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping, Optional

from .base import NullSampler, Sampler
from .ioreport import IOReportSampler
from .nvml import NvmlSampler
from .powermetrics import PowermetricsSampler
from .rapl import RaplSampler

__all__ = ["sampler_for", "apple_sampler", "graphics_sampler", "is_nvidia_adapter", "NVIDIA_VENDOR"]

#: PCI vendor id of NVIDIA, as wgpu reports it (decimal or hex).
NVIDIA_VENDOR = ("4318", "0x10de", "10de")


def is_nvidia_adapter(info: Mapping[str, Any]) -> bool:
    """Whether the wgpu adapter ``info`` describes is an NVIDIA GPU: its ``vendor_id`` or ``vendor`` is
    NVIDIA's PCI vendor id (:data:`NVIDIA_VENDOR`), or its ``vendor`` or ``name`` says NVIDIA."""
    ids = {str(info.get(k, "") or "").lower() for k in ("vendor_id", "vendor")}
    words = " ".join(str(info.get(k, "") or "") for k in ("vendor", "name")).lower()
    return bool(ids & set(NVIDIA_VENDOR)) or "nvidia" in words


def apple_sampler(target: str, *, root: Optional[bool] = None) -> Sampler:
    """The Apple-silicon sampler for ``target`` ("gpu" or "cpu"): :class:`PowermetricsSampler`
    when running as root (``root``, default the effective uid), else :class:`IOReportSampler`;
    the sampler's ``name`` in the run says which was used."""
    if root is None:
        root = hasattr(os, "geteuid") and os.geteuid() == 0
    return PowermetricsSampler(target, is_root=True) if root else IOReportSampler(target)


def sampler_for(
    backend: str,
    index: int = 0,
    info: Optional[Mapping[str, Any]] = None,
    *,
    platform: str = "",
    root: Optional[bool] = None,
) -> Sampler:
    """A sampler (not started) for device ``index`` of ``backend`` ("cpu", "cuda", "metal", "wgpu");
    ``info`` is the backend's description (a CUDA GPU's ``pci_bus_id`` picks the NVML device);
    ``platform`` replaces ``sys.platform`` and ``root`` the effective-uid check (tests). Never
    raises: a device no sampler covers gets a :class:`~.base.NullSampler` with the reason."""
    platform = platform or sys.platform
    if backend == "cuda":
        return NvmlSampler(index, pci_bus_id=str((info or {}).get("pci_bus_id", "") or ""))
    if backend == "wgpu":  # the WebGPU backend's adapter: sampled as the graphics study samples it
        return graphics_sampler("wgpu", info or {}, platform=platform, root=root)
    if backend == "cpu" and platform.startswith("linux"):
        return RaplSampler()
    if backend in ("metal", "cpu") and platform == "darwin":
        return apple_sampler("gpu" if backend == "metal" else "cpu", root=root)
    return NullSampler(f"no clock or power sampler for {backend} on {platform}")


def graphics_sampler(api: str, info: Mapping[str, Any], *, platform: str = "", root: Optional[bool] = None) -> Sampler:
    """A sampler (not started) for a graphics device: ``api`` "metal" (native Metal render passes)
    or "wgpu", ``info`` the device's description (a wgpu adapter's ``name``, ``vendor``,
    ``adapter_type``). A Mac's GPU gets the Apple sampler; an NVIDIA adapter (vendor 0x10de or
    "NVIDIA" in its name) NVML, matched by name; a CPU adapter (llvmpipe) on Linux RAPL; any other
    a :class:`~.base.NullSampler` with the reason. Never raises."""
    platform = platform or sys.platform
    name = str(info.get("name", "") or "")
    if api == "metal" or platform == "darwin":
        return apple_sampler("gpu", root=root)
    if is_nvidia_adapter(info):
        return NvmlSampler(device_name=name)
    if str(info.get("adapter_type", "")).lower() == "cpu" and platform.startswith("linux"):
        return RaplSampler()
    return NullSampler(f"no clock or power sampler for the {api} adapter {name or '?'} on {platform}")
