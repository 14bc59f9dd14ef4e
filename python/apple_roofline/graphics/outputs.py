"""The files a graphics study is written as: graphics.json, graphics.md, graphics-fill.png and
graphics-texture.png (each figure only where its suites were measured)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

from ..figures import save_figure
from ..study.outputs import OutputFiles
from .model import GraphicsStudy
from .plot import plot_fill, plot_texture
from .report import format_graphics

__all__ = ["GRAPHICS_FILES", "write_graphics"]

#: The files :func:`write_graphics` writes, in order.
GRAPHICS_FILES: Tuple[str, ...] = ("graphics.json", "graphics.md", "graphics-fill.png", "graphics-texture.png")


def write_graphics(study: GraphicsStudy, out: Path) -> Tuple[List[Path], List[str]]:
    """Write :data:`GRAPHICS_FILES` of ``study`` into the directory ``out``.

    Returns:
        ``(written, problems)``: the paths written and one sentence per figure that could not be made.

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    files = OutputFiles(out)
    text = study.to_json()
    files.text("graphics.json", text)
    files.text("graphics.md", format_graphics(study, "md"))
    files.figure("graphics-fill.png", lambda p: save_figure(plot_fill(study), p))
    files.figure("graphics-texture.png", lambda p: save_figure(plot_texture(study), p))
    return files.written, files.problems
