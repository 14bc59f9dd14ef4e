"""What every peer library shares: the kernel as a peer launches it, the timed loops, measuring one
kernel, and importing the library.

A peer module (:mod:`.cupy_peer`, :mod:`.torch_peer`, :mod:`.mlx_peer`, :mod:`.pyobjc_peer`) has a
``NAME`` (the series' path) and ``OPENERS``: for each backend whose devices it drives, an
:data:`Opener`, ``open(device_index)``, a context manager yielding the :class:`PeerKernel` list it
can launch there and the kernels it cannot express (:class:`~apple_roofline.dispatch.model.PeerSkipped`).
It imports its library only inside an opener, through :func:`import_library`, and raises
:class:`PeerUnavailable` when the library or the device is missing.

Timed loops take :func:`time.perf_counter_ns` differences with the garbage collector disabled
(:func:`gc_paused`, as :mod:`timeit` does); warm-up launches run untimed before each measure, with the
collector as it was.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, List, Tuple

from ..model import LatencySeries, PeerSkipped

__all__ = [
    "CLOCK_NOTE",
    "OpenedKernels",
    "Opener",
    "PeerKernel",
    "PeerUnavailable",
    "gc_paused",
    "import_library",
    "library_version",
    "measure_kernel",
    "no_output_check",
    "round_trip_samples",
    "throughput_samples",
]

#: How a peer's samples are timed, for the series' notes.
CLOCK_NOTE = "Host clock: time.perf_counter_ns, garbage collector disabled"


class PeerUnavailable(Exception):
    """The peer cannot run here (not installed, no device); the message is the whole reason."""


def _no_reset() -> None:
    return None


@dataclass
class PeerKernel:
    """One kernel as a peer launches it.

    Attributes:
        kernel: ``"null"`` or ``"tiny"``.
        launch: one launch, not waited for; returns what ``wait`` takes.
        wait: waits for that launch and everything queued before it.
        what: the kernel and its launch shape, for the notes.
        launch_calls: the API calls of one launch.
        wait_calls: the API call of the wait.
        check: validation after ``count`` launches since ``reset``: ``(valid, message)``.
        reset: zero the output (and forget errors); waits for it.
        round_trip: launch and wait as the library's users write it (default: ``wait(launch())``).
        round_trip_calls: the API calls of ``round_trip``, when it is given.
        scope: wraps each sample, untimed (PyObjC: an autorelease pool).
    """

    kernel: str
    launch: Callable[[], Any]
    wait: Callable[[Any], None]
    what: str
    launch_calls: str
    wait_calls: str
    check: Callable[[int], Tuple[bool, str]]
    reset: Callable[[], None] = _no_reset
    round_trip: Callable[[], None] | None = None
    round_trip_calls: str = ""
    scope: Callable[[], AbstractContextManager[Any]] = contextlib.nullcontext


#: What a peer's ``open_kernels`` yields: the kernels it launches, and those it cannot express.
OpenedKernels = Tuple[List[PeerKernel], List[PeerSkipped]]
#: How a peer opens its kernels on one device of a backend: ``open(device_index)``, a context manager.
Opener = Callable[[int], AbstractContextManager[OpenedKernels]]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the garbage collector (as :mod:`timeit` does), restoring its previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def throughput_samples(k: PeerKernel, *, reps: int, launches: int, warmup: int) -> List[float]:
    """``warmup`` untimed launches and a wait, then ``reps`` samples of ``launches`` launches back to
    back and one wait; seconds per launch."""
    launch, wait, clock = k.launch, k.wait, time.perf_counter_ns
    if warmup:
        with k.scope():
            handle = None
            for _ in range(warmup):
                handle = launch()
            wait(handle)
    samples: List[float] = []
    with gc_paused():
        for _ in range(reps):
            with k.scope():
                t0 = clock()
                for _ in range(launches):
                    handle = launch()
                wait(handle)
                t1 = clock()
            samples.append((t1 - t0) * 1e-9 / launches)
    return samples


def round_trip_samples(k: PeerKernel, *, reps: int, warmup: int) -> List[float]:
    """``warmup`` untimed round trips, then ``reps`` samples of one launch and its wait; seconds."""
    launch, wait, clock = k.launch, k.wait, time.perf_counter_ns

    def launch_and_wait() -> None:
        wait(launch())

    one = k.round_trip or launch_and_wait
    if warmup:
        with k.scope():
            for _ in range(warmup):
                one()
    samples: List[float] = []
    with gc_paused():
        for _ in range(reps):
            with k.scope():
                t0 = clock()
                one()
                t1 = clock()
            samples.append((t1 - t0) * 1e-9)
    return samples


def measure_kernel(
    path: str,
    k: PeerKernel,
    out: List[LatencySeries],
    *,
    reps: int,
    launches: int,
    warmup: int,
    progress: Callable[[str], None] | None,
) -> None:
    """Append ``k``'s throughput and round-trip series to ``out``, each as soon as it is measured
    (so that a later exception keeps it); the output is zeroed before each and checked after it."""
    if progress:
        progress(f"{path} {k.kernel} throughput")
    k.reset()
    samples = throughput_samples(k, reps=reps, launches=launches, warmup=warmup)
    ok, message = k.check(warmup + reps * launches)
    out.append(
        LatencySeries(
            kernel=k.kernel,
            measure="throughput",
            path=path,
            clock="host",
            samples_s=tuple(samples),
            launches_per_sample=launches,
            valid=ok,
            validation=message,
            note=(
                f"{k.what}. {CLOCK_NOTE}; per sample {launches} launches back to back, then one wait, "
                f"divided by {launches}. Launch: {k.launch_calls}. Wait: {k.wait_calls}."
            ),
        )
    )

    if progress:
        progress(f"{path} {k.kernel} round_trip")
    k.reset()
    samples = round_trip_samples(k, reps=reps, warmup=warmup)
    ok, message = k.check(warmup + reps)
    timed = k.round_trip_calls or f"{k.launch_calls}, then {k.wait_calls}"
    out.append(
        LatencySeries(
            kernel=k.kernel,
            measure="round_trip",
            path=path,
            clock="host",
            samples_s=tuple(samples),
            launches_per_sample=1,
            valid=ok,
            validation=message,
            note=f"{k.what}. {CLOCK_NOTE}; per sample one launch and its wait: {timed}.",
        )
    )


def no_output_check(library: str) -> Callable[[int], Tuple[bool, str]]:
    """The check of a kernel without output (null): valid when the launches raised no error."""

    def check(count: int) -> Tuple[bool, str]:
        return True, f"no output: the launch completed without an error from {library}"

    return check


def import_library(module: str, peer: str) -> Any:
    """Import ``module`` for ``peer``; :class:`PeerUnavailable` naming it when missing or broken."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PeerUnavailable(f"{peer} is not installed (import {module}: {exc})") from None
    except Exception as exc:  # noqa: BLE001 - a broken install: missing shared libraries, version clashes ...
        raise PeerUnavailable(f"{peer} failed to import ({module}: {type(exc).__name__}: {exc})") from None


def library_version(module: Any) -> str:
    """``module.__version__``, or ``"(version unknown)"``."""
    return str(getattr(module, "__version__", "") or "(version unknown)")
