"""Running the dispatch-latency study: what one kernel launch costs, from native code and from Python.

For the null and tiny kernels (:mod:`..kernels`) on one device (``shaders/*/dispatch.*``, and the CPU
backend's built-in twins), :func:`run_dispatch` measures:

* ``throughput``: ``launches`` launches back to back, time per launch. Three clocks and paths:
  ``native``/``device`` (``Kernel.time`` with ``batch = launches``: one CUDA stream between two
  events, one Metal command buffer's compute pass, one CPU parallel region with a barrier between
  launches), ``native``/``host`` (a C++ loop of ``Kernel::launch`` then one
  ``Backend::synchronize``, ``_core.launch_throughput``) and ``python``/``host`` (the same loop
  written in Python over :meth:`Kernel.launch` and :meth:`Backend.synchronize`,
  :func:`~.loops.python_throughput`).
* ``round_trip``: one launch, then wait for it, from a C++ loop and from Python (host clock). On
  the CPU backend this is the thread pool's fork-join cost.
* the ``native`` and ``python`` host-clock series of both measures are measured interleaved
  (:func:`interleave`): ``reps`` pairs, each one sample of each path back to back, the first path
  alternating (:func:`~..paired.pair_order`), recorded as a :class:`~..model.Pairing`, so that the
  binding's cost is the median of paired differences, free of the host's drift (:mod:`..paired`).
  The tiny kernel's two paths write separate buffers, so each is validated on its own.
* ``start_latency`` and ``step``: ``Kernel.timeline`` (native): the instants of each step of a
  round trip on the host clock (:func:`timeline_series`). Metal: create, encode, commit, start
  (``GPUStartTime``), execute (``GPUEndTime``), complete (``waitUntilCompleted`` returned); CUDA:
  launch, start (the kernel's ``%globaltimer`` mapped onto the host clock), complete; CPU: wake,
  fork, join. The start latency is from the host's submit to the device's start. It is measured in
  native code only: the GPU's start is not visible to Python, and Python's own cost sits before the
  submit, where the ``python`` round trip shows it.
* peers (optional imports, :mod:`..peers`): CuPy ``RawKernel`` and PyTorch on CUDA, MLX
  ``metal_kernel`` and PyObjC Metal on macOS, MLX (``mx.add``) on the CPU, timed like the ``python``
  path.

On a WebGPU adapter (``wgpu:N``), a Python backend that no C++ loop can drive, the measures are
:mod:`.wgpu`'s: the python path alone, on the device clock (GPU timestamps) and the host's, with the
round trip's host steps; what it cannot measure is listed as skipped with the reason.

Every measure of the tiny kernel is validated: the buffer is zeroed before it and must hold exactly
the number of launches made after it (:func:`~..kernels.check_tiny_counts`). The null kernel has no
output; its launches are checked by the device reporting no error. Timed Python loops run with the
garbage collector off, as ``timeit`` does (docs/design/measurement.md, "Measurement" and "Validation").

"Apple M5 GPU Roofline Analysis" reports about 350 µs for a Metal round trip (create, encode,
commit, wait) and about 25 µs per Core ML prediction; the Metal steps show where such a round trip's
time goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ...devices import default_device, open_device
from ...errors import DeviceStopped, OptionError, check_int
from ...host import provenance
from ...study.document import finished_header
from ...study.journal import Journal, record_key
from ...study.progress import Progress, StudyInterrupted
from ...timing.stats import CONFIDENCE
from ..kernels import FLOAT32_EXACT, KERNEL_SOURCES, TINY_BYTES, TINY_ITEMS
from ..model import DispatchStudy, LatencySeries, Pairing, PeerSkipped
from ..paired import PAIRED_PATHS, pair_order
from ..peers import measure_peers
from ..peers.common import gc_paused
from .loops import Step, StudyKernel, python_round_trip, python_throughput
from .wgpu import WGPU, WgpuDispatch

__all__ = [
    "DEFAULT_REPS",
    "DEFAULT_LAUNCHES",
    "DEFAULT_WARMUP",
    "MAX_REPS",
    "MAX_LAUNCHES",
    "MAX_WARMUP",
    "DispatchInterrupted",
    "DispatchOptions",
    "DispatchRunner",
    "check_counts",
    "interleave",
    "run_dispatch",
    "timeline_series",
]

#: Samples per series.
DEFAULT_REPS = 200
#: Launches per throughput sample.
DEFAULT_LAUNCHES = 100
#: Untimed launches before each kernel's measures.
DEFAULT_WARMUP = 50
#: The most samples per series.
MAX_REPS = 100_000
#: The most launches per throughput sample.
MAX_LAUNCHES = 100_000
#: The most warm-up launches.
MAX_WARMUP = MAX_LAUNCHES

#: How each backend's ``Kernel.time`` clocks a batch, for the notes of the device-clock series.
DEVICE_CLOCKS = {
    "cuda": "CUDA events around the batch on one stream",
    "metal": "the command buffer's GPU time (or counter timestamps at the pass boundaries)",
    "cpu": "steady clock around a parallel region with a barrier after each launch",
}


class DispatchInterrupted(StudyInterrupted[DispatchStudy]):
    """Raised on KeyboardInterrupt; ``partial`` holds the study so far (``complete`` False)."""

    MESSAGE = "dispatch study interrupted"


def check_counts(reps: int, launches: int, warmup: int) -> Tuple[int, int, int]:
    """``(reps, launches, warmup)`` checked against the study's limits: ``reps`` 1 to
    :data:`MAX_REPS`, ``launches`` 1 to :data:`MAX_LAUNCHES`, ``warmup`` 0 to :data:`MAX_WARMUP`,
    and ``reps × launches + warmup`` at most 2^24 (:data:`~..kernels.FLOAT32_EXACT`), where the tiny
    kernel's float32 counts stop being exact.

    Raises:
        OptionError: naming the parameter (``reps``, ``launches``, ``warmup``) and its valid range;
            the float32 limit is reported against ``reps``.
    """
    reps = check_int(reps, "reps", 1, MAX_REPS)
    launches = check_int(launches, "launches", 1, MAX_LAUNCHES)
    warmup = check_int(warmup, "warmup", 0, MAX_WARMUP)
    most = (FLOAT32_EXACT - warmup) // launches
    if reps > most:
        total = reps * launches + warmup
        raise OptionError(
            "reps",
            reps,
            f"1 to {most} for {launches} launches and {warmup} warm-up",
            reason=(
                f"{reps} × {launches} launches + {warmup} warm-up = {total:,} launches exceed 2^24 = "
                f"{FLOAT32_EXACT:,}, where the tiny kernel's float32 counts stop being exact"
            ),
        )
    return reps, launches, warmup


def _native_kernels(backend: Any, name: str) -> List[StudyKernel]:
    from ...shaders import resolve

    source = KERNEL_SOURCES[name]

    def compile_(entry: str) -> Any:
        return backend.compile(*resolve(source, entry))  # a shader file's text; the CPU's file name as is

    out = []
    stamp = backend.alloc(8) if name == "cuda" else None
    for kernel in ("null", "tiny"):
        k = compile_(f"dispatch_{kernel}")
        output = backend.alloc(TINY_BYTES) if kernel == "tiny" else None
        args: Tuple[Any, ...] = (output,) if output is not None else ()
        work_items = TINY_ITEMS if output is not None else 1
        # CUDA reads the start from %globaltimer, which only the *_stamp twins write (dispatch.cu).
        tk, targs = (compile_(f"dispatch_{kernel}_stamp"), (stamp, *args)) if stamp is not None else (k, args)
        twin = backend.alloc(TINY_BYTES) if output is not None else None
        out.append(StudyKernel(kernel, k, args, work_items, output, tk, targs, twin))
    return out


def interleave(samplers: Mapping[str, Callable[[], float]], order: Sequence[str]) -> Dict[str, List[float]]:
    """One sample of each path per pair, back to back, the path ``order[i]`` first in pair ``i``
    (:func:`~..paired.pair_order`), with the garbage collector paused throughout.

    Args:
        samplers: ``{"native": f, "python": g}`` (:data:`~..paired.PAIRED_PATHS`), each call
            returning one sample in seconds per launch.
        order: the path that goes first in each pair; ``len(order)`` pairs are measured.

    Returns:
        ``{"native": [...], "python": [...]}``, sample ``i`` of each from pair ``i``.

    Raises:
        ValueError: ``samplers`` does not hold exactly the two paths, or ``order`` names another.
    """
    if set(samplers) != set(PAIRED_PATHS):
        raise ValueError(f"samplers {sorted(samplers)} must be exactly {', '.join(PAIRED_PATHS)}")
    out: Dict[str, List[float]] = {p: [] for p in PAIRED_PATHS}
    with gc_paused():
        for i, first in enumerate(order):
            if first not in PAIRED_PATHS:
                raise ValueError(f"order[{i}] {first!r} is not one of {', '.join(PAIRED_PATHS)}")
            second = PAIRED_PATHS[1 - PAIRED_PATHS.index(first)]
            for path in (first, second):
                out[path].append(samplers[path]())
    return out


def timeline_series(kernel: str, timeline: Any, valid: bool, validation: str) -> List[LatencySeries]:
    """The start-latency series and one series per step of a ``Kernel.timeline`` result of ``kernel``.

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
        ok, why = (
            False,
            (
                f"{int(early.sum())} starts before the call and {int(late.sum())} after the wait returned "
                f"(beyond ±{unc * 1e6:.3g} µs): the device clock was not mapped onto the host's"
            ),
        )
    out = [
        LatencySeries(
            kernel, "start_latency", "native", "host", tuple(start.tolist()), valid=ok, validation=why, note=note
        )
    ]
    for j in range(1, len(events)):
        step = rows[:, j] - rows[:, j - 1]
        out.append(
            LatencySeries(
                kernel,
                "step",
                "native",
                "host",
                tuple(step.tolist()),
                step=events[j],
                valid=ok,
                validation=why,
                note=f"'{events[j - 1]}' to '{events[j]}'; {clock}",
            )
        )
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
    journal: Optional[Journal] = None,
) -> DispatchStudy:
    """Measure the launch costs of ``device`` ("cpu", "cuda:0", "metal:0"; default: the best
    available) and return the :class:`~..model.DispatchStudy`: :class:`DispatchRunner` with the
    :class:`DispatchOptions` these keywords build.

    Args:
        reps: samples per series (1 to 100000); for the interleaved native and python loops, the
            number of pairs (6 or more for a 95 % interval on the binding's cost).
        launches: launches per throughput sample (1 to 100000).
        warmup: untimed launches before each kernel's measures (0 to 100000).
        peers: also measure the peer libraries that are installed (:mod:`..peers`).
        progress: receives ``start("dispatch", total)``, ``advance(description)`` and
            ``finish("dispatch")``.
        command: the command line to record.
        journal: keeps each step's series as the step finishes (docs/design/files.md, "Journal and
            resume"; keys ``"KERNEL throughput native device"``, ``"KERNEL MEASURE paired host"``
            (both loops, interleaved), ``"KERNEL timeline"``, ``"peers"``); a
            step its resumed journal holds is kept, not measured again.

    Raises:
        OptionError: a count out of range (:func:`check_counts`: the message names the parameter
            and the range), or a malformed device name; (option ``resume``) a resumed journal of
            another device or other options.
        _core.BackendError: the device failed or does not exist (subclasses name the call).
        DispatchInterrupted: on KeyboardInterrupt, or when the device stopped responding
            (its ``stopped``: the DeviceStopped), with the partial study.
    """
    options = DispatchOptions(reps=reps, launches=launches, warmup=warmup, peers=peers, command=command)
    return DispatchRunner(device, options, progress=progress, journal=journal).run()


