"""The files of a roofline run as independent drawing jobs, in-process or on a pool of processes.

:func:`~.outputs.write_run_files` writes a run's reports and figures through :func:`draw_jobs`:
each job writes its own files atomically into the output directory and returns what it wrote and
what it could not make, so the jobs can run one after another or side by side on a
:class:`DrawPool` (docs/design.md, "Where the time goes"). A pool's processes draw with
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
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from ..figures import save_figure
from ..study.outputs import OutputFiles
from ..user_kernels.model import KernelSet
from ..user_kernels.place import place
from .html import to_html
from .report import to_markdown
from .run import Run
from .run_figures import roofline_figure, suite_figures, sweep_figure
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

#: What a job gives back: the paths it wrote, in order, and one sentence per file it could not make.
Drawn = Tuple[List[Path], List[str]]
#: A job's :data:`Drawn` and its seconds.
Timed = Tuple[Drawn, float]

#: Modules a pool's processes import before their first job: the drawing stack.
PRELOAD: Tuple[str, ...] = (
    "apple_roofline.roofline.draw",
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
    """One job: ``draw(run, out, ceilings, kernels)``, a module-level function (so a pool's process
    can be sent it), and what it draws, in words."""

    what: str
    draw: Callable[[Run, Path, Union[str, Sequence[str]], Optional[KernelSet]], Drawn]


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


def _markdown(run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]) -> Drawn:
    files = OutputFiles(out)
    files.text("report.md", to_markdown(run, kernels=kernels))
    return files.written, files.problems


def _html(run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]) -> Drawn:
    files = OutputFiles(out)
    files.text("report.html", to_html(run, ceilings=ceilings, kernels=kernels))
    return files.written, files.problems


def _roofline(run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]) -> Drawn:
    files = OutputFiles(out)
    model = model_of(run)
    if model is None:
        files.skip(f"no roofline plot: {no_ceilings_message(run, 'the run')}")
    else:
        fig = roofline_figure(
            run, model, ceilings=ceilings, kernels=place(model, kernels) if kernels is not None else ()
        )
        for name in ("roofline.png", "roofline.svg"):
            files.write(name, lambda p: save_figure(fig, p))
    return files.written, files.problems


def _sweep(run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]) -> Drawn:
    files = OutputFiles(out)
    sweep = sweep_figure(run, model_of(run))
    if sweep is not None:
        for name in ("sweep.png", "sweep.svg"):
            files.write(name, lambda p: save_figure(sweep, p))
    else:
        files.skip("no sweep plot: the run has no valid sweep measurements")
    return files.written, files.problems


def _suites(run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]) -> Drawn:
    files = OutputFiles(out)
    for stem, fig in suite_figures(run):
        for name in (f"{stem}.png", f"{stem}.svg"):
            files.write(name, lambda p: save_figure(fig, p))
    return files.written, files.problems


def draw_jobs() -> Tuple[Tuple[DrawJob, ...], Tuple[DrawJob, ...]]:
    """``(reports, figures)``: the jobs that write report.md and report.html, and those that write
    the roofline, the sweep and the suites' figures (:func:`~.run_figures.suite_figures`), each in
    the order the files are listed."""
    reports = (DrawJob("report.md", _markdown), DrawJob("report.html", _html))
    figures = (DrawJob("roofline", _roofline), DrawJob("sweep", _sweep), DrawJob("suite figures", _suites))
    return reports, figures


def _quiet() -> None:
    """A pool process's start: Ctrl-C is the measuring process's to handle (it stops the pool), so
    the pool's processes ignore it rather than each print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ready() -> bool:
    return True


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
        """Start the fork server (which imports :data:`PRELOAD`) and one process, in the
        background; None without a pool."""
        return self.executor.submit(_ready) if self.executor is not None else None

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
    job: DrawJob, run: Run, out: Path, ceilings: Union[str, Sequence[str]], kernels: Optional[KernelSet]
) -> Timed:
    """``job`` drawn, with its seconds of wall time (where it ran: in a pool's process, its own)."""
    t = time.perf_counter()
    drawn = job.draw(run, out, ceilings, kernels)
    return drawn, time.perf_counter() - t


def run_jobs(
    jobs: Sequence[DrawJob],
    run: Run,
    out: Path,
    ceilings: Union[str, Sequence[str]],
    kernels: Optional[KernelSet],
    pool: Optional[DrawPool] = None,
) -> Tuple[List[Path], List[str], List[Tuple[str, float]]]:
    """Run ``jobs`` for ``run`` into ``out``, on ``pool``'s processes side by side where given (and
    started), else one after another: the paths written and the problems, in the jobs' order, and
    each job's seconds (``(what, seconds)``; side by side, they overlap).

    A pool whose process died (killed, out of memory) has its jobs drawn again in this process:
    each file is written atomically, so drawing one twice leaves it whole.

    Raises:
        OSError: a file could not be written (the message names it); the first failing job's, in
            the jobs' order, after every job has ended.
        ValueError: as the job raised it.
    """
    executor = pool.executor if pool is not None else None
    if executor is None:
        done = [_timed(job, run, out, ceilings, kernels) for job in jobs]
    else:
        try:
            futures = [executor.submit(_timed, job, run, out, ceilings, kernels) for job in jobs]
            wait(futures)  # every job ends before an error is raised, so none writes after
            done = [f.result() for f in futures]
        except BrokenExecutor:  # a process of the pool died (killed, out of memory): draw here
            done = [_timed(job, run, out, ceilings, kernels) for job in jobs]
    written = [p for (w, _), _s in done for p in w]
    problems = [q for (_, qs), _s in done for q in qs]
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
    reports, figures = draw_jobs()
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
