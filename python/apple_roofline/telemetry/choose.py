"""Which sampler measures a device (docs/design.md, "Clocks and power"): NVML for a CUDA GPU, RAPL
and cpufreq for a CPU on Linux, none (with the reason) otherwise."""

from __future__ import annotations

import sys
from typing import Any, Mapping, Optional

from .base import NullSampler, Sampler
from .nvml import NvmlSampler
from .rapl import RaplSampler

__all__ = ["sampler_for"]


def sampler_for(backend: str, index: int = 0, info: Optional[Mapping[str, Any]] = None, *,
                platform: str = "") -> Sampler:
    """A sampler (not started) for device ``index`` of ``backend`` ("cpu", "cuda", "metal");
    ``info`` is the backend's description (a CUDA GPU's ``pci_bus_id`` picks the NVML device);
    ``platform`` replaces ``sys.platform`` (tests). Never raises: a device no sampler covers gets a
    :class:`~.base.NullSampler` with the reason."""
    platform = platform or sys.platform
    if backend == "cuda":
        return NvmlSampler(index, pci_bus_id=str((info or {}).get("pci_bus_id", "") or ""))
    if backend == "cpu" and platform.startswith("linux"):
        return RaplSampler()
    if backend == "metal":
        return NullSampler("clocks and power of Apple GPUs are not sampled yet (IOReport/powermetrics)")
    return NullSampler(f"no clock or power sampler for {backend} on {platform}")
