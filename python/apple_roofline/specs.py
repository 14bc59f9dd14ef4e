"""Theoretical compute peaks of the host CPU, each figure with the source it came from.

The formula (per core group, summed over groups on heterogeneous CPUs)::

    peak [FLOP/s] = cores × lanes × FMA pipes × 2 FLOP × clock [Hz]
    lanes         = vector bits / element bits   (32 for FP32, 64 for FP64, 16 for FP16)

An FMA counts as 2 FLOPs per lane (DESIGN.md §4). GFLOP/s = 1e9 FLOP/s.

Where each figure comes from (every :class:`Figure` carries its own ``source`` sentence):

* **cores** -- Linux: distinct ``('physical id', 'core id')`` pairs in ``/proc/cpuinfo`` (x86), or
  the ``processor`` entries of each core type (arm64, no SMT); macOS: ``sysctl hw.physicalcpu`` and,
  on Apple Silicon, ``hw.perflevel0.physicalcpu`` (P cores) / ``hw.perflevel1.physicalcpu`` (E cores).
* **vector width** -- the widest vector ISA *the compiled kernels use*, from the native
  ``_core.cpu_features()`` dict; without the extension, the widest ISA in the ``/proc/cpuinfo``
  flags (and the source says so).
* **FMA pipes** -- a microarchitecture table (``_X86_TABLE``, ``_ARM_TABLE``, ``_APPLE_TABLE``)
  keyed by vendor / family / model on x86 and by implementer / part (Linux) or chip name (macOS)
  on arm64. Each entry gives FMA instructions per cycle and FMA datapath bits per cycle per core;
  the *effective* pipe count at the compiled width is
  ``min(FMA per cycle, FMA bits per cycle / vector bits)``, so a 512-bit op on 256-bit datapaths
  (Zen 4, mobile Zen 5, Ice Lake client) counts as half a pipe each. Entries not in the table give
  "unknown microarchitecture" and no theoretical ceiling, never a guess.
* **clock** -- in order of preference: ``/sys/devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq``
  (kHz; the highest single-core turbo the kernel knows), ``sysctl hw.cpufrequency_max`` (Intel
  Macs; absent on Apple Silicon), a *measurement* (a dependent integer-add chain,
  ``apple_roofline._core.measure_cpu_clock_hz``), and only as a last resort the *current* reading
  ``/proc/cpuinfo 'cpu MHz'`` (labelled as such: it is neither a maximum nor a sustained clock;
  under a hypervisor it is the nominal TSC rate).

Caveats (state them wherever the numbers are shown):

* cpufreq's maximum is a single-core turbo clock; with every core busy the all-core clock is lower,
  so the "theoretical" peak is an upper bound that no all-core kernel reaches.
* Intel server parts lower the clock under heavy AVX2 / AVX-512 load (licence-based frequency
  offsets); the peak at the AVX-512 frequency is lower than the table clock suggests.
* The measured clock is the clock under a *scalar integer* load on whichever core ran the
  measurement; vector FMA loads can run slower (AVX offsets, power limits). Under a hypervisor the
  cores are vCPUs, which may be SMT siblings on the host.
* Intel Xeon Scalable SKUs differ in their count of AVX-512 FMA units (Intel ARK, "# of AVX-512 FMA
  Units"): the table assumes 2 except where the model name says otherwise (Skylake-SP/Cascade Lake
  Bronze, Silver and most Gold 5xxx parts have 1).
* No theoretical *bandwidth* is reported for a CPU: the DRAM configuration (channels, speed grade)
  cannot be read reliably without root (``dmidecode``) or vendor tools, and the controller's peak
  is not what a core complex can draw. The measured STREAM ceiling stands alone.
"""

from __future__ import annotations

import math
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from .results import Ceiling

__all__ = [
    "Figure",
    "CoreGroup",
    "CpuSpec",
    "host_cpu_spec",
    "theoretical_ceilings",
    "describe",
    "DTYPES",
    "NO_THEORETICAL_BANDWIDTH",
]

#: Element width in bits of each dtype whose peak can be computed.
DTYPES: Dict[str, int] = {"fp32": 32, "fp64": 64, "fp16": 16}

#: Why no theoretical bandwidth ceiling is given for a CPU.
NO_THEORETICAL_BANDWIDTH = (
    "no theoretical CPU memory bandwidth: DRAM channels and speed grade cannot be read reliably "
    "without root (dmidecode) or vendor tools; the measured STREAM ceiling stands alone"
)

_MEASURE_SECONDS = 0.05


# --------------------------------------------------------------------------------------------
# Public dataclasses
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """One number with its unit and the source it came from.

    Attributes:
        value: the figure, in ``unit``; ``nan`` when unknown (see :attr:`known`).
        unit: ``"Hz"``, ``"bits"``, ``"cores"``, ``"pipes"`` ...
        source: a human sentence naming where the value came from (a file path, a sysctl, a table
            entry with its reference, or ``"measured: ..."``); for an unknown figure, why.
    """

    value: float
    unit: str
    source: str

    @property
    def known(self) -> bool:
        """True when ``value`` is a positive finite number."""
        return math.isfinite(self.value) and self.value > 0

    @staticmethod
    def unknown(unit: str, reason: str) -> "Figure":
        """An unknown figure: ``value`` is ``nan`` and ``source`` is ``"unknown: <reason>"``."""
        return Figure(math.nan, unit, "unknown: " + reason)


@dataclass(frozen=True)
class CoreGroup:
    """Cores of one type (all cores on a homogeneous CPU; P or E cores on Apple Silicon).

    Attributes:
        name: ``"all"``, ``"P"``, ``"E"``, or the core type's name on Linux arm64 big.LITTLE.
        uarch: microarchitecture name from the table (``""`` when unknown).
        cores: physical cores in the group (unit ``"cores"``).
        clock_hz: peak clock of the group (unit ``"Hz"``).
        fma_pipes: effective FMA-capable vector pipes per core at the compiled vector width
            (unit ``"pipes"``; may be 0.5 where a 512-bit op occupies a 256-bit datapath twice).
    """

    name: str
    uarch: str
    cores: Figure
    clock_hz: Figure
    fma_pipes: Figure


