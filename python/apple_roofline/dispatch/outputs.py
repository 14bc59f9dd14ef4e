"""The files a dispatch-latency study is written as: dispatch.json, dispatch.md and dispatch.png.

:func:`write_study` writes each file atomically into a directory and says which it wrote and which
it could not make (the figure needs one valid series). A file that fails to write raises OSError
naming it; what was written before stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..study.outputs import write_study_files
from .model import DispatchStudy
from .plot import plot_dispatch
from .report import format_dispatch

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
    return write_study_files(
        out, "dispatch", study, lambda: format_dispatch(study, "md"), lambda p: plot_dispatch(study, p), what="plot"
    )
