"""Theoretical ceilings of Apple-silicon GPUs (M1 to M5), from a chip table with a source per figure.

Formulas (GB = 1e9 bytes, GFLOP/s = 1e9 FLOP/s; an FMA counts as 2 FLOPs, docs/design/measurement.md,
"Counting FLOPs and bytes")::

    FP32 peak [FLOP/s] = GPU cores × 128 FP32 ALUs per core × 2 FLOP per FMA × GPU clock [Hz]
    FP16 peak [FLOP/s] = FP32 peak × (FP16 FMA rate per ALU / FP32 FMA rate per ALU)
    DRAM bandwidth [GB/s] = Apple's stated unified-memory bandwidth of the configuration

Where each figure comes from (every entry of :data:`APPLE_CHIPS` carries the source of each of its
figures, or the reason a figure is missing):

* **GPU cores**: the device's own count (``info["gpu_cores"]``, the IORegistry ``gpu-core-count``;
  else ``info["compute_units"]``); the table lists the configurations Apple sells, and a count that
  is not one of them is still used, with a note.
* **128 FP32 ALUs per core**: every Apple GPU core since A14/M1 (T. Zakharko, "Investigating the
  GPU Neural Accelerators on Apple A19/M5", sections "A note on terminology" and "Apple GPU
  Architecture": 4 partitions × 32 FP32 FMA units = 128 per core, 256 FLOP per cycle;
  philipturner/metal-benchmarks README: 256 FP32 OPs per core-cycle on M1).
* **GPU clock**: the GPU's top DVFS state. M1 to M2 Ultra: the GPU operating-point tables of the
  Asahi Linux device trees (which copy Apple's boot-time device tree) and philipturner/
  metal-benchmarks; M4 Pro and M5: ``powermetrics`` under sustained load. Apple publishes no GPU
  clock, and for M3, M3 Pro, M3 Max, M3 Ultra, M4, M4 Max, M5 Pro and M5 Max no primary source
  was found (third-party spec databases disagree with each other), so those chips get a bandwidth
  ceiling only.
* **FP16 rate**: 1× the FP32 rate on M1 and M2 (Apple GPU families 7 and 8: 256 F16 and 256 F32
  OPs per core-cycle, measured by philipturner/metal-benchmarks); 2× on the M5 family (the M5
  article measured 6004 FP16 GFLOP/s, more than the 1× bound of 4040, and quotes Apple's "double
  rate"; a 2× bound is 8080); unknown on M3 and M4 (Apple family 9 issues FP16 and FP32 to separate
  pipes in the same cycle, so FP16 code may exceed 1×, and no source gives the rate), so no FP16
  ceiling there.
* **Bandwidth**: Apple's stated figure for the configuration (e.g. M1 Max 400 GB/s, although the
  bus math, LPDDR5-6400 × 512 bit / 8, gives 409.6); the bus math, where known, is in the
  derivation. The M3 Max, M4 Max, M5 Pro and M5 Max have a bandwidth per GPU configuration (M3 Max
  30-core 300 GB/s, 40-core 400 GB/s; M4 Max 32-core 410, 40-core 546).

Ceilings (:func:`apple_theoretical`) are named like the measured classes so plots pair them:
``"DRAM bandwidth"`` (GB/s); ``"FP32 vector"`` and ``"FP32 scalar ILP"`` (the same peak: the GPU
is scalar, a float4 FMA is four scalar FMAs: "Apple M5 GPU Roofline Analysis", "Finding 2: Apple's
GPU compiles float4 into 4 scalar operations"); ``"FP16 vector"`` and ``"FP16 scalar ILP"``;
``"GEMM FP32"`` (= the FP32 peak: MPS and ``simdgroup_matrix`` run on the same FP32 ALUs);
``"GEMM FP16"`` (= the FP16 peak on M1 to M4; left out on the M5 family, whose Neural Accelerators
may run it faster). ``"FP64"`` is always left out: Apple GPUs have no FP64 arithmetic.

Caveats (state them wherever the numbers are shown):

* The clock is the top DVFS state; the peaks are upper bounds. (The M5 held 1578 MHz through a
  sustained 45 s load in a fanless MacBook Air: "Apple M5 GPU Roofline Analysis", section
  "Measured FP32 Peak: 3,760 GFLOPS".)
* Apple's marketing TFLOPS can differ from the clock-derived figure: the M1 Max's stated 10.4 TFLOPS
  is 32 × 256 × 1.278 GHz (the base M1's clock) rounded down, while the M1 Pro/Max/Ultra GPU's top
  state is 1296 MHz, so the derived peak (10.62 TFLOPS) is 2.1 % higher. The M1 (2.617 vs 2.6) and
  M2 Ultra (27.20 vs 27.2) agree within 1 %.
* The bandwidth is the unified-memory interface's peak, shared with the CPU and other engines;
  STREAM stays below it (the M5 article measured 122 GB/s of 153.6, section "Bandwidth Results").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Tuple

from ..study.records import Ceiling
from .collector import CeilingCollector

__all__ = [
    "APPLE_CHIPS",
    "COMPUTE_CLASSES",
    "FP32_ALUS_PER_CORE",
    "GEMM_CLASSES",
    "GPU_CACHES",
    "GPU_L1_BYTES",
    "GPU_L1_SOURCE",
    "AppleChip",
    "GpuConfig",
    "apple_theoretical",
    "lookup_chip",
]

# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------

_A19 = "T. Zakharko, 'Investigating the GPU Neural Accelerators on Apple A19/M5'"
_M5 = "'Apple M5 GPU Roofline Analysis'"
_MLX = "Y. Wang, 'Roofline Analysis of Apple Silicon GPUs using MLX'"
_GUIDE = "'Apple Silicon GPU Optimization Guide'"
_AGX = "'127 lines of catch-up for a problem Apple flagged in 2016' (on AGX's software integer divide)"
_M5_PEAK = "section 'Measured FP32 Peak: 3,760 GFLOPS'"
_MLX_SCRIPT = "section 'Benchmarking MatMul', the benchmark script's"
_MB = (
    "philipturner/metal-benchmarks README.md (https://github.com/philipturner/metal-benchmarks/blob/"
    "dc2adc640a1588246f4471d415aa6873cb6e3499/README.md)"
)
_ASAHI = (
    "Asahi Linux kernel device tree arch/arm64/boot/dts/apple/{file}, node gpu_opp, top entry "
    "{opp} opp-hz = <{hz}> (read in https://github.com/herrnst/linux-asahi, a copy of the Asahi "
    "kernel tree, commit {commit}; the OPP tables copy Apple's boot-time device tree)"
)
_NO_CLOCK = (
    "no primary source for the {chip} GPU's top clock was found: Apple publishes none, the Asahi "
    "Linux device trees have no GPU operating-point table for it, and third-party spec databases "
    "disagree (e.g. M3 Max at 1398 MHz on hmc-tech.com, 1600 MHz on radargit.com); no compute "
    "ceiling rather than a guess"
)
_FP16_FAMILY78 = (
    _MB + ", table 'Operations per Second' (lines 124-127): 256 F16 OPs (FMA) and 256 F32 OPs (FMA) "
    "per core-cycle on 'M1, A15' (Apple GPU families 7 and 8), i.e. FP16 at 1x the FP32 rate; the "
    "older README states 'F16 is neither faster nor slower than F32'. (The M5 article, " + _M5 + ", section "
    "'Finding 2: Apple's GPU compiles float4 into 4 scalar operations', quotes A. Rosenzweig's 'more "
    "16-bit ALUs than 32-bit ALUs' for the M1; the measured rate is used.)"
)
_FP16_FAMILY9 = (
    "unknown: Apple GPU family 9 (M3, M4) has separate FP32 and FP16 FMA pipes and issues to both in "
    "the same cycle (" + _A19 + ", section 'Apple GPU Architecture': 'full-precision (FP32) "
    "instructions can be issued simultaneously with half-precision (FP16) or integer (INT) instructions'), "
    "so FP16 code may run faster than 1x the FP32 rate; no source gives the rate, so no FP16 ceiling"
)
_FP16_M5 = (
    _M5 + ", section 'FP16: Does Double Rate Deliver?': Apple's WWDC 2020 session states FP16 runs at "
    "'double rate'; the article measured 6004 FP16 GFLOP/s on the 10-core M5 (32 scalar chains), above the "
    "1x bound of 4040 GFLOP/s at 1578 MHz, against a 2x bound of 8080; 2x is used as the upper bound"
)
_FP16_M5_FAMILY = (
    "the M5 Pro and M5 Max scale up the M5's GPU architecture (Apple press release, 2026-03-03, as "
    "reported at https://www.lowyat.net/2026/385170/apple-m5-pro-m5-max/); M5: " + _FP16_M5
)
_ALU_SOURCE = (
    _A19 + ", section 'A note on terminology': 'A single Apple GPU core contains 128 FP32 \"shader "
    "cores\"'; section 'Apple GPU Architecture': 128 FP32 FMA units or 256 FLOPS per cycle per core; "
    + _MB
    + ": 'Apple described each GPU core as having 128 ALUs' (line 214), 256 F32 OPs (FMA) per core-cycle on "
    "M1 (line 127)"
)
_NO_FP64 = (
    "Apple GPUs have no FP64 arithmetic: " + _MB + " lists F64 FMA as emulated ('<=3.8e' OPs per "
    "core-cycle, line 128); " + _AGX + ": 'it also lacks double'"
)
_GEMM_ON_ALUS = (
    "MPSMatrixMultiplication / simdgroup_matrix run on the FP32 ALUs (" + _MB + " line 122: "
    "simdgroup_matrix 'improves ALU utilization in existing FP32 pipelines')"
)
_GEMM_FP16_M5 = (
    "M5-family GPU cores have Neural Accelerators (" + _A19 + ", 'Key Takeaways' and section 'Neural "
    "Accelerators': an estimated 1024 FP16 FLOP per core per cycle, from a measurement on the A19) that MPS "
    "may use for FP16 GEMM; the rate is an estimate and MPS's use of it is unknown, so no GEMM FP16 ceiling"
)

#: FP32 ALUs (FMA lanes) per Apple GPU core, every generation M1 to M5 (see ``_ALU_SOURCE``).
FP32_ALUS_PER_CORE = 128

#: The ALU ceilings, in order, each paired with the measured ceiling of the same name.
COMPUTE_CLASSES: Tuple[str, ...] = ("FP32 vector", "FP32 scalar ILP", "FP16 vector", "FP16 scalar ILP", "FP64")
#: The GEMM ceilings (the Metal backend's MPS GEMM runs fp32 and fp16), in order.
GEMM_CLASSES: Tuple[str, ...] = ("GEMM FP32", "GEMM FP16")


# --------------------------------------------------------------------------------------------
# Table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GpuConfig:
    """One GPU configuration of a chip (a binned or full part).

    Attributes:
        cores: GPU cores.
        bandwidth_gbps: Apple's stated bandwidth of this configuration in GB/s (1e9 B/s), when it
            differs between configurations of the chip; None when the chip-wide
            :attr:`AppleChip.bandwidth_gbps` applies (or nothing is known).
        bandwidth_source: citation of ``bandwidth_gbps`` ("" when None).
        stated_fp32_tflops: Apple's (or a cited article's) FP32 TFLOPS for this configuration, a
            cross-check of the clock-derived peak; None when not stated.
        stated_fp32_source: citation of ``stated_fp32_tflops`` ("" when None).
    """

    cores: int
    bandwidth_gbps: Optional[float] = None
    bandwidth_source: str = ""
    stated_fp32_tflops: Optional[float] = None
    stated_fp32_source: str = ""


@dataclass(frozen=True)
class AppleChip:
    """One Apple-silicon chip: its GPU figures, each with its source.

    Attributes:
        name: marketing name as ``MTLDevice.name`` reports it, e.g. ``"Apple M2 Max"``.
        configs: the GPU configurations Apple sells, fewest cores first.
        cores_source: citation of the configurations' core counts.
        clock_mhz: top GPU clock in MHz; None when unsourced.
        clock_source: citation of ``clock_mhz``, or why it is unknown.
        fp16_ratio: FP16 FMA results per clock per ALU relative to FP32 (1.0 = same rate); None
            when unknown.
        fp16_source: citation of ``fp16_ratio``, or why it is unknown.
        bandwidth_gbps: Apple's stated unified-memory bandwidth in GB/s that applies to every
            configuration; None when it depends on the configuration (see
            :attr:`GpuConfig.bandwidth_gbps`) or is unknown.
        bandwidth_source: citation of ``bandwidth_gbps`` ("" when None).
        bus_math: the memory-bus arithmetic with its source, where known ("" otherwise).
        alus_per_core: FP32 ALUs per GPU core.
        alus_source: citation of ``alus_per_core``.
        notes: chip-specific caveats.
    """

    name: str
    configs: Tuple[GpuConfig, ...]
    cores_source: str
    clock_mhz: Optional[float]
    clock_source: str
    fp16_ratio: Optional[float]
    fp16_source: str
    bandwidth_gbps: Optional[float] = None
    bandwidth_source: str = ""
    bus_math: str = ""
    alus_per_core: int = FP32_ALUS_PER_CORE
    alus_source: str = _ALU_SOURCE
    notes: Tuple[str, ...] = ()

    @property
    def core_counts(self) -> Tuple[int, ...]:
        """The configurations' GPU core counts."""
        return tuple(c.cores for c in self.configs)

    def config(self, cores: int) -> Optional[GpuConfig]:
        """The configuration with ``cores`` GPU cores; None when the table has none."""
        for c in self.configs:
            if c.cores == cores:
                return c
        return None

    def fp32_gflops(self, cores: int) -> Optional[float]:
        """FP32 peak in GFLOP/s: ``cores x alus_per_core x 2 x clock``; None without a clock."""
        if self.clock_mhz is None:
            return None
        return cores * self.alus_per_core * 2.0 * self.clock_mhz * 1e6 / 1e9

    def fp16_gflops(self, cores: int) -> Optional[float]:
        """FP16 peak in GFLOP/s: the FP32 peak x ``fp16_ratio``; None without a clock or ratio."""
        fp32 = self.fp32_gflops(cores)
        if fp32 is None or self.fp16_ratio is None:
            return None
        return fp32 * self.fp16_ratio

    def bandwidth(self, cores: Optional[int]) -> Tuple[Optional[float], str]:
        """(GB/s, source) of the configuration with ``cores`` GPU cores.

        A configuration's own figure wins; else the chip-wide figure. For a core count the table
        lacks (or None), only a chip-wide figure is used; otherwise (None, reason).
        """
        cfg = self.config(cores) if cores is not None else None
        if cfg is not None and cfg.bandwidth_gbps is not None:
            return cfg.bandwidth_gbps, cfg.bandwidth_source
        if self.bandwidth_gbps is not None:
            return self.bandwidth_gbps, self.bandwidth_source
        known = ", ".join(
            f"{c.cores}-core {_num(c.bandwidth_gbps)} GB/s" for c in self.configs if c.bandwidth_gbps is not None
        )
        if cores is None:
            return None, (
                f"the {self.name}'s bandwidth depends on the GPU configuration ({known}) and the "
                "GPU core count is unknown"
            )
        return None, (
            f"the {self.name}'s bandwidth depends on the GPU configuration ({known}); none is known for {cores} cores"
        )