@dataclass(frozen=True)
class CpuSpec:
    """The host CPU's figures for a theoretical peak.

    Attributes:
        model: marketing name (``/proc/cpuinfo 'model name'`` or ``machdep.cpu.brand_string``).
        vendor: ``"AMD"``, ``"Intel"``, ``"Arm"``, ``"Apple"`` or the raw vendor string.
        arch: ``"x86_64"``, ``"arm64"`` or another ``platform.machine()`` value.
        physical_cores: physical cores over all groups (unit ``"cores"``).
        logical_cpus: hardware threads visible to the OS.
        clock_hz: clock of the first (performance) group (unit ``"Hz"``).
        vector_bits: widest vector width used by the compiled kernels (unit ``"bits"``).
        fma_pipes: effective FMA pipes per core of the first group (unit ``"pipes"``).
        fp16: whether FP16 *arithmetic* (not just conversion) is available to the kernels.
        core_groups: the groups the peak is summed over; empty means one group made of
            ``physical_cores``, ``clock_hz`` and ``fma_pipes``.
        notes: caveats found while reading the host (hypervisor, hybrid cores ...).
    """

    model: str
    vendor: str
    arch: str
    physical_cores: Figure
    logical_cpus: int
    clock_hz: Figure
    vector_bits: Figure
    fma_pipes: Figure
    fp16: bool
    core_groups: Tuple[CoreGroup, ...] = ()
    notes: Tuple[str, ...] = ()

    def groups(self) -> Tuple[CoreGroup, ...]:
        """The core groups the peak sums over (a single ``"all"`` group on homogeneous CPUs)."""
        if self.core_groups:
            return self.core_groups
        return (CoreGroup("all", "", self.physical_cores, self.clock_hz, self.fma_pipes),)

    def lanes(self, dtype: str) -> Optional[int]:
        """Vector lanes of ``dtype`` (vector bits / element bits); None when unavailable.

        Raises:
            ValueError: ``dtype`` is not one of ``"fp32"``, ``"fp64"``, ``"fp16"``.
        """
        elem = _elem_bits(dtype)
        if dtype == "fp16" and not self.fp16:
            return None
        if not self.vector_bits.known:
            return None
        return int(self.vector_bits.value) // elem

    def omitted_reason(self, dtype: str) -> Optional[str]:
        """Why the theoretical ``dtype`` peak cannot be computed; None when it can.

        Raises:
            ValueError: ``dtype`` is not one of ``"fp32"``, ``"fp64"``, ``"fp16"``.
        """
        _elem_bits(dtype)
        if dtype == "fp16" and not self.fp16:
            return "no FP16 arithmetic in the compiled kernels' ISA"
        if not self.vector_bits.known:
            return "vector width " + self.vector_bits.source
        for g in self.groups():
            for label, fig in (("cores", g.cores), ("clock", g.clock_hz), ("FMA pipes", g.fma_pipes)):
                if not fig.known:
                    prefix = "" if g.name == "all" else f"{g.name} cores: "
                    return f"{prefix}{label} {fig.source}"
        return None

    def peak_gflops(self, dtype: str) -> Optional[float]:
        """Theoretical peak in GFLOP/s (1e9 FLOP/s) for ``dtype``, summed over core groups.

        Returns None when a figure is unknown (unknown microarchitecture, unreadable clock) or,
        for ``"fp16"``, when the ISA has no FP16 arithmetic; :meth:`omitted_reason` says why.

        Raises:
            ValueError: ``dtype`` is not one of ``"fp32"``, ``"fp64"``, ``"fp16"``.
        """
        if self.omitted_reason(dtype) is not None:
            return None
        lanes = self.lanes(dtype)
        assert lanes is not None
        total = 0.0
        for g in self.groups():
            total += g.cores.value * lanes * g.fma_pipes.value * 2.0 * g.clock_hz.value
        return total / 1e9

    def derivation(self, dtype: str) -> str:
        """The arithmetic behind :meth:`peak_gflops`, as one line.

        Example: ``"2 cores × 16 lanes × 2 FMA pipes × 2 FLOP × 2.60 GHz = 332.8 GFLOP/s"``;
        heterogeneous CPUs give one term per group joined by ``" + "``. When the peak is
        unknown: ``"not available: <reason>"``.

        Raises:
            ValueError: ``dtype`` is not one of ``"fp32"``, ``"fp64"``, ``"fp16"``.
        """
        reason = self.omitted_reason(dtype)
        if reason is not None:
            return "not available: " + reason
        lanes = self.lanes(dtype)
        terms = []
        for g in self.groups():
            label = "" if g.name == "all" else f" ({g.name})"
            terms.append(
                f"{_num(g.cores.value)} cores{label} × {lanes} lanes × {_num(g.fma_pipes.value)} FMA pipes"
                f" × 2 FLOP × {g.clock_hz.value / 1e9:.2f} GHz"
            )
        peak = self.peak_gflops(dtype)
        assert peak is not None
        return " + ".join(terms) + f" = {peak:.1f} GFLOP/s"


# --------------------------------------------------------------------------------------------
# Microarchitecture tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Uarch:
    """FMA throughput of one core type: FMA instructions per cycle and datapath bits per cycle."""

    name: str
    fma_per_cycle: int
    fma_bits_per_cycle: int
    source: str

    def effective_pipes(self, vector_bits: int) -> float:
        """FMA instructions of width ``vector_bits`` completed per cycle per core."""
        return min(float(self.fma_per_cycle), self.fma_bits_per_cycle / float(vector_bits))

    def figure(self, vector_bits: int) -> Figure:
        pipes = self.effective_pipes(vector_bits)
        width = self.fma_bits_per_cycle // self.fma_per_cycle
        return Figure(
            pipes,
            "pipes",
            f"uarch table: {self.name} has {self.fma_per_cycle} × {width}-bit FMA pipes "
            f"({self.fma_bits_per_cycle} FMA bits/cycle/core), so {_num(pipes)} FMA/cycle at "
            f"{vector_bits}-bit vectors ({self.source})",
        )