@dataclass(frozen=True)
class DispatchOptions:
    """The dispatch study's options, checked when built (:func:`check_counts`, the one place) and
    recorded once, as the study's ``params`` and its journal's options (:meth:`recorded`). The
    fields are :func:`run_dispatch`'s keywords.

    Raises:
        OptionError: a count out of range (the message names the parameter and the range).
    """

    reps: int = DEFAULT_REPS
    launches: int = DEFAULT_LAUNCHES
    warmup: int = DEFAULT_WARMUP
    peers: bool = True
    command: Sequence[str] = ()

    def __post_init__(self) -> None:
        reps, launches, warmup = check_counts(self.reps, self.launches, self.warmup)
        for name, value in (
            ("reps", reps),
            ("launches", launches),
            ("warmup", warmup),
            ("command", tuple(self.command)),
        ):
            object.__setattr__(self, name, value)  # frozen: normalised once, here

    def recorded(self) -> Dict[str, Any]:
        """The study's ``params``, as its results and its journal record them."""
        return {
            "reps": self.reps,
            "launches": self.launches,
            "warmup": self.warmup,
            "tiny_bytes": TINY_BYTES,
            "tiny_items": TINY_ITEMS,
            "peers": self.peers,
        }


class DispatchRunner:
    """One dispatch study of ``options`` on ``device``, in small steps: the device opened when
    built, then :meth:`run` measures each kernel (:meth:`measure_kernel`) and the peers, each step
    kept by the journal (:meth:`step`), and assembles the study (:meth:`assemble`) from what it
    holds so far."""

    def __init__(
        self,
        device: Optional[str],
        options: DispatchOptions,
        *,
        progress: Optional[Progress] = None,
        journal: Optional[Journal] = None,
    ) -> None:
        from ..._native import _core

        self.core, self.options, self.progress = _core, options, progress
        self.backend = open_device(device or default_device())
        self.info: Dict[str, Any] = dict(self.backend.info())
        self.name = str(self.info["backend"])
        self.created = provenance.now()
        self.journal = journal or Journal()
        self.series: List[LatencySeries] = []
        self.skipped: List[PeerSkipped] = []
        self.pairings: List[Pairing] = []
        self.warnings: List[str] = []
        # a WebGPU adapter: no C++ loop drives the Python backend (.wgpu's measures instead)
        self.wgpu = WgpuDispatch(self.backend, options.reps, options.launches) if self.name == WGPU else None

    def run(self) -> DispatchStudy:
        """Every step of the study; the study.

        Raises:
            As :func:`run_dispatch`.
        """
        opts = self.options
        self.journal.begin(
            DispatchStudy, created=self.created, device=self.info, command=opts.command, options=opts.recorded()
        )
        kernels = self.wgpu.kernels() if self.wgpu else _native_kernels(self.backend, self.name)
        peers = opts.peers and self.wgpu is None  # no peer drives a wgpu adapter (a skipped path there)
        if self.wgpu:
            self.skipped.extend(self.wgpu.skipped(opts.peers))
        if self.progress:
            per_kernel = [len(self.wgpu.steps(k)) if self.wgpu else 4 for k in kernels]
            self.progress.start("dispatch", sum(per_kernel) + (1 if peers else 0))
        try:
            for k in kernels:
                self.measure_kernel(k)
            if peers:
                self.measure_peers()
        except (KeyboardInterrupt, DeviceStopped) as exc:
            raise DispatchInterrupted(self.assemble(False), exc) from None
        finally:
            self.journal.close()
        if self.progress:
            self.progress.finish("dispatch")
        return self.assemble(True)

    def measure_peers(self) -> None:
        """The peer libraries' step (:func:`~..peers.measure_peers`)."""
        opts = self.options
        index = int(self.info.get("index", 0) or 0)
        self.step(
            "peers",
            lambda: (
                *measure_peers(self.name, index, reps=opts.reps, launches=opts.launches, warmup=opts.warmup),
                [],
            ),
            lambda got: f"peers: {', '.join(sorted({g.path for g in got[0]})) or 'none installed'}",
        )

    def warm_up(self, k: StudyKernel) -> Tuple[bool, str]:
        """The untimed launches of ``k`` on a zeroed output, then a wait; their validation."""
        if self.wgpu:
            return self.wgpu.warm_up(k, self.options.warmup)
        k.reset()
        for _ in range(self.options.warmup):
            k.kernel.launch(k.args, k.work_items)
        self.backend.synchronize()
        return k.check(self.options.warmup)

    def measure_kernel(self, k: StudyKernel) -> None:
        """Warm ``k`` up (its output checked), then its launch steps and its timeline (on a WebGPU
        adapter, :meth:`.wgpu.WgpuDispatch.steps`)."""
        opts = self.options
        ok, why = self.warm_up(k)
        if not ok:
            self.warnings.append(f"{k.name}: the warm-up launches failed validation: {why}")
        if self.wgpu:
            for key, text, run in self.wgpu.steps(k):
                self.step(key, run, lambda _: text)
            return
        for key, text, run in _launch_steps(self.core, self.backend, self.name, k, opts.reps, opts.launches):
            self.step(key, run, lambda _: text)
        self.step(
            record_key(k.name, "timeline"),
            lambda: _timeline(self.core, k, opts.reps),
            lambda _: f"{k.name} start latency and steps",
        )

    def step(self, key: str, measure: Callable[[], Step], desc: Callable[[Step], str]) -> None:
        """The step ``key``: kept from the resumed journal, or measured and kept."""
        got = self.journal.keep(key, measure, _load_step, _dump_step)
        self.series.extend(got[0])
        self.skipped.extend(got[1])
        self.pairings.extend(got[2])
        if self.progress:
            self.progress.advance(desc(got) + (": resumed" if key in self.journal.resumed_keys else ""))

    def assemble(self, complete: bool) -> DispatchStudy:
        """The study of what was measured so far."""
        warns = list(self.warnings) + [
            f"{s.label} failed validation: {s.validation}" for s in self.series if not s.valid
        ]
        return DispatchStudy(
            params=self.options.recorded(),
            series=tuple(self.series),
            skipped=tuple(self.skipped),
            warnings=tuple(warns),
            pairings=tuple(self.pairings),
            **finished_header(
                created=self.created,
                device=self.info,
                command=self.options.command,
                complete=complete,
                resumed=self.journal.resumed(),
            ),
        )