def _asahi(file: str, opp: str, hz: int, commit: str) -> str:
    return _ASAHI.format(file=file, opp=opp, hz=hz, commit=commit)


_M1_CLOCK = (
    _MB + " table (line 70): M1, 1.278 GHz, 8 cores, 2617 GOPS32; macOS IORegistry 'perf-states' of an "
    "M1 MacBook Pro (https://gist.github.com/0x77dev/3298e4b1f0742332750e608e809b1464): top state "
    "0x4c2cbb80 Hz = 1278000000 Hz"
)
_T600X_CLOCK = (
    _asahi("t600x-common.dtsi (T6000/T6001/T6002 = M1 Pro/Max/Ultra)", "opp06", 1296000000, "2b46e194")
    + "; "
    + _MB
    + " table (lines 71-73): M1 Pro/Max/Ultra at 1.296 GHz"
)
_T8112_CLOCK = (
    _asahi("t8112.dtsi (M2)", "opp08", 1398000000, "0006d098") + "; " + _MB + " table (line 75): M2 at 1.398 GHz"
)
_T602X_CLOCK = (
    _asahi("t602x-common.dtsi (T6020/T6021/T6022 = M2 Pro/Max/Ultra)", "opp08", 1398000000, "50e1cf81")
    + "; "
    + _MB
    + " table (lines 76-77): M2 Pro/Max at 1.398 GHz"
)
_M4PRO_CLOCK = (
    "H. Oakley, 'M4 Pro full on: when CPU and GPU draw over 50 W, and how Low Power mode changes that', "
    "The Eclectic Light Company (eclecticlight.co), 2025-01-22: powermetrics shows the 20-core M4 Pro GPU "
    "'at its maximum frequency of 1,578 MHz and 100% active residency' (Mac mini M4 Pro)"
)
_M5_CLOCK = (
    _M5 + ", " + _M5_PEAK + ": 'Under sustained compute load, the M5 GPU locks to its top P-state at 1578 MHz "
    "with 100% residency' (powermetrics; the article's P-state table: 12 states from 338 MHz idle to 1578 MHz "
    "peak)"
)
_LPDDR5_6400_512 = "calendar-uk.co.uk 'how many cores does apple gpu have' (M1 Max: LPDDR5-6400, 512-bit bus)"
_ULTRA_819 = (
    "Ars Technica's M3 Ultra table (mirrored at https://inforeader.com/i/?a=reader&rid=67c916097fa95&"
    "search=%23m3%2Bultra): 819.2 GB/s for the 1024-bit LPDDR5-6400 Ultra parts"
)
_BW_GUIDE_BASE = _GUIDE + ", table 'Base Chips', row 'Memory BW' (M1 68, M2 100, M3 100, M4 120 GB/s)"
_BW_GUIDE_PROMAX = (
    _GUIDE + ", table 'Pro/Max/Ultra Chips', row 'Memory BW' (M1 Pro 200, M1 Max 400, M2 Max 400, "
    "M3 Max 400, M4 Pro 273, M4 Max 546 GB/s)"
)
_CORES_GUIDE_BASE = _GUIDE + ", table 'Base Chips', row 'GPU Cores' (GPU cores M1 7-8, M2 8-10, M3 10, M4 10)"
_CORES_GUIDE_PROMAX = (
    _GUIDE + ", table 'Pro/Max/Ultra Chips', row 'GPU Cores' (GPU cores M1 Pro 14-16, M1 Max "
    "24-32, M2 Max 30-38, M3 Max 40, M4 Pro 20, M4 Max 40)"
)
_M1_PRO_MAX_NOTE = (
    "Apple's M1 Pro/Max/Ultra TFLOPS (5.2 / 10.4 / 21) equal cores x 256 x 1.278 GHz (the base M1's "
    "clock) rounded down; the T600x GPU's top state is 1296 MHz, so the clock-derived peak is 1.4 % higher "
    "than that product and 2.1 % higher than the stated 10.4 TFLOPS of the 32-core M1 Max"
)

