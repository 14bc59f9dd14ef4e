"""The files of a roofline run as independent drawing jobs, in-process or on a pool of processes.

:func:`~.outputs.write_run_files` writes a run's reports and figures through :func:`draw_jobs`:
each job writes its own files atomically into the output directory and returns what it wrote and
what it could not make, so the jobs can run one after another or side by side on a
:class:`DrawPool` (docs/design/wall-time.md, "Where the time goes"). A pool's processes draw with
matplotlib's object-oriented Agg API (:mod:`apple_roofline.figures`) in their own interpreter, so
nothing is shared with the measuring process; the files are the same either way. A job's error
(OSError naming the file, ValueError) is raised again in the caller, as in-process.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ...figures import Figure, figure_bytes
from ...study.files import write_bytes_atomic
from ...study.outputs import OutputFiles
from ...suites import registry
from ...user_kernels.model import KernelSet
from ...user_kernels.place import place
from ..model.run import Run
from .html import to_html
from .report import to_markdown
from .run_figures import roofline_figure, suite_figure, suite_figures
from .tables import missing_ceilings, model_of

__all__ = [
    "Drawn",
    "DrawJob",
    "DrawPool",
    "draw_jobs",
    "drawing_pool",
    "figure_pool",
    "run_jobs",
    "no_ceilings_message",
    "PRELOAD",
    "MIN_CORES",
]

#: What a job gives back: the paths it wrote, in order, one sentence per file it could not make, and
#: the SVG text of each figure it saved, by file stem (report.html shows the same figures).
Drawn = Tuple[List[Path], List[str], Dict[str, str]]
#: A job's :data:`Drawn` and its seconds.
Timed = Tuple[Drawn, float]
#: Which ceilings the roofline shows (:func:`~.selection.select_ceilings`).
Ceilings = Union[str, Sequence[str]]

#: Modules a pool's processes import before their first job: the drawing stack.
PRELOAD: Tuple[str, ...] = (
    "apple_roofline.roofline.views.draw",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
    "matplotlib.backends.backend_svg",
    "plotly.io",
    "plotly.graph_objects",
)

#: The fewest cores on which a run draws its files on a pool: with fewer, the jobs and the measuring
#: process's own work would only take turns on the same cores.
MIN_CORES = 4


@dataclass(frozen=True)
class DrawJob:
    """One job: ``draw(run, out, ceilings, kernels, svgs)``, a module-level function (so a pool's
    process can be sent it), and what it draws, in words. ``svgs`` holds the SVG text the
    figure jobs gave back (:data:`Drawn`) where the job ``shows_figures`` (report.html: it runs once
    those that ``saves_svg`` have ended), else nothing."""

    what: str
    draw: Callable[[Run, Path, Ceilings, Optional[KernelSet], Mapping[str, str]], Drawn]
    saves_svg: bool = False
    shows_figures: bool = False


def no_ceilings_message(run: Run, source: object) -> str:
    """Why ``run`` (named ``source``) has no roofline to draw: with no ceiling at all, what it holds
    instead; with ceilings of one kind only, the kind that is missing and which suite measures it
    (:func:`~.tables.missing_ceilings`)."""
    if run.ceilings:
        have = len(run.ceilings)
        kinds = " and ".join(sorted({c.kind for c in run.ceilings}))
        return (
            f"{source} has {' and '.join(missing_ceilings(run))} to draw its "
            f"{have} {kinds} ceiling{'s' if have != 1 else ''} against"
        )
    n = len(run.measurements)
    which = "none valid for a ceiling" if not run.valid_measurements else "none of which sets a ceiling"
    held = f"{n} measurement{'s' if n != 1 else ''}, {which}" if n else "no measurements"
    return f"{source} has no ceilings to draw (it holds {held})"


def _markdown(run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]) -> Drawn:
    files = OutputFiles(out)
    files.text("report.md", to_markdown(run, kernels=kernels))
    return files.written, files.problems, {}


def _html(run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]) -> Drawn:
    files = OutputFiles(out)
    files.text("report.html", to_html(run, ceilings=ceilings, kernels=kernels, svgs=svgs))
    return files.written, files.problems, {}


def _save(files: OutputFiles, fig: Figure, stem: str, formats: Sequence[str], svgs: Dict[str, str]) -> None:
    """Save ``fig`` as ``<stem>.<format>`` for each of ``formats`` ("png", "svg"), keeping the SVG
    text in ``svgs[stem]``."""
    for fmt in formats:
        data = figure_bytes(fig, fmt)
        files.write(f"{stem}.{fmt}", lambda p: write_bytes_atomic(p, data))
        if fmt == "svg":
            svgs[stem] = data.decode("utf-8")


def _roofline_files(
    formats: Sequence[str], run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], *, say_why_not: bool
) -> Drawn:
    """The roofline figure drawn once and saved in each of ``formats``; with no ceilings, the reason
    as a problem where ``say_why_not`` (one job of a split pair says it)."""
    files = OutputFiles(out)
    svgs: Dict[str, str] = {}
    model = model_of(run)
    if model is None:
        if say_why_not:
            files.skip(f"no roofline plot: {no_ceilings_message(run, 'the run')}")
    else:
        fig = roofline_figure(
            run, model, ceilings=ceilings, kernels=place(model, kernels) if kernels is not None else ()
        )
        _save(files, fig, "roofline", formats, svgs)
    return files.written, files.problems, svgs


def _roofline(run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]) -> Drawn:
    return _roofline_files(("png", "svg"), run, out, ceilings, kernels, say_why_not=True)


def _roofline_png(
    run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]
) -> Drawn:
    return _roofline_files(("png",), run, out, ceilings, kernels, say_why_not=True)


def _roofline_svg(
    run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]
) -> Drawn:
    return _roofline_files(("svg",), run, out, ceilings, kernels, say_why_not=False)


def _own_figure(
    stem: str, run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]
) -> Drawn:
    """The suite's own figure of file stem ``stem`` (:func:`~apple_roofline.suites.registry.own_figures`)."""
    files = OutputFiles(out)
    drawn: Dict[str, str] = {}
    for spec, figure in registry.own_figures():
        if figure.stem != stem:
            continue
        fig = suite_figure(run, spec.name, figure)
        if fig is not None:
            _save(files, fig, stem, ("png", "svg"), drawn)
        else:
            files.skip(f"no {stem} plot: the run has no valid {spec.name} measurements")
    return files.written, files.problems, drawn