def _dump_step(got: Step) -> Dict[str, Any]:
    return {
        "series": [s.to_dict() for s in got[0]],
        "skipped": [s.to_dict() for s in got[1]],
        "pairings": [p.to_dict() for p in got[2]],
    }


def _load_step(d: Mapping[str, Any], source: str) -> Step:
    from ...study.reader import Reader

    r = Reader(source)
    return (
        [
            LatencySeries.from_dict(x, source=source, where=f"series[{i}]")
            for i, x in enumerate(r.array(d, "series", ""))
        ],
        [
            PeerSkipped.from_dict(x, source=source, where=f"skipped[{i}]")
            for i, x in enumerate(r.array(d, "skipped", ""))
        ],
        [
            Pairing.from_dict(x, source=source, where=f"pairings[{i}]")
            for i, x in enumerate(r.array(d, "pairings", "", required=False))
        ],
    )


def _timeline(core: Any, k: StudyKernel, reps: int) -> Step:
    """The start latency and steps of ``k`` (``Kernel.timeline``), or why the backend has none."""
    k.reset()
    try:
        tl = k.timeline_kernel.timeline(k.timeline_args, k.work_items, reps)
    except core.UnsupportedError as e:
        return [], [PeerSkipped(f"native start_latency ({k.name})", str(e))], []
    ok, why = k.check(reps)
    return timeline_series(k.name, tl, ok, why), [], []