#: The chip table, keyed by marketing name (``MTLDevice.name``). See the module docstring.
APPLE_CHIPS: Dict[str, AppleChip] = {
    c.name: c
    for c in (
        # ---------------------------------------------------------------- M1 (Apple GPU family 7)
        AppleChip(
            "Apple M1",
            (
                GpuConfig(7),
                GpuConfig(
                    8,
                    stated_fp32_tflops=2.6,
                    stated_fp32_source=(
                        _M5 + ", " + _M5_PEAK + ": 'Apple announced 2.6 TFLOPS for the M1's 8-core GPU'"
                    ),
                ),
            ),
            _CORES_GUIDE_BASE,
            1278.0,
            _M1_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=68.25,
            bandwidth_source=(
                "LPDDR4X-4266 on a 128-bit bus, 68.25 GB/s as listed at https://gist.github.com/kellyshephard "
                "(chips_table.md); " + _BW_GUIDE_BASE + " rounds it to 68 GB/s (Apple states no figure for M1)"
            ),
            bus_math="4266 MT/s x 128 bit / 8 = 68.3 GB/s (LPDDR4X-4266: 'The M1 uses 4,266 MT/s LPDDR4X SDRAM', "
            "Wikipedia 'Apple M1' text as quoted at https://yogabas.blogg.se/2022/october/"
            "large-clock-for-mac-desktop.html)",
        ),
        AppleChip(
            "Apple M1 Pro",
            (GpuConfig(14), GpuConfig(16)),
            _CORES_GUIDE_PROMAX,
            1296.0,
            _T600X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=200.0,
            bandwidth_source=(
                _BW_GUIDE_PROMAX + "; Apple newsroom 2021-10-18 ('M1 Pro offers up to 200GB/s of "
                "memory bandwidth', as reported at https://en.trend.az/world/3500298.html)"
            ),
            notes=(_M1_PRO_MAX_NOTE,),
        ),
        AppleChip(
            "Apple M1 Max",
            (
                GpuConfig(24),
                GpuConfig(
                    32,
                    stated_fp32_tflops=10.4,
                    stated_fp32_source=(
                        _MLX + ", " + _MLX_SCRIPT + " roof table: 'Apple M1 Max': 10.4 TFLOPS (citing "
                        "https://en.wikipedia.org/wiki/Apple_M1#GPU)"
                    ),
                ),
            ),
            _CORES_GUIDE_PROMAX,
            1296.0,
            _T600X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=400.0,
            bandwidth_source=(
                _BW_GUIDE_PROMAX + "; " + _MLX + ", " + _MLX_SCRIPT + " bandwidth table ('Apple M1 "
                "Max': 400 GB/s, citing https://en.wikipedia.org/wiki/Apple_M1#Memory); Apple newsroom 2021-10-18 "
                "('up to 400GB/s', https://en.trend.az/world/3500298.html)"
            ),
            bus_math="LPDDR5-6400 x 512 bit / 8 = 409.6 GB/s (" + _LPDDR5_6400_512 + "); Apple states 400 GB/s",
            notes=(_M1_PRO_MAX_NOTE,),
        ),
        AppleChip(
            "Apple M1 Ultra",
            (GpuConfig(48), GpuConfig(64)),
            "https://www.cpu-monkey.com/en/cpu-apple_m1_ultra_48_gpu (M1 Ultra with 48 and with 64 GPU cores)",
            1296.0,
            _T600X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=800.0,
            bandwidth_source=(
                "Apple's M1 Ultra specification, 'Maximum memory bandwidth: 800' GB/s, as listed at "
                "https://www.somagnews.com/from-the-m1-to-the-m1-ultra-see-the-specifications-of-"
                "apples-chips/"
            ),
            bus_math="LPDDR5-6400 x 1024 bit / 8 = 819.2 GB/s (" + _ULTRA_819 + "); Apple states 800 GB/s",
            notes=(_M1_PRO_MAX_NOTE,),
        ),
        # ---------------------------------------------------------------- M2 (Apple GPU family 8)
        AppleChip(
            "Apple M2",
            (GpuConfig(8), GpuConfig(10)),
            _CORES_GUIDE_BASE,
            1398.0,
            _T8112_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=100.0,
            bandwidth_source=(
                _BW_GUIDE_BASE + "; Apple Mac mini (2023) specification, 'memory bandwidth of "
                "100 GB/s' (https://newatlas.com/computers/apple-mac-mini-m2-pro/)"
            ),
        ),
        AppleChip(
            "Apple M2 Pro",
            (GpuConfig(16), GpuConfig(19)),
            (
                "https://iphonelife.com/node/281525 ('M2 Pro ... 16 or 19 graphics processing cores'); "
                "https://pocketnow.com/m2-pro-mac-mini/ ('16-core GPU, Configurable to 19-core GPU')"
            ),
            1398.0,
            _T602X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=200.0,
            bandwidth_source=(
                "Apple Mac mini (2023) specification, 'Memory Bandwidth ... 200GB/s' for the M2 Pro "
                "(https://pocketnow.com/m2-pro-mac-mini/)"
            ),
        ),
        AppleChip(
            "Apple M2 Max",
            (GpuConfig(30), GpuConfig(38)),
            _CORES_GUIDE_PROMAX,
            1398.0,
            _T602X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=400.0,
            bandwidth_source=_BW_GUIDE_PROMAX,
        ),
        AppleChip(
            "Apple M2 Ultra",
            (
                GpuConfig(60),
                GpuConfig(
                    76,
                    stated_fp32_tflops=27.2,
                    stated_fp32_source=(
                        _MLX
                        + ", section 'Roofline Analysis' ('the peak performance ... is 27.199 teraflops') and "
                        + _MLX_SCRIPT
                        + " roof table ('Apple M2 Ultra': 27.2 TFLOPS, citing "
                        "https://en.wikipedia.org/wiki/Apple_M2#GPU)"
                    ),
                ),
            ),
            "https://myapplechat.com/apples-m2-ultra-chip-is-the-most-powerful-yet/ ('60 or 76 core GPU')",
            1398.0,
            _T602X_CLOCK,
            1.0,
            _FP16_FAMILY78,
            bandwidth_gbps=800.0,
            bandwidth_source=(
                _MLX
                + ", section 'Roofline Analysis' ('its peak memory bandwidth ... is 800GB/s') and "
                + _MLX_SCRIPT
                + " bandwidth table (Apple newsroom "
                "https://www.apple.com/newsroom/2023/06/apple-introduces-m2-ultra)"
            ),
            bus_math="LPDDR5-6400 x 1024 bit / 8 = 819.2 GB/s (" + _ULTRA_819 + "); Apple states 800 GB/s",
        ),
        # ---------------------------------------------------------------- M3 (Apple GPU family 9)
        AppleChip(
            "Apple M3",
            (GpuConfig(8), GpuConfig(10)),
            (
                _CORES_GUIDE_BASE + "; the 8-core configuration: https://gist.github.com/kellyshephard "
                "(chips_table.md: M3, 8-core GPU)"
            ),
            None,
            _NO_CLOCK.format(chip="M3"),
            None,
            _FP16_FAMILY9,
            bandwidth_gbps=100.0,
            bandwidth_source=_BW_GUIDE_BASE,
        ),
        AppleChip(
            "Apple M3 Pro",
            (GpuConfig(14), GpuConfig(18)),
            (
                "https://gigazine.net/gsc_news/en/20231101-apple-m3-pro-memory-bandwidth (Apple's MacBook Pro "
                "specifications: M3 Pro with 14 or 18 GPU cores)"
            ),
            None,
            _NO_CLOCK.format(chip="M3 Pro"),
            None,
            _FP16_FAMILY9,
            bandwidth_gbps=150.0,
            bandwidth_source=(
                "Apple's MacBook Pro specifications: both M3 Pro models (14- and 18-core GPU) have "
                "150GB/s (https://gigazine.net/gsc_news/en/20231101-apple-m3-pro-memory-bandwidth)"
            ),
        ),
        AppleChip(
            "Apple M3 Max",
            (
                GpuConfig(
                    30,
                    300.0,
                    (
                        "Apple MacBook Pro (Nov 2023) technical specifications: M3 Max with 14-core CPU and 30-core "
                        "GPU, 300GB/s (figure as given in the project issue; the page was not retrieved here)"
                    ),
                ),
                GpuConfig(
                    40,
                    400.0,
                    (
                        _BW_GUIDE_PROMAX + "; https://macmegasite.com/2024/10/30/m4-max-chip-has-16-core-cpu-40-core-"
                        "gpu-and-35-increase-in-memory-bandwidth ('M3 Max ... 40-core GPU and 400 GB/s')"
                    ),
                ),
            ),
            (
                _CORES_GUIDE_PROMAX + "; the 30-core configuration: https://hmc-tech.com/gpu/"
                "apple-8-core-m4-fl-vs-apple-30-core-m3-max (30-Core M3 Max, 3840 shaders)"
            ),
            None,
            _NO_CLOCK.format(chip="M3 Max"),
            None,
            _FP16_FAMILY9,
            bus_math=(
                "40-core: LPDDR5-6400 x 512 bit / 8 = 409.6 GB/s (https://applemagazine.com/apples-m3-max-"
                "surpasses-m2-ultra-in-new-performance-benchmarks/61719/m3-max-specs); Apple states 400 GB/s"
            ),
        ),
        AppleChip(
            "Apple M3 Ultra",
            (GpuConfig(60), GpuConfig(80)),
            _ULTRA_819 + " (M3 Ultra with 60 and with 80 GPU cores)",
            None,
            _NO_CLOCK.format(chip="M3 Ultra"),
            None,
            _FP16_FAMILY9,
            bandwidth_gbps=819.0,
            bandwidth_source=(
                "Apple's Mac Studio (2025) specification, 'memory bandwidth of 819 GB/s' "
                "(https://techpowerup.com/news-tags/Mac%20Studio); Apple newsroom 2025-03-05: 'over "
                "800GB/s' (https://bgr.com/tech/inside-apples-new-m3-ultra-processor/)"
            ),
            bus_math="LPDDR5-6400 x 1024 bit / 8 = 819.2 GB/s (" + _ULTRA_819 + ")",
        ),
        # ---------------------------------------------------------------- M4 (Apple GPU family 9)
        AppleChip(
            "Apple M4",
            (GpuConfig(8), GpuConfig(10)),
            (
                "https://appleosophy.com/?p=130556 (Apple's iMac and MacBook Air specifications: M4 with an "
                "8-core or a 10-core GPU)"
            ),
            None,
            _NO_CLOCK.format(chip="M4"),
            None,
            _FP16_FAMILY9,
            bandwidth_gbps=120.0,
            bandwidth_source=(
                _BW_GUIDE_BASE + "; https://shopsavvy.com/versus/macbook-air-m4-8-core-vs-10-core-gpu "
                "(120 GB/s for both the 8- and the 10-core GPU)"
            ),
        ),
        AppleChip(
            "Apple M4 Pro",
            (GpuConfig(20),),
            (
                _CORES_GUIDE_PROMAX + "; Apple press release 2024-10-30 ('M4 Pro: Up to 20-core GPU', "
                "https://sianzzz.com/apple-announces-m4-max-chip-debuting-on-the-macbook-pro)"
            ),
            1578.0,
            _M4PRO_CLOCK,
            None,
            _FP16_FAMILY9,
            bandwidth_gbps=273.0,
            bandwidth_source=(
                _BW_GUIDE_PROMAX + "; Apple press release 2024-10-30 ('M4 Pro ... 273GB/s unified "
                "memory bandwidth', https://sianzzz.com/apple-announces-m4-max-chip-debuting-on-the-"
                "macbook-pro)"
            ),
        ),
        AppleChip(
            "Apple M4 Max",
            (
                GpuConfig(
                    32,
                    410.0,
                    (
                        "Apple MacBook Pro (2024) technical specifications: M4 Max with 14-core CPU and 32-core GPU, "
                        "410GB/s (figure as given in the project issue; the page was not retrieved here)"
                    ),
                ),
                GpuConfig(
                    40,
                    546.0,
                    (
                        _BW_GUIDE_PROMAX + "; Apple newsroom 2024-10-30 ('M4 Max supports up to 128GB of unified "
                        "memory with up to 546GB/s', https://www.macrumors.com/2024/10/30/apple-announces-m4-max-chip/)"
                    ),
                ),
            ),
            (
                "http://www.notebookcheck.net/Apple-M4-Max-official-with-incremental-upgrades-over-the-M3-Max."
                "911098.0.html ('one with a 14-core CPU + 32-core GPU and the other with a 16-core CPU and a "
                "40-core GPU')"
            ),
            None,
            _NO_CLOCK.format(chip="M4 Max"),
            None,
            _FP16_FAMILY9,
        ),
        # ---------------------------------------------------------------- M5
        AppleChip(
            "Apple M5",
            (GpuConfig(10),),
            (
                _M5 + ", system description ('GPU: Apple M5 (10 cores, Apple GPU family)'); Apple newsroom "
                "2025-10-15 ('10-core "
                "GPU', https://www.lowyat.net/2025/369913/apple-m5)"
            ),
            1578.0,
            _M5_CLOCK,
            2.0,
            _FP16_M5,
            bandwidth_gbps=153.0,
            bandwidth_source=(
                "Apple newsroom 2025-10-15: unified memory bandwidth 'to 153GB/s' "
                "(https://www.lowyat.net/2025/369913/apple-m5; https://the-decoder.com/apples-m5-chip-"
                "brings-faster-ai-to-macbook-ipad-and-vision-pro/)"
            ),
            bus_math=(
                "LPDDR5X-9600 x 128 bit / 8 = 153.6 GB/s (" + _M5 + ", section 'Bandwidth Results (256 MB "
                "buffers)': 'The M5 Air's LPDDR5X-9600 "
                "delivers 153.6 GB/s of theoretical bandwidth'); Apple states 153 GB/s"
            ),
        ),
        AppleChip(
            "Apple M5 Pro",
            (
                GpuConfig(
                    20,
                    307.0,
                    (
                        "Apple press release 2026-03-03: 'M5 Pro ... up to 20 GPU cores ... 307GB/s of memory "
                        "bandwidth' "
                        "(https://www.lowyat.net/2026/385170/apple-m5-pro-m5-max/)"
                    ),
                ),
            ),
            "https://www.lowyat.net/2026/385170/apple-m5-pro-m5-max/ (Apple press release: 'up to 20 GPU cores')",
            None,
            _NO_CLOCK.format(chip="M5 Pro"),
            2.0,
            _FP16_M5_FAMILY,
        ),
        AppleChip(
            "Apple M5 Max",
            (
                GpuConfig(
                    40,
                    614.0,
                    (
                        "Apple press release 2026-03-03: 'M5 Max ... a maximum of 40 GPU cores ... 614GB/s of memory "
                        "bandwidth' (https://www.lowyat.net/2026/385170/apple-m5-pro-m5-max/)"
                    ),
                ),
            ),
            (
                "https://www.lowyat.net/2026/385170/apple-m5-pro-m5-max/ "
                "(Apple press release: 'a maximum of 40 GPU cores')"
            ),
            None,
            _NO_CLOCK.format(chip="M5 Max"),
            2.0,
            _FP16_M5_FAMILY,
        ),
    )
}