_AMD_ZEN1 = _Uarch(
    "AMD Zen/Zen+", 2, 256,
    "AMD Software Optimization Guide for Family 17h, #55723: 128-bit FP datapath, FMA on pipes 0 and 1; "
    "256-bit AVX ops split into two 128-bit ops",
)
_AMD_ZEN2 = _Uarch(
    "AMD Zen 2", 2, 512,
    "AMD Software Optimization Guide for Family 17h Models 30h+, #56305: 256-bit FP datapath, 2 FMA pipes",
)
_AMD_ZEN3 = _Uarch(
    "AMD Zen 3", 2, 512,
    "AMD Software Optimization Guide for Family 19h, #56665: 256-bit FP datapath, 2 FMA pipes",
)
_AMD_ZEN4 = _Uarch(
    "AMD Zen 4", 2, 512,
    "AMD Software Optimization Guide for Zen 4, #57647: 2 × 256-bit FMA pipes; 512-bit ops are "
    "double-pumped (A. Yee, 'Zen4 AVX512 teardown', numberworld.org 2022)",
)
_AMD_ZEN5 = _Uarch(
    "AMD Zen 5 (desktop/server)", 2, 1024,
    "AMD Software Optimization Guide for Zen 5, #58455: 2 × 512-bit FMA pipes on the full 512-bit "
    "datapath of server and desktop parts (A. Yee, 'Zen5's AVX512 Teardown', numberworld.org 2024)",
)
_AMD_ZEN5_MOBILE = _Uarch(
    "AMD Zen 5 (Strix Point)", 2, 512,
    "mobile Zen 5 keeps a 256-bit FP datapath: 512-bit ops are double-pumped as on Zen 4 "
    "(A. Yee, 'Zen5's AVX512 Teardown', numberworld.org 2024; Chips and Cheese, 'AMD's Strix Point: "
    "Zen 5 Hits Mobile', 2024)",
)

_INTEL_CLIENT_AVX2 = _Uarch(
    "Intel Haswell..Comet Lake", 2, 512,
    "Intel 64 and IA-32 Architectures Optimization Reference Manual: 256-bit FMA on ports 0 and 1",
)
_INTEL_CLIENT_AVX512 = _Uarch(
    "Intel Sunny Cove/Willow Cove/Cypress Cove client", 2, 512,
    "Intel Optimization Reference Manual: 256-bit FMA on ports 0 and 1, fused into one 512-bit FMA "
    "for AVX-512 (no port-5 FMA on client parts)",
)
_INTEL_SERVER_2FMA = _Uarch(
    "Intel Xeon Scalable, 2 AVX-512 FMA units", 2, 1024,
    "Intel Optimization Reference Manual: 512-bit FMA on ports 0+1 and port 5; Intel ARK "
    "'# of AVX-512 FMA Units' = 2 on Gold 6xxx/Platinum (caveat: some lower SKUs have 1)",
)
_INTEL_SERVER_1FMA = _Uarch(
    "Intel Xeon Scalable, 1 AVX-512 FMA unit", 2, 512,
    "Intel ARK '# of AVX-512 FMA Units' = 1 on Bronze, Silver and most Gold 5xxx Skylake-SP/"
    "Cascade Lake SKUs (and Core i7-7800X/7820X): one 512-bit FMA per cycle, two 256-bit",
)

# (vendor_id, family, first model, last model, entry); models inclusive.
_X86_TABLE: Sequence[Tuple[str, int, int, int, _Uarch]] = (
    # AMD family -> Zen generation: Linux arch/x86/kernel/cpu/amd.c (bsp_init_amd)
    ("AuthenticAMD", 0x17, 0x00, 0x2F, _AMD_ZEN1),
    ("AuthenticAMD", 0x17, 0x50, 0x5F, _AMD_ZEN1),
    ("AuthenticAMD", 0x17, 0x30, 0x4F, _AMD_ZEN2),
    ("AuthenticAMD", 0x17, 0x60, 0x7F, _AMD_ZEN2),
    ("AuthenticAMD", 0x17, 0x90, 0x91, _AMD_ZEN2),
    ("AuthenticAMD", 0x17, 0xA0, 0xAF, _AMD_ZEN2),
    ("AuthenticAMD", 0x19, 0x00, 0x0F, _AMD_ZEN3),
    ("AuthenticAMD", 0x19, 0x20, 0x5F, _AMD_ZEN3),
    ("AuthenticAMD", 0x19, 0x10, 0x1F, _AMD_ZEN4),
    ("AuthenticAMD", 0x19, 0x60, 0xAF, _AMD_ZEN4),
    ("AuthenticAMD", 0x1A, 0x00, 0x1F, _AMD_ZEN5),  # Turin (EPYC 9005)
    ("AuthenticAMD", 0x1A, 0x40, 0x4F, _AMD_ZEN5),  # Granite Ridge (Ryzen 9000)
    ("AuthenticAMD", 0x1A, 0x20, 0x2F, _AMD_ZEN5_MOBILE),  # Strix Point (Ryzen AI 300)
    # Intel family 6 model numbers: Linux arch/x86/include/asm/intel-family.h
    ("GenuineIntel", 6, 0x3C, 0x3C, _INTEL_CLIENT_AVX2),  # Haswell
    ("GenuineIntel", 6, 0x3F, 0x3F, _INTEL_CLIENT_AVX2),  # Haswell-X
    ("GenuineIntel", 6, 0x45, 0x46, _INTEL_CLIENT_AVX2),  # Haswell-L/G
    ("GenuineIntel", 6, 0x3D, 0x3D, _INTEL_CLIENT_AVX2),  # Broadwell
    ("GenuineIntel", 6, 0x47, 0x47, _INTEL_CLIENT_AVX2),  # Broadwell-G
    ("GenuineIntel", 6, 0x4F, 0x4F, _INTEL_CLIENT_AVX2),  # Broadwell-X
    ("GenuineIntel", 6, 0x56, 0x56, _INTEL_CLIENT_AVX2),  # Broadwell-D
    ("GenuineIntel", 6, 0x4E, 0x4E, _INTEL_CLIENT_AVX2),  # Skylake-L
    ("GenuineIntel", 6, 0x5E, 0x5E, _INTEL_CLIENT_AVX2),  # Skylake
    ("GenuineIntel", 6, 0x8E, 0x8E, _INTEL_CLIENT_AVX2),  # Kaby/Whiskey/Amber/Comet Lake-L
    ("GenuineIntel", 6, 0x9E, 0x9E, _INTEL_CLIENT_AVX2),  # Kaby/Coffee Lake
    ("GenuineIntel", 6, 0xA5, 0xA6, _INTEL_CLIENT_AVX2),  # Comet Lake
    ("GenuineIntel", 6, 0x7D, 0x7E, _INTEL_CLIENT_AVX512),  # Ice Lake client
    ("GenuineIntel", 6, 0x8C, 0x8D, _INTEL_CLIENT_AVX512),  # Tiger Lake
    ("GenuineIntel", 6, 0xA7, 0xA7, _INTEL_CLIENT_AVX512),  # Rocket Lake
    ("GenuineIntel", 6, 0x55, 0x55, _INTEL_SERVER_2FMA),  # Skylake-SP/Cascade/Cooper Lake
    ("GenuineIntel", 6, 0x6A, 0x6A, _INTEL_SERVER_2FMA),  # Ice Lake-SP
    ("GenuineIntel", 6, 0x6C, 0x6C, _INTEL_SERVER_2FMA),  # Ice Lake-D
    ("GenuineIntel", 6, 0x8F, 0x8F, _INTEL_SERVER_2FMA),  # Sapphire Rapids
    ("GenuineIntel", 6, 0xCF, 0xCF, _INTEL_SERVER_2FMA),  # Emerald Rapids
)

