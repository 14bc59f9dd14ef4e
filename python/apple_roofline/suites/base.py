"""What every suite shares: kernels described as data, cases to measure, and validation helpers.

A suite is a table of kernels (their name, dtype, source and entry per backend, and closed-form
FLOPs and bytes per launch as functions of their parameters, docs/design/extending.md,
"Adding a suite") plus the NumPy reference of what each computes. The runner turns each Case into a
Measurement; the Python side never branches on the backend's name to decide what a kernel means: the tables do.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ..shaders import resolve
from .blocks import map_row_blocks

__all__ = [
    "KernelDef",
    "UNREACHABLE",
    "unreachable",
    "Case",
    "OutputCheck",
    "SuiteContext",
    "Suite",
    "EPS",
    "NUMPY_DTYPE",
    "ITEMSIZE",
    "pattern",
    "fill",
    "poison",
    "fill_word",
    "fill_constant",
    "constant_block",
    "write_tiled",
    "read",
    "ElementCheck",
    "check_close",
    "check_tiled",
    "tiled_within",
    "BLOCKS_OPTION",
    "TUNE_OPTION",
    "ANY_KERNEL",
    "kernel_key",
    "Constants",
    "rebindable",
    "BufferPair",
    "prebuild",
    "PREBUILD_WORKERS",
    "HostScratch",
    "PAGE_BYTES",
    "reads_copy",
]

#: Machine epsilon of each dtype the suites use (spacing of the format at 1.0): tf32 has 10
#: explicit mantissa bits (2^-10), bf16 7 (2^-7).
EPS: Dict[str, float] = {
    "fp16": float(np.finfo(np.float16).eps),
    "fp32": float(np.finfo(np.float32).eps),
    "fp64": float(np.finfo(np.float64).eps),
    "tf32": 2.0**-10,
    "bf16": 2.0**-7,
}
#: NumPy dtype a suite dtype is stored as: tf32 in float32 words, bf16 as raw uint16 bit patterns
#: (the upper half of a float32; NumPy has no bfloat16), int32 is the int8 GEMM's output, the FP8
#: formats as their byte codes.
NUMPY_DTYPE: Dict[str, str] = {
    "fp16": "float16",
    "fp32": "float32",
    "fp64": "float64",
    "tf32": "float32",
    "bf16": "uint16",
    "int8": "int8",
    "int32": "int32",
    "e4m3": "uint8",
    "e5m2": "uint8",
}
#: Bytes of one element; the FP8 formats (e4m3, e5m2: byte codes, :mod:`.fp8`) are the matrix suite's.
ITEMSIZE: Dict[str, int] = {
    "fp16": 2,
    "fp32": 4,
    "fp64": 8,
    "tf32": 4,
    "bf16": 2,
    "int8": 1,
    "int32": 4,
    "e4m3": 1,
    "e5m2": 1,
}

#: ``SuiteContext.options`` key: threads per block / threadgroup by kernel (:func:`kernel_key`, or
#: :data:`ANY_KERNEL` for every kernel of the suite), replacing the kernel table's BLOCK
#: (docs/design/studies.md, "Threadgroup-size tuning").
BLOCKS_OPTION = "blocks"
#: The key of :data:`BLOCKS_OPTION` that applies to every kernel without a key of its own.
ANY_KERNEL = "*"
#: ``SuiteContext.options`` key: when true, a suite yields only the cases a block size is tuned on
#: (all of them, except the sweep's: one F, :data:`~apple_roofline.suites.sweep.suite.SWEEP_TUNE_F`).
TUNE_OPTION = "tune"

#: The source of a kernel a backend cannot express (:func:`unreachable`): the WebGPU backend's
#: ``compile`` raises UnsupportedError with its entry, the reason, so the run lists the kernel as
#: skipped instead of leaving it out.
UNREACHABLE = "unreachable"


def unreachable(reason: str) -> Tuple[str, str]:
    """``KernelDef.sources``' entry for a kernel the backend cannot express: ``(UNREACHABLE, reason)``."""
    return UNREACHABLE, reason