def _norm(name: str) -> str:
    """Case-folded, whitespace-collapsed, without a leading "apple "."""
    s = " ".join(name.split()).casefold()
    return s.removeprefix("apple ")


_BY_NORM: Dict[str, AppleChip] = {_norm(k): v for k, v in APPLE_CHIPS.items()}


#: The GPU's cache sizes of the chips that have a source, by marketing name: (L2 bytes or None,
#: system-level cache bytes or None, source). The memory hierarchy's levels (docs/design/hierarchy.md, "The
#: memory hierarchy"; :mod:`.caches`); a chip missing here has no documented L2 or SLC level.
_MB_CACHES = (
    _MB + ", table of GPUs (columns 'L2 $: level-2 data cache in KB' and 'L3 $: level-3 data cache in MB', "
    "the system-level cache; '~' marks the author's approximations)"
)
GPU_CACHES: Dict[str, Tuple[Optional[int], Optional[int], str]] = {
    "Apple M1": (768 << 10, 8 << 20, _MB_CACHES + ": M1 768K, 8M"),
    "Apple M1 Pro": (256 << 10, 24 << 20, _MB_CACHES + ": M1P 256K, 24M"),
    "Apple M1 Max": (512 << 10, 48 << 20, _MB_CACHES + ": M1M 512K, 48M"),
    "Apple M1 Ultra": (1 << 20, 96 << 20, _MB_CACHES + ": M1U 1M, 96M"),
    "Apple M2": (1536 << 10, 8 << 20, _MB_CACHES + ": M2 ~1.5M (approximate), 8M"),
    "Apple M2 Pro": (512 << 10, 24 << 20, _MB_CACHES + ": M2P ~512K (approximate), 24M"),
    "Apple M2 Max": (1 << 20, 48 << 20, _MB_CACHES + ": M2M ~1M (approximate), 48M"),
    "Apple M5": (
        None,
        32 << 20,
        _M5 + ", section 'Test 3: Texture Cache Hierarchy': 'System Level Cache (SLC): ~32 MB "
        "shared across CPU and GPU' (the GPU's L2 is not given)",
    ),
}
#: An Apple GPU core's L1 data cache, bytes, on Apple GPU families 7 and 8 (M1, M2).
GPU_L1_BYTES = 8 << 10
GPU_L1_SOURCE = _MB + ", table 'On-Chip Memory', row 'Data Cache': 8 KB per core on 'Apple 7, 8'"