# Skylake-SP / Cascade Lake SKUs with one AVX-512 FMA unit (Intel ARK).
_ONE_FMA_SKU = re.compile(
    r"Xeon\(R\)\s+(?:Bronze|Silver)|Xeon\(R\)\s+Gold\s+5(?!122|222)\d{3}|i7-78[02]0X", re.IGNORECASE
)

_NEOVERSE_N1 = _Uarch(
    "Arm Neoverse N1", 2, 256,
    "Arm Neoverse N1 Software Optimization Guide: two 128-bit FP/ASIMD pipelines (V0, V1), "
    "ASIMD FMLA throughput 2/cycle",
)
_CORTEX_A76 = _Uarch(
    "Arm Cortex-A76", 2, 256,
    "Arm Cortex-A76 Software Optimization Guide: two 128-bit FP/ASIMD pipelines (V0, V1)",
)
_NEOVERSE_V1 = _Uarch(
    "Arm Neoverse V1", 4, 512,
    "Arm Neoverse V1 Software Optimization Guide: 4 × 128-bit ASIMD FMA pipes or 2 × 256-bit SVE",
)
_NEOVERSE_V2 = _Uarch(
    "Arm Neoverse V2", 4, 512,
    "Arm Neoverse V2 Software Optimization Guide: 4 × 128-bit FP/ASIMD/SVE2 pipelines (V0-V3)",
)
_APPLE_FIRESTORM = _Uarch(
    "Apple Firestorm (M1 P-core)", 4, 512,
    "D. Johnson, 'Apple Microarchitecture Research' (dougallj.github.io/applecpu): 4 FP/SIMD units, "
    "128-bit NEON",
)
_APPLE_ICESTORM = _Uarch(
    "Apple Icestorm (M1 E-core)", 2, 256,
    "D. Johnson, 'Apple Microarchitecture Research' (dougallj.github.io/applecpu/icestorm.html): "
    "2 FP/SIMD units, 128-bit NEON",
)

# (CPU implementer, CPU part) from /proc/cpuinfo -> entry. Part numbers: Linux
# arch/arm64/include/asm/cputype.h.
_ARM_TABLE: Mapping[Tuple[int, int], _Uarch] = {
    (0x41, 0xD0B): _CORTEX_A76,
    (0x41, 0xD0C): _NEOVERSE_N1,
    (0x41, 0xD40): _NEOVERSE_V1,
    (0x41, 0xD4F): _NEOVERSE_V2,
    (0x61, 0x022): _APPLE_ICESTORM,  # M1
    (0x61, 0x023): _APPLE_FIRESTORM,
    (0x61, 0x024): _APPLE_ICESTORM,  # M1 Pro
    (0x61, 0x025): _APPLE_FIRESTORM,
    (0x61, 0x028): _APPLE_ICESTORM,  # M1 Max
    (0x61, 0x029): _APPLE_FIRESTORM,
}

# macOS: chip family from machdep.cpu.brand_string -> (P-core entry, E-core entry).
# Only chips whose core types were verified are listed (M2..M5 are not, see the module notes).
_APPLE_TABLE: Mapping[str, Tuple[_Uarch, _Uarch]] = {
    "M1": (_APPLE_FIRESTORM, _APPLE_ICESTORM),
}

_ARM_VENDORS = {0x41: "Arm", 0x61: "Apple", 0x51: "Qualcomm", 0x48: "HiSilicon", 0xC0: "Ampere", 0x4E: "NVIDIA"}
_X86_VENDORS = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}


# --------------------------------------------------------------------------------------------
# Host probing
# --------------------------------------------------------------------------------------------


