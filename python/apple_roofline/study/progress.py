"""The progress protocol every runner reports to (the CLI draws it; the Python API may pass None)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress"]


class Progress(Protocol):
    """Receives progress: one ``start`` per stage (a suite, a study), one ``advance`` per step done,
    one ``finish`` per stage."""

    def start(self, stage: str, total: int) -> None:
        """A stage of ``total`` steps begins."""

    def advance(self, description: str) -> None:
        """One step of the current stage is done; ``description`` says which, with its result."""

    def finish(self, stage: str) -> None:
        """The stage is over."""
