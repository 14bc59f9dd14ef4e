"""Theoretical ceilings of every backend: vendor-spec upper bounds, every figure with its source.

* :mod:`.cpu` — the CPU model (cores × vector lanes × FMA pipes × 2 × clock), its ceilings and JSON
  description; :mod:`.cpu_tables` — the microarchitecture tables (FMA pipes per core type);
  :mod:`.cpu_probe` — reading the host (``/proc/cpuinfo``, sysfs, sysctl, the native features and
  clock measurement) into a :class:`CpuSpec`; :mod:`.cpu_clock` — a run's CPU clock from several
  readings (their robust estimate: a reading a neighbour disturbed is dropped);
* :mod:`.cuda` — NVIDIA GPUs from the driver's SM count, clocks and bus width and per-architecture
  rates from NVIDIA's documentation;
* :mod:`.apple` — Apple-silicon GPUs from a chip table (GPU cores × 128 ALUs × 2 × clock, memory
  bandwidth), each figure cited;
* :mod:`.collector` — :class:`CeilingCollector`, shared by the GPU models.

A figure that is not known gives no ceiling, never a guess. :func:`device_theoretical` picks the
model for an opened device. Methodology: docs/design/limits.md, "Theoretical ceilings".
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Tuple

from ..study.records import Ceiling
from .apple import APPLE_CHIPS, FP32_ALUS_PER_CORE, AppleChip, GpuConfig, apple_theoretical, lookup_chip
from .collector import CeilingCollector
from .cpu import DTYPES, NO_THEORETICAL_BANDWIDTH, CoreGroup, CpuSpec, Figure, describe, theoretical_ceilings
from .cpu_probe import host_cpu_spec
from .cpu_tables import Uarch
from .cuda import CUDA_CORE_RATES, TENSOR_CORE_RATES, CoreRates, TensorRates, cuda_theoretical

__all__ = [
    "APPLE_CHIPS",
    "CUDA_CORE_RATES",
    "DTYPES",
    "FP32_ALUS_PER_CORE",
    "NO_THEORETICAL_BANDWIDTH",
    "TENSOR_CORE_RATES",
    "AppleChip",
    "CeilingCollector",
    "CoreGroup",
    "CoreRates",
    "CpuSpec",
    "Figure",
    "GpuConfig",
    "TensorRates",
    "Uarch",
    "apple_theoretical",
    "cuda_theoretical",
    "describe",
    "device_theoretical",
    "host_cpu_spec",
    "lookup_chip",
    "theoretical_ceilings",
]


def device_theoretical(info: Mapping[str, object]) -> Tuple[Dict[str, object], List[Ceiling]]:
    """Theoretical description and ceilings of an opened device, from its ``Backend.info()`` dict.

    Dispatches on ``info["backend"]``:

    * ``"cpu"``: :func:`host_cpu_spec` (with the compiled kernels' features) ->
      (``{"theoretical": describe(spec)}``, :func:`theoretical_ceilings`): compute ceilings in
      GFLOP/s, no bandwidth ceiling.
    * ``"cuda"``: :func:`apple_roofline.theoretical.cuda.cuda_theoretical` (SM count, clocks, bus
      width and compute capability from ``info``) -> (``{"theoretical": {...}}``, a ``"DRAM
      bandwidth"`` ceiling in GB/s and compute ceilings in GFLOP/s, each only where its inputs are
      known).
    * ``"metal"``: :func:`apple_roofline.theoretical.apple.apple_theoretical` (the chip matched by
      ``name``, else ``chip``, in the Apple-silicon chip table; the GPU core count from
      ``gpu_cores``) -> (``{"theoretical": {...}}``, a ``"DRAM bandwidth"`` ceiling in GB/s and
      compute ceilings in GFLOP/s, each only where the table sources its figures); a chip not in
      the table gives (``{"theoretical": {"chip": ..., "note": ...}}``, []).
    * any other backend: ({}, []) (no spec model yet).

    Every ceiling has ``source="theoretical"`` and its derivation in ``from_``.

    Raises:
        Nothing for missing or malformed ``info`` keys (what depends on them is left out).
    """
    backend = info.get("backend")
    if backend == "cuda":
        return cuda_theoretical(info)
    if backend == "metal":
        return apple_theoretical(info)
    if backend != "cpu":
        return {}, []
    spec = host_cpu_spec()
    return {"theoretical": describe(spec)}, theoretical_ceilings(spec)