def _suites(run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]) -> Drawn:
    files = OutputFiles(out)
    drawn: Dict[str, str] = {}
    for stem, fig in suite_figures(run):
        _save(files, fig, stem, ("png", "svg"), drawn)
    return files.written, files.problems, drawn


def draw_jobs(split: bool = False) -> Tuple[Tuple[DrawJob, ...], Tuple[DrawJob, ...]]:
    """``(reports, figures)``: the jobs that write report.md and report.html, and those that write
    the roofline, each suite's own figure (the sweep's, one job each) and the suites' section
    figures (:func:`~.run_figures.suite_figures`), each in
    the order the files are listed. report.html shows the figures' SVG as the figure jobs saved it
    (:func:`run_jobs` draws it once they have ended), so no figure is drawn twice.

    With ``split`` (side by side on a pool), the roofline's PNG and SVG are two jobs
    (``"roofline.png"``, ``"roofline.svg"``), each drawing the figure and saving one format, so the
    pool's longest job is shorter; one after another, one job (``"roofline"``) draws it once and
    saves both. The files are the same: a figure's SVG does not depend on a PNG saved before it."""
    reports = (DrawJob("report.md", _markdown), DrawJob("report.html", _html, shows_figures=True))
    roofline = (
        (DrawJob("roofline.png", _roofline_png), DrawJob("roofline.svg", _roofline_svg, saves_svg=True))
        if split
        else (DrawJob("roofline", _roofline, saves_svg=True),)
    )
    own = tuple(
        DrawJob(fig.stem, partial(_own_figure, fig.stem), saves_svg=True) for _spec, fig in registry.own_figures()
    )
    figures = (*roofline, *own, DrawJob("suite figures", _suites, saves_svg=True))
    return reports, figures


