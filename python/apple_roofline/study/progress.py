"""What every runner shares: the progress protocol it reports to (the CLI draws it; the Python API may
pass None) and the exception it raises on Ctrl-C or a device that stopped responding, carrying the
partial document."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, Optional, Protocol, TypeVar, cast

from ..errors import DeviceStopped

__all__ = ["Progress", "StudyInterrupted"]

D = TypeVar("D")


class Progress(Protocol):
    """Receives progress: one ``start`` per stage (a suite, a study), one ``advance`` per step done,
    one ``finish`` per stage."""

    def start(self, stage: str, total: int) -> None:
        """A stage of ``total`` steps begins."""

    def advance(self, description: str) -> None:
        """One step of the current stage is done; ``description`` says which, with its result."""

    def finish(self, stage: str) -> None:
        """The stage is over."""


class StudyInterrupted(Exception, Generic[D]):
    """Raised by a runner on KeyboardInterrupt, or when the device stopped responding
    (:class:`~apple_roofline.errors.DeviceStopped`, given as ``cause``); ``partial`` holds the
    document so far (``complete`` False; after a device stop, with the stop's message among its
    ``warnings``), ``stopped`` the device stop (None for an interruption). Each study subclasses it
    with its document type and its :attr:`MESSAGE`."""

    #: The exception's message.
    MESSAGE = "study interrupted"

    def __init__(self, partial: D, cause: Optional[BaseException] = None) -> None:
        super().__init__(self.MESSAGE)
        self.stopped = cause if isinstance(cause, DeviceStopped) else None
        if self.stopped is not None and dataclasses.is_dataclass(partial) and hasattr(partial, "warnings"):
            warnings = (*getattr(partial, "warnings"), str(self.stopped))
            partial = cast(D, dataclasses.replace(cast(Any, partial), warnings=warnings))
        self.partial = partial
