"""The dispatch study through the WebGPU backend (``wgpu:N``, :mod:`apple_roofline.webgpu`): what one
wgpu dispatch and submit costs (docs/dispatch.md, "On WebGPU").

The native backends run their launch loops in C++ (``_core.launch_throughput``,
``launch_round_trip``, ``Kernel.timeline``); the WebGPU backend is Python over wgpu-py, so no C++ loop
can launch its kernels, and what a WebGPU program in Python pays per dispatch is the measure. For the
null and tiny kernels of ``shaders/wgsl/dispatch.wgsl`` (:data:`~..kernels.KERNEL_SOURCES`), each
counting its launches in its buffer, :class:`WgpuDispatch` measures, all on the ``python`` path:

* ``throughput`` on the device clock: ``Kernel.time`` with ``batch = launches``, the launches as that
  many dispatches in one compute pass and every sample in one submission, timed by GPU timestamps at
  the pass's beginning and end (``timestamp-query``; the tick is the queue's timestamp period):
  the device's own cost per dispatch, free of the host's;
* ``throughput`` and ``round_trip`` on the host clock: the Python loops of :mod:`.loops`
  (``Kernel.launch``: a command encoder, one compute pass, one dispatch and a submit, each launch;
  then ``Backend.synchronize``), ``time.perf_counter_ns``, whose resolution the notes state;
* ``step`` on the host clock: each round trip cut where its calls return: ``encode``
  (``Kernel.encode``: the encoder, the pass and its dispatch, finished), ``submit`` (the queue's
  submit) and ``complete`` (``Backend.synchronize`` returned: a 4-byte read-back ordered after the
  dispatch, mapped).

What cannot be measured on wgpu is reported as skipped with the reason (:meth:`WgpuDispatch.skipped`):
the native path, the start latency (WebGPU's timestamps are on the GPU's clock, with no mapping to
the host's), the device clock on an adapter without ``timestamp-query``, and the peers (none drives a
wgpu adapter). Every wait is bounded: ``synchronize`` and the read-backs wait within the watchdog's
bound (:class:`~apple_roofline.webgpu.queue.BoundedQueue`); on a CPU adapter (lavapipe), whose
``queue.submit`` waits inside native code for the work before it, each measure runs on a helper
thread that the study waits for within the bound of :func:`~apple_roofline.timing.watchdog.bound_for` of its
predicted time (:func:`run_bounded`; the prediction from the warm-up's launches and wait).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import numpy as np

from ...study.journal import record_key
from ...timing.watchdog import wait_event, watched
from ..kernels import KERNEL_SOURCES, TINY_FLOATS, TINY_ITEMS, WGPU_NULL_BYTES
from ..model import LatencySeries, PeerSkipped
from ..peers import PEERS
from ..peers.common import gc_paused
from .loops import Step, StudyKernel, python_throughput

__all__ = ["WGPU", "STEPS", "WgpuDispatch", "host_steps", "run_bounded"]

#: The WebGPU backend's name (its info's ``backend``).
WGPU = "wgpu"
#: The round trip's host steps on wgpu, in order, and what ends each.
STEPS: Tuple[Tuple[str, str], ...] = (
    (
        "encode",
        "Kernel.encode returned: a command encoder, one compute pass (pipeline, bind group, one dispatch), finished",
    ),
    ("submit", "the queue's submit of that command buffer returned"),
    ("complete", "Backend.synchronize returned: a 4-byte read-back ordered after the dispatch, mapped (bounded)"),
)
_LOOP = "Kernel.launch (a command encoder, one compute pass, one dispatch, a submit)"

T = TypeVar("T")


def _host_clock() -> str:
    """The host clock of the Python loops, with its resolution."""
    return f"host clock time.perf_counter_ns (resolution {time.get_clock_info('perf_counter').resolution:g} s)"


def run_bounded(fn: Callable[[], T], what: str, predicted_s: Optional[float]) -> T:
    """``fn()`` on a helper thread, waited for within :func:`~apple_roofline.timing.watchdog.bound_for`
    ``(predicted_s)`` (:data:`~apple_roofline.timing.watchdog.CAP_S` when None); its value, or what it raised.

    Raises:
        DeviceStopped: ``fn`` did not return within the bound (it stays on its thread), naming ``what``.
    """
    done = threading.Event()
    box: Dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=call, name="wgpu-dispatch", daemon=True).start()
    with watched(what, predicted_s):
        wait_event(done, what)
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def host_steps(k: StudyKernel, backend: Any, reps: int) -> np.ndarray:
    """``reps`` round trips of ``k``, each cut at :data:`STEPS` (``Kernel.encode``, the queue's
    submit, ``Backend.synchronize``): seconds of each step, shape ``(reps, 3)``, host
    ``time.perf_counter_ns``, the garbage collector paused."""
    encode, submit, sync, clock = k.kernel.encode, backend.queue.submit, backend.synchronize, time.perf_counter_ns
    args = tuple(k.args)
    rows = np.zeros((reps, len(STEPS)), dtype=np.int64)
    sync()
    with gc_paused():
        for r in range(reps):
            t0 = clock()
            command = encode(args, k.work_items)
            t1 = clock()
            submit([command])
            t2 = clock()
            sync()
            rows[r] = (t1 - t0, t2 - t1, clock() - t2)
    return rows.astype(np.float64) * 1e-9


@dataclass
class _Costs:
    """Seconds per launch and per wait measured in the warm-up (0: not known), to predict a measure's time."""

    launch_s: float = 0.0
    wait_s: float = 0.0

    def predict(self, launches: int, waits: int) -> Optional[float]:
        """Seconds ``launches`` launches and ``waits`` waits take, None before a warm-up with launches."""
        return launches * self.launch_s + waits * self.wait_s if self.launch_s > 0 else None