def lookup_chip(name: object) -> Optional[AppleChip]:
    """The :data:`APPLE_CHIPS` entry for a chip or GPU name; None when there is none.

    Matching ignores case, repeated or surrounding whitespace and a leading ``"Apple"``:
    ``"Apple M2 Max"``, ``"apple  m2 max "`` and ``"M2 Max"`` all give the M2 Max entry. Anything
    that is not a string gives None.

    Raises:
        Nothing.
    """
    if not isinstance(name, str):
        return None
    return _BY_NORM.get(_norm(name))


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def apple_theoretical(info: Mapping[str, object]) -> Tuple[Dict[str, object], List[Ceiling]]:
    """Theoretical description and ceilings of an Apple GPU from the Metal backend's ``info()`` dict.

    Args:
        info: keys read (any may be missing or malformed): ``name`` (``MTLDevice.name``, e.g.
            ``"Apple M2 Max"``), ``chip`` (``machdep.cpu.brand_string``; used when ``name`` is not
            in the table), ``gpu_cores`` (int, IORegistry ``gpu-core-count``; else
            ``compute_units``).

    Returns:
        ``({"theoretical": desc}, ceilings)``. For a chip in :data:`APPLE_CHIPS`, ``desc`` is
        JSON-friendly: ``chip``, ``matched_from`` (``"name"`` or ``"chip"``), ``gpu_cores``,
        ``known_configurations``, ``configuration`` (a sentence; says when the reported count is not
        a known configuration), ``figures`` (``{figure: {"value", "unit", "source"}}`` with
        ``value`` None and ``source`` the reason where unknown), ``peaks`` (``{ceiling name:
        {"gflops" or "gbps", "derivation"}}``), ``stated`` (Apple's TFLOPS for the configuration,
        where cited, with the clock-derived ratio), ``omitted`` (``{ceiling name: reason}``) and
        ``notes``. ``ceilings`` are :class:`~apple_roofline.study.records.Ceiling` objects with
        ``source="theoretical"``: ``"DRAM bandwidth"`` (GB/s) and the classes of
        :data:`COMPUTE_CLASSES` and :data:`GEMM_CLASSES` (GFLOP/s), each only where its figures are
        known. An unknown chip gives ``({"theoretical": {"chip": <name>, "note": ...}}, [])``.

    Raises:
        Nothing: a missing or malformed key leaves out what depends on it, with the reason.
    """
    entry, matched_from = _match_chip(info)
    if entry is None:
        return _unknown_chip(info), []
    cores, cores_why = _cores(info)
    collected = CeilingCollector()
    configuration = _configuration(entry, cores, cores_why)
    bw, bw_src = _add_dram(collected, entry, cores)
    fp32 = _add_compute(collected, entry, cores, cores_why)
    collected.omitted["FP64"] = _NO_FP64
    desc: Dict[str, object] = {
        "chip": entry.name,
        "matched_from": matched_from,
        "gpu_cores": cores,
        "known_configurations": list(entry.core_counts),
        "configuration": configuration,
        "figures": _figures(info, entry, cores, cores_why, bw, bw_src),
        "peaks": collected.peaks,
        "stated": _stated(entry, cores, fp32),
        "omitted": collected.omitted,
        "notes": _notes(entry),
    }
    return {"theoretical": desc}, collected.ceilings