def host_cpu_spec(
    features: Optional[Mapping[str, object]] = None,
    *,
    measure_clock: Optional[Callable[[], float]] = None,
    proc_root: str = "/",
    sysctl: Optional[Callable[[str], Optional[str]]] = None,
) -> CpuSpec:
    """Read the host CPU's figures for its theoretical peak.

    Args:
        features: the dict returned by ``apple_roofline._core.cpu_features()`` (keys ``arch``,
            ``isa``, ``vector_bits``, ``fma``, ``fp16_arithmetic``, ``logical_cpus``). When None and
            ``proc_root`` is ``"/"``, it is imported lazily from the native extension; if that fails
            (or ``proc_root`` points elsewhere) the widest ISA in the ``/proc/cpuinfo`` flags is used.
        measure_clock: returns the core clock in Hz; called only when no clock can be read.
            Default: ``apple_roofline._core.measure_cpu_clock_hz(0.05)``, imported lazily; if the
            extension or function is missing the clock is reported unknown.
        proc_root: root of the ``/proc`` and ``/sys`` trees to read (tests point it at a fake tree).
        sysctl: ``name -> value or None``; used for the macOS path. Default: ``sysctl -n`` when
            running on macOS with ``proc_root == "/"``, otherwise no sysctl.

    Returns:
        A :class:`CpuSpec`; figures that could not be determined are unknown (``nan``) with the
        reason in their ``source``.

    Raises:
        Nothing for missing files or tools: every failure becomes an unknown figure.
    """
    on_host = os.path.abspath(proc_root) == os.path.abspath(os.sep)
    if sysctl is None and on_host and sys.platform == "darwin":
        sysctl = _run_sysctl
    if features is None and on_host:
        features = _native_features()
    if sysctl is not None and sysctl("machdep.cpu.brand_string") is not None:
        return _macos_spec(features, sysctl, measure_clock)
    return _linux_spec(features, proc_root, measure_clock, sysctl)


def theoretical_ceilings(spec: CpuSpec) -> "List[Ceiling]":
    """Theoretical compute ceilings (``source="theoretical"``, GFLOP/s) for the roofline plot.

    Names pair with the measured ceilings of the same name: ``"FP32 vector"`` and ``"FP32 scalar
    ILP"`` (both the FP32 SIMD FMA peak: the CPU backend maps work items onto SIMD lanes),
    ``"FP16 vector"`` and ``"FP16 scalar ILP"`` (only with FP16 arithmetic), ``"FP64"``,
    ``"GEMM FP32"`` (= FP32 peak) and ``"GEMM FP64"`` (= FP64 peak). ``from_`` is the derivation.
    Ceilings whose peak is unknown are omitted (:meth:`CpuSpec.omitted_reason` says why). No
    bandwidth ceiling is returned (see :data:`NO_THEORETICAL_BANDWIDTH`).

    Raises:
        ImportError: ``apple_roofline.results`` cannot be imported.
    """
    from .results import Ceiling

    names = (
        ("FP32 vector", "fp32"),
        ("FP32 scalar ILP", "fp32"),
        ("FP16 vector", "fp16"),
        ("FP16 scalar ILP", "fp16"),
        ("FP64", "fp64"),
        ("GEMM FP32", "fp32"),
        ("GEMM FP64", "fp64"),
    )
    out: List[Ceiling] = []
    for name, dtype in names:
        peak = spec.peak_gflops(dtype)
        if peak is None or not peak > 0:
            continue
        out.append(
            Ceiling(
                name=name, kind="compute", value=peak, unit="GFLOP/s", source="theoretical",
                from_=spec.derivation(dtype),
            )
        )
    return out


