"""NVIDIA GPUs through NVML (``nvidia-ml-py``, imported as ``pynvml``; docs/design/power.md, "Clocks and
power"): SM and memory clocks (MHz), board power (W; NVML reports mW), GPU temperature (C) and the
clocks-event ("throttle") reasons, a bitmask decoded to names.

Power comes from NVML's instantaneous field where the GPU reports it
(``nvmlDeviceGetFieldValues`` with ``NVML_FI_DEV_POWER_INSTANT``, nvml.h: "Current GPU power,
supported on all architectures"), else from ``nvmlDeviceGetPowerUsage``, which averages the last
second on Ampere (except GA100) and newer GPUs. :attr:`NvmlSampler.power_source` says which.

Values NVML does not support on a device (power on some boards) are left out after the first
reading fails; when none can be read the sampler records why and reads nothing.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .base import Sampler, flags_of, one_line

__all__ = [
    "NvmlSampler",
    "handles_named",
    "MISSING",
    "THROTTLE_REASONS",
    "INSTANT",
    "AVERAGE",
    "INSTANT_AVERAGE_S",
    "USAGE_AVERAGE_S",
    "field_value",
]

#: :attr:`NvmlSampler.power_source` when power is NVML's instantaneous field.
INSTANT = "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)"
#: :attr:`NvmlSampler.power_source` when power is nvmlDeviceGetPowerUsage.
AVERAGE = "nvmlDeviceGetPowerUsage"
#: How far back one instantaneous reading reaches, s. NVML documents no averaging for the field;
#: on A100 and H100 the board sensor's value is refreshed about every 100 ms (Yang, Adamek and
#: Armour, "Accurate and Convenient Energy Measurements for GPUs", SC 2024, arXiv:2312.02741),
#: so a reading may describe up to the last 0.1 s.
INSTANT_AVERAGE_S = 0.1
#: nvmlDeviceGetPowerUsage averages the last second on Ampere (except GA100) and newer GPUs
#: (NVML API reference); assumed for every GPU.
USAGE_AVERAGE_S = 1.0

#: The reason when the library is not installed.
MISSING = "nvidia-ml-py is not installed: pip install 'apple_roofline[power]'"

#: NVML's clocks-event reasons (nvml.h, ``nvmlClocksEventReason*``, formerly ``...ThrottleReason*``).
THROTTLE_REASONS: Tuple[Tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)


def handles_named(nvml: Any, name: str) -> List[Tuple[int, Any]]:
    """``(index, handle)`` of every GPU an initialised ``nvml`` (``pynvml``) names ``name`` (spacing at
    either end aside), in NVML's order. Raises NVML's errors."""
    found = []
    for i in range(int(nvml.nvmlDeviceGetCount())):
        h = nvml.nvmlDeviceGetHandleByIndex(i)
        got = nvml.nvmlDeviceGetName(h)
        if (got.decode() if isinstance(got, bytes) else str(got)).strip() == name.strip():
            found.append((i, h))
    return found


class NvmlSampler(Sampler):
    """Samples NVIDIA GPU ``index`` (NVML's numbering), or the GPU at ``pci_bus_id`` when given (the
    CUDA backend reports it, and CUDA's numbering may differ from NVML's), or the one GPU named
    ``device_name`` (a wgpu adapter, which reports no bus id). ``module`` replaces ``pynvml`` (tests)."""

    name = "nvml"
    #: How far back one power reading reaches: :data:`USAGE_AVERAGE_S` until :meth:`open` finds the
    #: instantaneous field, then :data:`INSTANT_AVERAGE_S`. A measurement shorter than this gets no
    #: power rather than the preceding work's.
    power_average_s = USAGE_AVERAGE_S

    def __init__(
        self,
        index: int = 0,
        *,
        pci_bus_id: str = "",
        device_name: str = "",
        module: Optional[Any] = None,
        period_s: float = 0.02,
    ) -> None:
        super().__init__(period_s=period_s)
        self.index = index
        self.pci_bus_id = pci_bus_id
        self.device_name = device_name
        self._module = module
        self._nvml: Any = None
        self._handle: Any = None
        self._readers: Dict[str, Callable[[], float]] = {}

    def open(self) -> str:
        """Initialise NVML and find the GPU; "" when at least one value reads, else why not."""
        nvml, why = self._init()
        if why:
            return why
        self._nvml = nvml
        try:
            self._handle = self._find(nvml)
        except Exception as exc:
            self._shutdown()
            return f"NVML cannot open GPU {self.pci_bus_id or self.device_name or self.index}: {one_line(exc)}"
        readers = self._all_readers(nvml, self._handle)
        instant_failed = self._power_reader(nvml, readers)
        failed = self._keep_readers(readers)
        if not self._readers:
            self._shutdown()
            return "NVML reads no value of this GPU (" + "; ".join(failed) + ")"
        self.notes = [f"NVML cannot read {f}" for f in failed]
        if "power_w" in self._readers and not self.power_source:
            self.power_source = AVERAGE
            self.notes.append(
                f"NVML's instantaneous power field is not read ({instant_failed}): power is "
                f"nvmlDeviceGetPowerUsage, a {USAGE_AVERAGE_S:g}-s average"
            )
        return ""

    def _init(self) -> Tuple[Any, str]:
        """``pynvml`` (or the module given) initialised: ``(module, "")``, or ``(None, why not)``."""
        nvml = self._module
        if nvml is None:
            try:
                nvml = importlib.import_module("pynvml")
            except ImportError:
                return None, MISSING
        try:
            nvml.nvmlInit()
        except Exception as exc:
            return None, f"NVML cannot start: {one_line(exc)}"
        return nvml, ""

    def _power_reader(self, nvml: Any, readers: Dict[str, Callable[[], float]]) -> str:
        """The instantaneous power field when it reads (then :attr:`power_average_s` and
        ``power_source`` are its), else ``nvmlDeviceGetPowerUsage``'s 1-s average in its place
        (older GPU, driver or nvidia-ml-py); why the field did not read, "" when it did."""
        try:
            readers["power_w"]()
        except Exception as exc:
            instant_failed = one_line(exc)
            readers["power_w"] = lambda: float(nvml.nvmlDeviceGetPowerUsage(self._handle)) / 1000.0
            return instant_failed
        self.power_average_s = INSTANT_AVERAGE_S
        self.power_source = INSTANT
        return ""

    def _keep_readers(self, readers: Dict[str, Callable[[], float]]) -> List[str]:
        """Keep each reader that reads once; ``"key: why"`` for each that raised."""
        failed: List[str] = []
        for key, fn in readers.items():
            try:
                fn()
            except Exception as exc:
                failed.append(f"{key}: {one_line(exc)}")
            else:
                self._readers[key] = fn
        return failed

    def _find(self, nvml: Any) -> Any:
        if self.device_name and not self.pci_bus_id:
            return self._find_by_name(nvml)
        if self.pci_bus_id:
            try:
                return nvml.nvmlDeviceGetHandleByPciBusId(self.pci_bus_id.encode())
            except Exception:  # an id NVML does not know: fall back to the index
                pass
        return nvml.nvmlDeviceGetHandleByIndex(self.index)

    def _find_by_name(self, nvml: Any) -> Any:
        """The one GPU NVML names ``device_name``; raises LookupError when none or several do."""
        found = [h for _i, h in handles_named(nvml, self.device_name)]
        if len(found) != 1:
            raise LookupError(f"{len(found)} GPUs are named {self.device_name!r}; cannot tell which one is measured")
        return found[0]

    @staticmethod
    def _all_readers(nvml: Any, h: Any) -> Dict[str, Callable[[], float]]:
        reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            nvml, "nvmlDeviceGetCurrentClocksThrottleReasons"
        )
        return {
            "sm_clock_mhz": lambda: float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_SM)),
            "mem_clock_mhz": lambda: float(nvml.nvmlDeviceGetClockInfo(h, nvml.NVML_CLOCK_MEM)),
            "power_w": lambda: field_value(nvml, h, nvml.NVML_FI_DEV_POWER_INSTANT) / 1000.0,
            "temperature_c": lambda: float(nvml.nvmlDeviceGetTemperature(h, nvml.NVML_TEMPERATURE_GPU)),
            "throttle_bits": lambda: float(int(reasons(h))),
        }

    def read(self) -> Mapping[str, float]:
        """One reading of every value that read at :meth:`open`. Raises NVML's errors."""
        return {k: fn() for k, fn in self._readers.items()}

    def flag_names(self, key: str, bits: int) -> List[str]:
        """The clocks-event reasons set in ``bits`` (:data:`THROTTLE_REASONS`)."""
        return flags_of(bits, THROTTLE_REASONS) if key == "throttle_bits" else []

    def close(self) -> None:
        """Shut NVML down."""
        self._shutdown()

    def _shutdown(self) -> None:
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            finally:
                self._nvml = None


def field_value(nvml: Any, handle: Any, field_id: int) -> float:
    """One NVML field value (``nvmlDeviceGetFieldValues`` with one field id) as a number, read by
    its ``valueType``. Raises RuntimeError when NVML returns the field with an error (the GPU does
    not support it) and NVML's own errors otherwise."""
    got = nvml.nvmlDeviceGetFieldValues(handle, [field_id])[0]
    ret = int(getattr(got, "nvmlReturn", 0))
    if ret != 0:
        text = ""
        try:
            text = str(nvml.nvmlErrorString(ret))
        except Exception:
            pass
        raise RuntimeError(f"field {field_id}: {text or f'NVML error {ret}'}")
    member = _VALUE_MEMBERS.get(int(getattr(got, "valueType", 1)), "uiVal")
    return float(getattr(got.value, member))


#: nvmlValueType_t -> the member of nvmlValue_t holding it (nvml.h, ``NVML_VALUE_TYPE_*``).
_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