#: Input patterns repeat with a prime period, so that a reference over one period, tiled, checks
#: every element of an array of any size.
PERIOD = 4099


@dataclass(frozen=True)
class KernelDef:
    """One kernel of a suite's table.

    ``sources`` maps a backend name to ``(source, entry)``: on the CPU the file of ``native/cpu/`` that
    implements the built-in kernel, ``("kernels.cpp", "stream_triad_f32")``; on GPUs a file under
    ``shaders/`` and its entry point; a backend missing from it does not
    have the kernel (reported as skipped). ``constants`` maps a backend name to compile-time
    constants the kernel is always built with there (e.g. ``{"cuda": {"BLOCK": 1024}}``: threads per
    block), besides the suite's own (F). ``ceiling_class`` names the ceiling the kernel can set
    (None: never a ceiling) and ``ceiling_kind`` is "bandwidth" or "compute".
    """

    suite: str
    name: str
    dtype: str
    sources: Mapping[str, Tuple[str, str]]
    ceiling_class: Optional[str] = None
    ceiling_kind: Optional[str] = None
    constants: Mapping[str, Mapping[str, Union[int, float]]] = field(default_factory=dict)


def kernel_key(k: "KernelDef") -> str:
    """``"suite/kernel/dtype"``: how a kernel is named in :data:`BLOCKS_OPTION` and tuning results
    (the label of its measurements)."""
    return f"{k.suite}/{k.name}/{k.dtype}"


#: A kernel's compile-time constants (BLOCK, F ...), as ``Backend.compile`` takes them.
Constants = Mapping[str, Union[int, float]]


@dataclass(frozen=True)
class OutputCheck:
    """A case's check in two steps: ``read()`` copies the kernel's output to the host (a device read,
    on the measuring thread) and ``compare(got)`` decides on what it read, on any thread:
    ``(ok, message)``. Called, it is the whole check (``compare(read())``), as any ``Case.check``.

    Where reads copy (a discrete GPU, :func:`reads_copy`), the roofline runner compares on a worker
    thread while the next case measures (docs/design/budgets.md, "Time budgets"), so a case may give one only
    where ``read()``'s array stays valid until the next case's read (:class:`HostScratch`, whose reads
    the runner keeps in order) and where the suite plans its next case without this one's
    measurement (:meth:`Suite.record` comes after the next case is yielded)."""

    read: Callable[[], Any]
    compare: Callable[[Any], Tuple[bool, str]]

    def __call__(self) -> Tuple[bool, str]:
        return self.compare(self.read())

    @classmethod
    def of_output(
        cls,
        buf: Any,
        dtype: str,
        count: int,
        scratch: Optional["HostScratch"],
        compare: Callable[[Any], Tuple[bool, str]],
    ) -> "OutputCheck":
        """The check that reads ``count`` elements of suite dtype ``dtype`` from ``buf`` through
        ``scratch`` (:func:`read`) and gives them to ``compare``."""
        return cls(partial(read, buf, dtype, count, scratch), compare)


@dataclass
class Case:
    """One measurement to make: a kernel, its parameters, its launch size (``work_items``) and its FLOPs and bytes per
    launch (from the table's closed forms), the arguments, how to get the kernel, how to check its
    output after the timed launches, and how to poison that output again (``reset``) so that a
    second timing of the case is checked on its own output, not on an earlier one's. A ``check``
    that is an :class:`OutputCheck` may be compared after the next case has begun.

    ``rebind`` (None for kernels without a block size: library routines, CPU-only cases) gives the
    same case with its kernel built at another BLOCK (:meth:`for_block`), for the threadgroup-size
    tuning study (docs/design/studies.md, "Threadgroup-size tuning")."""

    kernel: KernelDef
    params: Dict[str, Any]
    work_items: int
    flops: int
    bytes: int
    args: List[Any]
    make_kernel: Callable[[], Any]
    check: Callable[[], Tuple[bool, str]]
    reset: Callable[[], None]
    rebind: Optional[Callable[[int], "Case"]] = None
    #: Samples to take first where fewer than the run's suffice (a small GEMM size): the runner keeps
    #: them when their CV is at most ``stats.CV_WARN`` and measures again with the run's count
    #: otherwise (docs/design/matrix.md, "The GEMM ladder"). None: the run's count.
    few_reps: Optional[int] = None
    #: Extra parameters from the case's own samples (seconds per launch), recorded with a valid
    #: measurement of it (the GEMM ladder's reason for ending at this size). None: none.
    note: Optional[Callable[[Sequence[float]], Dict[str, Any]]] = None

    def for_block(self, block: int) -> "Case":
        """This case with its kernel built at BLOCK = ``block`` threads per block / threadgroup: the
        same buffers, inputs and NumPy reference where the launch does not depend on the block (no
        buffer is allocated or filled and no reference rebuilt), the launch re-sized (and the
        inputs written for it) where the suite sizes launches by the block (whole waves). Its
        output is as the last timing left it: call :attr:`reset` before timing it.

        Raises:
            TypeError: the case's kernel has no block size to rebind (``rebind`` is None).
        """
        if self.rebind is None:
            raise TypeError(f"{kernel_key(self.kernel)} has no block size to rebind")
        return self.rebind(int(block))


