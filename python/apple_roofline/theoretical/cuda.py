"""Theoretical ceilings of an NVIDIA GPU, computed from the CUDA backend's device-info dict.

Formulas (GB = 1e9 bytes, GFLOP/s = 1e9 FLOP/s; an FMA counts as 2 FLOPs, docs/design/measurement.md,
"Counting FLOPs and bytes")::

    DRAM bandwidth [GB/s]  = 2 (double data rate) × memory_clock_hz × memory_bus_bits / 8 / 1e9
    CUDA-core peak [FLOP/s] = SMs × FMA results per clock per SM × 2 FLOP per FMA × clock_hz
    tensor-core peak [FLOP/s] = SMs × dense FLOP per clock per SM × clock_hz

``memory_clock_hz`` is ``CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`` × 1000 (the driver's *peak memory
clock*), ``memory_bus_bits`` is ``CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH``, ``clock_hz`` is
``CU_DEVICE_ATTRIBUTE_CLOCK_RATE`` × 1000 (the *maximum* SM clock) and the SM count is
``compute_units`` (``CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT``).

The memory clock the driver reports is the double-data-rate clock: two transfers per cycle per
pin, hence the factor 2. Checks against NVIDIA's published bandwidths: H200, 6016-bit at 3201 MHz
-> 2 × 3.201e9 × 6016 / 8 = 4814 GB/s; H100 SXM, 5120-bit at 2619 MHz -> 3352 GB/s (published
3.35 TB/s); A100 40 GB, 5120-bit at 1215 MHz -> 1555 GB/s (published 1555 GB/s); the same factor
holds for GDDR6X (RTX 4090: 384-bit at 10501 MHz -> 1008 GB/s, published 1008 GB/s).

Per-SM rates and where they come from (the tables below carry the citation of every figure):

* **FP32 and FP64 FMA per clock per SM** (``CUDA_CORE_RATES``): *CUDA C++ Programming Guide*
  (legacy guide, CUDA 12.x/13.0), chapter "Compute Capabilities", sections "Compute Capability 7.x /
  8.x / 9.0 / 10.0 / 12.0 -> Architecture": the FP32 and FP64 cores per SM (one FMA per core per
  clock); footnote: "2 FP64 cores ... for devices of compute capability 7.5". The same numbers are
  the 32-bit and 64-bit "add, multiply, multiply-add" rows of the guide's table "Throughput of Native
  Arithmetic Instructions (Number of Results per Clock Cycle per Multiprocessor)" (section "Arithmetic
  Instructions"; the table moved to the *CUDA C++ Best Practices Guide*, section "Throughput of
  Native Arithmetic Instructions", with CUDA 13).
  https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-capabilities
* **FP16 (half2) results per clock per SM** (``CUDA_CORE_RATES.fp16``): the 16-bit row of that
  arithmetic-instruction table (CUDA 12.x programming guide: 7.x 128, 8.0 256, 8.6 256, 8.9 128,
  9.0 256); cc 12.0 from the CUDA 13 Best Practices Guide table (64 ``f16x2`` instructions = 128
  results), which agrees with the NVIDIA RTX Blackwell whitepaper (non-tensor FP16 = FP32 rate).
  Cross-checks against the whitepapers' non-tensor FP16 figures: V100 31.4 TFLOPS = 80 × 128 × 2 ×
  1.53 GHz; A100 78 TFLOPS = 108 × 256 × 2 × 1.41 GHz; H100 SXM5 133.8 TFLOPS = 132 × 256 × 2 ×
  1.98 GHz; RTX 4090 82.6 TFLOPS = 128 × 128 × 2 × 2.52 GHz.
  The table counts *results*: a half2 FMA gives two. No NVIDIA document gives a rate for scalar
  ``half`` FMAs; the "FP16 scalar ILP" ceiling uses the same table figure, and its derivation says
  that scalar half instructions may issue at half of it (one result per half2 issue slot).
* **Tensor-core GEMM peaks** (``TENSOR_CORE_RATES``): dense (no 2:4 sparsity) FLOP per clock per
  SM, derived from the architecture whitepapers' peak tables divided by SMs × boost clock (each
  entry shows the division): *NVIDIA Tesla V100 GPU Architecture* (cc 7.0), *NVIDIA Turing GPU
  Architecture* (7.5), *NVIDIA A100 Tensor Core GPU Architecture* (8.0), *NVIDIA Ampere GA102 GPU
  Architecture* (8.6), *NVIDIA Ada GPU Architecture* (8.9), *NVIDIA H100 Tensor Core GPU
  Architecture* (9.0), *NVIDIA RTX Blackwell GPU Architecture* (12.0, GeForce only), and the
  data sheets of the professional parts named in the entries. FP16/BF16 figures are those with FP32
  accumulation, the compute type the CUDA GEMM suite asks cuBLAS for (``CUBLAS_COMPUTE_32F``).
  GeForce parts of cc 7.5, 8.6, 8.9 and 12.0 run FP16/BF16 with FP32 accumulation, and TF32, at half
  the rate of the professional and data-center parts of the same compute capability (the
  whitepapers list both); the product line is read from the device name ("GeForce").
  INT8 counts 2 integer operations per multiply-add (GOP/s, reported as GFLOP/s).
  "GEMM FP32" is the FP32 CUDA-core peak: cuBLAS SGEMM (``CUBLAS_COMPUTE_32F``, no TF32) runs on the
  CUDA cores. "GEMM FP64" is the FP64 tensor-core peak where the whitepaper gives one (8.0, 9.0) and
  the FP64 CUDA-core peak on 7.0 and 7.5, whose tensor cores have no FP64 mode; elsewhere (tensor
  cores with an FP64 mode but no published rate) it is omitted.

Anything not in the tables (an unknown compute capability, cc 8.7's FP16 rate, cc 10.0's FP16 and
tensor-core rates, professional cc 12.0 tensor-core rates) is omitted with a reason, never guessed.

Caveats (state them wherever the numbers are shown):

* ``clock_hz`` is the *maximum* SM clock. Under sustained load power and thermal limits lower the
  clock, so every compute figure here is an upper bound no kernel sustains. NVIDIA's own
  tensor-core figures use a lower boost clock (H100 SXM5: 1830 MHz for FP16/BF16/TF32/INT8, against
  the 1980 MHz maximum used for its FP32/FP64 figures), so the tensor-core ceilings here exceed the
  published ones by the ratio of the clocks.
* The bandwidth is the DRAM interface's peak; ECC, refresh and the memory controller keep STREAM
  below it (typically 80-95 %).
* The cc 8.6 FP16 figure (256 results, the programming guide's) is twice what the GA102 whitepaper
  lists for GeForce RTX 30 cards (non-tensor FP16 = FP32 rate); the larger is kept as the bound.
* MIG instances and green contexts see fewer SMs; the SM count is whatever the driver reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from ..study.records import Ceiling
from .collector import CeilingCollector

__all__ = [
    "CoreRates",
    "TensorRates",
    "CUDA_CORE_RATES",
    "TENSOR_CORE_RATES",
    "COMPUTE_CLASSES",
    "GEMM_CLASSES",
    "cuda_theoretical",
]

# --------------------------------------------------------------------------------------------
# Per-SM rate tables
# --------------------------------------------------------------------------------------------

_CPG = (
    "CUDA C++ Programming Guide, 'Compute Capabilities' -> 'Compute Capability {sec}' -> "
    "'Architecture' ({n32} FP32 cores, {n64} FP64 cores per SM)"
)
_ARITH = (
    "CUDA C++ Programming Guide 12.x, 'Arithmetic Instructions', table 'Throughput of Native "
    "Arithmetic Instructions (Number of Results per Clock Cycle per Multiprocessor)', 16-bit "
    "floating-point add, multiply, multiply-add: {n} for cc {cc}"
)


@dataclass(frozen=True)
class CoreRates:
    """CUDA-core FMA results per clock per SM of one compute capability.

    Attributes:
        fp32: FP32 FMA results per clock per SM.
        fp64: FP64 FMA results per clock per SM.
        fp16: FP16 FMA results per clock per SM with half2 instructions (two results each); None
            when no source gives the rate (``fp16_source`` then says why).
        source: citation of ``fp32`` and ``fp64``.
        fp16_source: citation of ``fp16``, or the reason it is unknown.
    """

    fp32: int
    fp64: int
    fp16: Optional[int]
    source: str
    fp16_source: str


#: CUDA-core rates by (cc_major, cc_minor). See the module docstring for the documents.
CUDA_CORE_RATES: Dict[Tuple[int, int], CoreRates] = {
    (7, 0): CoreRates(64, 32, 128, _CPG.format(sec="7.x", n32=64, n64=32), _ARITH.format(n=128, cc="7.x")),
    (7, 5): CoreRates(
        64,
        2,
        128,
        _CPG.format(sec="7.x", n32=64, n64=32) + "; footnote: '2 FP64 cores ... for devices of compute capability 7.5'",
        _ARITH.format(n=128, cc="7.x"),
    ),
    (8, 0): CoreRates(64, 32, 256, _CPG.format(sec="8.x", n32=64, n64=32), _ARITH.format(n=256, cc="8.0")),
    (8, 6): CoreRates(
        128,
        2,
        256,
        _CPG.format(sec="8.x", n32=128, n64=2),
        _ARITH.format(n=256, cc="8.6") + " (the GA102 whitepaper lists GeForce RTX 30 non-tensor FP16 "
        "at the FP32 rate, i.e. 128; the table's larger figure is kept as the upper bound)",
    ),
    (8, 7): CoreRates(
        128,
        2,
        None,
        _CPG.format(sec="8.x", n32=128, n64=2),
        "no FP16 rate for cc 8.7 in the sources used (the arithmetic-instruction table has no 8.7 column)",
    ),
    (8, 9): CoreRates(128, 2, 128, _CPG.format(sec="8.x", n32=128, n64=2), _ARITH.format(n=128, cc="8.9")),
    (9, 0): CoreRates(128, 64, 256, _CPG.format(sec="9.0", n32=128, n64=64), _ARITH.format(n=256, cc="9.0")),
    (10, 0): CoreRates(
        128,
        64,
        None,
        _CPG.format(sec="10.0", n32=128, n64=64),
        "no verified FP16 (half2) rate for cc 10.0: no whitepaper lists a non-tensor FP16 figure for "
        "B200/GB200 to check the CUDA 13 Best Practices Guide table against",
    ),
    (12, 0): CoreRates(
        128,
        2,
        128,
        _CPG.format(sec="12.0", n32=128, n64=2),
        "CUDA C++ Best Practices Guide 13.x, 'Throughput of Native Arithmetic Instructions': 64 "
        "add/mul/fma.f16x2 per clock per SM for cc 12.0 = 128 results; NVIDIA RTX Blackwell GPU "
        "Architecture whitepaper: non-tensor FP16 = FP32 rate (the CUDA 12.9 programming guide had 256)",
    ),
}


@dataclass(frozen=True)
class TensorRates:
    """Dense tensor-core FLOP (INT8: integer operations) per clock per SM of one compute capability.

    Keys of ``rates`` / ``geforce`` are ``"FP64"``, ``"TF32"``, ``"FP16"``, ``"BF16"``, ``"FP8"``,
    ``"INT8"``; FP16, BF16 and FP8 (E4M3 or E5M2 inputs, one rate) are with FP32 accumulation.

    Attributes:
        rates: the rates of professional and data-center parts.
        geforce: the rates of GeForce parts where they differ (half-rate FP32 accumulation); None
            when the product line does not matter.
        source: the whitepaper / data-sheet figures the rates are derived from, with the division.
        missing: ``{class key: reason}`` for classes without a rate (on every product line).
        pro_missing: reason the professional rates are absent (``rates`` empty), or "".
        fp64_on_cuda_cores: the tensor cores have no FP64 mode, so FP64 GEMM runs on the FP64 units
            and "GEMM FP64" is the FP64 CUDA-core peak.
    """

    rates: Mapping[str, int]
    geforce: Optional[Mapping[str, int]]
    source: str
    missing: Mapping[str, str] = field(default_factory=dict)
    pro_missing: str = ""
    fp64_on_cuda_cores: bool = False


_NO_BF16_TF32 = "tensor cores of cc {cc} have no {k} mode (introduced with the NVIDIA Ampere architecture, cc 8.0)"
_NO_FP8 = "tensor cores of cc {cc} have no FP8 mode (introduced with Ada, cc 8.9, and Hopper, cc 9.0)"
_NO_FP64_RATE = (
    "cc {cc} tensor cores have an FP64 mode (CUDA C++ Programming Guide, 'Compute Capability {sec}') but no "
    "published FP64 tensor-core rate"
)

#: Tensor-core rates by (cc_major, cc_minor). Check: rate × SMs × published clock = published peak.
TENSOR_CORE_RATES: Dict[Tuple[int, int], TensorRates] = {
    (7, 0): TensorRates(
        {"FP16": 1024},
        None,
        "NVIDIA Tesla V100 GPU Architecture whitepaper: 8 Tensor Cores per SM x 64 FP16 FMA per clock; "
        "Tesla V100 SXM2 125 TFLOPS = 80 SMs x 1024 x 1.530 GHz",
        {
            "BF16": _NO_BF16_TF32.format(cc="7.0", k="BF16"),
            "TF32": _NO_BF16_TF32.format(cc="7.0", k="TF32"),
            "INT8": "tensor cores of cc 7.0 have no INT8 mode (introduced with Turing, cc 7.5)",
            "FP8": _NO_FP8.format(cc="7.0"),
        },
        fp64_on_cuda_cores=True,
    ),
    (7, 5): TensorRates(
        {"FP16": 1024, "INT8": 2048},
        {"FP16": 512, "INT8": 2048},
        "NVIDIA Turing GPU Architecture whitepaper: Tesla T4 65 TFLOPS FP16 / 130 INT8 TOPS = 40 SMs x "
        "1024 / 2048 x 1.590 GHz; GeForce RTX 2080 Ti Founders Edition FP16 with FP32 accumulate 56.9 "
        "TFLOPS = 68 SMs x 512 x 1.635 GHz (half its 113.8 TFLOPS with FP16 accumulate), INT8 227.7 TOPS "
        "= 68 x 2048 x 1.635 GHz",
        {
            "BF16": _NO_BF16_TF32.format(cc="7.5", k="BF16"),
            "TF32": _NO_BF16_TF32.format(cc="7.5", k="TF32"),
            "FP8": _NO_FP8.format(cc="7.5"),
        },
        fp64_on_cuda_cores=True,
    ),
    (8, 0): TensorRates(
        {"FP64": 128, "TF32": 1024, "FP16": 2048, "BF16": 2048, "INT8": 4096},
        None,
        "NVIDIA A100 Tensor Core GPU Architecture whitepaper: A100 FP64 Tensor 19.5, TF32 156, FP16 and "
        "BF16 312 TFLOPS, INT8 624 TOPS (dense) = 108 SMs x 128 / 1024 / 2048 / 4096 x 1.410 GHz",
        {"FP8": _NO_FP8.format(cc="8.0")},
    ),
    (8, 6): TensorRates(
        {"TF32": 512, "FP16": 1024, "BF16": 1024, "INT8": 2048},
        {"TF32": 256, "FP16": 512, "BF16": 512, "INT8": 2048},
        "NVIDIA Ampere GA102 GPU Architecture whitepaper: GeForce RTX 3090 TF32 35.6, FP16/BF16 with FP32 "
        "accumulate 71, INT8 284 TOPS (dense) = 82 SMs x 256 / 512 / 2048 x 1.695 GHz; NVIDIA A40 data "
        "sheet: TF32 74.8, FP16/BF16 149.7 TFLOPS, INT8 299.3 TOPS (dense) = 84 SMs x 512 / 1024 / 2048 x "
        "1.740 GHz",
        {"FP64": _NO_FP64_RATE.format(cc="8.6", sec="8.x"), "FP8": _NO_FP8.format(cc="8.6")},
    ),
    (8, 9): TensorRates(
        {"TF32": 512, "FP16": 1024, "BF16": 1024, "INT8": 2048},
        {"TF32": 256, "FP16": 512, "BF16": 512, "INT8": 2048},
        "NVIDIA Ada GPU Architecture whitepaper: GeForce RTX 4090 TF32 82.6, FP16/BF16 with FP32 "
        "accumulate 165.2 TFLOPS, INT8 660.6 TOPS (dense) = 128 SMs x 256 / 512 / 2048 x 2.520 GHz; "
        "NVIDIA L4 data sheet: TF32 60, FP16/BF16 121 TFLOPS (dense) = 58 SMs x 512 / 1024 x 2.040 GHz",
        {"FP64": _NO_FP64_RATE.format(cc="8.9", sec="8.x")},
    ),
    (9, 0): TensorRates(
        {"FP64": 256, "TF32": 2048, "FP16": 4096, "BF16": 4096, "FP8": 8192, "INT8": 8192},
        None,
        "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5 TF32 494.7, FP16/BF16 989.4, FP8 "
        "1978.9 TFLOPS (2x FP16), INT8 1978.9 TOPS (dense) = 132 SMs x 2048 / 4096 / 8192 / 8192 x 1.830 "
        "GHz; FP64 Tensor 66.9 TFLOPS = 132 x 256 x 1.980 GHz",
    ),
    (12, 0): TensorRates(
        {},
        {"TF32": 256, "FP16": 512, "BF16": 512, "INT8": 2048},
        "NVIDIA RTX Blackwell GPU Architecture whitepaper: GeForce RTX 5090 TF32 104.8, FP16/BF16 with "
        "FP32 accumulate 209.5 TFLOPS, INT8 838 TOPS (dense) = 170 SMs x 256 / 512 / 2048 x 2.407 GHz",
        {"FP64": _NO_FP64_RATE.format(cc="12.0", sec="12.0")},
        pro_missing="only GeForce RTX 50 figures (RTX Blackwell whitepaper) were verified for cc 12.0; "
        "professional parts may run FP32 accumulation at full rate",
    ),
}

#: The CUDA-core ceilings, in order, each paired with the measured ceiling of the same name.
COMPUTE_CLASSES: Tuple[str, ...] = ("FP32 vector", "FP32 scalar ILP", "FP16 vector", "FP16 scalar ILP", "FP64")
#: The GEMM ceilings, in order.
GEMM_CLASSES: Tuple[str, ...] = (
    "GEMM FP32",
    "GEMM FP64",
    "GEMM TF32",
    "GEMM FP16",
    "GEMM BF16",
    "GEMM FP8",
    "GEMM INT8",
)

_TENSOR_KEYS: Tuple[str, ...] = ("FP64", "TF32", "FP16", "BF16", "FP8", "INT8")

_CLOCK_NOTE = "an upper bound: the maximum SM clock is not sustained under load (power and thermal limits)"
_TENSOR_CLOCK_NOTE = (
    "dense, at the maximum SM clock reported by the driver (clock_hz); NVIDIA's published figures use a "
    "lower boost clock"
)


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def cuda_theoretical(info: Mapping[str, object]) -> Tuple[Dict[str, object], List[Ceiling]]:
    """Theoretical description and ceilings of a CUDA device from its ``Backend.info()`` dict.

    Args:
        info: the CUDA backend's device info. Keys read: ``name`` (str), ``compute_units`` (int,
            SMs), ``clock_hz`` (int, maximum SM clock, Hz), ``memory_clock_hz`` (int, peak memory
            clock, Hz), ``memory_bus_bits`` (int), ``cc_major`` / ``cc_minor`` (ints; else parsed
            from ``compute_capability``, e.g. ``"9.0"``). Any may be missing or malformed.

    Returns:
        ``({"theoretical": desc}, ceilings)``. ``desc`` is JSON-friendly: ``model``,
        ``compute_capability``, ``sm_count``, ``clock_hz``, ``memory_clock_hz``,
        ``memory_bus_bits``, ``product_line`` (``"GeForce"``, ``"other"`` or None),
        ``rates_per_sm`` (the table rows used), ``peaks`` (``{ceiling name: {"gflops" or "gbps",
        "derivation"}}``), ``omitted`` (``{ceiling name: reason}``), ``notes`` (caveats).
        ``ceilings`` are :class:`~apple_roofline.study.records.Ceiling` objects with ``source=
        "theoretical"``: ``"DRAM bandwidth"`` (GB/s) and the compute classes of
        :data:`COMPUTE_CLASSES` and :data:`GEMM_CLASSES` (GFLOP/s; INT8 in GOP/s reported as
        GFLOP/s), each only where its inputs are known; ``from_`` is the derivation with the numbers.

    Raises:
        Nothing: a missing or malformed key omits what depends on it, with the reason in
        ``desc["omitted"]``.
    """
    name = info.get("name")
    model = name if isinstance(name, str) and name else None
    sms, sms_why = _pos_int(info, "compute_units", "SM count")
    clock, clock_why = _pos_num(info, "clock_hz", "SM clock")
    mem_clock, mem_clock_why = _pos_num(info, "memory_clock_hz", "memory clock")
    bus, bus_why = _pos_int(info, "memory_bus_bits", "memory bus width")
    cc, cc_why = _compute_capability(info)
    geforce: Optional[bool] = None if model is None else "geforce" in model.lower()

    collected = CeilingCollector()
    _add_dram(collected, mem_clock, bus, "; ".join(w for w in (mem_clock_why, bus_why) if w) or None)
    compute_why = "; ".join(w for w in (sms_why, clock_why, cc_why) if w) or None
    rates_used = _add_compute(collected, cc, sms, clock, geforce, compute_why)
    desc: Dict[str, object] = {
        "model": model,
        "compute_capability": _cc_str(cc) if cc is not None else None,
        "sm_count": sms,
        "clock_hz": _plain(clock),
        "memory_clock_hz": _plain(mem_clock),
        "memory_bus_bits": bus,
        "product_line": None if geforce is None else ("GeForce" if geforce else "other"),
        "rates_per_sm": rates_used,
        "peaks": collected.peaks,
        "omitted": collected.omitted,
        "notes": list(_NOTES),
    }
    return {"theoretical": desc}, collected.ceilings


#: The caveats every CUDA description carries.
_NOTES: Tuple[str, ...] = (
    "compute ceilings use the maximum SM clock (clock_hz): " + _CLOCK_NOTE,
    "tensor-core ceilings are "
    + _TENSOR_CLOCK_NOTE
    + " (H100 SXM5: 1830 MHz for FP16/BF16/TF32/INT8, 1980 MHz for FP64), so they exceed the published ones",
    "DRAM bandwidth: the driver's peak memory clock is the double-data-rate clock, hence the factor 2 "
    "(H200: 2 x 3201 MHz x 6016 bit / 8 = 4814 GB/s)",
    "INT8 GEMM counts 2 integer operations per multiply-add (GOP/s, reported as GFLOP/s)",
)


# --------------------------------------------------------------------------------------------
# The steps of cuda_theoretical
# --------------------------------------------------------------------------------------------


def _add_dram(collected: CeilingCollector, mem_clock: Optional[float], bus: Optional[int], why: Optional[str]) -> None:
    """Add ``"DRAM bandwidth"`` = 2 × memory clock × bus width / 8 (GB/s), or ``why`` it is
    omitted where the clock or the bus width is unknown."""
    if mem_clock is None or bus is None:
        collected.omitted["DRAM bandwidth"] = why or "memory clock or bus width unknown"
        return
    gbps = 2.0 * mem_clock * bus / 8.0 / 1e9
    collected.add(
        "DRAM bandwidth",
        "bandwidth",
        gbps,
        f"2 (double data rate) x {_mhz(mem_clock)} MHz peak memory clock x {bus}-bit bus / 8 bits per byte "
        f"= {_num(gbps)} GB/s "
        "(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH); "
        "the interface's peak, which STREAM stays below",
    )


def _add_compute(
    collected: CeilingCollector,
    cc: Optional[Tuple[int, int]],
    sms: Optional[int],
    clock: Optional[float],
    geforce: Optional[bool],
    why: Optional[str],
) -> Dict[str, object]:
    """Add the CUDA-core and tensor-core ceilings of :data:`COMPUTE_CLASSES` and
    :data:`GEMM_CLASSES`, or the reason (``why`` the SM count, clock or compute capability is
    unusable, or the capability is not in :data:`CUDA_CORE_RATES`) for each; returns the per-SM
    rates used (empty where none)."""
    core = CUDA_CORE_RATES.get(cc) if cc is not None else None
    if why is None and core is None:
        why = (
            f"compute capability {_cc_str(cc)} is not in the per-SM rate table (CUDA_CORE_RATES); "
            "no theoretical compute ceiling rather than a guess"
        )
    if why is not None or core is None or sms is None or clock is None or cc is None:
        reason = why or "SM count, clock or compute capability unknown"
        for cname in COMPUTE_CLASSES + GEMM_CLASSES:
            collected.omitted[cname] = reason
        return {}
    rates_used = _core_ceilings(cc, core, sms, clock, collected.add, collected.omitted)
    rates_used.update(_tensor_ceilings(cc, core, sms, clock, geforce, collected.add, collected.omitted))
    return rates_used


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

_Add = Callable[[str, str, float, str], None]


def _core_ceilings(
    cc: Tuple[int, int],
    core: CoreRates,
    sms: int,
    clock: float,
    add: _Add,
    omitted: Dict[str, str],
) -> Dict[str, object]:
    ccs = _cc_str(cc)

    def peak(per_sm: int) -> float:
        return sms * per_sm * 2.0 * clock / 1e9

    def deriv(per_sm: int, what: str, source: str, extra: str = "") -> str:
        return (
            f"{sms} SMs x {per_sm} {what} FMA results/clk/SM (cc {ccs}; {source}) x 2 FLOP per FMA x "
            f"{_mhz(clock)} MHz max SM clock = {_num(peak(per_sm))} GFLOP/s{extra}; {_CLOCK_NOTE}"
        )

    fp32 = deriv(core.fp32, "FP32", core.source)
    add("FP32 vector", "compute", peak(core.fp32), fp32)
    add("FP32 scalar ILP", "compute", peak(core.fp32), fp32)
    if core.fp16 is not None:
        add("FP16 vector", "compute", peak(core.fp16), deriv(core.fp16, "FP16 (half2)", core.fp16_source))
        add(
            "FP16 scalar ILP",
            "compute",
            peak(core.fp16),
            deriv(
                core.fp16,
                "FP16",
                core.fp16_source,
                " (the table counts results of half2 instructions; no NVIDIA source gives a scalar-half rate, "
                "and scalar half FMAs may issue at half of it)",
            ),
        )
    else:
        omitted["FP16 vector"] = omitted["FP16 scalar ILP"] = core.fp16_source
    add("FP64", "compute", peak(core.fp64), deriv(core.fp64, "FP64", core.source))
    add(
        "GEMM FP32",
        "compute",
        peak(core.fp32),
        "= FP32 CUDA-core peak (cuBLAS SGEMM with CUBLAS_COMPUTE_32F runs on the CUDA cores, not the "
        "tensor cores): " + fp32,
    )
    return {
        "fp32_fma": core.fp32,
        "fp64_fma": core.fp64,
        "fp16_results": core.fp16,
        "cuda_core_source": core.source,
        "fp16_source": core.fp16_source,
    }


def _tensor_ceilings(
    cc: Tuple[int, int],
    core: CoreRates,
    sms: int,
    clock: float,
    geforce: Optional[bool],
    add: _Add,
    omitted: Dict[str, str],
) -> Dict[str, object]:
    """Add the ``"GEMM <input>"`` ceilings of :data:`_TENSOR_KEYS` from :data:`TENSOR_CORE_RATES`
    (FP64 on the CUDA cores where the tensor cores have no FP64 mode), or each one's reason to
    ``omitted``; returns the per-SM rates used and their source (empty where cc has no entry)."""
    ccs = _cc_str(cc)
    entry = TENSOR_CORE_RATES.get(cc)
    if entry is None:
        why = (
            f"no tensor-core rates for cc {ccs} in TENSOR_CORE_RATES (no whitepaper figure verified for a per-SM rate)"
        )
        for k in _TENSOR_KEYS:
            omitted["GEMM " + k] = why
        return {}
    used: Dict[str, int] = {}
    for k in _TENSOR_KEYS:
        cname = "GEMM " + k
        if k in entry.missing:
            omitted[cname] = entry.missing[k]
            continue
        if k == "FP64" and entry.fp64_on_cuda_cores:
            fp64_core = sms * core.fp64 * 2.0 * clock / 1e9
            add(cname, "compute", fp64_core, _fp64_on_cuda_cores(ccs, core, sms, clock, fp64_core))
            continue
        rate, line, why = _tensor_rate(entry, k, ccs, geforce)
        if rate is None:
            omitted[cname] = why
            continue
        value = sms * rate * clock / 1e9
        used[k] = rate
        add(
            cname,
            "compute",
            value,
            _tensor_derivation(k, sms, rate, f"cc {ccs}{line}; {entry.source}", clock, value),
        )
    return {"tensor_per_sm": used, "tensor_source": entry.source}


def _fp64_on_cuda_cores(ccs: str, core: CoreRates, sms: int, clock: float, gflops: float) -> str:
    """The derivation of a DGEMM ceiling at the FP64 CUDA-core peak ``gflops`` (cc ``ccs``)."""
    return (
        f"= FP64 CUDA-core peak: cc {ccs} tensor cores have no FP64 mode, so cuBLAS DGEMM runs on the FP64 "
        f"units: {sms} SMs x {core.fp64} FP64 FMA results/clk/SM ({core.source}) x 2 FLOP per FMA x "
        f"{_mhz(clock)} MHz max SM clock = {_num(gflops)} GFLOP/s; {_CLOCK_NOTE}"
    )


def _tensor_rate(entry: TensorRates, k: str, ccs: str, geforce: Optional[bool]) -> Tuple[Optional[int], str, str]:
    """``(rate, line, why)``: the per-SM tensor-core rate of input ``k`` for this product line
    (``geforce``; None where the device name is unknown), the line's label for the derivation
    (empty where both lines share the rate), and where the rate is None, why."""
    pro = entry.rates.get(k)
    gf = pro if entry.geforce is None else entry.geforce.get(k)
    line = ""
    if pro == gf:
        rate = pro  # the product line does not matter
    elif geforce is None:
        return (
            None,
            line,
            (f"cc {ccs} GeForce and professional parts differ in {k} tensor-core rate and the device name is unknown"),
        )
    elif geforce:
        rate, line = gf, ", GeForce rate"
    else:
        rate, line = pro, ", professional/data-center rate"
        if rate is None and entry.pro_missing:
            return None, line, entry.pro_missing
    if rate is None:
        return None, line, f"no {k} tensor-core rate for cc {ccs} in the sources used"
    return rate, line, ""


def _tensor_derivation(k: str, sms: int, rate: int, where: str, clock: float, gflops: float) -> str:
    """The derivation of a tensor-core ceiling of input ``k``: ``sms`` SMs × ``rate`` per SM per
    clock (``where``: the capability, product line and source) × the clock (Hz) = ``gflops``."""
    acc = (
        " with FP32 accumulation (CUBLAS_COMPUTE_32F)"
        if k in ("FP16", "BF16")
        else " (E4M3 or E5M2 inputs) with FP32 accumulation"
        if k == "FP8"
        else ""
    )
    unit = "integer OP (2 per multiply-add; GOP/s, reported as GFLOP/s)" if k == "INT8" else "FLOP"
    return (
        f"{sms} SMs x {rate} {k}{acc} tensor-core {unit}/clk/SM ({where}) x "
        f"{_mhz(clock)} MHz max SM clock = {_num(gflops)} GFLOP/s; {_TENSOR_CLOCK_NOTE}"
    )


def _pos_int(info: Mapping[str, object], key: str, what: str) -> Tuple[Optional[int], Optional[str]]:
    v = info.get(key)
    if v is None:
        return None, f"{what} unknown (info has no {key!r})"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0 or v != int(v):
        return None, f"{what} unusable ({key}={v!r}: not a positive integer)"
    return int(v), None


def _pos_num(info: Mapping[str, object], key: str, what: str) -> Tuple[Optional[float], Optional[str]]:
    v = info.get(key)
    if v is None:
        return None, f"{what} unknown (info has no {key!r})"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        return None, f"{what} unusable ({key}={v!r}: not a positive number)"
    return float(v), None


def _compute_capability(info: Mapping[str, object]) -> Tuple[Optional[Tuple[int, int]], Optional[str]]:
    major, minor = info.get("cc_major"), info.get("cc_minor")
    if _is_nonneg_int(major) and _is_nonneg_int(minor):
        assert isinstance(major, int) and isinstance(minor, int)
        return (major, minor), None
    text = info.get("compute_capability")
    if isinstance(text, str):
        parts = text.strip().split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return (int(parts[0]), int(parts[1])), None
    return None, (f"compute capability unknown (cc_major={major!r}, cc_minor={minor!r}, compute_capability={text!r})")


def _is_nonneg_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _plain(x: Optional[float]) -> Optional[float]:
    """``x`` as an int when it is integral (JSON ``1980000000`` rather than ``1980000000.0``)."""
    return int(x) if x is not None and x.is_integer() else x


def _cc_str(cc: Optional[Tuple[int, int]]) -> str:
    return "unknown" if cc is None else f"{cc[0]}.{cc[1]}"


def _mhz(hz: float) -> str:
    return _num(hz / 1e6)


def _num(x: float) -> str:
    """A figure for a derivation: integers as such, others to 5 significant figures."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.5g}" if abs(x) < 1e5 else f"{x:.0f}"