# --------------------------------------------------------------------------------------------
# The steps of apple_theoretical
# --------------------------------------------------------------------------------------------


def _match_chip(info: Mapping[str, object]) -> Tuple[Optional[AppleChip], str]:
    """The table entry of ``info["name"]``, else of ``info["chip"]``, with the key that matched
    (``"name"`` or ``"chip"``); ``(None, "chip")`` when neither is in the table."""
    entry = lookup_chip(info.get("name"))
    if entry is not None:
        return entry, "name"
    return lookup_chip(info.get("chip")), "chip"


def _unknown_chip(info: Mapping[str, object]) -> Dict[str, object]:
    """The description of a chip not in :data:`APPLE_CHIPS`: its name and why no ceiling is given."""
    name = info.get("name")
    chip_str = info.get("chip")
    shown = name if isinstance(name, str) and name.strip() else (chip_str if isinstance(chip_str, str) else None)
    return {
        "theoretical": {
            "chip": shown,
            "note": (
                f"not in the chip table (theoretical.apple.APPLE_CHIPS: M1 to M5 families; name={name!r}, "
                f"chip={chip_str!r}); no theoretical ceiling rather than a guess"
            ),
        }
    }


def _configuration(entry: AppleChip, cores: Optional[int], cores_why: str) -> str:
    """A sentence on the reported GPU core count against the chip's known configurations."""
    known = entry.core_counts
    if cores is None:
        return f"{cores_why}; the {entry.name} comes with {_cores_list(known)} GPU cores"
    if cores in known:
        return f"{cores}-core {entry.name}, a known configuration ({_cores_list(known)} cores)"
    return (
        f"the reported {cores} GPU cores are not a configuration in the table for the {entry.name} "
        f"({_cores_list(known)} cores); computed with the reported count"
    )