def describe(spec: CpuSpec) -> Dict[str, object]:
    """A JSON-friendly dict of ``spec`` for a run's host/device block.

    Unknown figures are ``None`` with their reason in the matching ``*_source`` key. Keys:
    ``model, vendor, arch, physical_cores, physical_cores_source, logical_cpus, clock_hz (Hz),
    clock_source, vector_bits, vector_bits_source, fma_pipes, fma_pipes_source, fp16,
    core_groups (list), theoretical ({dtype: {"gflops", "derivation"}}), theoretical_bandwidth
    (always None) with its note, notes``.

    Raises:
        Nothing.
    """

    def val(f: Figure) -> Optional[float]:
        return f.value if f.known else None

    groups: List[Dict[str, object]] = []
    for g in spec.groups():
        groups.append(
            {
                "name": g.name,
                "uarch": g.uarch,
                "cores": val(g.cores),
                "cores_source": g.cores.source,
                "clock_hz": val(g.clock_hz),
                "clock_source": g.clock_hz.source,
                "fma_pipes": val(g.fma_pipes),
                "fma_pipes_source": g.fma_pipes.source,
            }
        )
    theo: Dict[str, object] = {}
    for dtype in DTYPES:
        theo[dtype] = {"gflops": spec.peak_gflops(dtype), "derivation": spec.derivation(dtype)}
    return {
        "model": spec.model,
        "vendor": spec.vendor,
        "arch": spec.arch,
        "physical_cores": val(spec.physical_cores),
        "physical_cores_source": spec.physical_cores.source,
        "logical_cpus": spec.logical_cpus,
        "clock_hz": val(spec.clock_hz),
        "clock_source": spec.clock_hz.source,
        "vector_bits": val(spec.vector_bits),
        "vector_bits_source": spec.vector_bits.source,
        "fma_pipes": val(spec.fma_pipes),
        "fma_pipes_source": spec.fma_pipes.source,
        "fp16": spec.fp16,
        "core_groups": groups,
        "theoretical": theo,
        "theoretical_bandwidth": None,
        "theoretical_bandwidth_note": NO_THEORETICAL_BANDWIDTH,
        "notes": list(spec.notes),
    }


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _elem_bits(dtype: str) -> int:
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, not {dtype!r}") from None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _read(proc_root: str, path: str) -> Optional[str]:
    try:
        with open(os.path.join(proc_root, path.lstrip("/")), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def _run_sysctl(name: str) -> Optional[str]:
    try:
        r = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.strip()
    return out if r.returncode == 0 and out else None


def _native_features() -> Optional[Mapping[str, object]]:
    try:
        from ._native import _core

        return dict(_core.cpu_features())
    except (ImportError, AttributeError, RuntimeError):
        return None


def _parse_cpuinfo(text: str) -> List[Dict[str, str]]:
    blocks: List[Dict[str, str]] = []
    cur: Dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = {}
            continue
        if ":" in line:
            k, _, v = line.partition(":")
            cur[k.strip()] = v.strip()
    if cur:
        blocks.append(cur)
    return [b for b in blocks if "processor" in b] or blocks


def _int(s: Optional[str]) -> Optional[int]:
    if s is None:
        return None
    try:
        return int(s, 0)
    except ValueError:
        return None


def _feature_figures(
    features: Optional[Mapping[str, object]], flags: Sequence[str], arch: str
) -> Tuple[Figure, bool, bool]:
    """(vector_bits, fma, fp16) from the native features dict, else from cpuinfo flags."""
    if features is not None and isinstance(features.get("vector_bits"), int):
        bits = features["vector_bits"]
        assert isinstance(bits, int)
        vb = Figure(
            float(bits), "bits",
            f"apple_roofline._core.cpu_features(): isa={features.get('isa')!s}, vector_bits={bits}",
        )
        return vb, bool(features.get("fma", False)), bool(features.get("fp16_arithmetic", False))
    fs = set(flags)
    note = "(native extension unavailable: assumes the kernels use the widest ISA the CPU reports)"
    if arch == "arm64":
        if "asimd" in fs:
            return (
                Figure(128.0, "bits", f"/proc/cpuinfo Features: asimd (NEON, 128-bit) {note}"),
                True,
                "asimdhp" in fs,
            )
        return Figure.unknown("bits", "/proc/cpuinfo Features lists no asimd"), False, False
    for flag, bits in (("avx512f", 512), ("avx2", 256), ("sse2", 128)):
        if flag in fs:
            return (
                Figure(float(bits), "bits", f"/proc/cpuinfo flags: {flag} ({bits}-bit) {note}"),
                "fma" in fs,
                "avx512fp16" in fs,
            )
    return Figure.unknown("bits", "no vector ISA in /proc/cpuinfo flags"), False, False


def _clock_figure(
    proc_root: str,
    cpu: int,
    measure_clock: Optional[Callable[[], float]],
    sysctl: Optional[Callable[[str], Optional[str]]],
    current_mhz: Optional[str],
    hypervisor: bool,
) -> Figure:
    """Peak clock in Hz: cpufreq max, sysctl hw.cpufrequency_max, measured, 'cpu MHz' (last)."""
    path = f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq"
    khz = _int((_read(proc_root, path) or "").strip() or None)
    if khz is not None and khz > 0:
        return Figure(khz * 1e3, "Hz", f"{path} (cpufreq max, single-core turbo)")
    if sysctl is not None:
        hz = _int(sysctl("hw.cpufrequency_max"))
        if hz is not None and hz > 0:
            return Figure(float(hz), "Hz", "sysctl hw.cpufrequency_max")
    measured = _measure(measure_clock)
    if measured.known:
        return measured
    why = "; under a hypervisor it is the nominal TSC rate" if hypervisor else ""
    try:
        mhz = float(current_mhz) if current_mhz is not None else math.nan
    except ValueError:
        mhz = math.nan
    if math.isfinite(mhz) and mhz > 0:
        return Figure(
            mhz * 1e6, "Hz",
            f"/proc/cpuinfo 'cpu MHz': a CURRENT reading, not a maximum (no cpufreq max, no sysctl, "
            f"and {_strip_unknown(measured.source)}){why}",
        )
    return Figure.unknown("Hz", f"no cpufreq max ({path}), no sysctl, and {measured.source}")


def _strip_unknown(source: str) -> str:
    return source[len("unknown: "):] if source.startswith("unknown: ") else source


def _native_measure() -> float:
    from ._native import _core

    return float(_core.measure_cpu_clock_hz(_MEASURE_SECONDS))


def _measure(measure_clock: Optional[Callable[[], float]]) -> Figure:
    what = "measured: dependent integer-add chain"
    fn: Callable[[], float]
    if measure_clock is None:
        fn = _native_measure
        what += " (apple_roofline._core.measure_cpu_clock_hz)"
    else:
        fn = measure_clock
    t0 = time.perf_counter()
    try:
        hz = float(fn())
    except (ImportError, AttributeError) as e:
        return Figure.unknown("Hz", f"clock could not be measured ({type(e).__name__}: {e})")
    except (RuntimeError, OSError, ValueError) as e:
        return Figure.unknown("Hz", f"clock measurement failed ({type(e).__name__}: {e})")
    ms = (time.perf_counter() - t0) * 1e3
    if not (math.isfinite(hz) and hz > 0):
        return Figure.unknown("Hz", f"clock measurement returned {hz!r}")
    return Figure(
        hz, "Hz",
        f"{what}, {ms:.0f} ms, one thread per usable CPU at once (the all-core clock under a scalar integer load; vector FMA loads may run slower)",
    )


def _linux_spec(
    features: Optional[Mapping[str, object]],
    proc_root: str,
    measure_clock: Optional[Callable[[], float]],
    sysctl: Optional[Callable[[str], Optional[str]]],
) -> CpuSpec:
    blocks = _parse_cpuinfo(_read(proc_root, "/proc/cpuinfo") or "")
    first = blocks[0] if blocks else {}
    logical = len([b for b in blocks if "processor" in b])
    lc = features.get("logical_cpus") if features is not None else None
    if isinstance(lc, int) and not isinstance(lc, bool) and lc > 0:
        logical = lc
    if logical <= 0:
        logical = os.cpu_count() or 0

    if "CPU implementer" in first:
        arch = "arm64"
    elif "vendor_id" in first:
        arch = "x86_64"
    else:
        feat_arch = features.get("arch") if features is not None else None
        arch = str(feat_arch) if feat_arch else _norm_machine(platform.machine())

    flag_text = first.get("flags", first.get("Features", ""))
    flags = flag_text.split()
    vector_bits, fma, fp16 = _feature_figures(features, flags, arch)
    hypervisor = "hypervisor" in flags
    notes: List[str] = []
    if hypervisor:
        notes.append(
            "running under a hypervisor: cores are vCPUs (possibly SMT siblings on the host) and "
            "cpufreq is usually absent, so the clock is measured"
        )

    if arch == "arm64":
        return _linux_arm_spec(blocks, logical, vector_bits, fma, fp16, proc_root, measure_clock, sysctl, notes)

    vendor_id = first.get("vendor_id", "")
    vendor = _X86_VENDORS.get(vendor_id, vendor_id or "unknown")
    model = first.get("model name", "") or "unknown CPU"
    cores = _x86_cores(blocks, proc_root)
    clock = _clock_figure(proc_root, 0, measure_clock, sysctl, first.get("cpu MHz"), hypervisor)

    family = _int(first.get("cpu family"))
    model_no = _int(first.get("model"))
    uarch: Optional[_Uarch] = None
    if family is not None and model_no is not None:
        for vid, fam, lo, hi, entry in _X86_TABLE:
            if vid == vendor_id and fam == family and lo <= model_no <= hi:
                uarch = entry
                break
    if uarch is _INTEL_SERVER_2FMA and model_no == 0x55 and _ONE_FMA_SKU.search(model):
        uarch = _INTEL_SERVER_1FMA
    hybrid = os.path.isdir(os.path.join(proc_root, "sys/devices/cpu_atom"))
    ident = (
        f"vendor {vendor_id or '?'} family {family if family is not None else '?'} "
        f"model {hex(model_no) if model_no is not None else '?'} ('{model}')"
    )
    pipes: Figure
    if hybrid:
        pipes = Figure.unknown("pipes", f"hybrid Intel CPU (P + E cores) is not modelled: {ident}")
    elif uarch is None:
        pipes = Figure.unknown("pipes", f"unknown microarchitecture: {ident} is not in the uarch table")
    elif not fma:
        pipes = Figure.unknown("pipes", "the compiled kernels' ISA has no FMA")
    elif not vector_bits.known:
        pipes = Figure.unknown("pipes", "vector width unknown")
    else:
        pipes = uarch.figure(int(vector_bits.value))
    group = CoreGroup("all", uarch.name if uarch else "", cores, clock, pipes)
    return CpuSpec(
        model=model, vendor=vendor, arch=arch, physical_cores=cores, logical_cpus=logical,
        clock_hz=clock, vector_bits=vector_bits, fma_pipes=pipes, fp16=fp16,
        core_groups=(group,), notes=tuple(notes),
    )


def _norm_machine(m: str) -> str:
    m = m.lower()
    if m in ("amd64", "x86_64"):
        return "x86_64"
    if m in ("aarch64", "arm64"):
        return "arm64"
    return m or "unknown"


def _x86_cores(blocks: Sequence[Mapping[str, str]], proc_root: str) -> Figure:
    pairs = {(b.get("physical id"), b.get("core id")) for b in blocks if "core id" in b}
    if pairs:
        return Figure(
            float(len(pairs)), "cores", "/proc/cpuinfo: distinct ('physical id', 'core id') pairs"
        )
    # Fallback: sysfs topology.
    ids = set()
    cpu = 0
    while True:
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        core = _read(proc_root, base + "core_id")
        if core is None:
            break
        ids.add(((_read(proc_root, base + "physical_package_id") or "").strip(), core.strip()))
        cpu += 1
    if ids:
        return Figure(float(len(ids)), "cores", "/sys/devices/system/cpu/cpu*/topology: distinct (package, core_id)")
    return Figure.unknown("cores", "neither /proc/cpuinfo 'core id' nor sysfs topology is readable")


def _linux_arm_spec(
    blocks: Sequence[Mapping[str, str]],
    logical: int,
    vector_bits: Figure,
    fma: bool,
    fp16: bool,
    proc_root: str,
    measure_clock: Optional[Callable[[], float]],
    sysctl: Optional[Callable[[str], Optional[str]]],
    notes: List[str],
) -> CpuSpec:
    # Group processors by core type (implementer, part), keeping the first CPU number of each.
    order: List[Tuple[int, int]] = []
    members: Dict[Tuple[int, int], List[int]] = {}
    for i, b in enumerate(blocks):
        key = (_int(b.get("CPU implementer")) or 0, _int(b.get("CPU part")) or 0)
        cpu = _int(b.get("processor"))
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(cpu if cpu is not None else i)
    groups: List[CoreGroup] = []
    for key in order:
        impl, part = key
        entry = _ARM_TABLE.get(key)
        ident = f"CPU implementer {impl:#x} part {part:#05x}"
        cores = Figure(
            float(len(members[key])), "cores",
            f"/proc/cpuinfo: 'processor' entries with {ident} (no SMT)",
        )
        clock = _clock_figure(proc_root, members[key][0], measure_clock, sysctl, None, False)
        if len(order) > 1 and not clock.source.startswith("/sys"):
            clock = Figure.unknown(
                "Hz", f"no cpufreq max for this core type; a measurement cannot be pinned to it ({ident})"
            )
        if entry is None:
            pipes = Figure.unknown("pipes", f"unknown microarchitecture: {ident} is not in the uarch table")
        elif not fma or not vector_bits.known:
            pipes = Figure.unknown("pipes", "no FMA / vector width in the compiled kernels' ISA")
        else:
            pipes = entry.figure(int(vector_bits.value))
        name = "all" if len(order) == 1 else (entry.name if entry else ident)
        groups.append(CoreGroup(name, entry.name if entry else "", cores, clock, pipes))
    if len(groups) > 1:
        notes.append("heterogeneous CPU: the peak is summed over core types")
    if groups:
        total = sum(g.cores.value for g in groups)
        phys = Figure(float(total), "cores", "/proc/cpuinfo: 'processor' entries (arm64 cores have no SMT)")
        first = groups[0]
    else:
        phys = Figure.unknown("cores", "/proc/cpuinfo is unreadable")
        first = CoreGroup("all", "", phys, Figure.unknown("Hz", "no CPU found"), Figure.unknown("pipes", "no CPU found"))
    impl0 = order[0][0] if order else 0
    vendor = _ARM_VENDORS.get(impl0, f"implementer {impl0:#x}")
    model = " + ".join(g.uarch or "unknown core" for g in groups) or "unknown CPU"
    return CpuSpec(
        model=model, vendor=vendor, arch="arm64", physical_cores=phys, logical_cpus=logical,
        clock_hz=first.clock_hz, vector_bits=vector_bits, fma_pipes=first.fma_pipes, fp16=fp16,
        core_groups=tuple(groups), notes=tuple(notes),
    )


def _macos_spec(
    features: Optional[Mapping[str, object]],
    sysctl: Callable[[str], Optional[str]],
    measure_clock: Optional[Callable[[], float]],
) -> CpuSpec:
    brand = sysctl("machdep.cpu.brand_string") or "unknown CPU"
    logical = _int(sysctl("hw.logicalcpu")) or os.cpu_count() or 0
    lc = features.get("logical_cpus") if features is not None else None
    if isinstance(lc, int) and not isinstance(lc, bool) and lc > 0:
        logical = lc
    m = re.match(r"Apple (M\d+)", brand)
    if m is None:
        # Intel Mac: one group, clock from hw.cpufrequency_max; uarch needs family/model sysctls.
        arch = "x86_64"
        flags = ((sysctl("machdep.cpu.features") or "") + " " + (sysctl("machdep.cpu.leaf7_features") or "")).lower()
        vector_bits, fma, fp16 = _feature_figures(features, flags.replace(".", "_").split(), arch)
        ncores = _int(sysctl("hw.physicalcpu"))
        cores = (
            Figure(float(ncores), "cores", "sysctl hw.physicalcpu") if ncores
            else Figure.unknown("cores", "sysctl hw.physicalcpu unreadable")
        )
        clock = _clock_figure("/nonexistent", 0, measure_clock, sysctl, None, False)
        family = _int(sysctl("machdep.cpu.family"))
        model_no = _int(sysctl("machdep.cpu.model"))
        uarch = None
        for vid, fam, lo, hi, entry in _X86_TABLE:
            if vid == "GenuineIntel" and fam == family and model_no is not None and lo <= model_no <= hi:
                uarch = entry
        pipes = (
            uarch.figure(int(vector_bits.value)) if uarch and fma and vector_bits.known
            else Figure.unknown("pipes", f"unknown microarchitecture: Intel family {family} model {model_no}")
        )
        return CpuSpec(
            model=brand, vendor="Intel", arch=arch, physical_cores=cores, logical_cpus=logical,
            clock_hz=clock, vector_bits=vector_bits, fma_pipes=pipes, fp16=fp16,
            core_groups=(CoreGroup("all", uarch.name if uarch else "", cores, clock, pipes),),
        )

    chip = m.group(1)
    if features is not None and isinstance(features.get("vector_bits"), int):
        vector_bits, fma, fp16 = _feature_figures(features, (), "arm64")
    else:
        vector_bits = Figure(128.0, "bits", "NEON (128-bit): every Apple Silicon core (native extension unavailable)")
        fma = True
        fp16 = sysctl("hw.optional.arm.FEAT_FP16") == "1"
    entries = _APPLE_TABLE.get(chip)
    notes = ["Apple Silicon exposes no CPU frequency sysctl; the P-core clock is measured and assumes "
             "the measuring thread ran on a P core"]
    groups: List[CoreGroup] = []
    for level, name in ((0, "P"), (1, "E")):
        n = _int(sysctl(f"hw.perflevel{level}.physicalcpu"))
        if not n:
            continue
        cores = Figure(float(n), "cores", f"sysctl hw.perflevel{level}.physicalcpu")
        if level == 0:
            clock = _clock_figure("/nonexistent", 0, measure_clock, sysctl, None, False)
        else:
            clock = Figure.unknown(
                "Hz", "no E-core frequency sysctl on Apple Silicon and a measurement cannot be pinned to E cores"
            )
        if entries is None:
            pipes = Figure.unknown("pipes", f"unknown microarchitecture: Apple {chip} is not in the uarch table")
        elif not fma or not vector_bits.known:
            pipes = Figure.unknown("pipes", "no FMA / vector width in the compiled kernels' ISA")
        else:
            pipes = entries[level].figure(int(vector_bits.value))
        uname = entries[level].name if entries else ""
        groups.append(CoreGroup(name, uname, cores, clock, pipes))
    if not groups:
        n = _int(sysctl("hw.physicalcpu"))
        cores = Figure(float(n), "cores", "sysctl hw.physicalcpu") if n else Figure.unknown("cores", "no sysctl")
        groups.append(
            CoreGroup("all", "", cores, _clock_figure("/nonexistent", 0, measure_clock, sysctl, None, False),
                      Figure.unknown("pipes", "core types unknown (no hw.perflevel sysctls)"))
        )
    total = sum(g.cores.value for g in groups)
    phys = Figure(total, "cores", "sysctl hw.perflevel0/1.physicalcpu")
    return CpuSpec(
        model=brand, vendor="Apple", arch="arm64", physical_cores=phys, logical_cpus=logical,
        clock_hz=groups[0].clock_hz, vector_bits=vector_bits, fma_pipes=groups[0].fma_pipes, fp16=fp16,
        core_groups=tuple(groups), notes=tuple(notes),
    )


def device_theoretical(info: Mapping[str, object]) -> "Tuple[Dict[str, object], List[Ceiling]]":
    """Theoretical description and ceilings of an opened device, from its ``Backend.info()`` dict.

    Dispatches on ``info["backend"]``:

    * ``"cpu"``: :func:`host_cpu_spec` (with the compiled kernels' features) ->
      (``{"theoretical": describe(spec)}``, :func:`theoretical_ceilings`): compute ceilings in
      GFLOP/s, no bandwidth ceiling.
    * ``"cuda"``: :func:`apple_roofline.specs_cuda.cuda_theoretical` (SM count, clocks, bus width and
      compute capability from ``info``) -> (``{"theoretical": {...}}``, a ``"DRAM bandwidth"``
      ceiling in GB/s and compute ceilings in GFLOP/s, each only where its inputs are known).
    * ``"metal"``: :func:`apple_roofline.specs_apple.apple_theoretical` (the chip matched by
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
        from .specs_cuda import cuda_theoretical

        return cuda_theoretical(info)
    if backend == "metal":
        from .specs_apple import apple_theoretical

        return apple_theoretical(info)
    if backend != "cpu":
        return {}, []
    spec = host_cpu_spec()
    return {"theoretical": describe(spec)}, theoretical_ceilings(spec)
