"""The files an engines study is written as: engines.json, engines.md and engines.png (the figure
only where points were measured; otherwise the reason is returned as a problem)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..figures import save_figure
from ..study.files import write_text_atomic
from ..study.outputs import OutputFiles
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
    files = OutputFiles(out)
    text = study.to_json()
    files.write("engines.json", lambda p: write_text_atomic(p, text))
    files.write("engines.md", lambda p: write_text_atomic(p, format_engines(study, "md")))
    try:
        fig = plot_engines(study)
    except ValueError as exc:
        files.skip(f"no engines.png: {exc}")
    else:
        files.write("engines.png", lambda p: save_figure(fig, p))
    return files.written, files.problems