def _add_dram(collected: CeilingCollector, entry: AppleChip, cores: Optional[int]) -> Tuple[Optional[float], str]:
    """Add the ``"DRAM bandwidth"`` ceiling (Apple's stated GB/s) or its reason to ``omitted``;
    returns ``(GB/s or None, its source or the reason)``."""
    bw, bw_src = entry.bandwidth(cores)
    if bw is None:
        collected.omitted["DRAM bandwidth"] = bw_src
        return bw, bw_src
    extra = f"; bus math: {entry.bus_math}" if entry.bus_math else ""
    collected.add(
        "DRAM bandwidth",
        "bandwidth",
        bw,
        f"{_num(bw)} GB/s, Apple's stated unified-memory bandwidth of the {entry.name}"
        f"{'' if cores is None else f' ({cores}-core GPU)'} ({bw_src}){extra}; the interface's peak, shared "
        "with the CPU, which STREAM stays below",
    )
    return bw, bw_src


def _add_compute(
    collected: CeilingCollector, entry: AppleChip, cores: Optional[int], cores_why: str
) -> Optional[float]:
    """Add the FP32, FP16 and GEMM ceilings (cores × ALUs × 2 × top clock, × the FP16 rate), or
    their reasons to ``omitted``; returns the FP32 peak in GFLOP/s, None where unknown."""
    fp32 = entry.fp32_gflops(cores) if cores is not None else None
    if cores is None or entry.clock_mhz is None or fp32 is None:
        why = cores_why if cores is None else ("GPU clock " + entry.clock_source)
        for cname in ("FP32 vector", "FP32 scalar ILP", "FP16 vector", "FP16 scalar ILP", "GEMM FP32", "GEMM FP16"):
            collected.omitted[cname] = why
        return fp32
    base = (
        f"{cores} GPU cores x {entry.alus_per_core} FP32 ALUs/core ({entry.alus_source}) x 2 FLOP per FMA x "
        f"{_num(entry.clock_mhz)} MHz top GPU clock ({entry.clock_source})"
    )
    fp32_d = f"{base} = {_num(fp32)} GFLOP/s; an upper bound at the top DVFS state"
    collected.add("FP32 vector", "compute", fp32, fp32_d + " (float4 FMAs are four scalar FMAs: the GPU is scalar)")
    collected.add("FP32 scalar ILP", "compute", fp32, fp32_d)
    fp16 = _add_fp16(collected, entry, cores, base)
    collected.add("GEMM FP32", "compute", fp32, f"= FP32 ALU peak ({_GEMM_ON_ALUS}): {fp32_d}")
    if entry.name.startswith("Apple M5"):
        collected.omitted["GEMM FP16"] = _GEMM_FP16_M5
    elif fp16 is None:
        collected.omitted["GEMM FP16"] = "FP16 rate " + entry.fp16_source
    else:
        fp16_d = collected.peaks["FP16 vector"]["derivation"]
        collected.add("GEMM FP16", "compute", fp16, f"= FP16 ALU peak ({_GEMM_ON_ALUS}): {fp16_d}")
    return fp32