def _quiet() -> None:
    """A pool process's start: Ctrl-C is the measuring process's to handle (it stops the pool), so
    the pool's processes ignore it rather than each print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ready() -> bool:
    return True


def _start(executor: Executor, ready: "Future[bool]") -> None:
    """Submit :func:`_ready` to ``executor`` (which starts its first process) and pass its outcome
    on to ``ready``."""
    try:
        inner = executor.submit(_ready)
    except Exception as exc:  # closed before the thread ran, or the pool is broken
        ready.set_exception(exc)
        return
    inner.add_done_callback(lambda f: _settle(f, ready))


def _settle(inner: "Future[bool]", ready: "Future[bool]") -> None:
    if inner.cancelled():  # the pool closed before its process ran it
        ready.cancel()
        return
    exc = inner.exception()
    if exc is not None:
        ready.set_exception(exc)
    else:
        ready.set_result(inner.result())


class DrawPool:
    """A pool of ``workers`` processes that draw a run's files (:func:`run_jobs`), started from a
    fork server that has imported ``preload`` (default :data:`PRELOAD`; so a process starts with the drawing stack
    imported, and none inherits the measuring process's threads or device). :meth:`warm` starts
    the server and one process ahead of use. Where the platform has no fork server (Windows),
    :attr:`executor` is None and the jobs run in-process. Use as a context manager, or call
    :meth:`close`."""

    def __init__(self, workers: int, preload: Sequence[str] = PRELOAD) -> None:
        self.executor: Optional[Executor] = None
        if workers < 1 or "forkserver" not in multiprocessing.get_all_start_methods():
            return
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(preload))
        self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_quiet)

    def warm(self) -> Optional["Future[bool]"]:
        """Start the fork server (which imports :data:`PRELOAD`) and one process, on a thread: a
        process's start waits until the server has imported :data:`PRELOAD` (a second or more), so
        the caller goes on at once. The future is done (True) once that process has run; cancelled,
        or with the error, where the pool was closed first or could not start. None without a pool."""
        executor = self.executor
        if executor is None:
            return None
        ready: "Future[bool]" = Future()
        threading.Thread(target=_start, args=(executor, ready), name="drawing pool start", daemon=True).start()
        return ready

    def close(self) -> None:
        """Stop the pool's processes (jobs not started are cancelled)."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None

    def __enter__(self) -> "DrawPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _timed(
    job: DrawJob, run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]
) -> Timed:
    """``job`` drawn, with its seconds of wall time (where it ran: in a pool's process, its own)."""
    t = time.perf_counter()
    drawn = job.draw(run, out, ceilings, kernels, svgs)
    return drawn, time.perf_counter() - t


def _here(
    job: DrawJob, run: Run, out: Path, ceilings: Ceilings, kernels: Optional[KernelSet], svgs: Mapping[str, str]
) -> "Future[Timed]":
    """``job`` drawn in this process, its outcome (result or error) as a done future."""
    done: "Future[Timed]" = Future()
    try:
        done.set_result(_timed(job, run, out, ceilings, kernels, svgs))
    except (OSError, ValueError) as exc:
        done.set_exception(exc)
    return done


def _svgs(futures: Sequence["Future[Timed]"]) -> Dict[str, str]:
    """The SVG text the ended jobs of ``futures`` gave back (a job that failed gives none: the
    report draws its figures itself)."""
    svgs: Dict[str, str] = {}
    for f in futures:
        if f.exception() is None:
            svgs.update(f.result()[0][2])
    return svgs


