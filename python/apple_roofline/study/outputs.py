"""Writing a study's files into a directory: each atomically, in order, the one that fails named."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List

from ..text import one_line

__all__ = ["OutputFiles"]


class OutputFiles:
    """The files of one study written into ``out`` (an existing, writable directory).

    ``written`` lists the paths written, in order; ``problems`` holds one sentence per file that could
    not be made (a figure without data), which the caller adds with :meth:`skip`.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.written: List[Path] = []
        self.problems: List[str] = []

    def write(self, name: str, save: Callable[[Path], None]) -> None:
        """Write ``out/name`` with ``save(path)`` (which writes atomically).

        Raises:
            OSError: naming ``out/name`` (not a temporary file beside it) and why.
        """
        path = self.out / name
        try:
            save(path)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write {path}: {exc.strerror or one_line(exc)}") from None
        self.written.append(path)

    def skip(self, problem: str) -> None:
        """Record that a file could not be made, and why."""
        self.problems.append(problem)
