"""The documented levels of a device's memory hierarchy, each size with its source (docs/design/hierarchy.md,
"The memory hierarchy").

The ``hierarchy`` suite sweeps working sets across these levels and names the plateaus it finds by
them (:mod:`apple_roofline.suites.hierarchy.plateaus`). Sizes are given in the sweep's terms: the working
set that still fits the level when the suite's kernels sweep it.

* **CPU** (every thread sweeps its own slice): a level's capacity is the sum of its instances
  among the CPUs the thread pool runs on (the pool pins worker i to the i-th CPU of the process's
  affinity mask), so two cores' private 32 KiB L1d make 64 KiB and a shared L3 counts once, as
  ``lscpu`` reports them. Linux: ``/sys/devices/system/cpu/cpuN/cache/index*/{level,type,size,
  shared_cpu_list}``; macOS: ``sysctl hw.perflevel0.l1dcachesize``, ``hw.perflevel0.l2cachesize``
  and ``hw.perflevel0.cpusperl2``; the system-level cache, which sysctl does not report, from
  :data:`~.apple.GPU_CACHES` (see Metal).
* **CUDA** (each pass of the read kernel starts elsewhere, so every SM's L1 sees the whole working
  set): L1 is one SM's combined L1/shared-memory capacity, by compute capability (:data:`CUDA_L1_KIB`,
  NVIDIA's tuning guides; the L1 part is that minus the shared-memory carveout the driver chooses,
  so it is an upper bound); L2 is ``CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE``.
* **Metal**: L1 is one GPU core's 8 KiB data cache on Apple GPU families 7 and 8; L2 and the
  system-level cache (SLC) from :data:`~.apple.GPU_CACHES`. The SLC sits in front of the memory of
  the whole chip, so a CPU on Apple silicon lists it too (its chip named by ``sysctl
  machdep.cpu.brand_string``).
* **WebGPU** (``wgpu:N``: the WGSL read kernel rotates as CUDA's and Metal's do), which reports no
  cache sizes: the levels of the GPU the adapter names. An Apple chip (:func:`~.apple.lookup_chip`):
  L2 and SLC as on Metal, no L1 (documented per GPU family, which WebGPU does not report). An NVIDIA
  GPU (vendor 0x10de or "NVIDIA" in the name): L1 and L2 as on CUDA, from the compute capability and
  L2 size that NVIDIA's driver reports of the GPU of that name
  (:func:`~.nvidia_by_name.driver_facts`, asked once per process). Any other adapter: none, with a
  note.

Where DRAM starts (:func:`dram_start`): a sweep's working set counts as DRAM only where every cache
together could have raised its bandwidth by at most :data:`CACHE_INFLATION` (docs/design/hierarchy.md, "The
memory hierarchy": the bound, and the H200 curve that reaches it).

Shared (threadgroup) memory is measured by its own kernel, not swept; its size per SM (per
threadgroup on Metal; per workgroup on WebGPU, the adapter's ``maxComputeWorkgroupStorageSize``
limit: the most ``var<workgroup>`` memory one workgroup may declare) is listed with the levels.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..telemetry.choose import is_nvidia_adapter
from .apple import GPU_CACHES, GPU_L1_BYTES, GPU_L1_SOURCE, AppleChip, lookup_chip
from .nvidia_by_name import driver_facts

__all__ = [
    "CACHE_INFLATION",
    "CacheLevel",
    "CUDA_L1_KIB",
    "DRAM_LEVEL",
    "SHARED_LEVEL",
    "cache_levels",
    "cpu_cache_levels",
    "dram_start",
    "hierarchy_facts",
    "level_of",
    "slc_level",
]

#: The name of the shared (threadgroup) memory level in the list of levels.
SHARED_LEVEL = "Shared memory"
#: The name of the level beyond every cache.
DRAM_LEVEL = "DRAM"
#: The most (a fraction) that the caches may raise the bandwidth of a working set counted as DRAM:
#: :func:`dram_start` places DRAM's working sets so that they cannot raise it more.
CACHE_INFLATION = 0.05

_TUNING = "NVIDIA {guide} Tuning Guide, section '{section}'"
#: One SM's combined L1 data cache / shared memory, KiB, by compute capability, with its source.
CUDA_L1_KIB: Dict[str, Tuple[int, str]] = {
    "7.0": (128, _TUNING.format(guide="Volta", section="Unified Shared Memory/L1/Texture Cache") + ": 128 KB per SM"),
    "7.5": (96, _TUNING.format(guide="Turing", section="Unified Shared Memory/L1/Texture Cache") + ": 96 KB per SM"),
    "8.0": (
        192,
        _TUNING.format(guide="NVIDIA Ampere GPU Architecture", section="Unified Shared Memory/L1/Texture Cache")
        + ": 192 KB per SM on compute capability 8.0",
    ),
    "8.6": (
        128,
        _TUNING.format(guide="NVIDIA Ampere GPU Architecture", section="Unified Shared Memory/L1/Texture Cache")
        + ": 128 KB per SM on compute capability 8.6",
    ),
    "8.7": (
        192,
        _TUNING.format(guide="NVIDIA Ampere GPU Architecture", section="Unified Shared Memory/L1/Texture Cache")
        + ": 192 KB per SM on compute capability 8.7",
    ),
    "8.9": (128, _TUNING.format(guide="Ada", section="Unified Shared Memory/L1/Texture Cache") + ": 128 KB per SM"),
    "9.0": (256, _TUNING.format(guide="Hopper", section="Unified Shared Memory/L1/Texture Cache") + ": 256 KB per SM"),
    "10.0": (
        256,
        _TUNING.format(guide="Blackwell", section="Unified Shared Memory/L1/Texture Cache")
        + ": 256 KB per SM on compute capability 10.0",
    ),
    "12.0": (
        128,
        _TUNING.format(guide="Blackwell", section="Unified Shared Memory/L1/Texture Cache")
        + ": 128 KB per SM on compute capability 12.0",
    ),
}


@dataclass(frozen=True)
class CacheLevel:
    """One documented level: its name, its capacity in bytes in the sweep's terms (see the module
    docstring), and where that figure comes from."""

    name: str
    capacity: int
    source: str

    def to_dict(self) -> Dict[str, Any]:
        """``{"name", "bytes", "source"}``."""
        return {"name": self.name, "bytes": self.capacity, "source": self.source}


def level_of(working_set: int, levels: Sequence[CacheLevel]) -> Optional[CacheLevel]:
    """The smallest swept level (not :data:`SHARED_LEVEL`) of ``levels`` that holds ``working_set``
    bytes; None beyond them all (DRAM)."""
    fits = [lv for lv in levels if lv.name != SHARED_LEVEL and working_set <= lv.capacity]
    return min(fits, key=lambda lv: lv.capacity) if fits else None


def dram_start(cache_bytes: int, inflation: float = CACHE_INFLATION) -> int:
    """The smallest working set (bytes) whose bandwidth caches holding ``cache_bytes`` together can
    raise by at most ``inflation`` (a fraction > 0): ``ceil(cache_bytes × (1 + inflation) /
    inflation)``, 21× the caches at 5 %.

    Why: every pass of the sweep reads each word of its working set W once, so the only bytes a
    pass can find in a cache are those left there by earlier passes, at most the caches' C bytes:
    at least W − C bytes of each pass come from DRAM, and the measured rate is at most DRAM's × W /
    (W − C), whatever the replacement policy. 0 for ``cache_bytes`` 0 (no size known: nothing to
    keep clear of).

    Raises:
        ValueError: ``cache_bytes`` negative or ``inflation`` not above 0.
    """
    if cache_bytes < 0:
        raise ValueError(f"cache_bytes must be at least 0, not {cache_bytes!r}")
    if not inflation > 0:
        raise ValueError(f"inflation must be above 0, not {inflation!r}")
    return math.ceil(cache_bytes * (1.0 + inflation) / inflation)


def cache_levels(info: Mapping[str, Any]) -> Tuple[List[CacheLevel], List[str]]:
    """``(levels, notes)`` of the device ``info`` describes (a ``Backend.info()`` dict): the swept
    cache levels, smallest first, then :data:`SHARED_LEVEL` where the device has one; ``notes`` say
    which levels have no documented size and why. Never raises for missing keys."""
    backend = info.get("backend")
    if backend == "cpu":
        return cpu_cache_levels(int(info.get("threads", 0) or 0) or (os.cpu_count() or 1))
    if backend == "cuda":
        return _cuda_levels(info)
    if backend == "metal":
        return _metal_levels(info)
    if backend == "wgpu":
        return _wgpu_levels(info)
    return [], [f"no cache facts for the {backend} backend"]


def hierarchy_facts(info: Mapping[str, Any]) -> Dict[str, Any]:
    """:func:`cache_levels` as the run records it (``device.cache_levels``): ``{"levels": [{name,
    bytes, source}], "notes": [...]}``."""
    levels, notes = cache_levels(info)
    return {"levels": [lv.to_dict() for lv in levels], "notes": notes}


def _cuda_levels(info: Mapping[str, Any]) -> Tuple[List[CacheLevel], List[str]]:
    l2 = int(info.get("llc_bytes", 0) or 0)
    levels, notes = _nvidia_caches(
        str(info.get("compute_capability", "")),
        l2,
        "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE" if l2 else "the driver reports no L2 size",
    )
    shared = int(info.get("shared_memory_per_sm_bytes", 0) or 0)
    if shared:
        levels.append(
            CacheLevel(SHARED_LEVEL, shared, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR (per SM)")
        )
    return levels, notes


def _nvidia_caches(cc: str, l2: int, l2_source: str, cc_source: str = "") -> Tuple[List[CacheLevel], List[str]]:
    """An NVIDIA GPU's L1 by compute capability ``cc`` (:data:`CUDA_L1_KIB`; ``cc_source``: where ``cc``
    came from when not the device's own backend, or why it is not known) and its L2 of ``l2`` bytes
    from ``l2_source`` (where ``l2`` is 0: why there is none)."""
    levels: List[CacheLevel] = []
    notes: List[str] = []
    l1 = CUDA_L1_KIB.get(cc)
    if l1 is not None:
        also = f"; compute capability {cc}: {cc_source}" if cc_source else ""
        levels.append(CacheLevel("L1", l1[0] << 10, l1[1] + " (combined with shared memory: an upper bound)" + also))
    elif not cc and cc_source:
        notes.append(f"no documented L1 size: the compute capability is not known ({cc_source})")
    else:
        notes.append(f"no documented L1 size for compute capability {cc or 'unknown'}")
    if l2:
        levels.append(CacheLevel("L2", l2, l2_source))
    else:
        notes.append(l2_source)
    return levels, notes


def _metal_levels(info: Mapping[str, Any]) -> Tuple[List[CacheLevel], List[str]]:
    family = str(info.get("gpu_family", ""))
    levels, notes = _apple_caches(
        lookup_chip(info.get("name")) or lookup_chip(info.get("chip")),
        str(info.get("name", "this GPU")),
        family,
        f"no documented L1 size for GPU family {family or 'unknown'}",
    )
    tg = int(info.get("max_threadgroup_memory_bytes", 0) or 0)
    if tg:
        levels.append(CacheLevel(SHARED_LEVEL, tg, "MTLDevice.maxThreadgroupMemoryLength (per threadgroup)"))
    return levels, notes


def _apple_caches(
    chip: Optional[AppleChip], name: str, family: str, no_family: str
) -> Tuple[List[CacheLevel], List[str]]:
    """An Apple GPU's L1 (on GPU ``family`` Apple7 or Apple8; else the note ``no_family``), and its L2 and
    SLC from :data:`~.apple.GPU_CACHES` by ``chip`` (the GPU ``name`` in the note where it has none)."""
    levels: List[CacheLevel] = []
    notes: List[str] = []
    if family in ("Apple7", "Apple8"):
        levels.append(CacheLevel("L1", GPU_L1_BYTES, GPU_L1_SOURCE))
    else:
        notes.append(no_family)
    facts = GPU_CACHES.get(chip.name) if chip is not None else None
    if facts is None:
        notes.append(f"no documented L2 or system-level cache size for {name}")
    else:
        l2, slc, source = facts
        if l2:
            levels.append(CacheLevel("L2", l2, source))
        if slc:
            levels.append(CacheLevel("SLC", slc, source))
    return levels, notes


def _wgpu_nvidia_caches(name: str) -> Tuple[List[CacheLevel], List[str]]:
    """The L1 and L2 of the NVIDIA GPU named ``name`` behind a WebGPU adapter, from what NVIDIA's driver
    reports of the GPU of that name (:func:`~.nvidia_by_name.driver_facts`)."""
    f = driver_facts(name)
    if not f.compute_capability and not f.l2_bytes:
        return [], [f"no L1 or L2 size of the {name}: its driver's facts are not known ({f.capability_source})"]
    l2_source = f.l2_source if f.l2_bytes else f"no L2 size: {f.l2_source}"
    return _nvidia_caches(f.compute_capability, f.l2_bytes, l2_source, f.capability_source)


def _wgpu_levels(info: Mapping[str, Any]) -> Tuple[List[CacheLevel], List[str]]:
    """A WebGPU adapter's levels (the module docstring): those of the GPU its name and vendor say it is,
    then its workgroup storage as :data:`SHARED_LEVEL`."""
    name = str(info.get("name", "") or "")
    vendor = str(info.get("vendor_id", "") or "").lower()
    chip = lookup_chip(name)
    if chip is not None:
        levels, notes = _apple_caches(
            chip,
            name,
            "",
            f"no documented L1 size for the {chip.name} through WebGPU: the 8 KiB per core is documented "
            "for Apple GPU families 7 and 8, and neither WebGPU nor the chip table (theoretical/apple.py) "
            "gives the GPU family",
        )
    elif is_nvidia_adapter(info):
        levels, notes = _wgpu_nvidia_caches(name)
    else:
        adapter = f"{info.get('api') or 'WebGPU'} adapter {name or '?'} (vendor {info.get('vendor') or vendor or '?'})"
        levels, notes = [], [f"no documented cache sizes are known through WebGPU for the {adapter}"]
    limits = info.get("limits")
    shared = limits.get("max-compute-workgroup-storage-size", 0) if isinstance(limits, Mapping) else 0
    if isinstance(shared, int) and shared > 0:
        levels.append(CacheLevel(SHARED_LEVEL, shared, "WebGPU limit maxComputeWorkgroupStorageSize (per workgroup)"))
    return levels, notes


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


def _size(text: str) -> int:
    """sysfs cache sizes: ``"32K"``, ``"1024K"``, ``"32M"``."""
    t = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if t[-1:] in "KMG" else t
    return int(digits) * mult if digits.isdigit() else 0


def _pool_cpus(threads: int) -> List[int]:
    """The CPUs the CPU backend's pool runs on: the first ``threads`` of the affinity mask, in
    order (native/cpu/thread_pool.cpp)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = list(range(os.cpu_count() or 1))
    return cpus[: max(1, threads)]


