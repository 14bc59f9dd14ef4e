"""SIGTERM and SIGHUP end a command as Ctrl-C does (docs/design.md, "Journal and resume").

What ``timeout``, a batch scheduler, ``docker stop``, a CI cancellation (SIGTERM) or a closed
terminal (SIGHUP) send is turned into the KeyboardInterrupt Ctrl-C raises, so every runner's one
interruption path applies: the partial study is written with ``complete: false``, one line says so,
and the command exits 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP; 130 for Ctrl-C).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from types import FrameType
from typing import Any, Dict, Iterator, List, Optional

__all__ = ["SIGNALS", "signals_as_interrupts", "received", "interrupted_code", "interrupted_words"]

#: The signals handled as Ctrl-C (SIGHUP where the platform has it).
SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)

_received: List[int] = []


def _as_interrupt(signum: int, frame: Optional[FrameType]) -> None:
    _received.append(signum)
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def signals_as_interrupts() -> Iterator[None]:
    """Within the block, :data:`SIGNALS` raise KeyboardInterrupt in the main thread (and are noted for
    :func:`interrupted_code`); the previous handlers come back after it."""
    previous: Dict[int, Any] = {}
    for s in SIGNALS:
        previous[s] = signal.signal(s, _as_interrupt)
    try:
        yield
    finally:
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
