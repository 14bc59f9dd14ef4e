"""The files a tuning study is written as: tune.json, tune.md and tune.png."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..figures import save_figure
from ..study.outputs import write_study_files
from .model import TuneStudy
from .plot import plot_tune
from .report import format_tune

__all__ = ["TUNE_FILES", "write_tune"]

#: The files :func:`write_tune` writes, in order.
TUNE_FILES: Tuple[str, ...] = ("tune.json", "tune.md", "tune.png")


def write_tune(study: TuneStudy, out: Path) -> Tuple[List[Path], List[str]]:
    """Write :data:`TUNE_FILES` of ``study`` into the directory ``out``.

    Returns:
        ``(written, problems)``: the paths written and one sentence per figure that could not be made.

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    return write_study_files(
        out, "tune", study, lambda: format_tune(study, "md"), lambda p: save_figure(plot_tune(study), p)
    )
