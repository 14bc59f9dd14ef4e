"""The files a dispatch-latency study is written as: dispatch.json, dispatch.md and dispatch.png.

:func:`write_study` writes each file atomically into a directory and says which it wrote and which
it could not make (the figure needs one valid series). A file that fails to write raises OSError
naming it; what was written before stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Tuple

from ..study.files import write_text_atomic
from ..text import one_line
from .model import DispatchStudy
from .plot import plot_latency
from .report import format_latency

__all__ = ["STUDY_FILES", "write_study"]

#: The files :func:`write_study` writes, in order.
STUDY_FILES: Tuple[str, ...] = ("dispatch.json", "dispatch.md", "dispatch.png")


def write_study(study: DispatchStudy, out: Path) -> Tuple[List[Path], List[str]]:
    """Write ``study`` into the directory ``out``: :data:`STUDY_FILES`.

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made (no plot when no series is valid).

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    written: List[Path] = []
    problems: List[str] = []

    def write(name: str, save: Callable[[Path], None]) -> None:
        path = out / name
        try:
            save(path)
        except OSError as exc:  # name the target, not the temporary file beside it
            raise OSError(exc.errno, f"cannot write {path}: {exc.strerror or one_line(exc)}") from None
        written.append(path)

    text = study.to_json()  # checks the study before any file is touched
    write("dispatch.json", lambda p: write_text_atomic(p, text))
    write("dispatch.md", lambda p: write_text_atomic(p, format_latency(study, "md")))
    try:
        write("dispatch.png", lambda p: plot_latency(study, p))
    except ValueError as exc:
        problems.append(f"no plot: {exc}")
    return written, problems
