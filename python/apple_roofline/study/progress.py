"""What every runner shares: the progress protocol it reports to (the CLI draws it; the Python API may
pass None) and the exception it raises on Ctrl-C, carrying the partial document."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

__all__ = ["Progress", "StudyInterrupted"]

D = TypeVar("D")


class Progress(Protocol):
    """Receives progress: one ``start`` per stage (a suite, a study), one ``advance`` per step done,
    one ``finish`` per stage."""

    def start(self, stage: str, total: int) -> None:
        """A stage of ``total`` steps begins."""

    def advance(self, description: str) -> None:
        """One step of the current stage is done; ``description`` says which, with its result."""

    def finish(self, stage: str, note: str = "") -> None:
        """The stage is over; ``note`` says why it ended before its total (``"cut short by its 10 s
        budget"``), "" when it ran to its end."""


class StudyInterrupted(Exception, Generic[D]):
    """Raised by a runner on KeyboardInterrupt; ``partial`` holds the document so far (``complete``
    False). Each study subclasses it with its document type and its :attr:`MESSAGE`."""

    #: The exception's message.
    MESSAGE = "study interrupted"

    def __init__(self, partial: D) -> None:
        super().__init__(self.MESSAGE)
        self.partial = partial
