"""The files a roofline run is written as: run.json, report.md, report.html and the figures.

:func:`write_run_files` writes every file atomically into a directory and says which it wrote and
which it could not make (a roofline figure needs a bandwidth and a compute ceiling; the sweep
figure needs sweep measurements; the figures of the suites' sections,
:func:`~apple_roofline.suites.registry.figures`, are written only where the run has something for
them, e.g. the memory hierarchy's working-set points). A figure of a partial run says under its axes
what it lacks (:mod:`.run_figures`). A file that fails to write raises OSError naming it; what was
written before stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ..figures import save_figure
from ..study.files import write_text_atomic
from ..study.outputs import OutputFiles
from .html import to_html
from .report import to_markdown
from ..user_kernels.model import KernelSet
from ..user_kernels.place import place
from .run import Run
from .run_figures import roofline_figure, suite_figures, sweep_figure
from .selection import select_ceilings
from .tables import missing_ceilings, model_of

__all__ = ["RUN_FILES", "write_run_files", "no_ceilings_message"]

#: The files :func:`write_run_files` writes of every run, in order (then the suites' figures).
RUN_FILES: Tuple[str, ...] = ("run.json", "report.md", "report.html", "roofline.png", "roofline.svg", "sweep.png",
                              "sweep.svg")


def no_ceilings_message(run: Run, source: object) -> str:
    """Why ``run`` (named ``source``) has no roofline to draw: with no ceiling at all, what it holds
    instead; with ceilings of one kind only, the kind that is missing and which suite measures it
    (:func:`~.tables.missing_ceilings`)."""
    if run.ceilings:
        have = len(run.ceilings)
        kinds = " and ".join(sorted({c.kind for c in run.ceilings}))
        return (f"{source} has {' and '.join(missing_ceilings(run))} to draw its "
                f"{have} {kinds} ceiling{'s' if have != 1 else ''} against")
    n = len(run.measurements)
    which = "none valid for a ceiling" if not run.valid_measurements else "none of which sets a ceiling"
    held = f"{n} measurement{'s' if n != 1 else ''}, {which}" if n else "no measurements"
    return f"{source} has no ceilings to draw (it holds {held})"


def write_run_files(run: Run, out: Path, *, ceilings: Union[str, Sequence[str]] = "default",
                    kernels: Optional[KernelSet] = None) -> Tuple[List[Path], List[str]]:
    """Write ``run`` into the directory ``out``: :data:`RUN_FILES`, then each suite's figure
    (:func:`~apple_roofline.suites.registry.figures`) the run has something for, as
    ``<stem>.png`` and ``<stem>.svg``.

    Args:
        run: the run.
        out: an existing, writable directory.
        ceilings: which ceilings the roofline figure shows (:func:`~.selection.select_ceilings`).
        kernels: your kernels (``run --kernels FILE``), drawn on the roofline figure and tabled in
            the reports; None for none.

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made (no ceilings, no sweep).

    Raises:
        OSError: a file could not be written (the message names it).
        ResultsError: the run holds a non-finite number (nothing is written).

    A ceiling name the run does not have (known only once it is measured) is a problem, not an
    error: the figures then show the default ceilings, so the measurements are never lost.
    """
    files = OutputFiles(out)
    text = run.to_json()  # checks the run before any file is touched
    model = model_of(run)
    if model is not None and ceilings != "default":
        try:
            select_ceilings(model, ceilings)
        except ValueError as exc:
            files.skip(f"ceilings: {exc}; the figures show the default ceilings")
            ceilings = "default"
    files.write("run.json", lambda p: write_text_atomic(p, text))
    files.write("report.md", lambda p: write_text_atomic(p, to_markdown(run, kernels=kernels)))
    files.write("report.html", lambda p: write_text_atomic(p, to_html(run, ceilings=ceilings, kernels=kernels)))
    if model is None:
        files.skip(f"no roofline plot: {no_ceilings_message(run, 'the run')}")
    else:
        fig = roofline_figure(run, model, ceilings=ceilings, kernels=place(model, kernels) if kernels is not None else ())
        for name in ("roofline.png", "roofline.svg"):
            files.write(name, lambda p: save_figure(fig, p))
    sweep = sweep_figure(run, model)
    if sweep is not None:
        for name in ("sweep.png", "sweep.svg"):
            files.write(name, lambda p: save_figure(sweep, p))
    else:
        files.skip("no sweep plot: the run has no valid sweep measurements")
    for stem, fig in suite_figures(run):
        for name in (f"{stem}.png", f"{stem}.svg"):
            files.write(name, lambda p: save_figure(fig, p))
    return files.written, files.problems
