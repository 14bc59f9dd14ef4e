"""What every runner shares: the progress protocol it reports to (the CLI draws it; the Python API may
pass None) and the exception it raises on Ctrl-C or a device that stopped responding, carrying the
partial document."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, Optional, Protocol, Sequence, TypeVar, cast

from ..errors import DeviceStopped

__all__ = ["Progress", "StudyInterrupted", "announce_plan", "announce_doing"]

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


def announce_plan(
    progress: object, stages: Sequence[str], budgets_s: Sequence[float], predicted_s: Sequence[float] = ()
) -> None:
    """Tell ``progress`` the stages a study will run, in order, and the seconds of budget of each
    (0: none), where it listens (a ``plan(stages, budgets_s)`` method, as the command line's
    display has: an overall "suite k of n" with the time left): a :class:`Progress` need not.
    ``predicted_s``, where given (a ``--quick`` run's prediction, 0 for a stage without one), is
    passed as ``plan``'s third argument only when one is above 0."""
    plan = getattr(progress, "plan", None)
    if callable(plan):
        if any(p > 0 for p in predicted_s):
            plan(list(stages), list(budgets_s), list(predicted_s))
        else:
            plan(list(stages), list(budgets_s))


def announce_doing(progress: object, description: str) -> None:
    """Tell ``progress`` what the current stage is doing before its next step is done (allocating
    and writing inputs, measuring a named case), where it listens (a ``doing(description)``
    method): a :class:`Progress` need not."""
    doing = getattr(progress, "doing", None)
    if callable(doing):
        doing(description)


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
