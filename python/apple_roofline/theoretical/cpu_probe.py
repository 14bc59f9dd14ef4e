"""Reading the host CPU into a :class:`~.cpu.CpuSpec`: :func:`host_cpu_spec`.

Where each figure comes from (the model and its caveats are in :mod:`.cpu`):

* **cores** -- Linux: distinct ``('physical id', 'core id')`` pairs in ``/proc/cpuinfo`` (x86),
  else the sysfs topology; the ``processor`` entries of each core type (arm64, no SMT); macOS:
  ``sysctl hw.physicalcpu`` and, on Apple Silicon, ``hw.perflevel0.physicalcpu`` (P cores) /
  ``hw.perflevel1.physicalcpu`` (E cores).
* **vector width** -- the widest vector ISA *the compiled kernels use*, from the native
  ``_core.cpu_features()`` dict; without the extension, the widest ISA in the ``/proc/cpuinfo``
  flags (and the source says so).
* **FMA pipes** -- the core type (x86 vendor / family / model, arm64 implementer / part, or the
  Apple chip name) looked up in :mod:`.cpu_tables`.
* **clock** -- in order of preference: ``/sys/devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq``
  (kHz), ``sysctl hw.cpufrequency_max``, a *measurement* (a dependent integer-add chain,
  ``apple_roofline._core.measure_cpu_clock_hz``), and only as a last resort the *current* reading
  ``/proc/cpuinfo 'cpu MHz'`` (labelled as such).

The native extension is imported lazily, inside functions, so this module imports without it.
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
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .cpu import CoreGroup, CpuSpec, Figure
from .cpu_tables import Uarch, apple_uarchs, arm_uarch, arm_vendor, x86_uarch, x86_vendor

__all__ = ["host_cpu_spec", "native_clock_hz"]

_MEASURE_SECONDS = 0.05


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
        A :class:`~.cpu.CpuSpec`; figures that could not be determined are unknown (``nan``) with
        the reason in their ``source``. Where each figure comes from: this module's docstring; the
        model and its caveats: :mod:`.cpu`.

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
    return _linux_spec(features, _Host(proc_root, measure_clock, sysctl))


@dataclass(frozen=True)
class _Host:
    """Where the host's figures are read from: the root of its ``/proc`` and ``/sys`` trees, the
    clock measurement (None: the native one) and ``sysctl`` (None: none)."""

    proc_root: str
    measure_clock: Optional[Callable[[], float]]
    sysctl: Optional[Callable[[str], Optional[str]]]

    def clock(self, cpu: int, current_mhz: Optional[str] = None, hypervisor: bool = False) -> Figure:
        """CPU ``cpu``'s peak clock in Hz (:func:`_clock_figure`)."""
        return _clock_figure(self.proc_root, cpu, self.measure_clock, self.sysctl, current_mhz, hypervisor)


class _Isa(NamedTuple):
    """What the compiled kernels' ISA offers: its vector width (bits), FMA and FP16 arithmetic."""

    vector_bits: Figure
    fma: bool
    fp16: bool


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
        from .._native import _core

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
            float(bits),
            "bits",
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
            mhz * 1e6,
            "Hz",
            f"/proc/cpuinfo 'cpu MHz': a CURRENT reading, not a maximum (no cpufreq max, no sysctl, "
            f"and {_strip_unknown(measured.source)}){why}",
        )
    return Figure.unknown("Hz", f"no cpufreq max ({path}), no sysctl, and {measured.source}")


def _strip_unknown(source: str) -> str:
    return source[len("unknown: ") :] if source.startswith("unknown: ") else source


def native_clock_hz() -> float:
    """One reading of the all-core clock, Hz: ``_core.measure_cpu_clock_hz`` over 50 ms (a
    dependent integer-add chain on one thread per usable CPU).

    Raises:
        ImportError: the native extension is missing; RuntimeError, ValueError: it failed.
    """
    from .._native import _core

    return float(_core.measure_cpu_clock_hz(_MEASURE_SECONDS))


def _measure(measure_clock: Optional[Callable[[], float]]) -> Figure:
    what = "measured: dependent integer-add chain"
    fn: Callable[[], float]
    if measure_clock is None:
        fn = native_clock_hz
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
        hz,
        "Hz",
        f"{what}, {ms:.0f} ms, one thread per usable CPU at once "
        "(the all-core clock under a scalar integer load; vector FMA loads may run slower)",
    )


