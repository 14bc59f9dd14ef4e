"""The ``hierarchy`` suite: bandwidth at every level of the memory hierarchy (docs/design/hierarchy.md, "The
memory hierarchy"; the cache-aware roofline of Ilic, Pratas and Sousa, IEEE CAL 2014).

A working-set sweep of two kernels (shaders/cuda/hierarchy.cu documents them; the Metal twins
shaders/metal/hierarchy.metal, the CPU's native/cpu/hierarchy.cpp):

* ``read``: every lane sums the 16-byte words it reads (four uint32, wrapping), ``PASSES`` passes
  over a working set of n words per launch, and writes its sum: per-lane reads whose output is a small
  reduction, so no load can be dropped. On GPUs each pass starts STEP(n) words after the last
  (``ROTATE``), so every SM's (core's) L1 holds the whole working set; on the CPU each thread sweeps
  its own slice.
* ``rmw``: the same sum, and every word read is written back xor 0x5A5A5A5A (``PASSES`` even: the buffer
  ends every launch as it began, and the odd passes read the even passes' writes). Its lanes own
  their words, so it is measured only at working sets of at least a word per lane of a wave (on an
  H100, 3.2 MiB: below that, 256 lanes at 4 KiB ran at 114 GB/s, a measure of the launch, not of
  a cache).

and, on GPUs, ``shared``: each threadgroup (block) copies a 16 KiB tile into threadgroup (shared)
memory and sums it ``PASSES`` times, conflict-free: the shared-memory ceiling.

Working sets (``working_set_bytes``): the full sweep (``--suite hierarchy``) from 4 KiB to 8× the
largest documented cache (256 MiB when no size is known), :data:`STEPS_PER_OCTAVE` points per
octave (half as many with ``quick``), then DRAM's (:func:`dram_points`: far enough beyond every
cache that no cache can raise them by more than 5 %); the default run's form (``sweep=levels``) a
few points inside each documented level and DRAM's (:func:`level_points`). Every point records the level
that holds it by the documented sizes (:mod:`apple_roofline.theoretical.caches`), which name the
plateaus found on reading (:mod:`apple_roofline.suites.hierarchy.levels`).

Passes per launch: a power of two, at least 2, chosen so that a launch lasts about :data:`LAUNCH_S` at the
bandwidth the kernel reached at the previous working set (before the first point, at that of three probe
launches moving :data:`FIRST_LAUNCH_BYTES`): the timing is of the level, not of the first pass's misses or the
launch. Lanes (work items): a whole wave of the device where the backend reports one (CUDA), else the CPU's
threads, else 2048 per GPU core, else (a WebGPU adapter, which reports neither) :data:`UNKNOWN_CORES_LANES`.

Counting: no FLOPs (integer adds are not counted); bytes = 16 × (words read, and for ``rmw``
written, by all lanes over all passes) + 16 × lanes (the sums written): the bytes that pass through
the level. ``shared`` counts its threadgroup memory traffic: 16 × n × (``PASSES`` reads + 1 write).

Validation: the sum over lanes of the written sums (per uint32 component, mod 2^32) against NumPy's
sum of the words each pass reads (cyclic ranges of the tiled input pattern, so exact and
independent of which lane read which word); ``rmw`` also checks that the buffer holds its input
again. A lane that wrote nothing leaves its poison in the sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ...theoretical.caches import DRAM_LEVEL, SHARED_LEVEL, CacheLevel, cache_levels, dram_start, level_of
from ..base import PERIOD, Case, Constants, HostScratch, KernelDef, Suite, prebuild, tiled_within

__all__ = [
    "HierarchySuite",
    "HIERARCHY_KERNELS",
    "SHARED_KERNEL",
    "SWEEP_OPTION",
    "STEPS_PER_OCTAVE",
    "LAUNCH_S",
    "MIN_WORKING_SET",
    "WORD",
    "MASK",
    "TILE_WORDS",
    "SHARED_PASSES",
    "sweep_points",
    "dram_points",
    "level_points",
    "passes_for",
    "plan_lanes",
    "read_total",
    "rmw_total",
    "word_sums",
]

#: ``SuiteContext.options`` key: ``"full"`` (the whole sweep) or ``"levels"`` (a few points per
#: documented level: the default run's form). The runner sets ``"full"`` when the suite is named.
SWEEP_OPTION = "hierarchy_sweep"
#: Working-set points per octave of the full sweep (one step is a factor 2^(1/4) = 1.19).
STEPS_PER_OCTAVE = 4
#: The smallest working set swept, bytes.
MIN_WORKING_SET = 4096
#: Bytes per word: every kernel reads uint4 (four uint32).
WORD = 16
#: ``rmw``'s mask (hierarchy.cu's AR_MASK).
MASK = 0x5A5A5A5A
#: ``shared``'s tile per threadgroup, words (hierarchy.cu's AR_TILE: 16 KiB).
TILE_WORDS = 1024
#: ``shared``'s passes over its tile per launch.
SHARED_PASSES = 256
#: Seconds a launch should last (passes are chosen for it from the previous point's bandwidth).
LAUNCH_S = 1e-3
#: Bytes a probe launch moves before a kernel's first point, whose rate then sets that point's passes
#: (:meth:`HierarchySuite.record` sets the later ones'). Without the probe, 64 MiB launches at an
#: H100's L1 rate lasted 2 µs and its first point read at half the L1's rate; 4 GiB launches on the
#: 2-core development VM lasted 10 ms, and its best samples fell to a third of the 1-ms launches'.
FIRST_LAUNCH_BYTES = 64 << 20
#: Largest power-of-two pass count (the CPU backend's limit on ``PASSES`` is 2^24).
MAX_PASSES = 1 << 20
#: Working sets are whole multiples of this many words (256 bytes), and of it × the lanes where that
#: is fine enough (:func:`plan_lanes`): the CPU kernel then runs whole blocks of its four vector
#: accumulators (4 × 64 bytes) with no word-by-word tail.
LANE_ROUND = 16
#: Threads per block / threadgroup of every hierarchy kernel on GPUs (TILE_WORDS is a multiple).
BLOCK = 256
#: The WebGPU kernels are built without naga's runtime checks (docs/design/backends.md, "The WebGPU
#: backend"): every index is below the working set's words, which the suite allocates, and every loop ends.
WGPU_TRUSTED = {"AR_RUNTIME_CHECKS": 0}
#: Lanes where the device reports neither a wave nor its cores (a WebGPU GPU adapter: WebGPU says
#: neither): about one wave of the largest GPUs (an H200 holds 132 SMs × 2048 = 270,336 threads).
UNKNOWN_CORES_LANES = 1 << 18
_U32 = (1 << 32) - 1


@dataclass(frozen=True)
class HierKernel:
    """One kernel of the suite: its name, entry point and whether it writes the words it reads."""

    name: str
    entry: str
    rmw: bool = False
    shared: bool = False

    def kernel_def(self) -> KernelDef:
        gpu = {"BLOCK": BLOCK}
        if self.shared:
            return KernelDef(
                "hierarchy",
                self.name,
                "u32",
                {
                    "cuda": ("hierarchy.cu", self.entry),
                    "metal": ("hierarchy.metal", self.entry),
                    "wgpu": ("hierarchy_shared.wgsl", self.entry),
                },
                constants={"cuda": gpu, "metal": gpu, "wgpu": {**gpu, **WGPU_TRUSTED}},
                ceiling_class=f"{SHARED_LEVEL} bandwidth",
                ceiling_kind="bandwidth",
            )
        # ROTATE (hier_read only): every GPU core's L1 then sees the whole working set; the CPU's
        # threads each keep their own slice (it has no ROTATE: 0)
        extra = {} if self.rmw else {"ROTATE": 1}
        return KernelDef(
            "hierarchy",
            self.name,
            "u32",
            {
                "cpu": ("hierarchy.cpp", self.entry),
                "cuda": ("hierarchy.cu", self.entry),
                "metal": ("hierarchy.metal", self.entry),
                "wgpu": ("hierarchy_rmw.wgsl" if self.rmw else "hierarchy.wgsl", self.entry),
            },
            constants={"cuda": {**gpu, **extra}, "metal": {**gpu, **extra}, "wgpu": {**gpu, **extra, **WGPU_TRUSTED}},
        )


#: The working-set sweep's kernels, in the order each point measures them.
HIERARCHY_KERNELS: Tuple[HierKernel, ...] = (HierKernel("read", "hier_read"), HierKernel("rmw", "hier_rmw", rmw=True))
#: The shared (threadgroup) memory kernel.
SHARED_KERNEL = HierKernel("shared", "hier_shared", shared=True)


# ---- the working sets ------------------------------------------------------------------------------


def sweep_points(top: int, steps_per_octave: int = STEPS_PER_OCTAVE) -> List[int]:
    """Working sets in bytes from :data:`MIN_WORKING_SET` to ``top`` (inclusive where it falls on
    the grid), ``steps_per_octave`` per factor of two, each a whole number of words."""
    out: List[int] = []
    k = 0
    while True:
        ws = int(round(MIN_WORKING_SET * 2.0 ** (k / steps_per_octave))) // WORD * WORD
        if ws > top:
            return out
        if not out or ws > out[-1]:
            out.append(ws)
        k += 1


def dram_points(levels: Sequence[CacheLevel], quick: bool = False, limit: Optional[int] = None) -> List[int]:
    """DRAM's working sets: W0 = :func:`~apple_roofline.theoretical.caches.dram_start` of the swept
    levels' total capacity (where the caches together can raise a read by at most 5 %) and 2 × W0
    (``quick``: W0 alone); where 2 × W0 (``quick``: W0) exceeds ``limit`` bytes, limit / 2 and limit
    instead, so that the reading can test whether they agree an octave apart. With no documented
    level, 256 MiB and 512 MiB (``quick``: 256 MiB). Bytes, ascending, whole words."""
    caps = [lv.capacity for lv in levels if lv.name != SHARED_LEVEL]
    w0 = dram_start(sum(caps)) if caps else 256 << 20
    out = [w0] if quick else [w0, 2 * w0]
    if limit is not None and out[-1] > limit:
        out = [limit // 2, limit]
    return sorted({max(MIN_WORKING_SET, p) // WORD * WORD for p in out})


def level_points(levels: Sequence[CacheLevel], quick: bool = False, limit: Optional[int] = None) -> List[int]:
    """The default run's working sets: for each documented level of capacity C above the previous
    one's P, C/4 and C/2 (only C/2 when C/4 is not above 2P, or with ``quick``); then DRAM's
    (:func:`dram_points`, at most ``limit`` bytes). Bytes, ascending, whole words."""
    out: List[int] = []
    prev = MIN_WORKING_SET // 2
    caps = sorted(lv.capacity for lv in levels if lv.name != SHARED_LEVEL)
    for c in caps:
        pts = [c // 2] if quick or c // 4 <= 2 * prev else [c // 4, c // 2]
        out += [max(MIN_WORKING_SET, p) // WORD * WORD for p in pts]
        prev = c
    return sorted(set(out + dram_points(levels, quick, limit)))


def passes_for(pass_bytes: int, gbps: Optional[float], rmw: bool) -> int:
    """Passes per launch: the smallest power of two (at least 2) with which a launch moving
    ``pass_bytes`` per pass lasts :data:`LAUNCH_S` at ``gbps`` (or moves :data:`FIRST_LAUNCH_BYTES`
    when ``gbps`` is None), at most :data:`MAX_PASSES`. ``rmw`` counts its writes too."""
    per = pass_bytes * (2 if rmw else 1)
    want = LAUNCH_S * gbps * 1e9 if gbps else FIRST_LAUNCH_BYTES
    r = max(2, math.ceil(want / max(1, per)))
    return min(MAX_PASSES, 1 << (r - 1).bit_length())


def _step(n: int) -> int:
    """hierarchy.cu's STEP(n) = floor(n × 40503 / 2^16) mod n (about 0.618 n)."""
    return (n * 40503 >> 16) % n