def run_jobs(
    jobs: Sequence[DrawJob],
    run: Run,
    out: Path,
    ceilings: Ceilings,
    kernels: Optional[KernelSet],
    pool: Optional[DrawPool] = None,
) -> Tuple[List[Path], List[str], List[Tuple[str, float]]]:
    """Run ``jobs`` for ``run`` into ``out``, on ``pool``'s processes side by side where given (and
    started), else one after another: the paths written and the problems, in the jobs' order, and
    each job's seconds (``(what, seconds)``; side by side, they overlap). A job that
    ``shows_figures`` starts once those that ``saves_svg`` have ended, with their SVG text.

    A pool whose process died (killed, out of memory) has its jobs drawn again in this process:
    each file is written atomically, so drawing one twice leaves it whole.

    Raises:
        OSError: a file could not be written (the message names it); the first failing job's, in
            the jobs' order, after every job has ended.
        ValueError: as the job raised it.
    """
    first = [i for i, job in enumerate(jobs) if not job.shows_figures]
    later = [i for i, job in enumerate(jobs) if job.shows_figures]
    executor = pool.executor if pool is not None else None
    futures: Dict[int, "Future[Timed]"] = {}
    if executor is not None:
        try:
            for i in first:
                futures[i] = executor.submit(_timed, jobs[i], run, out, ceilings, kernels, {})
            saving = [futures[i] for i in first if jobs[i].saves_svg]
            wait(saving)
            svgs = _svgs(saving)
            for i in later:
                futures[i] = executor.submit(_timed, jobs[i], run, out, ceilings, kernels, svgs)
            wait(futures.values())  # every job ends before an error is raised, so none writes after
            done = [futures[i].result() for i in range(len(jobs))]
        except BrokenExecutor:  # a process of the pool died (killed, out of memory): draw here
            wait(futures.values())
            futures = {}
    if not futures:
        for i in first:
            futures[i] = _here(jobs[i], run, out, ceilings, kernels, {})
        svgs = _svgs([futures[i] for i in first if jobs[i].saves_svg])
        for i in later:
            futures[i] = _here(jobs[i], run, out, ceilings, kernels, svgs)
        done = [futures[i].result() for i in range(len(jobs))]
    written = [p for ((w, _, _), _s) in done for p in w]
    problems = [q for ((_, qs, _), _s) in done for q in qs]
    return written, problems, [(job.what, s) for job, (_, s) in zip(jobs, done)]


def drawing_pool(backend: str, cores: Optional[int] = None) -> DrawPool:
    """The pool a run of ``backend`` ("cpu", "cuda", "metal") draws its files on, started at once
    (:meth:`DrawPool.warm`) so that its processes import the drawing stack while the device opens
    and the suites measure: one process per drawing job, at most ``cores`` - 1 (default:
    :func:`os.cpu_count`). None (a pool without processes: the files are drawn in this process)
    on the CPU backend, whose cores are what is measured, so that a pool could only start once
    measuring is done (on a 2-core machine such a cold pool drew no faster than one process), and
    below :data:`MIN_CORES` cores, where a GPU backend's run imports the drawing stack on a thread
    at once instead."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    if backend == "cpu":
        return DrawPool(0)
    reports, figures = draw_jobs(split=True)
    pool = DrawPool(min(len(reports) + len(figures), cores - 1) if cores >= MIN_CORES else 0)
    if pool.warm() is None:  # drawn in this process: its imports on a thread meanwhile
        threading.Thread(target=_preload, name="drawing imports", daemon=True).start()
    return pool


def figure_pool(jobs: int, preload: Sequence[str], cores: Optional[int] = None) -> DrawPool:
    """The pool another GPU study (the graphics study) draws its ``jobs`` figures on: as
    :func:`drawing_pool` for a GPU backend, one process per job, at most ``cores`` - 1 (default:
    :func:`os.cpu_count`), its fork server importing the modules ``preload`` names (not
    :data:`PRELOAD`); below :data:`MIN_CORES` cores a pool without processes, ``preload`` imported
    on a thread at once instead. Started at once (:meth:`DrawPool.warm`)."""
    cores = (os.cpu_count() or 1) if cores is None else cores
    pool = DrawPool(min(jobs, cores - 1) if cores >= MIN_CORES else 0, preload)
    if pool.warm() is None:  # drawn in this process: its imports on a thread meanwhile
        threading.Thread(target=_preload, args=(preload,), name="drawing imports", daemon=True).start()
    return pool


def _preload(names: Sequence[str] = PRELOAD) -> None:
    """Import ``names`` (:data:`PRELOAD`; those installed), as a pool's fork server does."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # plotly is optional; the report says so when drawn
            pass
