"""Bounds of device waits (docs/design/watchdog.md, "A watchdog on every device wait").

Every wait for a device (a CUDA stream, a Metal command buffer, a wgpu read-back) ends: a pass that
has not finished within its bound raises :class:`~apple_roofline.errors.DeviceStopped` naming the
pass, and a signal received meanwhile is handled within :data:`INTERRUPT_SLICE_S`. The bound of a
pass predicted to take ``p`` seconds is ``max(FACTOR * p, FLOOR_S)``, at most :data:`CAP_S` (or
``2 p`` when that is more); a pass whose time is not yet known (the first launch of a kernel, a
probe) gets :data:`CAP_S`
(:func:`bound_for`). :func:`watched` sets the bound of the calling thread's waits, native and wgpu
alike, for a block; outside any block the waits have :data:`CAP_S` and name what they waited for.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Tuple

from ..errors import DeviceStopped

__all__ = ["FACTOR", "FLOOR_S", "CAP_S", "INTERRUPT_SLICE_S", "bound_for", "watched", "limit", "wait_event"]

#: A pass may take this many times its predicted time before the device counts as stopped: clocks
#: that ramp, a neighbour's work and the host's own delays stay well within it.
FACTOR = 10.0
#: The shortest bound, seconds: a pass predicted at microseconds still gets a scheduler's hiccup.
FLOOR_S = 2.0
#: The longest bound, seconds, but for a pass predicted longer than half of it (twice its
#: prediction), and the bound of a pass whose time is not known; the native waits outside any
#: :func:`watched` block have the same (``_core.WAIT_CAP_S``).
CAP_S = 60.0
#: How often a wait in progress lets the signal handlers run, seconds (``_core.WAIT_INTERRUPT_SLICE_S``).
INTERRUPT_SLICE_S = 0.05

_local = threading.local()


def bound_for(predicted_s: Optional[float]) -> float:
    """Seconds a pass predicted to take ``predicted_s`` may last: ``max(FACTOR * predicted_s,
    FLOOR_S)``, at most :data:`CAP_S`, or twice the prediction for a pass predicted longer than half
    the cap (``run --sustain`` asks for up to a minute of samples in one call); :data:`CAP_S` when
    the time is unknown (None, zero, negative or not finite)."""
    if predicted_s is None or not 0.0 < predicted_s < float("inf"):
        return CAP_S
    return min(max(FACTOR * predicted_s, FLOOR_S), max(CAP_S, 2.0 * predicted_s))


def limit() -> Tuple[float, str]:
    """The calling thread's bound: (seconds, the pass's name), ``(CAP_S, "")`` outside :func:`watched`."""
    current: Optional[Tuple[float, str]] = getattr(_local, "limit", None)
    return current if current is not None else (CAP_S, "")


def _native_setter() -> Optional[Callable[[float, str], Tuple[float, str]]]:
    """The extension's ``set_wait_limit``, or None where the extension cannot be loaded (the wgpu
    path works without it) or is a stand-in without it (tests replace it)."""
    try:
        from .._native import _core
    except ImportError:
        return None
    setter = getattr(_core, "set_wait_limit", None)
    return setter if callable(setter) else None


@contextmanager
def watched(pass_name: str, predicted_s: Optional[float]) -> Iterator[float]:
    """Within the block, every device wait of the calling thread (native and wgpu) is bounded by
    :func:`bound_for` ``(predicted_s)`` and, when it runs out, raises
    :class:`~apple_roofline.errors.DeviceStopped` naming ``pass_name``. Yields the bound, seconds;
    the previous bound comes back after the block (blocks nest)."""
    bound = bound_for(predicted_s)
    previous = getattr(_local, "limit", None)
    setter = _native_setter()
    native_previous = setter(bound, pass_name) if setter is not None else None
    _local.limit = (bound, pass_name)
    try:
        yield bound
    finally:
        _local.limit = previous
        if setter is not None and native_previous is not None:
            setter(*native_previous)


def wait_event(event: threading.Event, what: str) -> None:
    """Wait for ``event`` within the calling thread's bound (:func:`limit`). Signal handlers run
    meanwhile (the wait wakes every :data:`INTERRUPT_SLICE_S`).

    Raises:
        DeviceStopped: the bound passed first; it names the pass of :func:`watched`, else ``what``.
    """
    bound, name = limit()
    deadline = time.monotonic() + bound
    while not event.wait(min(INTERRUPT_SLICE_S, max(deadline - time.monotonic(), 0.0))):
        if time.monotonic() >= deadline:
            raise DeviceStopped(name or what, bound)
