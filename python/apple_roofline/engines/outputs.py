"""The files an engines study is written as: engines.json, engines.md and engines.png (the figure
only where points were measured; otherwise the reason is returned as a problem)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..figures import save_figure
from ..study.outputs import write_study_files
from .model import EnginesStudy
from .plot import plot_engines
from .report import format_engines

__all__ = ["ENGINES_FILES", "write_engines"]

#: The files :func:`write_engines` writes, in order.
ENGINES_FILES: Tuple[str, ...] = ("engines.json", "engines.md", "engines.png")


def write_engines(study: EnginesStudy, out: Path) -> Tuple[List[Path], List[str]]:
    """Write :data:`ENGINES_FILES` of ``study`` into the directory ``out``.

    Returns:
        ``(written, problems)``: the paths written and one sentence per file that could not be made.

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    return write_study_files(
        out, "engines", study, lambda: format_engines(study, "md"), lambda p: save_figure(plot_engines(study), p)
    )