def _linux_spec(features: Optional[Mapping[str, object]], host: _Host) -> CpuSpec:
    """The CPU of a Linux host from ``/proc/cpuinfo`` and sysfs (x86-64 or arm64)."""
    blocks = _parse_cpuinfo(_read(host.proc_root, "/proc/cpuinfo") or "")
    first = blocks[0] if blocks else {}
    logical = _logical_cpus(len([b for b in blocks if "processor" in b]), features)
    if logical <= 0:
        logical = os.cpu_count() or 0
    arch = _linux_arch(first, features)
    flags = first.get("flags", first.get("Features", "")).split()
    isa = _Isa(*_feature_figures(features, flags, arch))
    hypervisor = "hypervisor" in flags
    notes: List[str] = []
    if hypervisor:
        notes.append(
            "running under a hypervisor: cores are vCPUs (possibly SMT siblings on the host) and "
            "cpufreq is usually absent, so the clock is measured"
        )
    if arch == "arm64":
        return _linux_arm_spec(blocks, logical, isa, host, notes)
    return _linux_x86_spec(blocks, logical, arch, isa, host, notes, hypervisor)


def _logical_cpus(counted: int, features: Optional[Mapping[str, object]]) -> int:
    """The native extension's ``logical_cpus`` where it is a positive integer, else ``counted``."""
    lc = features.get("logical_cpus") if features is not None else None
    if isinstance(lc, int) and not isinstance(lc, bool) and lc > 0:
        return lc
    return counted


def _linux_arch(first: Mapping[str, str], features: Optional[Mapping[str, object]]) -> str:
    """``"arm64"`` or ``"x86_64"`` from the first ``/proc/cpuinfo`` block, else the native
    extension's ``arch``, else the machine's name."""
    if "CPU implementer" in first:
        return "arm64"
    if "vendor_id" in first:
        return "x86_64"
    feat_arch = features.get("arch") if features is not None else None
    return str(feat_arch) if feat_arch else _norm_machine(platform.machine())


def _linux_x86_spec(
    blocks: Sequence[Mapping[str, str]],
    logical: int,
    arch: str,
    isa: _Isa,
    host: _Host,
    notes: List[str],
    hypervisor: bool,
) -> CpuSpec:
    """A Linux host that is not arm64 (x86-64): one core group, its uarch from vendor, family and model."""
    first = blocks[0] if blocks else {}
    vendor_id = first.get("vendor_id", "")
    model = first.get("model name", "") or "unknown CPU"
    cores = _x86_cores(blocks, host.proc_root)
    clock = host.clock(0, first.get("cpu MHz"), hypervisor)
    family = _int(first.get("cpu family"))
    model_no = _int(first.get("model"))
    uarch = x86_uarch(vendor_id, family, model_no, model)
    ident = (
        f"vendor {vendor_id or '?'} family {family if family is not None else '?'} "
        f"model {hex(model_no) if model_no is not None else '?'} ('{model}')"
    )
    pipes = _x86_pipes(uarch, os.path.isdir(os.path.join(host.proc_root, "sys/devices/cpu_atom")), isa, ident)
    group = CoreGroup("all", uarch.name if uarch else "", cores, clock, pipes)
    return CpuSpec(
        model=model,
        vendor=x86_vendor(vendor_id),
        arch=arch,
        physical_cores=cores,
        logical_cpus=logical,
        clock_hz=clock,
        vector_bits=isa.vector_bits,
        fma_pipes=pipes,
        fp16=isa.fp16,
        core_groups=(group,),
        notes=tuple(notes),
    )


