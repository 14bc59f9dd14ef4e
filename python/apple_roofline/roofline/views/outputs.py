"""The files a roofline run is written as: run.json, report.md, report.html and the figures.

:func:`write_run_files` writes every file atomically into a directory and says which it wrote and
which it could not make (a roofline figure needs a bandwidth and a compute ceiling; the sweep
figure needs sweep measurements; the figures of the suites' sections,
:func:`~apple_roofline.suites.registry.figures`, are written only where the run has something for
them, e.g. the memory hierarchy's working-set points). A figure of a partial run says under its axes
what it lacks (:mod:`.run_figures`). The write phase is atomic as a whole
(:mod:`apple_roofline.study.outputs`): run.json is written first listing every other file the run
will have as missing (:func:`planned_files`; status "files missing"), those an earlier run left are
removed, and run.json is written again once the last file is. A signal in between raises
:class:`~apple_roofline.study.outputs.FilesInterrupted` after run.json is written listing the files
not written; a file that fails to write raises OSError naming it, run.json listing those not
written. The reports and figures are drawing jobs (:mod:`.draw`), on a pool of processes side by
side when one is given. :func:`write_timed_run_files` also measures the run's
end phase (docs/design/wall-time.md, "Where the time goes").
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ...study.files import write_text_atomic
from ...study.outputs import OutputFiles, begin_files, files_cut, whole
from ...study.timing import EndClock
from ...suites import registry
from ...user_kernels.model import KernelSet
from ..model.run import Run
from ..model.selection import select_ceilings
from .draw import DrawPool, draw_jobs, run_jobs
from .tables import model_of

__all__ = ["RUN_FILES", "planned_files", "known_files", "write_run_files", "write_timed_run_files"]

#: The files :func:`write_run_files` writes of every run, in order (then the suites' figures).
RUN_FILES: Tuple[str, ...] = (
    "run.json",
    "report.md",
    "report.html",
    "roofline.png",
    "roofline.svg",
)


def known_files() -> Tuple[str, ...]:
    """Every file name the write phase of any run can write: :data:`RUN_FILES` and each suite's figure."""
    figures = (*registry.own_figures(), *registry.figures())
    return (*RUN_FILES, *(f"{fig.stem}.{fmt}" for _, fig in figures for fmt in ("png", "svg")))


def planned_files(run: Run) -> Tuple[str, ...]:
    """The files :func:`write_run_files` writes of ``run``, in order: run.json, report.md and
    report.html; the roofline figure where the run has a bandwidth and a compute ceiling; each
    suite's figures (its own, the sweep's, then its sections') where the run has a valid
    measurement of that suite (as ``.png`` and ``.svg``). What run.json lists as missing while they
    are written."""
    names = ["run.json", "report.md", "report.html"]
    if model_of(run) is not None:
        names += ["roofline.png", "roofline.svg"]
    measured = {m.suite for m in run.valid_measurements}
    for spec, fig in (*registry.own_figures(), *registry.figures()):
        if spec.name in measured:
            names += [f"{fig.stem}.png", f"{fig.stem}.svg"]
    return tuple(names)


def write_run_files(
    run: Run,
    out: Path,
    *,
    ceilings: Union[str, Sequence[str]] = "default",
    kernels: Optional[KernelSet] = None,
    pool: Optional[DrawPool] = None,
) -> Tuple[List[Path], List[str]]:
    """Write ``run`` into the directory ``out``: :data:`RUN_FILES`, then each suite's figure
    (:func:`~apple_roofline.suites.registry.figures`) the run has something for, as
    ``<stem>.png`` and ``<stem>.svg``.

    Args:
        run: the run.
        out: an existing, writable directory.
        ceilings: which ceilings the roofline figure shows (:func:`~.selection.select_ceilings`).
        kernels: your kernels (``run --kernels FILE``), drawn on the roofline figure and tabled in
            the reports; None for none.
        pool: draws the reports and figures side by side (:class:`~.draw.DrawPool`); None: one
            after another, in this process. The files are the same.

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made (no ceilings, no sweep).

    Raises:
        FilesInterrupted: a signal came before the last file was written; run.json lists those not
            written (module docstring).
        OSError: a file could not be written (the message names it).
        ResultsError: the run holds a non-finite number (nothing is written).

    A ceiling name the run does not have (known only once it is measured) is a problem, not an
    error: the figures then show the default ceilings, so the measurements are never lost.
    """
    _, written, problems = _write(run, out, ceilings, kernels, pool, EndClock(0.0, (), ()))
    return written, problems


def write_timed_run_files(
    run: Run,
    out: Path,
    origin: float,
    *,
    ceilings: Union[str, Sequence[str]] = "default",
    kernels: Optional[KernelSet] = None,
    pool: Optional[DrawPool] = None,
) -> Tuple[Run, List[Path], List[str]]:
    """:func:`write_run_files` of a run just measured, timing its end phase
    (:class:`~apple_roofline.study.timing.PhaseTime` ``"end"``): from the last suite's end (``origin``,
    the :func:`time.perf_counter` time its start-up phase counts from, plus the run's suites and
    phases) to the last file written. run.json is written first, as measured (a run killed while
    drawing keeps its measurements, its other files listed missing), the reports show the end phase
    until they were drawn, and run.json is written again, atomically, with the whole end phase and
    no file missing once the last file is. A run
    without a start-up phase (none of its suites started) gets no end phase.

    Returns:
        ``(run, written, problems)``: the run with its end phase (as run.json holds it), then as
        :func:`write_run_files`.

    Raises:
        as :func:`write_run_files`.
    """
    return _write(run, out, ceilings, kernels, pool, EndClock(origin, run.suite_times, run.phase_times))


def _write(
    run: Run,
    out: Path,
    ceilings: Union[str, Sequence[str]],
    kernels: Optional[KernelSet],
    pool: Optional[DrawPool],
    clock: EndClock,
) -> Tuple[Run, List[Path], List[str]]:
    """The files of ``run``; with an active ``clock`` its end phase, as :func:`write_timed_run_files`."""
    files = OutputFiles(out)
    run = whole(run)
    planned = planned_files(run)
    model = model_of(run)
    if model is not None and ceilings != "default":
        try:
            select_ceilings(model, ceilings)
        except ValueError as exc:
            files.skip(f"ceilings: {exc}; the figures show the default ceilings")
            ceilings = "default"
    t = time.perf_counter()
    clock.part("assemble", clock.start)
    run.to_json()  # checks the run before any file is touched
    try:
        files.write("run.json", lambda p: begin_files(run, out, "run.json", planned, known_files()))
        clock.part("run.json", t)
        reports, figures = draw_jobs(split=pool is not None and pool.executor is not None)
        shown = clock.with_end(run, "this report")
        written, problems, seconds = run_jobs((*reports, *figures), shown, out, ceilings, kernels, pool)
        for name, sec in seconds:
            clock.add(name, sec)
        files.written += written
        files.problems += problems
        final = clock.with_end(run) if clock.active else run
        OutputFiles(out).write("run.json", lambda p: write_text_atomic(p, final.to_json()))  # replaces the first
    except KeyboardInterrupt:
        raise files_cut(clock.with_end(run) if clock.active else run, out, "run.json", planned) from None
    except OSError:
        files_cut(run, out, "run.json", planned)
        raise
    return final, files.written, files.problems
