"""Writing a study's files into a directory: each atomically, in order, the one that fails named.

Most studies write ``<stem>.json``, ``<stem>.md`` and ``<stem>.png`` (:func:`write_study_files`);
one with other figures writes them through :class:`OutputFiles` itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional, Tuple

from ..text import one_line
from .files import write_text_atomic

__all__ = ["OutputFiles", "write_study_files"]


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

    def text(self, name: str, text: str) -> None:
        """Write ``out/name`` holding ``text`` (:meth:`write`)."""
        self.write(name, lambda p: write_text_atomic(p, text))

    def figure(self, name: str, draw: Callable[[Path], None], what: Optional[str] = None) -> None:
        """Write the figure ``out/name`` with ``draw(path)``; when ``draw`` raises ValueError (no data
        for the figure), nothing is written and ``"no <what>: <why>"`` is recorded (:meth:`skip`),
        ``what`` defaulting to ``name``."""
        try:
            self.write(name, draw)
        except ValueError as exc:
            self.skip(f"no {what or name}: {exc}")


def write_study_files(
    out: Path,
    stem: str,
    json_text: str,
    markdown: Callable[[], str],
    draw: Callable[[Path], None],
    *,
    what: Optional[str] = None,
) -> Tuple[List[Path], List[str]]:
    """Write ``<stem>.json`` (``json_text``), ``<stem>.md`` (``markdown()``) and the figure
    ``<stem>.png`` (``draw(path)``, skipped as in :meth:`OutputFiles.figure`) into ``out``, in order.

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made.

    Raises:
        OSError: a file could not be written (the message names it); what was written before stays.
    """
    files = OutputFiles(out)
    files.text(f"{stem}.json", json_text)
    files.text(f"{stem}.md", markdown())
    files.figure(f"{stem}.png", draw, what)
    return files.written, files.problems