def _x86_pipes(uarch: Optional[Uarch], hybrid: bool, isa: _Isa, ident: str) -> Figure:
    """FMA pipes per core of an x86 uarch at the kernels' vector width; unknown, with the reason,
    on a hybrid CPU, an unknown uarch, no FMA or an unknown width (``ident`` names the CPU)."""
    if hybrid:
        return Figure.unknown("pipes", f"hybrid Intel CPU (P + E cores) is not modelled: {ident}")
    if uarch is None:
        return Figure.unknown("pipes", f"unknown microarchitecture: {ident} is not in the uarch table")
    if not isa.fma:
        return Figure.unknown("pipes", "the compiled kernels' ISA has no FMA")
    if not isa.vector_bits.known:
        return Figure.unknown("pipes", "vector width unknown")
    return uarch.figure(int(isa.vector_bits.value))


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
        return Figure(float(len(pairs)), "cores", "/proc/cpuinfo: distinct ('physical id', 'core id') pairs")
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
    blocks: Sequence[Mapping[str, str]], logical: int, isa: _Isa, host: _Host, notes: List[str]
) -> CpuSpec:
    """An arm64 Linux host: one core group per core type (implementer, part), the peak summed
    over them."""
    order, members = _arm_core_types(blocks)
    groups = [_arm_group(key, members[key], len(order) > 1, isa, host) for key in order]
    if len(groups) > 1:
        notes.append("heterogeneous CPU: the peak is summed over core types")
    if groups:
        total = sum(g.cores.value for g in groups)
        phys = Figure(float(total), "cores", "/proc/cpuinfo: 'processor' entries (arm64 cores have no SMT)")
        first = groups[0]
    else:
        phys = Figure.unknown("cores", "/proc/cpuinfo is unreadable")
        first = CoreGroup(
            "all", "", phys, Figure.unknown("Hz", "no CPU found"), Figure.unknown("pipes", "no CPU found")
        )
    impl0 = order[0][0] if order else 0
    model = " + ".join(g.uarch or "unknown core" for g in groups) or "unknown CPU"
    return CpuSpec(
        model=model,
        vendor=arm_vendor(impl0),
        arch="arm64",
        physical_cores=phys,
        logical_cpus=logical,
        clock_hz=first.clock_hz,
        vector_bits=isa.vector_bits,
        fma_pipes=first.fma_pipes,
        fp16=isa.fp16,
        core_groups=tuple(groups),
        notes=tuple(notes),
    )


def _arm_core_types(
    blocks: Sequence[Mapping[str, str]],
) -> Tuple[List[Tuple[int, int]], Dict[Tuple[int, int], List[int]]]:
    """The core types (implementer, part) in order of first appearance, and each type's CPU
    numbers (a block's position where it has no ``processor`` number)."""
    order: List[Tuple[int, int]] = []
    members: Dict[Tuple[int, int], List[int]] = {}
    for i, b in enumerate(blocks):
        key = (_int(b.get("CPU implementer")) or 0, _int(b.get("CPU part")) or 0)
        cpu = _int(b.get("processor"))
        if key not in members:
            order.append(key)
            members[key] = []
        members[key].append(cpu if cpu is not None else i)
    return order, members


def _arm_group(key: Tuple[int, int], cpus: List[int], several: bool, isa: _Isa, host: _Host) -> CoreGroup:
    """The core group of one arm64 core type ``key`` = (implementer, part) on CPUs ``cpus``;
    ``several``: the host has other core types too (a measured clock cannot be pinned to this one)."""
    impl, part = key
    entry = arm_uarch(impl, part)
    ident = f"CPU implementer {impl:#x} part {part:#05x}"
    cores = Figure(float(len(cpus)), "cores", f"/proc/cpuinfo: 'processor' entries with {ident} (no SMT)")
    clock = host.clock(cpus[0])
    if several and not clock.source.startswith("/sys"):
        clock = Figure.unknown(
            "Hz", f"no cpufreq max for this core type; a measurement cannot be pinned to it ({ident})"
        )
    if entry is None:
        pipes = Figure.unknown("pipes", f"unknown microarchitecture: {ident} is not in the uarch table")
    elif not isa.fma or not isa.vector_bits.known:
        pipes = Figure.unknown("pipes", "no FMA / vector width in the compiled kernels' ISA")
    else:
        pipes = entry.figure(int(isa.vector_bits.value))
    name = "all" if not several else (entry.name if entry else ident)
    return CoreGroup(name, entry.name if entry else "", cores, clock, pipes)


def _macos_spec(
    features: Optional[Mapping[str, object]],
    sysctl: Callable[[str], Optional[str]],
    measure_clock: Optional[Callable[[], float]],
) -> CpuSpec:
    """The CPU of a Mac from ``sysctl``: an Intel Mac or Apple Silicon (P and E core groups)."""
    brand = sysctl("machdep.cpu.brand_string") or "unknown CPU"
    logical = _logical_cpus(_int(sysctl("hw.logicalcpu")) or os.cpu_count() or 0, features)
    host = _Host("/nonexistent", measure_clock, sysctl)
    m = re.match(r"Apple (M\d+)", brand)
    if m is None:
        return _intel_mac_spec(brand, logical, features, sysctl, host)
    return _apple_silicon_spec(m.group(1), brand, logical, features, sysctl, host)


