"""The files a graphics study is written as: graphics.json, graphics.md, graphics-fill.png and
graphics-texture.png (each figure only where its suites were measured).

Each figure is a drawing job (:data:`FIGURE_JOBS`) that writes its own file atomically, so the two
can be drawn side by side on a pool of processes (:func:`~apple_roofline.roofline.views.draw.figure_pool`,
started with the study so that its processes import :data:`GRAPHICS_PRELOAD` while it measures) or
one after the other in this process; the files are the same either way. :func:`write_timed_graphics`
also measures the study's end phase (docs/design/wall-time.md, "Where the time goes"). The write phase is
atomic as a whole (:mod:`apple_roofline.study.outputs`): graphics.json lists the files not yet
written until the last one is.
"""

from __future__ import annotations

import time
from concurrent.futures import BrokenExecutor, Future, wait
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

from ..figures import save_figure
from ..study.files import write_text_atomic
from ..study.outputs import OutputFiles, begin_files, files_cut, whole
from ..study.timing import EndClock
from .model import GraphicsStudy
from .plot import plot_fill, plot_texture
from .report import format_graphics

if TYPE_CHECKING:
    from ..roofline.views.draw import DrawPool

__all__ = [
    "GRAPHICS_FILES",
    "GRAPHICS_PRELOAD",
    "FIGURE_JOBS",
    "planned_graphics",
    "write_graphics",
    "write_timed_graphics",
]

#: The files :func:`write_graphics` writes, in order.
GRAPHICS_FILES: Tuple[str, ...] = ("graphics.json", "graphics.md", "graphics-fill.png", "graphics-texture.png")


def planned_graphics(study: GraphicsStudy) -> Tuple[str, ...]:
    """The files :func:`write_graphics` writes of ``study``: graphics.json and graphics.md, the fill
    figure where fillrate or tilemem was measured, the texture figure where texture was."""
    names = ["graphics.json", "graphics.md"]
    if study.suite("fillrate") or study.suite("tilemem"):
        names.append("graphics-fill.png")
    if study.suite("texture"):
        names.append("graphics-texture.png")
    return tuple(names)


#: Modules a drawing process imports before its first job: matplotlib's figure and Agg modules and
#: the figures' own.
GRAPHICS_PRELOAD: Tuple[str, ...] = (
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "apple_roofline.graphics.outputs",
)

#: What a job gives back: the paths it wrote and one sentence per file it could not make.
Drawn = Tuple[List[Path], List[str]]


def _fill_figure(study: GraphicsStudy, out: Path) -> Drawn:
    files = OutputFiles(out)
    files.figure("graphics-fill.png", lambda p: save_figure(plot_fill(study), p))
    return files.written, files.problems


def _texture_figure(study: GraphicsStudy, out: Path) -> Drawn:
    files = OutputFiles(out)
    files.figure("graphics-texture.png", lambda p: save_figure(plot_texture(study), p))
    return files.written, files.problems


#: The figures' drawing jobs, ``(what, draw(study, out))``, module-level functions (a pool's
#: process is sent them), in the order of :data:`GRAPHICS_FILES`.
FIGURE_JOBS: Tuple[Tuple[str, Callable[[GraphicsStudy, Path], Drawn]], ...] = (
    ("graphics-fill.png", _fill_figure),
    ("graphics-texture.png", _texture_figure),
)


def _timed(draw: Callable[[GraphicsStudy, Path], Drawn], study: GraphicsStudy, out: Path) -> Tuple[Drawn, float]:
    t = time.perf_counter()
    drawn = draw(study, out)
    return drawn, time.perf_counter() - t


def _figures(study: GraphicsStudy, out: Path, pool: Optional["DrawPool"]) -> Callable[[], List[Tuple[Drawn, float]]]:
    """Start every job of :data:`FIGURE_JOBS` on ``pool``'s processes where it has any; a callable
    that waits for them (every job ends before an error is raised) and gives each job's files and
    seconds. Without processes, or where one of the pool's died, the jobs are drawn one after
    another in this process when it is called (each file is written atomically, so drawing one
    twice leaves it whole)."""
    executor = pool.executor if pool is not None else None
    futures: List["Future[Tuple[Drawn, float]]"] = []
    if executor is not None:
        try:
            futures = [executor.submit(_timed, draw, study, out) for _, draw in FIGURE_JOBS]
        except BrokenExecutor:
            futures = []

    def drawn() -> List[Tuple[Drawn, float]]:
        if futures:
            try:
                wait(futures)
                return [f.result() for f in futures]
            except BrokenExecutor:
                pass
        return [_timed(draw, study, out) for _, draw in FIGURE_JOBS]

    return drawn


def write_graphics(study: GraphicsStudy, out: Path, pool: Optional["DrawPool"] = None) -> Tuple[List[Path], List[str]]:
    """Write :data:`GRAPHICS_FILES` of ``study`` into the directory ``out``, the figures on ``pool``
    where given (:func:`~apple_roofline.roofline.views.draw.figure_pool`; the files are the same).

    Returns:
        ``(written, problems)``: the paths written and one sentence per figure that could not be made.

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    _, written, problems = _write(study, out, pool, EndClock(0.0, (), ()))
    return written, problems


def write_timed_graphics(
    study: GraphicsStudy, out: Path, origin: float, pool: Optional["DrawPool"] = None
) -> Tuple[GraphicsStudy, List[Path], List[str]]:
    """:func:`write_graphics` of a study just measured, timing its end phase
    (:class:`~apple_roofline.study.timing.PhaseTime` ``"end"``): from the last suite's end (``origin``,
    the :func:`time.perf_counter` time its start-up counts from, plus its suites and phases) to the
    last file written, with the parts ``assemble`` (closing the checks, the study's assembly),
    ``graphics.json``, ``graphics.md`` and each figure. graphics.json is written first, as measured,
    graphics.md shows the end phase until it was drawn, and graphics.json is written again,
    atomically, with the whole end phase once the last figure is. A study without a start-up phase
    gets no end phase.

    Returns:
        ``(study, written, problems)``: the study with its end phase (as graphics.json holds it),
        then as :func:`write_graphics`.

    Raises:
        as :func:`write_graphics`.
    """
    return _write(study, out, pool, EndClock(origin, study.suite_times, study.phase_times))


def _write(
    study: GraphicsStudy, out: Path, pool: Optional["DrawPool"], clock: EndClock
) -> Tuple[GraphicsStudy, List[Path], List[str]]:
    files = OutputFiles(out)
    study = whole(study)
    planned = planned_graphics(study)
    study.to_json()  # checks the study before any file is touched
    clock.part("assemble", clock.start)
    try:
        t = time.perf_counter()
        files.write("graphics.json", lambda p: begin_files(study, out, "graphics.json", planned, GRAPHICS_FILES))
        clock.part("graphics.json", t)
        figures = _figures(study, out, pool)  # drawn meanwhile where the pool has processes
        t = time.perf_counter()
        files.text("graphics.md", format_graphics(clock.with_end(study, "this report"), "md"))
        clock.part("graphics.md", t)
        for (what, _), ((written, problems), seconds) in zip(FIGURE_JOBS, figures()):
            files.written += written
            files.problems += problems
            clock.add(what, seconds)
        final = clock.with_end(study) if clock.active else study
        OutputFiles(out).write("graphics.json", lambda p: write_text_atomic(p, final.to_json()))  # replaces the first
    except KeyboardInterrupt:
        raise files_cut(clock.with_end(study) if clock.active else study, out, "graphics.json", planned) from None
    except OSError:
        files_cut(study, out, "graphics.json", planned)
        raise
    return final, files.written, files.problems
