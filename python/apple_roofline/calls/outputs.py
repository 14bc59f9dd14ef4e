"""The files a per-call cost study is written as: calls.json, calls.md and calls.png.

:func:`write_calls` writes each atomically into a directory and says which it wrote and which it
could not make (the figure needs one valid measurement).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..study.outputs import write_study_files
from .model import CallsStudy
from .plot import plot_calls
from .report import format_calls

__all__ = ["CALLS_FILES", "write_calls"]

#: The files :func:`write_calls` writes, in order.
CALLS_FILES: Tuple[str, ...] = ("calls.json", "calls.md", "calls.png")


def write_calls(study: CallsStudy, out: Path) -> Tuple[List[Path], List[str]]:
    """Write ``study`` into the directory ``out``: :data:`CALLS_FILES`.

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made.

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    return write_study_files(
        out, "calls", study, lambda: format_calls(study, "md"), lambda p: plot_calls(study, p), what="plot"
    )
