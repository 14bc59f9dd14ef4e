"""The microarchitecture tables of the CPU model: FMA pipes per core of each known core type.

Each entry (:class:`Uarch`) gives FMA instructions per cycle and FMA datapath bits per cycle per
core, with the vendor document or article it comes from. The tables are keyed by vendor / family /
model on x86 (``_X86_TABLE``), by implementer / part on Linux arm64 (``_ARM_TABLE``) and by chip name
on macOS arm64 (``_APPLE_TABLE``); they are read through :func:`x86_uarch`, :func:`arm_uarch` and
:func:`apple_uarchs`. The *effective* pipe count at the compiled width is
``min(FMA per cycle, FMA bits per cycle / vector bits)`` (:meth:`Uarch.effective_pipes`), so a
512-bit op on 256-bit datapaths (Zen 4, mobile Zen 5, Ice Lake client) counts as half a pipe each.
A core type not in the tables has no entry (None): the caller reports "unknown microarchitecture"
and no theoretical ceiling, never a guess. The model these feed is :mod:`.cpu`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple

from .cpu import Figure, format_count

__all__ = ["Uarch", "x86_uarch", "arm_uarch", "apple_uarchs", "x86_vendor", "arm_vendor"]


@dataclass(frozen=True)
class Uarch:
    """FMA throughput of one core type: FMA instructions per cycle and datapath bits per cycle.

    Attributes:
        name: the core type's name, e.g. ``"AMD Zen 4"``.
        fma_per_cycle: vector FMA instructions issued per cycle per core.
        fma_bits_per_cycle: FMA datapath width per cycle per core, in bits (all pipes together).
        source: the vendor optimization guide, data sheet or article the figures come from.
    """

    name: str
    fma_per_cycle: int
    fma_bits_per_cycle: int
    source: str

    def effective_pipes(self, vector_bits: int) -> float:
        """FMA instructions of width ``vector_bits`` completed per cycle per core:
        ``min(fma_per_cycle, fma_bits_per_cycle / vector_bits)``.

        Raises:
            ZeroDivisionError: ``vector_bits`` is 0.
        """
        return min(float(self.fma_per_cycle), self.fma_bits_per_cycle / float(vector_bits))

    def figure(self, vector_bits: int) -> Figure:
        """The effective FMA pipes at ``vector_bits`` as a :class:`~.cpu.Figure` (unit
        ``"pipes"``) whose source names this entry, its pipes and its reference.

        Raises:
            ZeroDivisionError: ``vector_bits`` is 0.
        """
        pipes = self.effective_pipes(vector_bits)
        width = self.fma_bits_per_cycle // self.fma_per_cycle
        return Figure(
            pipes,
            "pipes",
            f"uarch table: {self.name} has {self.fma_per_cycle} × {width}-bit FMA pipes "
            f"({self.fma_bits_per_cycle} FMA bits/cycle/core), so {format_count(pipes)} FMA/cycle at "
            f"{vector_bits}-bit vectors ({self.source})",
        )


_AMD_ZEN1 = Uarch(
    "AMD Zen/Zen+",
    2,
    256,
    "AMD Software Optimization Guide for Family 17h, #55723: 128-bit FP datapath, FMA on pipes 0 and 1; "
    "256-bit AVX ops split into two 128-bit ops",
)
_AMD_ZEN2 = Uarch(
    "AMD Zen 2",
    2,
    512,
    "AMD Software Optimization Guide for Family 17h Models 30h+, #56305: 256-bit FP datapath, 2 FMA pipes",
)
_AMD_ZEN3 = Uarch(
    "AMD Zen 3",
    2,
    512,
    "AMD Software Optimization Guide for Family 19h, #56665: 256-bit FP datapath, 2 FMA pipes",
)
_AMD_ZEN4 = Uarch(
    "AMD Zen 4",
    2,
    512,
    "AMD Software Optimization Guide for Zen 4, #57647: 2 × 256-bit FMA pipes; 512-bit ops are "
    "double-pumped (A. Yee, 'Zen4 AVX512 teardown', numberworld.org 2022)",
)
_AMD_ZEN5 = Uarch(
    "AMD Zen 5 (desktop/server)",
    2,
    1024,
    "AMD Software Optimization Guide for Zen 5, #58455: 2 × 512-bit FMA pipes on the full 512-bit "
    "datapath of server and desktop parts (A. Yee, 'Zen5's AVX512 Teardown', numberworld.org 2024)",
)
_AMD_ZEN5_MOBILE = Uarch(
    "AMD Zen 5 (Strix Point)",
    2,
    512,
    "mobile Zen 5 keeps a 256-bit FP datapath: 512-bit ops are double-pumped as on Zen 4 "
    "(A. Yee, 'Zen5's AVX512 Teardown', numberworld.org 2024; Chips and Cheese, 'AMD's Strix Point: "
    "Zen 5 Hits Mobile', 2024)",
)

_INTEL_CLIENT_AVX2 = Uarch(
    "Intel Haswell..Comet Lake",
    2,
    512,
    "Intel 64 and IA-32 Architectures Optimization Reference Manual: 256-bit FMA on ports 0 and 1",
)
_INTEL_CLIENT_AVX512 = Uarch(
    "Intel Sunny Cove/Willow Cove/Cypress Cove client",
    2,
    512,
    "Intel Optimization Reference Manual: 256-bit FMA on ports 0 and 1, fused into one 512-bit FMA "
    "for AVX-512 (no port-5 FMA on client parts)",
)
_INTEL_SERVER_2FMA = Uarch(
    "Intel Xeon Scalable, 2 AVX-512 FMA units",
    2,
    1024,
    "Intel Optimization Reference Manual: 512-bit FMA on ports 0+1 and port 5; Intel ARK "
    "'# of AVX-512 FMA Units' = 2 on Gold 6xxx/Platinum (caveat: some lower SKUs have 1)",
)
_INTEL_SERVER_1FMA = Uarch(
    "Intel Xeon Scalable, 1 AVX-512 FMA unit",
    2,
    512,
    "Intel ARK '# of AVX-512 FMA Units' = 1 on Bronze, Silver and most Gold 5xxx Skylake-SP/"
    "Cascade Lake SKUs (and Core i7-7800X/7820X): one 512-bit FMA per cycle, two 256-bit",
)

# (vendor_id, family, first model, last model, entry); models inclusive.
_X86_TABLE: Sequence[Tuple[str, int, int, int, Uarch]] = (
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

_NEOVERSE_N1 = Uarch(
    "Arm Neoverse N1",
    2,
    256,
    "Arm Neoverse N1 Software Optimization Guide: two 128-bit FP/ASIMD pipelines (V0, V1), "
    "ASIMD FMLA throughput 2/cycle",
)
_CORTEX_A76 = Uarch(
    "Arm Cortex-A76",
    2,
    256,
    "Arm Cortex-A76 Software Optimization Guide: two 128-bit FP/ASIMD pipelines (V0, V1)",
)
_NEOVERSE_V1 = Uarch(
    "Arm Neoverse V1",
    4,
    512,
    "Arm Neoverse V1 Software Optimization Guide: 4 × 128-bit ASIMD FMA pipes or 2 × 256-bit SVE",
)
_NEOVERSE_V2 = Uarch(
    "Arm Neoverse V2",
    4,
    512,
    "Arm Neoverse V2 Software Optimization Guide: 4 × 128-bit FP/ASIMD/SVE2 pipelines (V0-V3)",
)
_APPLE_FIRESTORM = Uarch(
    "Apple Firestorm (M1 P-core)",
    4,
    512,
    "D. Johnson, 'Apple Microarchitecture Research' (dougallj.github.io/applecpu): 4 FP/SIMD units, 128-bit NEON",
)
_APPLE_ICESTORM = Uarch(
    "Apple Icestorm (M1 E-core)",
    2,
    256,
    "D. Johnson, 'Apple Microarchitecture Research' (dougallj.github.io/applecpu/icestorm.html): "
    "2 FP/SIMD units, 128-bit NEON",
)

# (CPU implementer, CPU part) from /proc/cpuinfo -> entry. Part numbers: Linux
# arch/arm64/include/asm/cputype.h.
_ARM_TABLE: Mapping[Tuple[int, int], Uarch] = {
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
_APPLE_TABLE: Mapping[str, Tuple[Uarch, Uarch]] = {
    "M1": (_APPLE_FIRESTORM, _APPLE_ICESTORM),
}

_ARM_VENDORS = {0x41: "Arm", 0x61: "Apple", 0x51: "Qualcomm", 0x48: "HiSilicon", 0xC0: "Ampere", 0x4E: "NVIDIA"}
_X86_VENDORS = {"AuthenticAMD": "AMD", "GenuineIntel": "Intel"}


def x86_uarch(
    vendor_id: str, family: Optional[int], model: Optional[int], model_name: Optional[str] = None
) -> Optional[Uarch]:
    """The ``_X86_TABLE`` entry of an x86 core: ``vendor_id`` (``"AuthenticAMD"``,
    ``"GenuineIntel"``), CPUID ``family`` and ``model`` as in ``/proc/cpuinfo`` or
    ``machdep.cpu.family`` / ``machdep.cpu.model``; None when not in the table (or family or model
    is unknown).

    With ``model_name`` (``/proc/cpuinfo 'model name'``), a Skylake-SP / Cascade Lake (model
    0x55) SKU that Intel ARK lists with one AVX-512 FMA unit (Bronze, Silver, most Gold 5xxx,
    Core i7-7800X/7820X) gets the one-unit entry; without it the two-unit entry stands.

    Raises:
        Nothing.
    """
    if family is None or model is None:
        return None
    uarch: Optional[Uarch] = None
    for vid, fam, lo, hi, entry in _X86_TABLE:
        if vid == vendor_id and fam == family and lo <= model <= hi:
            uarch = entry
            break
    if model_name is not None and uarch is _INTEL_SERVER_2FMA and model == 0x55 and _ONE_FMA_SKU.search(model_name):
        uarch = _INTEL_SERVER_1FMA
    return uarch


def arm_uarch(implementer: int, part: int) -> Optional[Uarch]:
    """The ``_ARM_TABLE`` entry of an arm64 core from ``/proc/cpuinfo`` ``CPU implementer`` and
    ``CPU part``; None when not in the table.

    Raises:
        Nothing.
    """
    return _ARM_TABLE.get((implementer, part))


def apple_uarchs(chip: str) -> Optional[Tuple[Uarch, Uarch]]:
    """(P-core entry, E-core entry) of an Apple chip family under macOS, ``chip`` as in
    ``machdep.cpu.brand_string`` without "Apple " (``"M1"``); None when the chip's core types are
    not in ``_APPLE_TABLE`` (only verified chips are).

    Raises:
        Nothing.
    """
    return _APPLE_TABLE.get(chip)


def x86_vendor(vendor_id: str) -> str:
    """The vendor's name (``"AMD"``, ``"Intel"``) for a CPUID ``vendor_id``; the raw string when
    not known, ``"unknown"`` when empty.

    Raises:
        Nothing.
    """
    return _X86_VENDORS.get(vendor_id, vendor_id or "unknown")


def arm_vendor(implementer: int) -> str:
    """The vendor's name (``"Arm"``, ``"Apple"``, ``"Qualcomm"`` ...) for an arm64 ``CPU
    implementer`` code; ``"implementer 0x.."`` when not known.

    Raises:
        Nothing.
    """
    return _ARM_VENDORS.get(implementer, f"implementer {implementer:#x}")
