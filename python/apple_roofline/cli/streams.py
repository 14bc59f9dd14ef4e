"""Output that fails is not the command's failure: stdout or stderr that is closed or full (a pipe
whose reader left, ``| head -n1``; ``>/dev/full``) stops the printing, not the measurement.

Within :func:`guarded_streams` ``sys.stdout`` and ``sys.stderr`` are :class:`GuardedStream` objects,
so everything the command prints goes through them: ``typer.echo`` (Click looks the streams up on
``sys`` at each call) and the Rich progress display (its console writes to ``sys.stderr``). The
first write or flush that fails (an OSError such as EPIPE or ENOSPC; Python ignores SIGPIPE, so a
closed pipe is a BrokenPipeError) marks the stream lost: it is pointed at the null device (so that
nothing written later, the interpreter's last flush included, fails again) and every later write
is dropped. A lost stdout is said once on stderr where stderr still works.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Optional, TextIO

__all__ = ["GuardedStream", "guarded_streams"]


class GuardedStream:
    """A text stream whose failures are not errors: ``write`` and ``flush`` of ``stream`` that raise
    OSError (or ValueError: closed) mark it lost (:attr:`lost`, the reason), call ``on_lost(self)``
    once, and from then on do nothing. Other attributes are ``stream``'s (``isatty``, ``fileno``,
    ``encoding`` ...). Writing bytes raises TypeError as a text stream does (Click probes with it)."""

    def __init__(self, stream: TextIO, name: str, on_lost: Optional[Callable[["GuardedStream"], None]] = None) -> None:
        self.stream = stream
        self.name = name
        self.lost: Optional[str] = None
        self._on_lost = on_lost

    def _lose(self, exc: BaseException) -> None:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        self.lost = why
        try:  # what the stream still buffers, and anything written to its descriptor later, goes nowhere
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self.stream.fileno())
            finally:
                os.close(null)
            self.stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
        if self._on_lost is not None:
            self._on_lost(self)

    def write(self, text: str) -> int:
        if self.lost is not None:
            return len(text)
        try:
            return self.stream.write(text)
        except (OSError, ValueError) as exc:
            if isinstance(exc, UnicodeError):
                raise
            self._lose(exc)
            return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.lost is not None:
            return
        try:
            self.stream.flush()
        except (OSError, ValueError) as exc:
            self._lose(exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _say_lost(stream: GuardedStream) -> None:
    """A lost stdout said on stderr (itself guarded: nothing where it is lost too)."""
    if stream.name == "stdout":
        sys.stderr.write(
            f"warning: stdout was lost ({stream.lost}): what this command prints there is dropped; "
            "it goes on measuring and writes its files\n"
        )
        sys.stderr.flush()


@contextmanager
def guarded_streams() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` are :class:`GuardedStream` objects
    (module docstring); the streams they guard come back after it."""
    saved = sys.stdout, sys.stderr
    sys.stdout = GuardedStream(saved[0], "stdout", _say_lost)
    sys.stderr = GuardedStream(saved[1], "stderr")
    try:
        yield
    finally:
        for guarded in (sys.stdout, sys.stderr):
            guarded.flush()
        sys.stdout, sys.stderr = saved
