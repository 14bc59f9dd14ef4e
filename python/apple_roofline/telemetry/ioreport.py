"""Apple silicon without root: IOReport through ctypes (docs/design.md, "Clocks and power").

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

Channels read (names as macmon matches them): group ``"Energy Model"``: ``"GPU Energy"``, a
channel ending in ``"CPU Energy"`` (``"DIE_N_CPU Energy"`` on Ultra chips), channels starting with
``"ANE"`` — energy over the interval in the channel's unit label (mJ, uJ or nJ). Group ``"GPU Stats"``,
subgroup ``"GPU Performance States"``, channel ``"GPUPH"``: time in each GPU performance state
(``OFF``, then one state per DVFS step); the steps' frequencies are the IORegistry ``pmgr`` entry's
``voltage-states9`` property (pairs of little-endian uint32: frequency in Hz, voltage), whose first
entry belongs to the off state. The GPU's clock is the residency-weighted mean over the active
states, its activity the share of time not ``OFF``/``IDLE``/``DOWN``.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .base import Sampler, clock, one_line

__all__ = ["IOReportSampler", "Channel", "channel_values", "parse_dvfs", "IOReport", "LIBRARY", "CORE_FOUNDATION",
           "IOKIT", "ENERGY_UNITS"]

LIBRARY = "/usr/lib/libIOReport.dylib"
CORE_FOUNDATION = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
IOKIT = "/System/Library/Frameworks/IOKit.framework/IOKit"
#: Joules per unit of an "Energy Model" channel's unit label.
ENERGY_UNITS = {"mJ": 1e-3, "uJ": 1e-6, "nJ": 1e-9}
_INACTIVE = ("OFF", "IDLE", "DOWN")
_UTF8 = 0x08000100  # kCFStringEncodingUTF8


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


def parse_dvfs(data: bytes) -> List[float]:
    """A ``voltage-states`` property (pairs of little-endian uint32: Hz, voltage) as MHz."""
    n = len(data) // 8
    return [struct.unpack_from("<I", data, 8 * i)[0] / 1e6 for i in range(n)]


def gpu_clock(states: Sequence[Tuple[str, int]], freqs_mhz: Sequence[float]) -> Tuple[Optional[float], Optional[float]]:
    """(mean MHz over the active states weighted by residency, active share in %) of a ``GPUPH``
    channel; ``freqs_mhz`` the DVFS table whose first entry is the off state. The clock is None
    when the table does not match the states or the GPU was never active."""
    total = sum(r for _n, r in states)
    active = [(n, r) for n, r in states if n not in _INACTIVE]
    busy = sum(r for _n, r in active)
    pct = 100.0 * busy / total if total > 0 else None
    steps = list(freqs_mhz[1:])
    if busy <= 0 or len(steps) < len(active):
        return None, pct
    return sum(f * r for f, (_n, r) in zip(steps, active)) / busy, pct


def channel_values(channels: Sequence[Channel], seconds: float, target: str = "gpu",
                   gpu_freqs_mhz: Sequence[float] = ()) -> Dict[str, float]:
    """Values of one delta sample ``seconds`` long: ``gpu_power_w``, ``cpu_power_w``, ``ane_power_w``,
    ``power_w`` (the ``target``'s), ``gpu_clock_mhz`` (with a DVFS table) and ``gpu_active_pct``.
    Raises ValueError for an energy unit it does not know."""
    joules: Dict[str, float] = {}
    out: Dict[str, float] = {}
    for ch in channels:
        if ch.group == "Energy Model":
            part = ("gpu" if ch.name == "GPU Energy" else "cpu" if ch.name.endswith("CPU Energy")
                    else "ane" if ch.name.startswith("ANE") else "")
            if part:
                if ch.unit not in ENERGY_UNITS:
                    raise ValueError(f"unknown energy unit {ch.unit!r} of channel {ch.name!r}")
                joules[part] = joules.get(part, 0.0) + ch.value * ENERGY_UNITS[ch.unit]
        elif ch.group == "GPU Stats" and ch.subgroup == "GPU Performance States" and ch.name == "GPUPH":
            mhz, pct = gpu_clock(ch.states, gpu_freqs_mhz)
            if mhz is not None:
                out["gpu_clock_mhz"] = mhz
            if pct is not None:
                out["gpu_active_pct"] = pct
    if seconds > 0:
        for part, j in joules.items():
            out[f"{part}_power_w"] = j / seconds
        if f"{target}_power_w" in out:
            out["power_w"] = out[f"{target}_power_w"]
    return out


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
            "IOReportChannelGetGroup": (vp, [vp]), "IOReportChannelGetSubGroup": (vp, [vp]),
            "IOReportChannelGetChannelName": (vp, [vp]), "IOReportChannelGetUnitLabel": (vp, [vp]),
            "IOReportSimpleGetIntegerValue": (i64, [vp, i32]),
            "IOReportStateGetCount": (i32, [vp]), "IOReportStateGetNameForIndex": (vp, [vp, i32]),
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
            "CFArrayGetCount": (ctypes.c_long, [vp]), "CFArrayGetValueAtIndex": (vp, [vp, ctypes.c_long]),
            "CFDataGetLength": (ctypes.c_long, [vp]), "CFDataGetBytePtr": (vp, [vp]),
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

    def subscribe(self, groups: Sequence[Tuple[str, Optional[str]]]) -> Tuple[Any, Any]:
        """(subscription, channels) of ``groups`` ((group, subgroup or None) each). Raises
        RuntimeError when no group has channels or the subscription fails."""
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
        subscribed = ctypes.c_void_p()
        sub = self.lib.IOReportCreateSubscription(None, channels, ctypes.byref(subscribed), 0, None)
        if not sub:
            self.release(channels)
            raise RuntimeError("IOReportCreateSubscription failed")
        return sub, channels

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
                group = self.text(self.lib.IOReportChannelGetGroup(ch))
                sub = self.text(self.lib.IOReportChannelGetSubGroup(ch))
                name = self.text(self.lib.IOReportChannelGetChannelName(ch))
                if group == "Energy Model":
                    out.append(Channel(group, sub, name, self.text(self.lib.IOReportChannelGetUnitLabel(ch)).strip(),
                                       int(self.lib.IOReportSimpleGetIntegerValue(ch, 0))))
                elif group == "GPU Stats":
                    n = int(self.lib.IOReportStateGetCount(ch))
                    states = tuple((self.text(self.lib.IOReportStateGetNameForIndex(ch, k)) or f"S{k}",
                                    int(self.lib.IOReportStateGetResidency(ch, k))) for k in range(n))
                    out.append(Channel(group, sub, name, states=states))
            return out
        finally:
            self.release(d)

    def gpu_dvfs_mhz(self) -> List[float]:
        """The GPU's DVFS frequencies (MHz) from the IORegistry ``pmgr`` entry's ``voltage-states9``;
        empty when IOKit is not given or the entry has none."""
        io = self.iokit
        if io is None:
            return []
        vp, u32 = ctypes.c_void_p, ctypes.c_uint32
        for name, res, args in (("IOServiceMatching", vp, [ctypes.c_char_p]),
                                ("IOServiceGetMatchingServices", ctypes.c_int, [u32, vp, ctypes.POINTER(u32)]),
                                ("IOIteratorNext", u32, [u32]), ("IORegistryEntryGetName", ctypes.c_int, [u32, ctypes.c_char_p]),
                                ("IORegistryEntryCreateCFProperty", vp, [u32, vp, vp, u32]),
                                ("IOObjectRelease", ctypes.c_int, [u32])):
            fn = getattr(io, name)
            fn.restype, fn.argtypes = res, args
        it = u32(0)
        if io.IOServiceGetMatchingServices(0, io.IOServiceMatching(b"AppleARMIODevice"), ctypes.byref(it)) != 0:
            return []
        found: List[float] = []
        try:
            while True:
                entry = io.IOIteratorNext(it.value)
                if not entry:
                    break
                buf = ctypes.create_string_buffer(128)
                io.IORegistryEntryGetName(entry, buf)
                if buf.value == b"pmgr" and not found:
                    key = self.cfstr("voltage-states9")
                    data = io.IORegistryEntryCreateCFProperty(entry, key, None, 0)
                    self.release(key)
                    if data:
                        n = int(self.cf.CFDataGetLength(data))
                        found = parse_dvfs(ctypes.string_at(self.cf.CFDataGetBytePtr(data), n))
                        self.release(data)
                io.IOObjectRelease(entry)
        finally:
            io.IOObjectRelease(it.value)
        return found


def load() -> IOReport:
    """The libraries loaded (macOS only). Raises OSError where they are not."""
    return IOReport(ctypes.CDLL(LIBRARY), ctypes.CDLL(CORE_FOUNDATION), ctypes.CDLL(IOKIT))


class IOReportSampler(Sampler):
    """Samples an Apple-silicon Mac's CPU, GPU and Neural Engine power and GPU frequency residency
    through IOReport, without root. Each reading is the delta since the previous one (like an
    energy counter's), so power reaches back exactly one period. ``target`` ("gpu" or "cpu") is
    the part whose power becomes ``power_w``; ``library`` replaces the loaded :class:`IOReport`
    (tests)."""

    name = "ioreport"
    #: The groups subscribed.
    GROUPS: Tuple[Tuple[str, Optional[str]], ...] = (("Energy Model", None), ("GPU Stats", "GPU Performance States"))

    def __init__(self, target: str = "gpu", *, library: Optional[IOReport] = None, period_s: float = 0.05) -> None:
        super().__init__(period_s=period_s)
        self.target = target
        self.power_source = f"IOReport Energy Model ({target} energy deltas)"
        self._io = library
        self._sub: Any = None
        self._channels: Any = None
        self._last: Optional[Tuple[float, Any]] = None
        self._freqs: List[float] = []

    def open(self) -> str:
        """Load the libraries and subscribe; "" when subscribed, else why not."""
        if self._io is None:
            try:
                self._io = load()
            except (OSError, AttributeError) as exc:
                return f"IOReport is not available: {one_line(exc)}"
        try:
            self._sub, self._channels = self._io.subscribe(self.GROUPS)
        except Exception as exc:
            return f"IOReport cannot subscribe: {one_line(exc)}"
        try:
            self._freqs = self._io.gpu_dvfs_mhz()
        except Exception as exc:  # the clock is optional
            self._freqs = []
            self.notes.append(f"GPU frequency table not read: {one_line(exc)}")
        if not self._freqs:
            self.notes.append("GPU clock: no DVFS table (IORegistry pmgr voltage-states9); GPU activity only")
        return ""

    def read(self) -> Mapping[str, float]:
        """The values of the interval since the previous reading (nothing at the first)."""
        assert self._io is not None
        now, s = clock(), self._io.sample(self._sub, self._channels)
        last, self._last = self._last, (now, s)
        if last is None:
            return {}
        try:
            return channel_values(self._io.delta(last[1], s), now - last[0], self.target, self._freqs)
        finally:
            self._io.release(last[1])

    def close(self) -> None:
        """Release the samples and the subscription."""
        if self._io is None:
            return
        if self._last is not None:
            self._io.release(self._last[1])
            self._last = None
        self._io.release(self._channels)
        self._io.release(self._sub)
        self._channels = self._sub = None
