"""Apple silicon without root: IOReport through ctypes (docs/design/power.md, "Clocks and power").

``/usr/lib/libIOReport.dylib`` is a private library with no header; the prototypes below are the
ones open-source monitors declare and call (vladkens/macmon's ``src_lib/sources.rs``,
dehydratedpotato/socpowerbud):

- ``CFDictionaryRef IOReportCopyChannelsInGroup(CFStringRef group, CFStringRef subgroup, uint64_t,
  uint64_t, uint64_t)``; ``void IOReportMergeChannels(CFDictionaryRef, CFDictionaryRef, CFTypeRef)``;
- ``IOReportSubscriptionRef IOReportCreateSubscription(void *, CFMutableDictionaryRef desired,
  CFMutableDictionaryRef *subscribed, uint64_t, CFTypeRef)``;
- ``CFDictionaryRef IOReportCreateSamples(IOReportSubscriptionRef, CFMutableDictionaryRef, CFTypeRef)``
  and ``IOReportCreateSamplesDelta(CFDictionaryRef before, CFDictionaryRef after, CFTypeRef)``; the
  delta's ``"IOReportChannels"`` key holds a CFArray of channel dictionaries;
- per channel: ``IOReportChannelGetGroup``, ``...GetSubGroup``, ``...GetChannelName``,
  ``...GetUnitLabel`` (CFStringRef), ``int64_t IOReportSimpleGetIntegerValue(CFDictionaryRef, int32_t)``,
  ``int32_t IOReportStateGetCount``, ``CFStringRef IOReportStateGetNameForIndex(ch, int32_t)``,
  ``int64_t IOReportStateGetResidency(ch, int32_t)``.

Channels read (names as macmon matches them), and only those subscribed (:func:`wanted`): group
``"Energy Model"``: ``"GPU Energy"``, a channel ending in ``"CPU Energy"`` (``"DIE_N_CPU Energy"`` on
Ultra chips), channels starting with ``"ANE"`` — energy over the interval in the channel's unit
label (mJ, uJ or nJ; a channel in another unit is skipped with a note, the others still read).
Group ``"GPU Stats"``, subgroup ``"GPU Performance States"``, channel ``"GPUPH"``: time in each GPU
performance state; for the CPU (``target="cpu"``) group ``"CPU Stats"``, subgroup ``"CPU Complex
Performance States"``, one channel per cluster (``ECPU``, ``PCPU``, ``PCPU1``, the M5's ``MCPU0``).
The states' frequencies are the IORegistry ``pmgr`` entry's ``voltage-states*`` tables, each
validated and chosen per block as :mod:`.dvfs` says. A block's clock is the residency-weighted mean
over its active states, its activity the share of time not ``OFF``/``IDLE``/``DOWN``; the CPU's
clock is the clusters' clocks weighted by their busy time, each cluster's also kept.

A reading is stamped at the midpoint of ``IOReportCreateSamples`` (its latency would otherwise go
into the interval) and carries its interval (``interval_s``) and the busy seconds that weight its
clocks over a window (:mod:`.window`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .base import Sampler, clock, one_line
from .dvfs import (
    ACC_CLUSTERS,
    GPU_KEYS,
    active_states,
    choose_table,
    cpu_cluster_kind,
    cpu_keys,
    parse_dvfs,
    residency_clock,
)
from .window import CLUSTER_BUSY, CLUSTER_MHZ

__all__ = [
    "IOReportSampler",
    "Channel",
    "channel_values",
    "wanted",
    "IOReport",
    "LIBRARY",
    "CORE_FOUNDATION",
    "IOKIT",
    "ENERGY_UNITS",
    "GPU_SUBGROUP",
    "CPU_SUBGROUP",
]

LIBRARY = "/usr/lib/libIOReport.dylib"
CORE_FOUNDATION = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
IOKIT = "/System/Library/Frameworks/IOKit.framework/IOKit"
#: Joules per unit of an "Energy Model" channel's unit label.
ENERGY_UNITS = {"mJ": 1e-3, "uJ": 1e-6, "nJ": 1e-9}
#: The state channels' subgroups.
GPU_SUBGROUP, CPU_SUBGROUP = "GPU Performance States", "CPU Complex Performance States"
_UTF8 = 0x08000100  # kCFStringEncodingUTF8
#: The ``voltage-states<N>`` keys looked up run from N = 0 to this (exclusive).
PMGR_KEYS = 32


@dataclass(frozen=True)
class Channel:
    """One channel of a delta sample: names, unit label, the simple integer value (energy
    channels) and the state residencies ``(name, residency)`` (state channels)."""

    group: str
    subgroup: str
    name: str
    unit: str = ""
    value: int = 0
    states: Tuple[Tuple[str, int], ...] = ()


def energy_part(name: str) -> str:
    """ "gpu", "cpu", "ane" for an ``"Energy Model"`` channel read, "" for one that is not."""
    return (
        "gpu"
        if name == "GPU Energy"
        else "cpu"
        if name.endswith("CPU Energy")
        else "ane"
        if name.startswith("ANE")
        else ""
    )


def wanted(target: str) -> Callable[[str, str, str], bool]:
    """Whether a channel (group, subgroup, name) is read for ``target`` ("gpu" or "cpu"): the
    energies and the measured part's performance states (``GPUPH`` for the GPU, the clusters' for
    the CPU), so that a reading's clock is always the measured part's."""

    def keep(group: str, subgroup: str, name: str) -> bool:
        if group == "Energy Model":
            return bool(energy_part(name))
        if group == "GPU Stats":
            return target == "gpu" and subgroup == GPU_SUBGROUP and name == "GPUPH"
        return target == "cpu" and group == "CPU Stats" and subgroup == CPU_SUBGROUP and bool(cpu_cluster_kind(name))

    return keep


def channel_values(
    channels: Sequence[Channel],
    seconds: float,
    target: str = "gpu",
    gpu_steps_mhz: Sequence[float] = (),
    cpu_steps_mhz: Optional[Mapping[str, Sequence[float]]] = None,
) -> Tuple[Dict[str, float], List[str]]:
    """``(values, notes)`` of one delta sample ``seconds`` long. Values: ``interval_s``;
    ``gpu_power_w``, ``cpu_power_w``, ``ane_power_w`` (joules over ``seconds``), ``power_w`` (the
    ``target``'s); from ``GPUPH`` ``gpu_active_pct`` and, over the GPU's DVFS steps ``gpu_steps_mhz``
    (without the off entry), ``gpu_clock_mhz`` with ``gpu_busy_s``; per CPU cluster channel, over its
    steps in ``cpu_steps_mhz`` (channel name -> MHz), ``cpu_cluster_mhz.<name>`` with
    ``cpu_cluster_busy_s.<name>``, and over the busy clusters ``cpu_clock_mhz`` (their clocks
    weighted by busy time) with ``cpu_busy_s``. Notes: a channel skipped for an energy unit not in
    :data:`ENERGY_UNITS`, a state/step count mismatch (:func:`.dvfs.residency_clock`)."""
    joules: Dict[str, float] = {}
    out: Dict[str, float] = {"interval_s": seconds} if seconds > 0 else {}
    notes: List[str] = []
    cpu_steps = cpu_steps_mhz or {}
    cpu_cycles = cpu_busy = 0.0
    for ch in channels:
        if ch.group == "Energy Model":
            _add_energy(ch, joules, notes)
        elif ch.group == "GPU Stats" and ch.subgroup == GPU_SUBGROUP and ch.name == "GPUPH":
            _add_gpu(ch, gpu_steps_mhz, seconds, out, notes)
        elif ch.group == "CPU Stats" and ch.subgroup == CPU_SUBGROUP and ch.name in cpu_steps:
            busy = _add_cpu_cluster(ch, cpu_steps[ch.name], seconds, out, notes)
            if busy is not None:
                cpu_cycles += busy[0] * busy[1]
                cpu_busy += busy[1]
    if cpu_busy > 0:
        out["cpu_clock_mhz"], out["cpu_busy_s"] = cpu_cycles / cpu_busy, cpu_busy
    if seconds > 0:
        for part, j in joules.items():
            out[f"{part}_power_w"] = j / seconds
        if f"{target}_power_w" in out:
            out["power_w"] = out[f"{target}_power_w"]
    return out, notes


def _add_energy(ch: Channel, joules: Dict[str, float], notes: List[str]) -> None:
    """An ``Energy Model`` channel's joules added to its part's (:func:`energy_part`; none for
    another channel), or a note when its unit is not one of :data:`ENERGY_UNITS`."""
    part = energy_part(ch.name)
    if not part:
        return
    if ch.unit not in ENERGY_UNITS:
        notes.append(f"channel {ch.name!r} skipped: unknown energy unit {ch.unit!r}")
        return
    joules[part] = joules.get(part, 0.0) + ch.value * ENERGY_UNITS[ch.unit]


def _add_gpu(ch: Channel, steps_mhz: Sequence[float], seconds: float, out: Dict[str, float], notes: List[str]) -> None:
    """From the ``GPUPH`` channel over the GPU's DVFS steps: ``gpu_active_pct``, and
    ``gpu_clock_mhz`` with ``gpu_busy_s`` when the GPU was busy in a sample of some length."""
    gpu = residency_clock(ch.states, steps_mhz)
    if gpu.note:
        notes.append(f"GPU clock: {gpu.note}")
    if gpu.busy is not None:
        out["gpu_active_pct"] = 100.0 * gpu.busy
    if gpu.mhz is not None and gpu.busy and seconds > 0:
        out["gpu_clock_mhz"], out["gpu_busy_s"] = gpu.mhz, gpu.busy * seconds


def _add_cpu_cluster(
    ch: Channel, steps_mhz: Sequence[float], seconds: float, out: Dict[str, float], notes: List[str]
) -> Optional[Tuple[float, float]]:
    """From one CPU cluster's channel over its steps: ``cpu_cluster_mhz.<name>`` and
    ``cpu_cluster_busy_s.<name>``, returned as ``(MHz, busy seconds)``; None when the cluster was
    idle, its clock unknown or the sample has no length."""
    cpu = residency_clock(ch.states, steps_mhz)
    if cpu.note:
        notes.append(f"CPU cluster {ch.name} clock: {cpu.note}")
    if cpu.mhz is not None and cpu.busy and seconds > 0:
        busy_s = cpu.busy * seconds
        out[CLUSTER_MHZ + ch.name], out[CLUSTER_BUSY + ch.name] = cpu.mhz, busy_s
        return cpu.mhz, busy_s
    return None


class IOReport:
    """The ctypes layer over libIOReport, CoreFoundation and IOKit: ``lib``, ``cf`` and ``iokit`` are
    the loaded libraries (``ctypes.CDLL``, or fakes with the same functions in tests)."""

    def __init__(self, lib: Any, cf: Any, iokit: Any = None) -> None:
        self.lib, self.cf, self.iokit = lib, cf, iokit
        vp, u64, i32, i64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int32, ctypes.c_int64
        protos: Dict[str, Tuple[Any, List[Any]]] = {
            "IOReportCopyChannelsInGroup": (vp, [vp, vp, u64, u64, u64]),
            "IOReportMergeChannels": (None, [vp, vp, vp]),
            "IOReportCreateSubscription": (vp, [vp, vp, ctypes.POINTER(vp), u64, vp]),
            "IOReportCreateSamples": (vp, [vp, vp, vp]),
            "IOReportCreateSamplesDelta": (vp, [vp, vp, vp]),
            "IOReportChannelGetGroup": (vp, [vp]),
            "IOReportChannelGetSubGroup": (vp, [vp]),
            "IOReportChannelGetChannelName": (vp, [vp]),
            "IOReportChannelGetUnitLabel": (vp, [vp]),
            "IOReportSimpleGetIntegerValue": (i64, [vp, i32]),
            "IOReportStateGetCount": (i32, [vp]),
            "IOReportStateGetNameForIndex": (vp, [vp, i32]),
            "IOReportStateGetResidency": (i64, [vp, i32]),
        }
        for name, (res, args) in protos.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        cf_protos: Dict[str, Tuple[Any, List[Any]]] = {
            "CFStringCreateWithCString": (vp, [vp, ctypes.c_char_p, ctypes.c_uint32]),
            "CFStringGetCString": (ctypes.c_bool, [vp, ctypes.c_char_p, ctypes.c_long, ctypes.c_uint32]),
            "CFDictionaryGetValue": (vp, [vp, vp]),
            "CFDictionaryCreateMutableCopy": (vp, [vp, ctypes.c_long, vp]),
            "CFDictionarySetValue": (None, [vp, vp, vp]),
            "CFArrayGetCount": (ctypes.c_long, [vp]),
            "CFArrayGetValueAtIndex": (vp, [vp, ctypes.c_long]),
            "CFArrayCreateMutableCopy": (vp, [vp, ctypes.c_long, vp]),
            "CFArrayRemoveValueAtIndex": (None, [vp, ctypes.c_long]),
            "CFDataGetLength": (ctypes.c_long, [vp]),
            "CFDataGetBytePtr": (vp, [vp]),
            "CFRelease": (None, [vp]),
        }
        for name, (res, args) in cf_protos.items():
            fn = getattr(cf, name)
            fn.restype, fn.argtypes = res, args

    # -- CoreFoundation --------------------------------------------------------

    def cfstr(self, text: str) -> Any:
        """A new CFString (release it with :meth:`release`)."""
        return self.cf.CFStringCreateWithCString(None, text.encode(), _UTF8)

    def text(self, ref: Any) -> str:
        """A CFString's text; "" for NULL."""
        if not ref:
            return ""
        buf = ctypes.create_string_buffer(256)
        if not self.cf.CFStringGetCString(ref, buf, 256, _UTF8):
            return ""
        return buf.value.decode(errors="replace")

    def release(self, ref: Any) -> None:
        """CFRelease, NULL ignored."""
        if ref:
            self.cf.CFRelease(ref)

    # -- IOReport ----------------------------------------------------------------

    def names(self, ch: Any) -> Tuple[str, str, str]:
        """A channel's (group, subgroup, name)."""
        return (
            self.text(self.lib.IOReportChannelGetGroup(ch)),
            self.text(self.lib.IOReportChannelGetSubGroup(ch)),
            self.text(self.lib.IOReportChannelGetChannelName(ch)),
        )

    def subscribe(
        self, groups: Sequence[Tuple[str, Optional[str]]], keep: Optional[Callable[[str, str, str], bool]] = None
    ) -> Tuple[Any, Any, Any]:
        """(subscription, channels, subscribed) of ``groups`` ((group, subgroup or None) each), only
        the channels ``keep(group, subgroup, name)`` accepts (all without it); release all three.
        Raises RuntimeError when no channel is left or the subscription fails."""
        merged: Any = None
        for group, subgroup in groups:
            g, s = self.cfstr(group), self.cfstr(subgroup) if subgroup else None
            try:
                found = self.lib.IOReportCopyChannelsInGroup(g, s, 0, 0, 0)
            finally:
                self.release(g)
                self.release(s)
            if not found:
                continue
            if merged is None:
                merged = found
            else:
                self.lib.IOReportMergeChannels(merged, found, None)
                self.release(found)
        if merged is None:
            raise RuntimeError("IOReport has no channel in " + ", ".join(g for g, _s in groups))
        channels = self.cf.CFDictionaryCreateMutableCopy(None, 0, merged)
        self.release(merged)
        if keep is not None and not self._keep_only(channels, keep):
            self.release(channels)
            raise RuntimeError("IOReport has none of the channels read in " + ", ".join(g for g, _s in groups))
        subscribed = ctypes.c_void_p()
        sub = self.lib.IOReportCreateSubscription(None, channels, ctypes.byref(subscribed), 0, None)
        if not sub:
            self.release(channels)
            self.release(subscribed.value)
            raise RuntimeError("IOReportCreateSubscription failed")
        return sub, channels, subscribed.value

    def _keep_only(self, channels: Any, keep: Callable[[str, str, str], bool]) -> int:
        """Drop from the channel dictionary's ``"IOReportChannels"`` array the channels ``keep``
        rejects; the number left."""
        key = self.cfstr("IOReportChannels")
        try:
            array = self.cf.CFDictionaryGetValue(channels, key)
            if not array:
                return 0
            kept = self.cf.CFArrayCreateMutableCopy(None, 0, array)
            for i in reversed(range(int(self.cf.CFArrayGetCount(kept)))):
                if not keep(*self.names(self.cf.CFArrayGetValueAtIndex(kept, i))):
                    self.cf.CFArrayRemoveValueAtIndex(kept, i)
            left = int(self.cf.CFArrayGetCount(kept))
            self.cf.CFDictionarySetValue(channels, key, kept)  # the dictionary retains it
            self.release(kept)
            return left
        finally:
            self.release(key)

    def sample(self, sub: Any, channels: Any) -> Any:
        """One sample (a CFDictionary; release it). Raises RuntimeError on NULL."""
        s = self.lib.IOReportCreateSamples(sub, channels, None)
        if not s:
            raise RuntimeError("IOReportCreateSamples returned nothing")
        return s

    def delta(self, before: Any, after: Any) -> List[Channel]:
        """The channels of the delta between two samples."""
        d = self.lib.IOReportCreateSamplesDelta(before, after, None)
        if not d:
            raise RuntimeError("IOReportCreateSamplesDelta returned nothing")
        try:
            key = self.cfstr("IOReportChannels")
            try:
                array = self.cf.CFDictionaryGetValue(d, key)
            finally:
                self.release(key)
            out: List[Channel] = []
            for i in range(int(self.cf.CFArrayGetCount(array)) if array else 0):
                ch = self.cf.CFArrayGetValueAtIndex(array, i)
                group, sub, name = self.names(ch)
                if group == "Energy Model":
                    out.append(
                        Channel(
                            group,
                            sub,
                            name,
                            self.text(self.lib.IOReportChannelGetUnitLabel(ch)).strip(),
                            int(self.lib.IOReportSimpleGetIntegerValue(ch, 0)),
                        )
                    )
                elif group in ("GPU Stats", "CPU Stats"):
                    n = int(self.lib.IOReportStateGetCount(ch))
                    states = tuple(
                        (
                            self.text(self.lib.IOReportStateGetNameForIndex(ch, k)) or f"S{k}",
                            int(self.lib.IOReportStateGetResidency(ch, k)),
                        )
                        for k in range(n)
                    )
                    out.append(Channel(group, sub, name, states=states))
            return out
        finally:
            self.release(d)

    def pmgr_tables(self) -> Dict[str, bytes]:
        """The IORegistry ``pmgr`` entry's DVFS tables: key (``voltage-states<N>`` and
        ``voltage-states<N>-sram``, N < :data:`PMGR_KEYS`, and :data:`.dvfs.ACC_CLUSTERS`, which
        names the CPU clusters' keys) -> the property's bytes; empty when IOKit is not given or the
        entry has none."""
        io = self.iokit
        if io is None:
            return {}
        vp, u32 = ctypes.c_void_p, ctypes.c_uint32
        for name, res, args in (
            ("IOServiceMatching", vp, [ctypes.c_char_p]),
            ("IOServiceGetMatchingServices", ctypes.c_int, [u32, vp, ctypes.POINTER(u32)]),
            ("IOIteratorNext", u32, [u32]),
            ("IORegistryEntryGetName", ctypes.c_int, [u32, ctypes.c_char_p]),
            ("IORegistryEntryCreateCFProperty", vp, [u32, vp, vp, u32]),
            ("IOObjectRelease", ctypes.c_int, [u32]),
        ):
            fn = getattr(io, name)
            fn.restype, fn.argtypes = res, args
        it = u32(0)
        if io.IOServiceGetMatchingServices(0, io.IOServiceMatching(b"AppleARMIODevice"), ctypes.byref(it)) != 0:
            return {}
        found: Dict[str, bytes] = {}
        try:
            while True:
                entry = io.IOIteratorNext(it.value)
                if not entry:
                    break
                buf = ctypes.create_string_buffer(128)
                io.IORegistryEntryGetName(entry, buf)
                if buf.value == b"pmgr" and not found:
                    names = [f"voltage-states{n}{sram}" for n in range(PMGR_KEYS) for sram in ("", "-sram")]
                    for name in names + [ACC_CLUSTERS]:
                        key = self.cfstr(name)
                        data = io.IORegistryEntryCreateCFProperty(entry, key, None, 0)
                        self.release(key)
                        if data:
                            size = int(self.cf.CFDataGetLength(data))
                            found[name] = ctypes.string_at(self.cf.CFDataGetBytePtr(data), size)
                            self.release(data)
                io.IOObjectRelease(entry)
        finally:
            io.IOObjectRelease(it.value)
        return found


def load() -> IOReport:
    """The libraries loaded (macOS only). Raises OSError where they are not."""
    return IOReport(ctypes.CDLL(LIBRARY), ctypes.CDLL(CORE_FOUNDATION), ctypes.CDLL(IOKIT))


class IOReportSampler(Sampler):
    """Samples an Apple-silicon Mac's CPU, GPU and Neural Engine power and the measured part's
    frequency residencies (the GPU's, or the CPU clusters') through IOReport, without root. Each
    reading is the delta since the previous one (like an energy counter's), so power reaches back
    exactly one period. ``target`` ("gpu" or "cpu") is the part whose power becomes ``power_w`` and
    whose clock is read; ``library`` replaces the loaded :class:`IOReport` (tests)."""

    name = "ioreport"
    #: The groups subscribed (:meth:`groups`; of them only the channels :func:`wanted` reads).
    GROUPS: Tuple[Tuple[str, Optional[str]], ...] = (
        ("Energy Model", None),
        ("GPU Stats", GPU_SUBGROUP),
        ("CPU Stats", CPU_SUBGROUP),
    )

    def __init__(self, target: str = "gpu", *, library: Optional[IOReport] = None, period_s: float = 0.05) -> None:
        super().__init__(period_s=period_s)
        self.target = target
        self.power_source = f"IOReport Energy Model ({target} energy deltas)"
        self._io = library
        self._sub: Any = None
        self._channels: Any = None
        self._subscribed: Any = None
        self._last: Optional[Tuple[float, Any]] = None
        self._tables: Dict[str, bytes] = {}
        self._acc_clusters = b""  # the pmgr acc-clusters property (dvfs.acc_cluster_keys)
        #: The DVFS steps per state channel (name -> MHz), chosen at the channel's first delta.
        self._steps: Dict[str, List[float]] = {}

    def groups(self) -> Tuple[Tuple[str, Optional[str]], ...]:
        """The groups subscribed for this target: the energies and the measured part's states."""
        return self.GROUPS[::2] if self.target == "cpu" else self.GROUPS[:2]

    def open(self) -> str:
        """Load the libraries and subscribe; "" when subscribed, else why not."""
        if self._io is None:
            try:
                self._io = load()
            except (OSError, AttributeError) as exc:
                return f"IOReport is not available: {one_line(exc)}"
        try:
            self._sub, self._channels, self._subscribed = self._io.subscribe(self.groups(), wanted(self.target))
        except Exception as exc:
            return f"IOReport cannot subscribe: {one_line(exc)}"
        try:
            self._tables = dict(self._io.pmgr_tables())
        except Exception as exc:  # the clocks are optional
            self._tables = {}
            self.note(f"DVFS tables not read: {one_line(exc)}")
        self._acc_clusters = self._tables.pop(ACC_CLUSTERS, b"")
        if not self._tables:
            self.note("no DVFS table (IORegistry pmgr voltage-states*): activity only, no clocks")
        return ""

    def note(self, text: str) -> None:
        """Add a note once."""
        if text not in self.notes:
            self.notes.append(text)

    def steps_for(self, ch: Channel) -> List[float]:
        """The DVFS steps (MHz, one per active state) of a state channel, chosen from the pmgr
        tables at its first delta (:func:`.dvfs.choose_table`); the choice or the reason none fits
        is noted."""
        if ch.name in self._steps:
            return self._steps[ch.name]
        gpu = ch.group == "GPU Stats"
        n_active = len(active_states(ch.states))
        tables = {k: parse_dvfs(v, hz=True if gpu else None) for k, v in self._tables.items()}
        preferred = GPU_KEYS if gpu else cpu_keys(cpu_cluster_kind(ch.name), self._acc_clusters)
        key, freqs, why = choose_table(tables, preferred, n_active, gpu=gpu) if tables else ("", [], "")
        label = "GPU" if gpu else f"CPU cluster {ch.name}"
        if why:
            self.note(f"{label} clock: {why}")
        steps = freqs[1:] if gpu and key else freqs
        self._steps[ch.name] = steps
        return steps

    def read_stamped(self) -> Tuple[float, Mapping[str, float]]:
        """The values of the interval since the previous reading (nothing at the first), stamped at
        the midpoint of the sample's creation."""
        assert self._io is not None
        before = clock()
        s = self._io.sample(self._sub, self._channels)
        now = (before + clock()) / 2
        last, self._last = self._last, (now, s)
        if last is None:
            return now, {}
        try:
            channels = self._io.delta(last[1], s)
        finally:
            self._io.release(last[1])
        gpu: List[float] = []
        cpu: Dict[str, List[float]] = {}
        for ch in channels:
            if ch.group == "GPU Stats":
                gpu = self.steps_for(ch)
            elif ch.group == "CPU Stats":
                cpu[ch.name] = self.steps_for(ch)
        values, notes = channel_values(channels, now - last[0], self.target, gpu, cpu)
        for text in notes:
            self.note(text)
        return now, values

    def read(self) -> Mapping[str, float]:
        """The values of the interval since the previous reading (:meth:`read_stamped`)."""
        return self.read_stamped()[1]

    def close(self) -> None:
        """Release the last sample, the subscription and both channel dictionaries."""
        if self._io is None:
            return
        if self._last is not None:
            self._io.release(self._last[1])
            self._last = None
        for ref in (self._channels, self._subscribed, self._sub):
            self._io.release(ref)
        self._channels = self._subscribed = self._sub = None