def cpu_cache_levels(threads: int) -> Tuple[List[CacheLevel], List[str]]:
    """The host's L1d, L2 and L3 as ``threads`` workers of the CPU backend see them (the module
    docstring), and notes for what could not be read."""
    if os.path.isdir("/sys/devices/system/cpu/cpu0/cache"):
        return _linux_levels(_pool_cpus(threads))
    return _sysctl_levels(threads)


def _linux_levels(cpus: List[int]) -> Tuple[List[CacheLevel], List[str]]:
    found: Dict[str, Dict[str, int]] = {}  # level name -> shared_cpu_list -> size
    for cpu in cpus:
        base = f"/sys/devices/system/cpu/cpu{cpu}/cache"
        for index in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            d = os.path.join(base, index)
            kind, level = _read(os.path.join(d, "type")), _read(os.path.join(d, "level"))
            if kind == "Instruction" or not level.isdigit():
                continue
            name = "L1d" if level == "1" else f"L{level}"
            size = _size(_read(os.path.join(d, "size")))
            if size:
                found.setdefault(name, {})[_read(os.path.join(d, "shared_cpu_list")) or f"cpu{cpu}"] = size
    levels = []
    for name in sorted(found, key=lambda n: int(n[1])):
        inst = found[name]
        each = sorted(set(inst.values()))
        sizes = " + ".join(_kib(s) for s in inst.values())
        levels.append(
            CacheLevel(
                name,
                sum(inst.values()),
                (
                    "/sys/devices/system/cpu/cpuN/cache (Linux sysfs): "
                    f"{len(inst)} instance{'s' if len(inst) != 1 else ''} "
                    f"among the pool's {len(cpus)} CPU{'s' if len(cpus) != 1 else ''} ({sizes}"
                    + (")" if len(each) == 1 else ", sizes differ)")
                ),
            )
        )
    return levels, ([] if levels else ["sysfs lists no data caches"])