def _intel_mac_spec(
    brand: str,
    logical: int,
    features: Optional[Mapping[str, object]],
    sysctl: Callable[[str], Optional[str]],
    host: _Host,
) -> CpuSpec:
    """An Intel Mac: one group, clock from hw.cpufrequency_max; its uarch from the family and
    model sysctls."""
    arch = "x86_64"
    flags = ((sysctl("machdep.cpu.features") or "") + " " + (sysctl("machdep.cpu.leaf7_features") or "")).lower()
    vector_bits, fma, fp16 = _feature_figures(features, flags.replace(".", "_").split(), arch)
    ncores = _int(sysctl("hw.physicalcpu"))
    cores = (
        Figure(float(ncores), "cores", "sysctl hw.physicalcpu")
        if ncores
        else Figure.unknown("cores", "sysctl hw.physicalcpu unreadable")
    )
    clock = host.clock(0)
    family = _int(sysctl("machdep.cpu.family"))
    model_no = _int(sysctl("machdep.cpu.model"))
    uarch = x86_uarch("GenuineIntel", family, model_no)
    pipes = (
        uarch.figure(int(vector_bits.value))
        if uarch and fma and vector_bits.known
        else Figure.unknown("pipes", f"unknown microarchitecture: Intel family {family} model {model_no}")
    )
    return CpuSpec(
        model=brand,
        vendor="Intel",
        arch=arch,
        physical_cores=cores,
        logical_cpus=logical,
        clock_hz=clock,
        vector_bits=vector_bits,
        fma_pipes=pipes,
        fp16=fp16,
        core_groups=(CoreGroup("all", uarch.name if uarch else "", cores, clock, pipes),),
    )


def _apple_silicon_spec(
    chip: str,
    brand: str,
    logical: int,
    features: Optional[Mapping[str, object]],
    sysctl: Callable[[str], Optional[str]],
    host: _Host,
) -> CpuSpec:
    """An Apple Silicon Mac (``chip`` e.g. ``"M2"``): its P and E core groups from the
    hw.perflevel sysctls, the P cores' clock measured."""
    if features is not None and isinstance(features.get("vector_bits"), int):
        isa = _Isa(*_feature_figures(features, (), "arm64"))
    else:
        isa = _Isa(
            Figure(128.0, "bits", "NEON (128-bit): every Apple Silicon core (native extension unavailable)"),
            True,
            sysctl("hw.optional.arm.FEAT_FP16") == "1",
        )
    notes = [
        "Apple Silicon exposes no CPU frequency sysctl; the P-core clock is measured and assumes "
        "the measuring thread ran on a P core"
    ]
    groups = _apple_groups(chip, isa, sysctl, host)
    total = sum(g.cores.value for g in groups)
    phys = Figure(total, "cores", "sysctl hw.perflevel0/1.physicalcpu")
    return CpuSpec(
        model=brand,
        vendor="Apple",
        arch="arm64",
        physical_cores=phys,
        logical_cpus=logical,
        clock_hz=groups[0].clock_hz,
        vector_bits=isa.vector_bits,
        fma_pipes=groups[0].fma_pipes,
        fp16=isa.fp16,
        core_groups=tuple(groups),
        notes=tuple(notes),
    )


def _apple_groups(chip: str, isa: _Isa, sysctl: Callable[[str], Optional[str]], host: _Host) -> List[CoreGroup]:
    """The P and E core groups of Apple ``chip`` (those hw.perflevel0/1.physicalcpu report), or
    one group of hw.physicalcpu cores with unknown pipes where neither sysctl answers."""
    entries = apple_uarchs(chip)
    groups: List[CoreGroup] = []
    for level, name in ((0, "P"), (1, "E")):
        n = _int(sysctl(f"hw.perflevel{level}.physicalcpu"))
        if not n:
            continue
        cores = Figure(float(n), "cores", f"sysctl hw.perflevel{level}.physicalcpu")
        if level == 0:
            clock = host.clock(0)
        else:
            clock = Figure.unknown(
                "Hz", "no E-core frequency sysctl on Apple Silicon and a measurement cannot be pinned to E cores"
            )
        if entries is None:
            pipes = Figure.unknown("pipes", f"unknown microarchitecture: Apple {chip} is not in the uarch table")
        elif not isa.fma or not isa.vector_bits.known:
            pipes = Figure.unknown("pipes", "no FMA / vector width in the compiled kernels' ISA")
        else:
            pipes = entries[level].figure(int(isa.vector_bits.value))
        uname = entries[level].name if entries else ""
        groups.append(CoreGroup(name, uname, cores, clock, pipes))
    if not groups:
        n = _int(sysctl("hw.physicalcpu"))
        cores = Figure(float(n), "cores", "sysctl hw.physicalcpu") if n else Figure.unknown("cores", "no sysctl")
        groups.append(
            CoreGroup(
                "all", "", cores, host.clock(0), Figure.unknown("pipes", "core types unknown (no hw.perflevel sysctls)")
            )
        )
    return groups
