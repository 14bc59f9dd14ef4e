"""Theoretical compute peaks of the host CPU, each figure with the source it came from.

This module is the model: the figures (:class:`Figure`, :class:`CoreGroup`, :class:`CpuSpec`), the
formula, and the ceilings and JSON description made from a spec. The microarchitecture tables are
in :mod:`.cpu_tables`; reading the host into a :class:`CpuSpec` is :func:`.cpu_probe.host_cpu_spec`.

The formula (per core group, summed over groups on heterogeneous CPUs)::

    peak [FLOP/s] = cores × lanes × FMA pipes × 2 FLOP × clock [Hz]
    lanes         = vector bits / element bits   (32 for FP32, 64 for FP64, 16 for FP16)

An FMA counts as 2 FLOPs per lane (docs/design/measurement.md, "Counting FLOPs and bytes"). GFLOP/s = 1e9
FLOP/s.

Where each figure comes from (every :class:`Figure` carries its own ``source`` sentence):

* **cores** (:mod:`.cpu_probe`) -- Linux: distinct ``('physical id', 'core id')`` pairs in
  ``/proc/cpuinfo`` (x86), or the ``processor`` entries of each core type (arm64, no SMT); macOS:
  ``sysctl hw.physicalcpu`` and, on Apple Silicon, ``hw.perflevel0.physicalcpu`` (P cores) /
  ``hw.perflevel1.physicalcpu`` (E cores).
* **vector width** (:mod:`.cpu_probe`) -- the widest vector ISA *the compiled kernels use*, from
  the native ``_core.cpu_features()`` dict; without the extension, the widest ISA in the
  ``/proc/cpuinfo`` flags (and the source says so).
* **FMA pipes** (:mod:`.cpu_tables`) -- a microarchitecture table (``_X86_TABLE``,
  ``_ARM_TABLE``, ``_APPLE_TABLE``) keyed by vendor / family / model on x86 and by implementer /
  part (Linux) or chip name (macOS) on arm64. Each entry gives FMA instructions per cycle and FMA
  datapath bits per cycle per core; the *effective* pipe count at the compiled width is
  ``min(FMA per cycle, FMA bits per cycle / vector bits)``, so a 512-bit op on 256-bit datapaths
  (Zen 4, mobile Zen 5, Ice Lake client) counts as half a pipe each. Entries not in the table give
  "unknown microarchitecture" and no theoretical ceiling, never a guess.
* **clock** (:mod:`.cpu_probe`) -- in order of preference:
  ``/sys/devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq`` (kHz; the highest single-core turbo
  the kernel knows), ``sysctl hw.cpufrequency_max`` (Intel Macs; absent on Apple Silicon), a
  *measurement* (a dependent integer-add chain, ``apple_roofline._core.measure_cpu_clock_hz``), and
  only as a last resort the *current* reading ``/proc/cpuinfo 'cpu MHz'`` (labelled as such: it is
  neither a maximum nor a sustained clock; under a hypervisor it is the nominal TSC rate). A run
  takes the measurement again after each suite and its peaks use the readings' robust estimate
  (:mod:`.cpu_clock`), so that one reading a neighbour disturbed does not set them.

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
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from ..study.records import Ceiling
from .collector import CeilingCollector

__all__ = [
    "Figure",
    "CoreGroup",
    "CpuSpec",
    "theoretical_ceilings",
    "describe",
    "format_count",
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
                f"{format_count(g.cores.value)} cores{label} × {lanes} lanes × "
                f"{format_count(g.fma_pipes.value)} FMA pipes × 2 FLOP × {g.clock_hz.value / 1e9:.2f} GHz"
            )
        peak = self.peak_gflops(dtype)
        assert peak is not None
        return " + ".join(terms) + f" = {peak:.1f} GFLOP/s"


def theoretical_ceilings(spec: CpuSpec) -> List[Ceiling]:
    """Theoretical compute ceilings (``source="theoretical"``, GFLOP/s) for the roofline plot.

    Names pair with the measured ceilings of the same name: ``"FP32 vector"`` and ``"FP32 scalar
    ILP"`` (both the FP32 SIMD FMA peak: the CPU backend maps work items onto SIMD lanes),
    ``"FP16 vector"`` and ``"FP16 scalar ILP"`` (only with FP16 arithmetic), ``"FP64"``,
    ``"GEMM FP32"`` (= FP32 peak) and ``"GEMM FP64"`` (= FP64 peak). ``from_`` is the derivation.
    Ceilings whose peak is unknown are omitted (:meth:`CpuSpec.omitted_reason` says why). No
    bandwidth ceiling is returned (see :data:`NO_THEORETICAL_BANDWIDTH`).

    Raises:
        Nothing.
    """
    names = (
        ("FP32 vector", "fp32"),
        ("FP32 scalar ILP", "fp32"),
        ("FP16 vector", "fp16"),
        ("FP16 scalar ILP", "fp16"),
        ("FP64", "fp64"),
        ("GEMM FP32", "fp32"),
        ("GEMM FP64", "fp64"),
    )
    collected = CeilingCollector()
    for name, dtype in names:
        peak = spec.peak_gflops(dtype)
        if peak is None:
            continue
        collected.add(name, "compute", peak, spec.derivation(dtype))  # a value <= 0 is left out
    return collected.ceilings


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


def format_count(x: float) -> str:
    """A count (cores, FMA pipes) as written in a derivation or a source sentence: integral
    values without a decimal point (``"2"``), others in ``%g`` form (``"0.5"``).

    Raises:
        Nothing.
    """
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _elem_bits(dtype: str) -> int:
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, not {dtype!r}") from None