def _kib(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10} KiB"


def _sysctl_text(name: str) -> str:
    try:
        return subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _sysctl(name: str) -> Optional[int]:
    out = _sysctl_text(name)
    return int(out) if out.isdigit() else None


def _sysctl_levels(threads: int) -> Tuple[List[CacheLevel], List[str]]:
    l1, l2, per_l2 = (_sysctl(f"hw.perflevel0.{k}") for k in ("l1dcachesize", "l2cachesize", "cpusperl2"))
    levels: List[CacheLevel] = []
    if l1:
        levels.append(
            CacheLevel("L1d", l1 * threads, f"sysctl hw.perflevel0.l1dcachesize ({_kib(l1)}) × {threads} threads")
        )
    if l2:
        shared = -(-threads // per_l2) if per_l2 else 1
        levels.append(
            CacheLevel(
                "L2",
                l2 * shared,
                f"sysctl hw.perflevel0.l2cachesize ({_kib(l2)}) × {shared} "
                f"cluster{'s' if shared != 1 else ''} (hw.perflevel0.cpusperl2 = {per_l2})",
            )
        )
    slc = slc_level(_sysctl_text("machdep.cpu.brand_string"))
    if levels and slc is not None:
        levels.append(slc)
    return levels, ([] if levels else ["neither sysfs nor sysctl reports the caches"])


def slc_level(chip_name: str) -> Optional[CacheLevel]:
    """The system-level cache of the Apple chip named ``chip_name`` (``"Apple M1 Max"``) from
    :data:`~.apple.GPU_CACHES`, for its CPU: it sits in front of the chip's memory, the CPU's too.
    None for another chip or one without a documented SLC."""
    chip = lookup_chip(chip_name)
    facts = GPU_CACHES.get(chip.name) if chip is not None else None
    if facts is None or not facts[1]:
        return None
    return CacheLevel("SLC", facts[1], f"{facts[2]} (the system-level cache, shared by the CPU and the GPU)")