class WgpuDispatch:
    """The dispatch study's measures of one :class:`~apple_roofline.webgpu.WgpuBackend` (module
    docstring): ``reps`` samples per series, ``launches`` launches per throughput sample."""

    def __init__(self, backend: Any, reps: int, launches: int) -> None:
        self.backend, self.reps, self.launches = backend, reps, launches
        self.costs = _Costs()

    def kernels(self) -> List[StudyKernel]:
        """The null and tiny kernels of ``dispatch.wgsl``, each on a zeroed buffer it counts launches in
        (one float4; 256 float4)."""
        from ...shaders import resolve

        out = []
        for name, floats, items in (("null", WGPU_NULL_BYTES // 4, 1), ("tiny", TINY_FLOATS, TINY_ITEMS)):
            kernel = self.backend.compile(*resolve(KERNEL_SOURCES[WGPU], f"dispatch_{name}"))
            output = self.backend.alloc(floats * 4)
            out.append(StudyKernel(name, kernel, (output,), items, output, kernel, (output,), floats=floats))
        return out

    def skipped(self, peers: bool) -> List[PeerSkipped]:
        """What the study cannot measure on wgpu, and why (module docstring)."""
        out = [
            PeerSkipped(
                "native",
                "the WebGPU backend is Python over wgpu-py: no C++ loop launches its kernels, so the python "
                "path is the only one and no binding cost is measured",
            ),
            PeerSkipped(
                "start_latency",
                "WebGPU gives no instant of the device's start on the host's clock (its timestamps are on the "
                "GPU's own clock, with no mapping to the host's): the round trip's host steps are measured instead",
            ),
        ]
        if not self.backend.timestamps:
            out.append(PeerSkipped("throughput (device clock)", "the adapter has no timestamp-query"))
        if peers:
            out.append(PeerSkipped("peers", f"none of {', '.join(PEERS)} drives a wgpu adapter"))
        return out

    def warm_up(self, k: StudyKernel, warmup: int) -> Tuple[bool, str]:
        """``warmup`` untimed launches of ``k`` and a wait, on a zeroed output, checked; their times
        predict the measures' (:func:`run_bounded`)."""

        def run() -> Tuple[float, float]:
            t0 = time.perf_counter()
            for _ in range(warmup):
                k.kernel.launch(k.args, k.work_items)
            t1 = time.perf_counter()
            self.backend.synchronize()
            return (t1 - t0) / warmup if warmup else 0.0, time.perf_counter() - t1

        k.reset()
        launch_s, wait_s = self._bounded(run, f"the {k.name} kernel's warm-up", None)
        if launch_s > 0:
            self.costs = _Costs(max(self.costs.launch_s, launch_s), max(self.costs.wait_s, wait_s))
        return k.check(warmup)

    def steps(self, k: StudyKernel) -> List[Tuple[str, str, Callable[[], Step]]]:
        """The measures of ``k``, ``(journal key, progress text, run)``; each ``run()`` measures on a
        zeroed output and validates it afterwards."""
        reps, per = self.reps, self.launches
        out: List[Tuple[str, str, Callable[[], Step]]] = []
        if self.backend.timestamps:
            device = self._bounded_step(partial(self._device, k), "a dispatch study's pass", reps * per, 1)
            out.append(
                (record_key(k.name, "throughput", "python", "device"), f"{k.name} throughput (GPU timestamps)", device)
            )
        for measure, n in (("throughput", per), ("round_trip", 1)):
            loop = self._bounded_step(
                partial(self._loop, k, measure, n), f"a dispatch study's {measure}", reps * n, reps
            )
            out.append(
                (record_key(k.name, measure, "python", "host"), f"{k.name} {measure} (python, host clock)", loop)
            )
        steps = self._bounded_step(partial(self._steps, k), "a dispatch study's round-trip steps", reps, reps)
        out.append((record_key(k.name, "steps", "python", "host"), f"{k.name} round-trip steps (host clock)", steps))
        return out

    def _bounded_step(self, fn: Callable[[], Step], what: str, launches: int, waits: int) -> Callable[[], Step]:
        """``fn`` run through :meth:`_bounded`, predicted to take ``launches`` launches and ``waits`` waits."""
        return lambda: self._bounded(fn, what, self.costs.predict(launches, waits))

    def _bounded(self, fn: Callable[[], T], what: str, predicted_s: Optional[float]) -> T:
        """``fn()``: on a CPU adapter through :func:`run_bounded`, elsewhere directly (a GPU's submit
        returns at once, and every wait in ``fn`` is bounded)."""
        return run_bounded(fn, what, predicted_s) if self.backend.queue.software else fn()

    def _device(self, k: StudyKernel) -> Step:
        """Throughput on the device clock: ``reps`` passes of ``launches`` dispatches, GPU timestamps."""
        per = self.launches
        k.reset()
        samples = [t / per for t in k.kernel.time(k.args, k.work_items, per, self.reps, clock=False)]
        ok, why = k.check(self.reps * per)
        note = (
            f"Kernel.time, batch {per}: {per} dispatches in one compute pass, the samples in one submission; "
            f"GPU timestamps (timestamp-query) at the pass's beginning and end, {self.backend.tick_s * 1e9:g} ns "
            "per tick"
        )
        series = LatencySeries(
            k.name, "throughput", "python", "device", tuple(samples), per, valid=ok, validation=why, note=note
        )
        return [series], [], []

    def _loop(self, k: StudyKernel, measure: str, n: int) -> Step:
        """``measure`` on the host clock: ``reps`` samples of ``n`` launches from Python and a wait."""
        k.reset()
        samples = python_throughput(k.kernel, self.backend, k.args, k.work_items, n, self.reps)
        ok, why = k.check(self.reps * n)
        note = f"Python loop: {_LOOP} × {n}, Backend.synchronize; {_host_clock()}"
        series = LatencySeries(
            k.name, measure, "python", "host", tuple(samples), n, valid=ok, validation=why, note=note
        )
        return [series], [], []

    def _steps(self, k: StudyKernel) -> Step:
        """The round trip's host steps (:func:`host_steps`), one series per step."""
        k.reset()
        rows = host_steps(k, self.backend, self.reps)
        ok, why = k.check(self.reps)
        series = [
            LatencySeries(
                k.name,
                "step",
                "python",
                "host",
                tuple(rows[:, j].tolist()),
                step=name,
                valid=ok,
                validation=why,
                note=f"until {ends}; {_host_clock()}",
            )
            for j, (name, ends) in enumerate(STEPS)
        ]
        return series, [], []