def rebindable(plan: Callable[[Constants], Case], constants: Constants) -> Case:
    """``plan(constants)``, whose :meth:`Case.for_block` plans again with BLOCK replaced: for a
    suite whose launch does not depend on the block, ``plan`` only describes the case (its buffers
    written once, before), so rebinding costs one kernel build (cached by the backend by source,
    entry and constants)."""
    case = plan(constants)
    case.rebind = lambda block: rebindable(plan, {**constants, "BLOCK": block})
    return case


class BufferPair:
    """An input and an output buffer shared by a suite's cases, grown when a case needs more than
    the pair holds (the smaller pair released first) and reused otherwise."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.capacity = 0
        self.bufs: Optional[Tuple[Any, Any]] = None

    def get(self, nbytes: int) -> Tuple[Any, Any]:
        """The pair, of at least ``nbytes`` each."""
        if self.bufs is None or nbytes > self.capacity:
            self.bufs = None  # release the smaller pair first
            self.capacity = nbytes
            self.bufs = (self.backend.alloc(nbytes), self.backend.alloc(nbytes))
        return self.bufs


#: Bytes between the writes that fault in a reserved scratch's pages (the smallest page size of the
#: hosts the project runs on; a larger page is touched more than once, which costs nothing).
PAGE_BYTES = 4096


class HostScratch:
    """Host memory the suites read their outputs into, one read after another (docs/design/budgets.md, "Time
    budgets"): from an H100, ``Buffer.read`` of 256 MiB into a new array ran at 1.0–1.2 GB/s (its
    pages fault in during the copy), ``Buffer.read_into`` an array already touched at 9–11 GB/s, so
    a run keeps one array (:attr:`SuiteContext.scratch`, shared by its suites). It grows to the
    largest read; the array a read returns is valid until the next read through the same scratch.
    With ``ahead`` (reads copy: :func:`reads_copy`), :meth:`reserve` grows it ahead, on a thread of its
    own, while the device measures."""

    def __init__(self, ahead: bool = False) -> None:
        self.ahead = ahead
        self._mem = np.empty(0, np.uint8)
        # the growth under way: its thread, the list its array is put in, and the size it grows to
        self._growth: Optional[Tuple[threading.Thread, List[np.ndarray], int]] = None

    def reserve(self, nbytes: int) -> None:
        """Grow to at least ``nbytes`` bytes on a thread of its own, touching one byte of every page so
        that the pages fault in there and not during the read that needs them; :meth:`array` waits
        for it where it needs the memory. A larger reservation than one under way replaces it (the
        smaller one's array is dropped when its thread ends). Nothing happens without :attr:`ahead`
        (on a host-visible backend the thread would compete with the measurement for the CPU and the
        memory, for nothing) or where the scratch, or the growth under way, is that large already."""
        if not self.ahead or nbytes <= max(self._mem.size, self._growth[2] if self._growth else 0):
            return
        made: List[np.ndarray] = []

        def grow() -> None:
            mem = np.empty(nbytes, np.uint8)
            mem[::PAGE_BYTES] = 0
            made.append(mem)

        thread = threading.Thread(target=grow, name="host scratch", daemon=True)
        self._growth = (thread, made, nbytes)
        thread.start()

    def array(self, dtype: str, count: int) -> np.ndarray:
        """``count`` elements of suite dtype ``dtype`` (a key of :data:`NUMPY_DTYPE`) over the scratch:
        a growth under way is waited for only where the scratch is too small without it."""
        np_dtype = np.dtype(NUMPY_DTYPE[dtype])
        nbytes = count * np_dtype.itemsize
        if self._growth is not None:
            thread, made, _ = self._growth
            if nbytes > self._mem.size or not thread.is_alive():
                thread.join()
                if made and made[0].size > self._mem.size:
                    self._mem = made[0]
                self._growth = None
        if self._mem.size < nbytes:
            self._mem = np.empty(nbytes, np.uint8)
        out: np.ndarray = self._mem[:nbytes].view(np_dtype)
        return out


def reads_copy(backend: Any) -> bool:
    """Whether reading ``backend``'s buffers copies them to the host (a discrete GPU's memory), so
    that :class:`HostScratch` is used and worth growing ahead; False where a buffer is host-visible
    and :func:`read` returns a view of it (the CPU, Apple's unified memory). Allocates 16 bytes."""
    buf = backend.alloc(16)
    try:
        buf.view("uint8")
    except ValueError:
        return True
    return False


@dataclass(frozen=True)
class SuiteContext:
    """What a suite needs to plan its cases: the opened ``_core.Backend``, its backend name and info,
    quick mode, the array size in bytes per array, and the runner's time budgets in ``options``
    (``max_launch_s``: seconds per sweep launch; ``gemm_max_launch_s``: seconds per GEMM launch), and
    the host memory its suites read their outputs into (``scratch``)."""

    backend: Any
    backend_name: str
    info: Mapping[str, Any]
    quick: bool
    array_bytes: int
    options: Mapping[str, Any] = field(default_factory=dict)
    #: The host memory every suite of the run reads its outputs into (:class:`HostScratch`; the
    #: runner's grows ahead where reads copy).
    scratch: HostScratch = field(default_factory=HostScratch, compare=False)


class Suite:
    """Base class: ``cases()`` yields Cases; the runner calls ``record(measurement)`` after each one
    so adaptive suites (gemm sizes, sweep working sets) can plan the next."""

    name = ""
    #: Whether :meth:`cases` plans a case from the measurement of the one before (:meth:`record`):
    #: the runner then settles every case, its check included, before it asks for the next (none of
    #: its checks is compared later, :class:`OutputCheck`).
    adaptive = False

    def __init__(self, ctx: SuiteContext) -> None:
        self.ctx = ctx
        self.last: Any = None

    def total(self) -> int:
        """Upper bound on the number of cases (for progress bars)."""
        raise NotImplementedError

    def cases(self) -> Iterator[Case]:
        """Yield the cases in measurement order. A case's inputs are written (and its output
        poisoned) when it is yielded, so run and check each before asking for the next."""
        raise NotImplementedError

    def record(self, measurement: Any) -> None:
        self.last = measurement

    def source(self, k: KernelDef) -> Optional[Tuple[str, str]]:
        """``(source, entry)`` of ``k`` for this run's backend, ready for ``Backend.compile`` (a
        shader file name is replaced by its text, see :func:`apple_roofline.shaders.resolve`), or
        None when the backend does not have the kernel."""
        src = k.sources.get(self.ctx.backend_name)
        return None if src is None else resolve(src[0], src[1])

    def constants(self, k: KernelDef) -> Dict[str, Union[int, float]]:
        """The compile-time constants ``k`` is built with on this run's backend (may be empty): the
        kernel table's, with BLOCK replaced where ``ctx.options[BLOCKS_OPTION]`` names a size for
        ``k`` (its :func:`kernel_key`, else :data:`ANY_KERNEL`)."""
        out = dict(k.constants.get(self.ctx.backend_name, {}))
        blocks: Mapping[str, int] = self.ctx.options.get(BLOCKS_OPTION) or {}
        block = blocks.get(kernel_key(k), blocks.get(ANY_KERNEL))
        if block is not None:
            out["BLOCK"] = int(block)
        return out


#: Threads :func:`prebuild` compiles on at most.
PREBUILD_WORKERS = 8


def prebuild(backend: Any, builds: Sequence[Tuple[str, str, Constants]]) -> None:
    """Compile every ``(source, entry, constants)`` of ``builds`` on up to :data:`PREBUILD_WORKERS`
    threads (at most :func:`~apple_roofline.host.cpus.host_threads`), before a suite measures them one by
    one (docs/design/budgets.md, "Time budgets").

    ``Backend.compile`` releases the GIL and caches by source, entry and constants, so the suite's
    own ``make_kernel`` later finds each kernel built; on CUDA the NVRTC compiles of a suite run in
    parallel instead of one per case (22 sweep kernels took 8 s one after another on an H100's
    host). Nothing is timed here. A build that fails is left alone: the suite meets the same error
    when it builds that kernel and records it (skipped, rejected) as without a prebuild."""
    from concurrent.futures import ThreadPoolExecutor

    from ..host.cpus import host_threads

    unique = list(dict.fromkeys((src, entry, tuple(sorted(c.items()))) for src, entry, c in builds))
    if len(unique) < 2:
        return

    def build(item: Tuple[str, str, Tuple[Tuple[str, Union[int, float]], ...]]) -> None:
        try:
            backend.compile(item[0], item[1], dict(item[2]))
        except Exception:  # noqa: BLE001 — recorded when the suite builds it (docstring)
            pass

    with ThreadPoolExecutor(max_workers=min(PREBUILD_WORKERS, host_threads(), len(unique))) as pool:
        list(pool.map(build, unique))


def pattern(dtype: str, low: float, high: float, seed: int, period: int = PERIOD) -> np.ndarray:
    """``period`` values uniform in [low, high), rounded to ``dtype`` (a NumPy array of that dtype)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, period).astype(NUMPY_DTYPE[dtype])


#: Elements written per chunk by fill() and poison(): large arrays are never copied whole.
CHUNK = PERIOD * 1024


def fill(buf: Any, values: np.ndarray, count: int) -> None:
    """Write ``values`` tiled to ``count`` elements into ``buf``, a chunk at a time (so filling an
    array costs one chunk of extra memory, not a second array)."""
    step = CHUNK - CHUNK % len(values)  # chunks start on a period boundary
    n = min(step, count)
    # np.tile, not np.resize: resize concatenates one copy per repetition (0.1 s for one word to a chunk)
    write_tiled(buf, np.tile(values, -(-n // len(values)))[:n], count)


#: :func:`constant_block`'s blocks, by NumPy dtype, the value's float64 bits (NaN is not equal to
#: itself) and their size.
_CONSTANT_BLOCKS: Dict[Tuple[str, bytes, int], np.ndarray] = {}


def constant_block(dtype: str, value: float) -> np.ndarray:
    """:data:`CHUNK` elements of NumPy dtype ``dtype`` (a name NumPy knows) all equal to ``value``
    (cast to it), read-only: made once per process, dtype and value and written again by every
    :func:`poison` (and the suites' own poisons) instead of a new array per call."""
    key = (np.dtype(dtype).str, np.float64(value).tobytes(), CHUNK)
    block = _CONSTANT_BLOCKS.get(key)
    if block is None:
        block = np.full(CHUNK, value, dtype=dtype)
        block.flags.writeable = False
        _CONSTANT_BLOCKS[key] = block
    return block


def write_tiled(buf: Any, block: np.ndarray, count: int) -> None:
    """Write ``block`` repeated over the first ``count`` elements of ``buf`` (of ``block``'s dtype), one
    ``block.size`` chunk at a time: :func:`fill`'s whole periods, :func:`constant_block`'s poison."""
    for start in range(0, count, block.size):
        n = min(block.size, count - start)
        buf.write(block[:n], start * block.itemsize)


#: The 32-bit word whose repetition is a float64 NaN (quiet, its two halves equal): float64's
#: canonical NaN (0x7FF8000000000000) has halves that differ, so it cannot be set a word at a time.
_FP64_NAN_WORD = 0x7FF87FF8


def fill_word(dtype: str, value: float) -> Optional[int]:
    """The 32-bit word (as it lies in this host's memory) whose repetition sets elements of NumPy
    dtype ``dtype`` to ``value``, for ``Buffer.fill32``: an element of 1, 2 or 4 bytes repeated; an
    8-byte one whose halves are equal, or a NaN (:data:`_FP64_NAN_WORD`, another NaN); None
    otherwise."""
    raw = np.array([value]).astype(dtype).tobytes()
    if len(raw) == 8 and raw[:4] != raw[4:]:
        return _FP64_NAN_WORD if np.isnan(value) else None
    raw = raw[:4]
    return None if 4 % len(raw) else int(np.frombuffer(raw * (4 // len(raw)), np.uint32)[0])


def fill_constant(buf: Any, dtype: str, value: float, count: int) -> None:
    """Set the first ``count`` elements (NumPy dtype ``dtype``) of ``buf`` to ``value``: on the
    device with ``Buffer.fill32`` where a word repeats to it (:func:`fill_word`; a 2- or 1-byte
    type's last partial word written from the host), else :func:`constant_block` written a block at a
    time. The poison of an output: written from the host, the poisons took 0.37 s of a quick run on an
    H100 (docs/design/wall-time.md, "Where the time goes")."""
    word = fill_word(dtype, value)
    if word is None:
        write_tiled(buf, constant_block(dtype, value), count)
        return
    itemsize = np.dtype(dtype).itemsize
    nbytes = count * itemsize
    whole = nbytes - nbytes % 4
    buf.fill32(word, whole, 0)
    if whole < nbytes:
        buf.write(constant_block(dtype, value)[: (nbytes - whole) // itemsize], whole)


def poison(buf: Any, dtype: str, count: int) -> None:
    """Fill the first ``count`` elements of ``buf`` (suite dtype ``dtype``) with NaN, so an unwritten
    output cannot pass (:func:`fill_constant`)."""
    fill_constant(buf, NUMPY_DTYPE[dtype], float("nan"), count)


def read(buf: Any, dtype: str, count: int, scratch: Optional[HostScratch] = None) -> np.ndarray:
    """The first ``count`` elements of ``buf``: a view where the buffer is host-visible, else a copy —
    into ``scratch`` where given (``Buffer.read_into``), else into a new array."""
    try:
        out: np.ndarray = buf.view(NUMPY_DTYPE[dtype])[:count]
    except ValueError:
        if scratch is None:
            out = buf.read(NUMPY_DTYPE[dtype], count)
        else:
            out = scratch.array(dtype, count)
            buf.read_into(out)
    return out


@dataclass(frozen=True)
class ElementCheck:
    """The result of an elementwise check (:func:`check_close`): ``bad`` of ``total`` elements
    outside the tolerance, the first of them at flat index ``first`` (-1 when none), ``worst`` the
    largest error as a multiple of its element's tolerance (NaN when an element is NaN), and the
    message a report shows."""

    total: int
    bad: int
    first: int
    worst: float
    message: str

    @property
    def ok(self) -> bool:
        """Whether every element is within the tolerance."""
        return self.bad == 0


def check_close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> ElementCheck:
    """Elementwise ``|got - want| <= atol + rtol·|want|``, NaN never close; ``got`` and ``want`` of
    the same shape, any numeric dtype (compared in float64)."""
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    err = np.abs(g - w)
    bound = atol + rtol * np.abs(w)
    bad = ~(err <= bound)
    nbad = int(np.count_nonzero(bad))
    rel = float(np.max(err / np.maximum(bound, np.finfo(np.float64).tiny), initial=0.0)) if err.size else 0.0
    if nbad:
        i = int(np.argmax(bad))
        return ElementCheck(
            got.size,
            nbad,
            i,
            rel,
            (
                f"{nbad} of {got.size} elements wrong; first at {i}: got "
                f"{got.flat[i]!r}, want {want.flat[i]!r} (tol {atol:.2g} + "
                f"{rtol:.2g}·|want|)"
            ),
        )
    return ElementCheck(got.size, 0, -1, rel, f"{got.size} elements within tolerance (worst at {rel:.2f} of it)")


def tiled_within(got: np.ndarray, period_ref: np.ndarray, rtol: float, atol: float) -> bool:
    """Whether every element i of ``got`` (1-D, floating point or an integer dtype of at most 32 bits,
    whose values float64 holds exactly; with ``rtol`` = ``atol`` = 0, equality) lies within
    ``atol + rtol·|w|`` of ``w = period_ref[i % len(period_ref)]``, NaN never within: the decision of
    :func:`check_close` over the tiled reference, made from the extremes of each column of the
    (rows, period) view.

    For any x in [lo, hi], |x − w| ≤ max(|lo − w|, |hi − w|) (|x − w| is convex in x), so the largest
    error of a column is that of its minimum or its maximum, compared with the bound in float64 as
    :func:`check_close` compares every element; a NaN makes its column's minimum and maximum NaN,
    which fails. Reading each element once in its own dtype (a min and a max per column) instead
    of converting it to float64 makes this about 30× faster than :func:`check_close` on 256 MiB of
    fp32. The rows are reduced a block at a time on :func:`~.blocks.map_row_blocks`'s threads (the
    block's maximum pass finds it still in the caches) and the blocks' extremes combined; a minimum
    and a maximum do not depend on the order they are taken in, so the decision is the same
    (docs/design/measurement.md, "Validation")."""
    p = len(period_ref)
    w = period_ref.astype(np.float64)
    bound = atol + rtol * np.abs(w)
    rows = got.size // p

    def within(lo: np.ndarray, hi: np.ndarray) -> bool:
        cols = w[: lo.size]
        err = np.maximum(np.abs(lo.astype(np.float64) - cols), np.abs(hi.astype(np.float64) - cols))
        return bool(np.all(err <= bound[: lo.size]))

    if rows:
        view = got[: rows * p].reshape(rows, p)

        def extremes(block: slice) -> Tuple[np.ndarray, np.ndarray]:
            part = view[block]
            return part.min(axis=0), part.max(axis=0)

        blocks = map_row_blocks(extremes, rows, p)
        lo = np.minimum.reduce([b[0] for b in blocks])
        hi = np.maximum.reduce([b[1] for b in blocks])
        if not within(lo, hi):
            return False
    tail = got[rows * p :]
    return not tail.size or within(tail, tail)


def check_tiled(
    got: np.ndarray, period_ref: np.ndarray, rtol: float, atol: float, chunk: int = PERIOD * 64
) -> Tuple[bool, str]:
    """Check an output whose element i must equal ``period_ref[i % len(period_ref)]``: every element
    within ``atol + rtol·|want|`` (:func:`check_close`'s test). A floating-point output is decided by
    :func:`tiled_within`; an output that fails it (or is not floating point) is checked again in
    chunks of whole periods with :func:`check_close` for the message naming the first wrong element
    (chunks small enough that its float64 temporaries stay in the caches)."""
    p = len(period_ref)
    if got.size and np.issubdtype(got.dtype, np.floating) and tiled_within(got, period_ref, rtol, atol):
        return True, f"{got.size} elements match the NumPy reference (rtol {rtol:.2g}, atol {atol:.2g})"
    worst_msg = ""
    ok_all = True
    nbad_total = 0
    chunk = max(p, chunk - chunk % p)
    tiled = np.resize(period_ref, min(chunk, got.size))  # every chunk starts on a period boundary
    for start in range(0, got.size, chunk):
        part = got[start : start + chunk]
        result = check_close(part, tiled[: part.size], rtol, atol)
        if not result.ok:
            ok_all = False
            nbad_total += result.bad
            if not worst_msg:
                worst_msg = f"chunk at {start}: {result.message}"
    if ok_all:
        return True, f"{got.size} elements match the NumPy reference (rtol {rtol:.2g}, atol {atol:.2g})"
    return False, f"{nbad_total} of {got.size} elements differ from the NumPy reference; {worst_msg}"