def _launch_steps(
    core: Any, backend: Any, name: str, k: StudyKernel, reps: int, launches: int
) -> List[Tuple[str, str, Callable[[], Step]]]:
    """The launch steps of one kernel, ``(journal key, progress text, run)``: throughput on the
    device clock (native), then throughput and round trip with the native and python paths
    interleaved on the host clock (:func:`interleave`, one :class:`~..model.Pairing` each). ``run()``
    measures on zeroed tiny buffers and validates each path's own buffer afterwards."""
    per = launches

    def device() -> Step:
        k.reset()
        samples = [t / per for t in k.kernel.time(k.args, k.work_items, per, reps)]
        ok, why = k.check(reps * per)
        note = f"Kernel.time, batch {per}: {k.kernel.timer or DEVICE_CLOCKS.get(name, 'device clock')}"
        return (
            [
                LatencySeries(
                    k.name, "throughput", "native", "device", tuple(samples), per, valid=ok, validation=why, note=note
                )
            ],
            [],
            [],
        )

    def paired(measure: str, n: int, samplers: Dict[str, Callable[[], float]], notes: Dict[str, str]) -> Step:
        k.reset()
        order = pair_order(reps)
        got = interleave(samplers, order)
        out = []
        for path in PAIRED_PATHS:
            ok, why = k.check(reps * n, python=path == "python")
            note = f"{notes[path]}; interleaved with the {PAIRED_PATHS[path == 'native']} path, {reps} pairs"
            out.append(
                LatencySeries(k.name, measure, path, "host", tuple(got[path]), n, valid=ok, validation=why, note=note)
            )
        return out, [], [Pairing(k.name, measure, order, CONFIDENCE)]

    py_args = k.python_args
    throughput = {
        "native": lambda: core.launch_throughput(backend, k.kernel, k.args, k.work_items, per, 1)[0] / per,
        "python": lambda: python_throughput(k.kernel, backend, py_args, k.work_items, per, 1)[0],
    }
    round_trip = {
        "native": lambda: core.launch_round_trip(backend, k.kernel, k.args, k.work_items, 1)[0],
        "python": lambda: python_round_trip(k.kernel, backend, py_args, k.work_items, 1)[0],
    }
    loops = {
        "native": "C++ loop: Kernel::launch × launches, Backend::synchronize",
        "python": "Python loop: Kernel.launch × launches, Backend.synchronize",
    }
    trips = {
        "native": "C++ loop: Kernel::launch, Backend::synchronize",
        "python": "Python loop: Kernel.launch, Backend.synchronize",
    }
    return [
        (record_key(k.name, "throughput", "native", "device"), f"{k.name} throughput (native, device clock)", device),
        (
            record_key(k.name, "throughput", "paired", "host"),
            f"{k.name} throughput (native and python interleaved, host clock)",
            lambda: paired("throughput", per, throughput, loops),
        ),
        (
            record_key(k.name, "round_trip", "paired", "host"),
            f"{k.name} round trip (native and python interleaved, host clock)",
            lambda: paired("round_trip", 1, round_trip, trips),
        ),
    ]
