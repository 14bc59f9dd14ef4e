"""The clock a wgpu kernel's samples ran at, where the platform tells it (docs/design/clocks.md, "Clocks").

WGSL has no clock a kernel can read, so the clock is the platform's: on an NVIDIA adapter NVML's SM
clock of the GPU of the adapter's name (:class:`~apple_roofline.telemetry.nvml.NvmlSampler`, matched by
name as the graphics study matches it), read right after each timed call; on a Mac (the Metal
adapter) none here: the run's sampler (IOReport, :mod:`apple_roofline.telemetry.ioreport`) reports the
GPU's clock over each measurement's window (:func:`apple_roofline.timing.clocks.effective_clock`'s
fallback); elsewhere "not known", with the reason.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ..telemetry.choose import is_nvidia_adapter
from ..telemetry.nvml import NvmlSampler

__all__ = ["ClockReader"]


class ClockReader:
    """Reads the SM clock of the adapter ``info`` describes (its ``name``, ``vendor_id``) after a
    timed call: :meth:`reading` gives ``{"mhz": [MHz], "method": how}`` or no values and why."""

    def __init__(self, info: Mapping[str, Any]) -> None:
        self.name = str(info.get("name", ""))
        self._sampler: Optional[NvmlSampler] = None
        if is_nvidia_adapter(info):
            sampler = NvmlSampler(device_name=self.name)
            why = sampler.open()
            if not why and "sm_clock_mhz" in sampler.read():
                self._sampler = sampler
                self.reason = ""
            else:
                self.reason = f"not known: {why or 'NVML reads no SM clock of this GPU'}"
        elif str(info.get("api", "")).lower() == "metal":
            self.reason = (
                "not measured: WGSL has no clock a kernel can read; on a Mac the run's sampler (IOReport's "
                "GPU performance states) reports the GPU's clock over the measurement's window"
            )
        else:
            self.reason = (
                "not known: WGSL has no clock a kernel can read, and no clock source is known for the "
                f"{info.get('api', '')} adapter {self.name or '?'}"
            )

    @property
    def method(self) -> str:
        """How :meth:`reading` measures, or why it cannot."""
        if self._sampler is None:
            return self.reason
        return f"NVML's SM clock of {self.name}, read once after the samples (WGSL has no clock a kernel can read)"

    def reading(self) -> Dict[str, Any]:
        """The clock now, as ``Kernel.clock`` gives it."""
        mhz: List[float] = []
        if self._sampler is not None:
            try:
                mhz = [float(self._sampler.read()["sm_clock_mhz"])]
            except Exception as exc:  # noqa: BLE001 - a reading that failed is said, not raised
                return {"mhz": [], "method": f"not known: NVML's SM clock did not read ({exc})"}
        return {"mhz": mhz, "method": self.method}

    def close(self) -> None:
        """Shut NVML down (where it was opened)."""
        if self._sampler is not None:
            self._sampler.close()
            self._sampler = None