def _add_fp16(collected: CeilingCollector, entry: AppleChip, cores: int, base: str) -> Optional[float]:
    """Add the FP16 vector and scalar ceilings (the FP32 derivation ``base`` × the FP16/FP32 rate)
    or their reason; returns the FP16 peak in GFLOP/s, None where the rate is unknown."""
    fp16 = entry.fp16_gflops(cores)
    if fp16 is None or entry.fp16_ratio is None:
        collected.omitted["FP16 vector"] = collected.omitted["FP16 scalar ILP"] = "FP16 rate " + entry.fp16_source
        return None
    fp16_d = (
        f"{base} x {_num(entry.fp16_ratio)} FP16/FP32 FMA rate ({entry.fp16_source}) = "
        f"{_num(fp16)} GFLOP/s; an upper bound at the top DVFS state"
    )
    collected.add("FP16 vector", "compute", fp16, fp16_d)
    collected.add("FP16 scalar ILP", "compute", fp16, fp16_d)
    return fp16


def _stated(entry: AppleChip, cores: Optional[int], fp32: Optional[float]) -> Dict[str, object]:
    """Apple's stated FP32 TFLOPS for the configuration, where cited, with the clock-derived peak
    over it; empty where none is cited."""
    cfg = entry.config(cores) if cores is not None else None
    if cfg is None or cfg.stated_fp32_tflops is None:
        return {}
    stated: Dict[str, object] = {"fp32_tflops": cfg.stated_fp32_tflops, "source": cfg.stated_fp32_source}
    if fp32 is not None:
        stated["clock_derived_over_stated"] = round(fp32 / 1e3 / cfg.stated_fp32_tflops, 4)
    return stated


def _figures(
    info: Mapping[str, object],
    entry: AppleChip,
    cores: Optional[int],
    cores_why: str,
    bw: Optional[float],
    bw_src: str,
) -> Dict[str, Dict[str, object]]:
    """The figures the peaks are computed from, ``{figure: {"value", "unit", "source"}}``."""
    figures: Dict[str, Dict[str, object]] = {
        "gpu_cores": {"value": cores, "unit": "cores", "source": cores_why if cores is None else _cores_source(info)},
        "known_configurations": {"value": list(entry.core_counts), "unit": "cores", "source": entry.cores_source},
        "fp32_alus_per_core": {"value": entry.alus_per_core, "unit": "ALUs", "source": entry.alus_source},
        "gpu_clock_mhz": {"value": entry.clock_mhz, "unit": "MHz", "source": entry.clock_source},
        "fp16_per_fp32_rate": {"value": entry.fp16_ratio, "unit": "x", "source": entry.fp16_source},
        "bandwidth_gbps": {"value": bw, "unit": "GB/s", "source": bw_src},
    }
    if entry.bus_math:
        figures["bus_math"] = {"value": None, "unit": "GB/s", "source": entry.bus_math}
    return figures


def _notes(entry: AppleChip) -> List[str]:
    """The notes every Apple description carries, then the chip's own."""
    return [
        "compute ceilings use the GPU's top DVFS clock: upper bounds, not sustained rates under every load",
        (
            "the bandwidth is Apple's stated figure (bus math in the derivation where known); unified memory is "
            "shared with the CPU and other engines"
        ),
        "no FP64 ceiling: " + _NO_FP64,
    ] + list(entry.notes)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _pos_int(v: object) -> Optional[int]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if not math.isfinite(v) or v <= 0 or v != int(v):
        return None
    return int(v)


def _cores(info: Mapping[str, object]) -> Tuple[Optional[int], str]:
    for key in ("gpu_cores", "compute_units"):
        n = _pos_int(info.get(key))
        if n is not None:
            return n, ""
    return None, (
        f"GPU core count unknown (gpu_cores={info.get('gpu_cores')!r}, "
        f"compute_units={info.get('compute_units')!r}: not a positive integer)"
    )


def _cores_source(info: Mapping[str, object]) -> str:
    if _pos_int(info.get("gpu_cores")) is not None:
        return "info['gpu_cores'] (IORegistry gpu-core-count)"
    return "info['compute_units']"


def _cores_list(counts: Tuple[int, ...]) -> str:
    return " or ".join(str(c) for c in counts)


def _num(x: float) -> str:
    """A figure for a derivation: integers as such, others to 5 significant figures."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:.5g}" if abs(x) < 1e5 else f"{x:.0f}"
