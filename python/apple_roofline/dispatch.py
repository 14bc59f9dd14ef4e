"""The dispatch-latency study: what one kernel launch costs, from native code and from Python.

For a null kernel (one thread, no memory) and a tiny kernel (one threadgroup/block of 256 threads
adding 1 to 256 float4: 4 KiB read and written), on one device (``shaders/*/dispatch.*``, and the
CPU backend's built-in twins):

* ``throughput``: ``launches`` launches back to back, time per launch. Three clocks and paths:
  ``native``/``device`` (``Kernel.time`` with ``batch = launches``: one CUDA stream between two
  events, one Metal command buffer's compute pass, one CPU parallel region with a barrier between
  launches), ``native``/``host`` (a C++ loop of ``Kernel::launch`` then one
  ``Backend::synchronize``, :func:`_core.launch_throughput`) and ``python``/``host`` (the same loop
  written in Python over :meth:`Kernel.launch` and :meth:`Backend.synchronize`).
* ``round_trip``: one launch, then wait for it, from a C++ loop and from Python (host clock). On
  the CPU backend this is the thread pool's fork-join cost.
* ``start_latency`` and ``step``: ``Kernel.timeline`` (native): the instants of each step of a
  round trip on the host clock. Metal: create, encode, commit, start (``GPUStartTime``), execute
  (``GPUEndTime``), complete (``waitUntilCompleted`` returned); CUDA: launch, start (the kernel's
  ``%globaltimer`` mapped onto the host clock), complete; CPU: wake, fork, join. The start latency
  is from the host's submit to the device's start. It is measured in native code only: the GPU's
  start is not visible to Python, and Python's own cost sits before the submit, where the
  ``python`` round trip shows it.
* peers (optional imports, :mod:`.latency_peers`): CuPy ``RawKernel`` and PyTorch on CUDA, MLX
  ``metal_kernel`` and PyObjC Metal on macOS, timed like the ``python`` path.

Every measure of the tiny kernel is validated: the buffer is zeroed before it and must hold exactly
the number of launches made after it. The null kernel has no output; its launches are checked by
the device reporting no error. Timed Python loops run with the garbage collector off, as
``timeit`` does. Distributions are order statistics (:mod:`.latency`): p10, p50, p90, p99, max.

The M5 article (shared/reference/m5-gpu-roofline-analysis.txt) reports about 350 µs for a Metal
round trip (create, encode, commit, wait) and about 25 µs per Core ML prediction; the Metal steps
show where such a round trip's time goes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from ._version import __version__
from .devices import default_device, open_device
from .latency import FLOAT32_EXACT, TINY_FLOATS, DispatchStudy, LatencySeries, PeerSkipped, check_tiny_counts
from .latency_peers import gc_paused, measure_peers
from .results import ToolInfo
from .runner import Progress, _git_revision, _host, _now

__all__ = [
    "DEFAULT_REPS",
    "DEFAULT_LAUNCHES",
    "DEFAULT_WARMUP",
    "MAX_REPS",
    "MAX_LAUNCHES",
    "TINY_ITEMS",
    "TINY_BYTES",
    "DispatchInterrupted",
    "run_dispatch",
    "python_throughput",
    "python_round_trip",
    "timeline_series",
]

#: Samples per series.
DEFAULT_REPS = 200
#: Launches per throughput sample.
DEFAULT_LAUNCHES = 100
#: Untimed launches before each kernel's measures.
DEFAULT_WARMUP = 50
MAX_REPS = 100_000
MAX_LAUNCHES = 100_000
#: The tiny kernel: one block/threadgroup of 256 threads, one float4 (16 B) each.
TINY_ITEMS = 256
TINY_BYTES = TINY_ITEMS * 16

_SOURCES = {"cpu": "builtin", "cuda": "dispatch.cu", "metal": "dispatch.metal"}
_NULL_NOTE = "no output (the null kernel touches no memory): every launch completed without a device error"


class DispatchInterrupted(Exception):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    def __init__(self, partial: DispatchStudy) -> None:
        super().__init__("dispatch study interrupted")
        self.partial = partial


@dataclass
class _Subject:
    """One kernel as the study launches it: the kernel, its arguments, its work items."""

    name: str  # "null" | "tiny"
    kernel: Any
    args: Tuple[Any, ...]
    launch: int
    tiny: Optional[Any]  # the 4 KiB buffer of the tiny kernel
    timeline_kernel: Any
    timeline_args: Tuple[Any, ...]

    def reset(self) -> None:
        if self.tiny is not None:
            self.tiny.write(np.zeros(TINY_FLOATS, dtype=np.float32))

    def check(self, launches: int) -> Tuple[bool, str]:
        """Whether the tiny buffer holds ``launches`` in every float (always true for null)."""
        if self.tiny is None:
            return True, _NULL_NOTE
        return check_tiny_counts(self.tiny.read("float32", TINY_FLOATS), launches)


def _subjects(backend: Any, name: str) -> List[_Subject]:
    source = _SOURCES[name]
    if source != "builtin":
        from .shaders import shader_source

        source = shader_source(source)

    def compile_(entry: str) -> Any:
        return backend.compile(source, entry)

    out = []
    stamp = backend.alloc(8) if name == "cuda" else None
    for kernel in ("null", "tiny"):
        k = compile_(f"dispatch_{kernel}")
        tiny = backend.alloc(TINY_BYTES) if kernel == "tiny" else None
        args: Tuple[Any, ...] = (tiny,) if tiny is not None else ()
        launch = TINY_ITEMS if tiny is not None else 1
        # CUDA reads the start from %globaltimer, which only the *_stamp twins write (dispatch.cu).
        tk, targs = (compile_(f"dispatch_{kernel}_stamp"), (stamp, *args)) if stamp is not None else (k, args)
        out.append(_Subject(kernel, k, args, launch, tiny, tk, targs))
    return out


def python_throughput(kernel: Any, backend: Any, args: Sequence[Any], launch: int, launches: int,
                      reps: int) -> List[float]:
    """Python's floor-plus-binding loop: ``reps`` samples of ``launches`` ``kernel.launch`` calls and
    one ``backend.synchronize()``; seconds per launch (host ``time.perf_counter_ns``)."""

    go, sync, clock = kernel.launch, backend.synchronize, time.perf_counter_ns
    a = tuple(args)
    out = []
    sync()
    with gc_paused():
        for _ in range(reps):
            t0 = clock()
            for _ in range(launches):
                go(a, launch)
            sync()
            out.append((clock() - t0) * 1e-9 / launches)
    return out


def python_round_trip(kernel: Any, backend: Any, args: Sequence[Any], launch: int, reps: int) -> List[float]:
    """``reps`` samples of one ``kernel.launch`` and one ``backend.synchronize()`` from Python; seconds
    each (:func:`python_throughput` with one launch per sample)."""
    return python_throughput(kernel, backend, args, launch, 1, reps)


def timeline_series(s: _Subject, timeline: Any, valid: bool, validation: str) -> List[LatencySeries]:
    """The start-latency series and one series per step of a ``Kernel.timeline`` result.

    A start outside [call − uncertainty, complete + uncertainty] marks the series invalid: the
    device instant was not mapped onto the host clock correctly.
    """
    events: List[str] = list(timeline["events"])
    rows = np.asarray(timeline["t"], dtype=np.float64)
    unc = float(timeline["uncertainty_s"])
    clock = str(timeline["clock"])
    i_submit, i_start = events.index(timeline["submit"]), events.index(timeline["start"])
    start = rows[:, i_start] - rows[:, i_submit]
    note = f"{clock}; from '{events[i_submit]}' to '{events[i_start]}'"
    if unc > 0:
        note += f"; mapping uncertainty ±{unc * 1e6:.3g} µs"
    ok, why = valid, validation
    late = rows[:, i_start] > rows[:, -1] + unc
    early = rows[:, i_start] < -unc
    if not np.all(np.isfinite(rows)):
        ok, why = False, "the API returned no instant for some steps"
    elif early.any() or late.any():
        ok, why = False, (f"{int(early.sum())} starts before the call and {int(late.sum())} after the wait returned "
                          f"(beyond ±{unc * 1e6:.3g} µs): the device clock was not mapped onto the host's")
    out = [LatencySeries(s.name, "start_latency", "native", "host", tuple(start.tolist()), valid=ok,
                         validation=why, note=note)]
    for j in range(1, len(events)):
        step = rows[:, j] - rows[:, j - 1]
        out.append(LatencySeries(s.name, "step", "native", "host", tuple(step.tolist()), step=events[j], valid=ok,
                                 validation=why, note=f"'{events[j - 1]}' to '{events[j]}'; {clock}"))
    return out


def run_dispatch(
    device: Optional[str] = None,
    *,
    reps: int = DEFAULT_REPS,
    launches: int = DEFAULT_LAUNCHES,
    warmup: int = DEFAULT_WARMUP,
    peers: bool = True,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
) -> DispatchStudy:
    """Measure the launch costs of ``device`` ("cpu", "cuda:0", "metal:0"; default: the best
    available) and return the :class:`~apple_roofline.latency.DispatchStudy`.

    Args:
        reps: samples per series (1 to 100000).
        launches: launches per throughput sample (1 to 100000).
        warmup: untimed launches before each kernel's measures (0 to 100000).
        peers: also measure the peer libraries that are installed (:mod:`.latency_peers`).
        progress: receives ``start("dispatch", total)``, ``advance(description)`` and
            ``finish("dispatch")``.
        command: the command line to record.

    Raises:
        ValueError: a count out of range (the message names it and the range), an unknown device.
        _core.BackendError: the device failed (subclasses name the call).
        DispatchInterrupted: on KeyboardInterrupt, with the partial study.
    """
    for option, value, lo, hi in (("--reps", reps, 1, MAX_REPS), ("--launches", launches, 1, MAX_LAUNCHES),
                                  ("--warmup", warmup, 0, MAX_LAUNCHES)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{option} {value!r} is out of range (valid: {lo} to {hi})")
    if reps * launches + warmup > FLOAT32_EXACT:
        raise ValueError(f"--reps × --launches = {reps * launches} is out of range (valid: up to {FLOAT32_EXACT - warmup}, "
                         "so that the tiny kernel's float32 counts stay exact)")
    from ._native import _core

    spec = device or default_device()
    backend = open_device(spec)
    info = dict(backend.info())
    name = str(info["backend"])
    created = _now()
    series: List[LatencySeries] = []
    skipped: List[PeerSkipped] = []
    warnings: List[str] = []

    def assemble(complete: bool) -> DispatchStudy:
        warns = list(warnings) + [f"{s.label} failed validation: {s.validation}" for s in series if not s.valid]
        return DispatchStudy(
            tool=ToolInfo("apple_roofline", __version__, _git_revision()),
            created=created, finished=_now(), host=_host(), device=info, command=tuple(command),
            params={"reps": reps, "launches": launches, "warmup": warmup, "tiny_bytes": TINY_BYTES,
                    "tiny_items": TINY_ITEMS, "peers": peers},
            series=tuple(series), skipped=tuple(skipped), warnings=tuple(warns), complete=complete,
        )

    subjects = _subjects(backend, name)
    total = len(subjects) * 6 + (1 if peers else 0)
    if progress:
        progress.start("dispatch", total)

    def step(desc: str) -> None:
        if progress:
            progress.advance(desc)

    try:
        for s in subjects:
            s.reset()
            for _ in range(warmup):
                s.kernel.launch(s.args, s.launch)
            backend.synchronize()
            ok, why = s.check(warmup)
            if not ok:
                warnings.append(f"{s.name}: the warm-up launches failed validation: {why}")
            for measured in _launch_series(_core, backend, name, s, reps, launches):
                series.append(measured)
                step(f"{s.name} {measured.measure.replace('_', ' ')} ({measured.path}, {measured.clock} clock)")
            s.reset()
            try:
                tl = s.timeline_kernel.timeline(s.timeline_args, s.launch, reps)
            except _core.UnsupportedError as e:
                skipped.append(PeerSkipped(f"native start_latency ({s.name})", str(e)))
            else:
                ok, why = s.check(reps)
                series.extend(timeline_series(s, tl, ok, why))
            step(f"{s.name} start latency and steps")
        if peers:
            index = int(info.get("index", 0) or 0)
            got, missing = measure_peers(name, index, reps=reps, launches=launches, warmup=warmup)
            series.extend(got)
            skipped.extend(missing)
            step(f"peers: {', '.join(sorted({g.path for g in got})) or 'none installed'}")
    except KeyboardInterrupt:
        raise DispatchInterrupted(assemble(False)) from None
    if progress:
        progress.finish("dispatch")
    return assemble(True)


def _launch_series(core: Any, backend: Any, name: str, s: _Subject, reps: int,
                   launches: int) -> Iterator[LatencySeries]:
    """Throughput (device clock, native loop, Python loop) and round trip (native, Python) of one
    kernel, each on a zeroed tiny buffer validated afterwards."""
    per = launches
    runs: List[Tuple[str, str, str, int, Callable[[], List[float]], Callable[[], str]]] = [
        ("throughput", "native", "device", per,
         lambda: [t / per for t in s.kernel.time(s.args, s.launch, per, reps)],
         lambda: f"Kernel.time, batch {per}: {s.kernel.timer or _device_clock(name)}"),
        ("throughput", "native", "host", per,
         lambda: [t / per for t in core.launch_throughput(backend, s.kernel, s.args, s.launch, per, reps)],
         lambda: "C++ loop: Kernel::launch × launches, Backend::synchronize"),
        ("throughput", "python", "host", per,
         lambda: python_throughput(s.kernel, backend, s.args, s.launch, per, reps),
         lambda: "Python loop: Kernel.launch × launches, Backend.synchronize"),
        ("round_trip", "native", "host", 1,
         lambda: list(core.launch_round_trip(backend, s.kernel, s.args, s.launch, reps)),
         lambda: "C++ loop: Kernel::launch, Backend::synchronize"),
        ("round_trip", "python", "host", 1,
         lambda: python_round_trip(s.kernel, backend, s.args, s.launch, reps),
         lambda: "Python loop: Kernel.launch, Backend.synchronize"),
    ]
    for measure, path, clock, n, run, note in runs:
        s.reset()
        samples = run()
        ok, why = s.check(reps * n)
        yield LatencySeries(s.name, measure, path, clock, tuple(samples), n, valid=ok, validation=why, note=note())


def _device_clock(backend: str) -> str:
    return {
        "cuda": "CUDA events around the batch on one stream",
        "metal": "the command buffer's GPU time (or counter timestamps at the pass boundaries)",
        "cpu": "steady clock around a parallel region with a barrier after each launch",
    }.get(backend, "device clock")
