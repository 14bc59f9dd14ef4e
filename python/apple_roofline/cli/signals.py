"""SIGTERM and SIGHUP end a command as Ctrl-C does (docs/design/files.md, "Journal and resume"), and a
command that was interrupted, or whose device stopped responding, leaves at once (docs/design/watchdog.md,
"A watchdog on every device wait").

What ``timeout``, a batch scheduler, ``docker stop``, a CI cancellation (SIGTERM) or a closed
terminal (SIGHUP) send is turned into the KeyboardInterrupt Ctrl-C raises, so every runner's one
interruption path applies: the partial study is written with ``complete: false``, one line says so,
and the command exits 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP; 130 for Ctrl-C).
The device waits poll and let the signal handlers run every 50 ms, so this holds while a wait is in
flight.

Leaving: the interpreter's own exit releases every device object and joins every worker thread,
and on a device that stopped answering either can wait for ever (wgpu-native's device release
waits for the queue; a CUDA module unload for its kernel). So once the partial study is written
(:func:`end_now`) :func:`leave` flushes the standard streams and ends the process with
``os._exit``. And should a signal find the main thread inside a native call that never returns (so
that no handler can run), a watcher thread that sees the signal through the wakeup file descriptor
ends the process with 128 + N after :data:`STUCK_S` seconds, saying so; the journal then holds every
measurement finished before it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Any, Dict, Iterator, List, NoReturn, Optional

__all__ = [
    "SIGNALS",
    "STUCK_S",
    "signals_as_interrupts",
    "received",
    "interrupted_code",
    "interrupted_words",
    "end_now",
    "ending_now",
    "leave",
]

#: The signals handled as Ctrl-C (SIGHUP where the platform has it).
SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)
#: Seconds a signal may wait for its handler to run (the main thread back in Python) before the
#: process ends without it.
STUCK_S = 1.0

_received: List[int] = []
_handled: List[int] = []  # signals whose handler ran (SIGINT included), noted for the watcher
_ending: List[bool] = []


def _as_interrupt(signum: int, frame: Optional[FrameType]) -> None:
    _received.append(signum)
    _handled.append(signum)
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _ctrl_c(signum: int, frame: Optional[FrameType]) -> None:
    _handled.append(signum)
    raise KeyboardInterrupt


def _watch(read_fd: int) -> None:
    """The watcher thread: a signal of ours (its handler one of this module's) that the C-level
    handler writes to the wakeup descriptor starts a wait of :data:`STUCK_S`; if by then no handler
    of this module has run, the main thread is stuck in native code and the process ends here. Once
    one has run, the command's own interruption path is under way and the watcher does nothing."""
    ours = (_as_interrupt, _ctrl_c)
    while True:
        try:
            got = os.read(read_fd, 16)
        except OSError:
            got = b""
        if not got:  # the block ended (its end of the pipe closed)
            os.close(read_fd)
            return
        mine = [n for n in got if signal.getsignal(n) in ours]
        if not mine or _handled:
            continue
        time.sleep(STUCK_S)
        if not _handled and not _ending:
            try:
                name = signal.Signals(mine[0]).name
            except ValueError:
                name = str(mine[0])
            os.write(
                2,
                f"error: interrupted by {name} while a device call did not return; exiting without "
                "writing the partial study (the journal holds every finished measurement)\n".encode(),
            )
            os._exit(128 + mine[0])


@contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """Within the block, :data:`SIGNALS` raise KeyboardInterrupt in the main thread (and are noted for
    :func:`interrupted_code`), Ctrl-C as usual, and a watcher thread ends the process when a
    signal's handler cannot run (module docstring); the previous handlers come back after it.
    Call it from the main thread."""
    previous: Dict[int, Any] = {}
    for s in SIGNALS:
        previous[s] = signal.signal(s, _as_interrupt)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _ctrl_c)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="signal-watcher", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_fd)
        os.close(write_fd)  # the watcher reads end-of-file, closes its end and returns
        for s, handler in previous.items():
            signal.signal(s, handler)


def received() -> Optional[int]:
    """The first signal of :data:`SIGNALS` received, or None."""
    return _received[0] if _received else None


def interrupted_code() -> int:
    """The exit status of an interrupted command: 128 + the signal's number (130 for Ctrl-C)."""
    return 128 + (received() or int(signal.SIGINT))


def interrupted_words() -> str:
    """``"interrupted"`` (Ctrl-C) or ``"interrupted by SIGTERM"``, the start of the command's last line."""
    got = received()
    return "interrupted" if got is None else f"interrupted by {signal.Signals(got).name}"


def end_now() -> None:
    """Note that the command ended by an interruption or a device that stopped responding, its
    partial study written: :func:`leave` then skips the interpreter's exit, which may wait on the
    device."""
    _ending.append(True)


def ending_now() -> bool:
    """Whether :func:`end_now` was called."""
    return bool(_ending)


def leave(code: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``code`` at once (``os._exit``): no
    finalizer, no join of worker threads, no release of device objects."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