def plan_lanes(words: int, wave: int, rmw: bool) -> Tuple[int, int, int]:
    """``(n, lanes, E)`` for a working set of about ``words`` 16-byte words and a wave of ``wave``
    lanes: n is a multiple of LANE_ROUND words (the CPU kernel's whole vector blocks), and of
    LANE_ROUND × lanes where that step is at most n / 8 (the CPU's few lanes: whole slices, no
    wrap); E = ceil(n / lanes) words per lane per pass. ``read`` runs the whole wave (lanes share
    words when n < wave); ``rmw``, whose lanes must own their words, runs n / E lanes of E words,
    E = ceil(n / wave)."""
    n = max(LANE_ROUND, words // LANE_ROUND * LANE_ROUND)
    if LANE_ROUND * wave <= n // 8:
        n = n // (LANE_ROUND * wave) * (LANE_ROUND * wave)
    if not rmw:
        return n, wave, -(-n // wave)
    e = -(-n // wave)
    lanes = n // e
    return lanes * e, lanes, e


# ---- the references -------------------------------------------------------------------------------


class WordSums:
    """Per-component sums of ranges of words of the tiled input pattern (word w is the uint32
    pattern's elements 4w … 4w+3, modulo its period), optionally xor :data:`MASK`, as uint64
    (reduce mod 2^32 when comparing)."""

    def __init__(self, pattern_u32: np.ndarray, xor: int = 0) -> None:
        p = pattern_u32.size
        words = (np.resize(pattern_u32, 4 * p).reshape(p, 4) ^ np.uint32(xor)).astype(np.uint64)
        self.period = p  # words repeat every p words (4p elements)
        self.prefix = np.zeros((p + 1, 4), np.uint64)
        np.cumsum(words, axis=0, out=self.prefix[1:])
        self.total = self.prefix[-1]

    def upto(self, x: np.ndarray) -> np.ndarray:
        """Sums of words [0, x) for each x (an int64 array): shape (len(x), 4), uint64 mod 2^64."""
        q, r = np.divmod(np.asarray(x, np.int64), self.period)
        out: np.ndarray = q.astype(np.uint64)[:, None] * self.total[None, :] + self.prefix[r]
        return out

    def cyclic(self, starts: np.ndarray, length: int, n: int) -> np.ndarray:
        """Sums of the cyclic ranges [s, s + length) mod n of the first n words, for each start s
        (0 <= s < n); shape (len(starts), 4)."""
        starts = np.asarray(starts, np.int64)
        whole = self.upto(np.array([n]))[0]
        full, part = divmod(int(length), n)
        out = np.uint64(full) * whole[None, :] + np.zeros((starts.size, 4), np.uint64)
        end = starts + part
        inside = end <= n
        a = self.upto(starts)
        out += np.where(
            inside[:, None], self.upto(np.minimum(end, n)) - a, whole[None, :] - a + self.upto(end - n * (~inside))
        )
        result: np.ndarray = out
        return result


def word_sums(pattern_u32: np.ndarray, xor: int = 0) -> WordSums:
    """The :class:`WordSums` of a uint32 input pattern."""
    return WordSums(pattern_u32, xor)


def read_total(sums: WordSums, n: int, lanes: int, passes: int, rotate: bool) -> np.ndarray:
    """The sum over lanes of ``read``'s output, per component mod 2^32 (uint32[4]): pass r reads the
    lanes × E words (E = ceil(n / lanes)) starting at r × STEP(n) mod n (0 without rotation),
    cyclically."""
    e = -(-n // lanes)
    step = _step(n) if rotate and n > 1 else 0
    if step == 0:
        per = sums.cyclic(np.array([0]), lanes * e, n)[0] * np.uint64(passes)
    else:
        starts = (np.arange(passes, dtype=np.int64) * step) % n
        per = sums.cyclic(starts, lanes * e, n).sum(axis=0, dtype=np.uint64)
    total: np.ndarray = (per & np.uint64(_U32)).astype(np.uint32)
    return total


def rmw_total(plain: WordSums, masked: WordSums, n: int, passes: int) -> np.ndarray:
    """The sum over lanes of ``rmw``'s output (uint32[4]): the even passes read the n words, the odd
    ones the words xor MASK (``passes`` even)."""
    both = plain.upto(np.array([n]))[0] + masked.upto(np.array([n]))[0]
    total: np.ndarray = ((both * np.uint64(passes // 2)) & np.uint64(_U32)).astype(np.uint32)
    return total


# ---- the suite ---------------------------------------------------------------------------------------


def _fill_u32(buf: Any, pat: np.ndarray, count: int, begin: int = 0) -> None:
    """Write the uint32 pattern tiled to ``count`` elements, a chunk of whole periods at a time,
    from the chunk that holds element ``begin`` on (what lies before it is already written)."""
    step = pat.size * 1024
    block = np.resize(pat, min(step, count))
    for start in range(begin // step * step, count, step):
        k = min(step, count - start)
        buf.write(block[:k], start * 4)


def _read_u32(buf: Any, count: int, scratch: HostScratch) -> np.ndarray:
    """The first ``count`` uint32 of ``buf`` (a view where host-visible, else a copy into ``scratch``)."""
    try:  # the backends know int32, not uint32: the same bits
        out: np.ndarray = buf.view("int32")[:count].view(np.uint32)
    except ValueError:
        out = scratch.array("int32", count).view(np.uint32)
        buf.read_into(out)
    return out


@dataclass(frozen=True)
class _Input:
    """The uint32 input pattern every case tiles over its input buffer, and its word sums (plain and
    xor :data:`MASK`), which the references are made of."""

    pattern: np.ndarray
    plain: WordSums
    masked: WordSums


#: What a lane's output holds before the launch: any lane that writes nothing leaves it in the sum.
POISON = 0xA5A5A5A5


class HierarchySuite(Suite):
    """The working-set sweep (:data:`HIERARCHY_KERNELS` at every working set) and the shared-memory
    kernel (module docstring)."""

    name = "hierarchy"
    adaptive = True  # a point's passes follow from the bandwidth of the point before

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.levels, self.notes = cache_levels(ctx.info)
        self.form = str(ctx.options.get(SWEEP_OPTION, "levels"))
        caches = [lv for lv in self.levels if lv.name != SHARED_LEVEL]
        mem = int(ctx.info.get("memory_bytes", 0) or 0)
        limit = mem // 8 if mem else 1 << 62  # two buffers of the largest working set, well inside memory
        most = int(ctx.info.get("max_buffer_bytes", 0) or 0)  # a WebGPU adapter's largest binding
        limit = min(limit, most) if most else limit
        if self.form == "full":
            # the curve to 8× the largest level, then DRAM's points (the transition between is
            # long and slow on a CPU: 1 to 4 s a point on the 2-core development machine); both of
            # DRAM's points even with --quick, since a plateau of the sweep needs two (an H200's
            # quick sweep, tree 3fb74b1, found no DRAM level from W0 alone)
            top = min(8 * max((lv.capacity for lv in caches), default=32 << 20), limit)
            self.points = sorted(
                set(
                    sweep_points(top, STEPS_PER_OCTAVE // 2 if ctx.quick else STEPS_PER_OCTAVE)
                    + dram_points(caches, False, limit)
                )
            )
        else:
            self.points = [p for p in level_points(caches, ctx.quick, limit) if p <= limit] or [MIN_WORKING_SET]
        self.gbps: Dict[str, float] = {}

    def total(self) -> int:
        """At most every kernel at every working set (read-modify-write skips those under a wave),
        and the shared-memory kernel where this backend has one."""
        return len(self.points) * len(HIERARCHY_KERNELS) + (self.source(SHARED_KERNEL.kernel_def()) is not None)

    def record(self, measurement: Any) -> None:
        super().record(measurement)
        if measurement.valid and measurement.gbps > 0:
            self.gbps[measurement.kernel] = measurement.gbps

    def _lanes(self, src: Tuple[str, str], consts: Constants) -> int:
        """A whole wave of the device where the backend reports one, else the CPU's threads, else
        2048 per GPU core (a multiple of BLOCK), else :data:`UNKNOWN_CORES_LANES`."""
        from ..waves import wave_items

        wave = wave_items(self.ctx.backend, src, consts)
        if wave:
            return wave
        threads = int(self.ctx.info.get("threads", 0) or 0)
        if threads:
            return threads
        units = int(self.ctx.info.get("compute_units", 0) or 0)
        return units * 2048 if units else UNKNOWN_CORES_LANES

    def cases(self) -> Iterator[Case]:
        backend = self.ctx.backend
        rng = np.random.default_rng(24)
        pat = rng.integers(0, 1 << 32, PERIOD, dtype=np.uint64).astype(np.uint32)
        inp = _Input(pat, word_sums(pat), word_sums(pat, MASK))
        scratch = self.ctx.scratch
        defs = [(hk, hk.kernel_def()) for hk in HIERARCHY_KERNELS]
        kernels = [(hk, kd, src) for hk, kd in defs for src in [self.source(kd)] if src is not None]
        if kernels:
            prebuild(
                backend,
                [(*src, {**self.constants(kd), "PASSES": 1 << k}) for _hk, kd, src in kernels for k in range(1, 15)],
            )
            lanes = {hk.name: self._lanes(src, {**self.constants(kd), "PASSES": 2}) for hk, kd, src in kernels}
            top_words = max(self.points) // WORD
            bufs = {hk.name: backend.alloc(top_words * WORD) for hk, _kd, _src in kernels}
            if any(hk.rmw for hk, _kd, _src in kernels):
                scratch.reserve(top_words * WORD)  # the largest buffer read back, faulted in during the caches' points
            outs = {hk.name: backend.alloc(max(lanes.values()) * WORD) for hk, _kd, _src in kernels}
            filled = {hk.name: 0 for hk, _kd, _src in kernels}
            for ws in self.points:
                for hk, kd, src in kernels:
                    if hk.rmw and ws // WORD < lanes[hk.name]:
                        continue  # its lanes own their words: fewer words than a wave would idle most of the device
                    # written as the sweep reaches it: DRAM's working sets (1.4 GiB on the 2-core
                    # development machine) cost their case, not the caches' ones before it
                    words = min(top_words, ws // WORD + LANE_ROUND)
                    if filled[hk.name] < 4 * words:
                        _fill_u32(bufs[hk.name], pat, 4 * words, filled[hk.name])
                        filled[hk.name] = 4 * words
                    yield self._sweep_case(hk, kd, src, ws, lanes[hk.name], (bufs[hk.name], outs[hk.name]), inp)
        shared = SHARED_KERNEL.kernel_def()
        shared_src = self.source(shared)
        if shared_src is not None:
            yield self._shared_case(shared, shared_src, inp)

    def _sweep_case(
        self,
        hk: HierKernel,
        kd: KernelDef,
        src: Tuple[str, str],
        ws: int,
        wave: int,
        bufs: Tuple[Any, Any],
        inp: _Input,
    ) -> Case:
        """The case of ``hk`` at working set ``ws`` bytes over a wave of ``wave`` lanes, on the input
        buffer and the lanes' output buffer ``bufs`` (the input holding ``inp``'s pattern); its
        passes from the rate of the kernel's previous point (a probe's before its first)."""
        buf, out = bufs
        pat, plain, masked = inp.pattern, inp.plain, inp.masked
        scratch = self.ctx.scratch
        n, lanes, e = plan_lanes(ws // WORD, wave, hk.rmw)
        consts = self.constants(kd)
        if hk.name not in self.gbps:
            self.gbps[hk.name] = self._probe(kd, src, consts, [buf, out, n], lanes, lanes * e * WORD, hk.rmw)
        passes = passes_for(lanes * e * WORD, self.gbps.get(hk.name), hk.rmw)
        consts["PASSES"] = passes
        rotate = bool(consts.get("ROTATE", 0))
        home = level_of(n * WORD, self.levels)
        poison = np.full(4 * lanes, POISON, np.uint32)

        def reset() -> None:
            out.write(poison, 0)
            if hk.rmw:
                _fill_u32(buf, pat, 4 * n)

        def check() -> Tuple[bool, str]:
            got = _read_u32(out, 4 * lanes, scratch).reshape(lanes, 4).astype(np.uint64).sum(axis=0)
            got32 = (got & np.uint64(_U32)).astype(np.uint32)
            want = rmw_total(plain, masked, n, passes) if hk.rmw else read_total(plain, n, lanes, passes, rotate)
            if not np.array_equal(got32, want):
                return False, (
                    f"the lanes' sums add up to {got32.tolist()}, the NumPy reference to {want.tolist()} "
                    f"(uint32 per component; {lanes} lanes, {passes} passes over {n} words)"
                )
            if hk.rmw:
                ok, msg = _restored(buf, pat, 4 * n, scratch)
                if not ok:
                    reset()
                    return False, msg
            return True, (
                f"the {lanes} lanes' sums match the NumPy reference ({passes} passes over {n} words"
                + (", and the buffer holds its input again)" if hk.rmw else ")")
            )

        reset_out = partial(out.write, poison, 0)
        reset_out()
        read_words = passes * lanes * e * (2 if hk.rmw else 1)
        return Case(
            kernel=kd,
            params={
                "working_set_bytes": n * WORD,
                "level": home.name if home else DRAM_LEVEL,
                "level_bytes": home.capacity if home else 0,
                "passes": passes,
                "lanes": lanes,
                "sweep": self.form,
            },
            work_items=lanes,
            flops=0,
            bytes=WORD * (read_words + lanes),
            args=[buf, out, n],
            make_kernel=partial(self.ctx.backend.compile, src[0], src[1], dict(consts)),
            check=check,
            reset=reset,
        )

    def _probe(
        self,
        kd: KernelDef,
        src: Tuple[str, str],
        consts: Constants,
        args: List[Any],
        lanes: int,
        pass_bytes: int,
        rmw: bool,
    ) -> float:
        """GB/s of three launches (the shortest) moving about :data:`FIRST_LAUNCH_BYTES`: what sets
        the passes of a kernel's first point (no measurement; the point is measured as every other).
        0 where the kernel cannot be built (the runner meets the error again and records it)."""
        from ..._native import _core

        passes = passes_for(pass_bytes, None, rmw)
        try:
            kernel = self.ctx.backend.compile(src[0], src[1], {**consts, "PASSES": passes})
            seconds = min(kernel.time(args, lanes, 1, 3, clock=False))
        except (_core.BackendError, ValueError):
            return 0.0
        return pass_bytes * passes * (2 if rmw else 1) / seconds / 1e9 if seconds > 0 else 0.0

    def _shared_case(self, kd: KernelDef, src: Tuple[str, str], inp: _Input) -> Case:
        """The shared-memory kernel's case: four waves of whole blocks, each summing its tile of
        ``inp``'s pattern :data:`SHARED_PASSES` times."""
        pat, plain, scratch = inp.pattern, inp.plain, self.ctx.scratch
        consts = {**self.constants(kd), "PASSES": SHARED_PASSES}
        block = int(consts.get("BLOCK", BLOCK))
        wave = self._lanes(src, consts)
        lanes = max(block, -(-4 * wave // block) * block)  # four waves of whole blocks
        n = lanes // block * TILE_WORDS
        buf = self.ctx.backend.alloc(n * WORD)
        out = self.ctx.backend.alloc(lanes * WORD)
        _fill_u32(buf, pat, 4 * n)
        poison = np.full(4 * lanes, POISON, np.uint32)
        out.write(poison, 0)

        def check() -> Tuple[bool, str]:
            got = _read_u32(out, 4 * lanes, scratch).reshape(lanes, 4).astype(np.uint64).sum(axis=0)
            got32 = (got & np.uint64(_U32)).astype(np.uint32)
            want = ((plain.upto(np.array([n]))[0] * np.uint64(SHARED_PASSES)) & np.uint64(_U32)).astype(np.uint32)
            if not np.array_equal(got32, want):
                return False, f"the lanes' sums add up to {got32.tolist()}, the NumPy reference to {want.tolist()}"
            return (
                True,
                f"the {lanes} lanes' sums match the NumPy reference "
                f"({SHARED_PASSES} passes over {TILE_WORDS}-word tiles)",
            )

        return Case(
            kernel=kd,
            params={
                "working_set_bytes": TILE_WORDS * WORD,
                "passes": SHARED_PASSES,
                "lanes": lanes,
                "threadgroups": lanes // block,
            },
            work_items=lanes,
            flops=0,
            bytes=WORD * n * (SHARED_PASSES + 1),
            args=[buf, out, n],
            make_kernel=partial(self.ctx.backend.compile, src[0], src[1], consts),
            check=check,
            reset=partial(out.write, poison, 0),
        )


def _restored(buf: Any, pat: np.ndarray, count: int, scratch: HostScratch) -> Tuple[bool, str]:
    """Whether the first ``count`` uint32 of ``buf`` hold the tiled pattern again: decided from each
    period column's extremes a block of whole periods at a time on threads (:func:`~..base.
    tiled_within` with no tolerance), and, where that finds a difference, compared again in order
    for the message naming the first one."""
    got = _read_u32(buf, count, scratch)
    if tiled_within(got, pat, 0.0, 0.0):  # equal to the tiled pattern (integers: a zero tolerance is equality)
        return True, ""
    step = pat.size * 1024
    block = np.resize(pat, min(step, count))
    for start in range(0, count, step):
        part = got[start : start + step]
        bad = np.flatnonzero(part != block[: part.size])
        if bad.size:
            i = start + int(bad[0])
            return (
                False,
                f"the buffer differs from its input at uint32 {i}: {int(got[i]):#x}, want {int(pat[i % pat.size]):#x}",
            )
    return True, ""
