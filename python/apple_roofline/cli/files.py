"""``apple-roofline plot`` and ``report``: views of saved results files (any kind); ``compare``: :mod:`.compare`."""

from __future__ import annotations

import math
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Dict, List, Optional, Sequence, Tuple

import typer

from ..text import text_table
from .common import (
    EXIT_FAILED,
    EXIT_USAGE,
    check_plot_suffix,
    check_writable_dir,
    fail,
    fail_option,
    hold_folder,
    load_results,
    print_written,
    save_plot,
    write_outputs,
)
from .kernels import (
    KernelsAnyDeviceOption,
    KernelsMatchOption,
    KernelsMinShareOption,
    KernelsOption,
    kernels_for_run,
    load_kernels_option,
    print_placements,
)

if TYPE_CHECKING:
    from ..graphics.model import GraphicsStudy
    from ..roofline.model.model import Point
    from ..roofline.model.run import Run
    from ..user_kernels.model import KernelSet

__all__ = ["plot", "report", "load_run", "parse_point", "POINT_FORM", "REPORT_FORMATS"]

POINT_FORM = "NAME:FLOPS:BYTES:SECONDS"
REPORT_FORMATS: Tuple[str, ...] = ("md", "csv", "json", "html")


def load_run(path: Path) -> "Run":
    """Load a roofline run; exit 2 for a bad file or a results file of another kind."""
    from ..roofline.model.run import Run

    loaded = load_results(path)
    if not isinstance(loaded, Run):
        fail(f"{path} is a {getattr(loaded, 'DESCRIPTION', 'results file')}, not a roofline run", EXIT_USAGE)
    return loaded


def parse_point(text: str) -> "Point":
    """``NAME:FLOPS:BYTES:SECONDS`` -> Point (the name may contain colons: the numbers are the last
    three fields). A malformed value exits 2 naming the expected form."""
    from ..roofline.model.model import Point

    parts = text.rsplit(":", 3)
    if len(parts) != 4 or not parts[0].strip():
        fail(f"--point {text!r}: expected {POINT_FORM}, e.g. 'my kernel:2e9:4e8:0.05'", EXIT_USAGE)
    values: List[float] = []
    for field, raw, lo in zip(("FLOPS", "BYTES", "SECONDS"), parts[1:], (">= 0", "> 0", "> 0")):
        try:
            v = float(raw)
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or (v < 0 if lo == ">= 0" else v <= 0):
            fail(
                f"--point {text!r}: {field} must be a finite number {lo}, not {raw!r} (expected {POINT_FORM})",
                EXIT_USAGE,
            )
        values.append(v)
    try:
        return Point(parts[0].strip(), values[0], values[1], values[2])
    except ValueError as exc:
        fail(f"--point {text!r}: {exc}", EXIT_USAGE)


def _print_points(model: Any, points: Sequence["Point"], run_json: Path) -> None:
    """One line per point: GFLOP/s, intensity, the one roof that binds it (:meth:`RooflineModel.judge`),
    its attainable GFLOP/s, the share of it reached and the verdict (a point above every roof has no
    share and says why)."""
    header = ("point", "GFLOP/s", "FLOP/B", "bound by", "attainable GFLOP/s", "share", "verdict")
    rows: List[Tuple[str, ...]] = []
    for p in points:
        if p.flops <= 0:
            rows.append((p.name, "0", "0", "-", "-", "-", "memory-bound (no FLOPs)"))
            continue
        try:
            b = model.judge(p)
        except (ValueError, LookupError) as exc:
            fail(f"{run_json}: cannot place point {p.name!r}: {exc}", EXIT_FAILED)
        rows.append(
            (
                p.name,
                f"{p.gflops:.4g}",
                f"{p.intensity:.4g}",
                f"{b.ceiling.name} ({b.source})",
                f"{b.attainable:.4g}",
                b.share_text,
                b.verdict,
            )
        )
    for line in text_table(header, rows):
        typer.echo(line)


def _draw_engines(study: Any) -> Any:
    from ..engines.plot import plot_engines

    return plot_engines(study)


def _draw_tune(study: Any) -> Any:
    from ..tuning.plot import plot_tune

    return plot_tune(study)


def _draw_calls(study: Any) -> Any:
    from ..calls.plot import plot_calls

    return plot_calls(study)


def _draw_dispatch(study: Any) -> Any:
    from ..dispatch.plot import plot_dispatch

    return plot_dispatch(study)


#: The studies with one figure: (kind, default file beside the results, the study in words, draw).
_ONE_FIGURE: Tuple[Tuple[str, str, str, Callable[[Any], Any]], ...] = (
    ("engines", "engines.png", "an engines study", _draw_engines),
    ("tune", "tune.png", "a tuning study", _draw_tune),
    ("calls", "calls.png", "a per-call cost study", _draw_calls),
    ("dispatch", "dispatch.png", "a dispatch study", _draw_dispatch),
)


#: The studies other than roofline runs that ``report`` prints: kind -> (the study in words, the
#: module of its report, relative to the package, and its ``format_*(study, fmt)`` function).
_REPORTS: Dict[str, Tuple[str, str, str]] = {
    "engines": ("an engines study", "engines.report", "format_engines"),
    "graphics": ("a graphics study", "graphics.report", "format_graphics"),
    "tune": ("a tuning study", "tuning.report", "format_tune"),
    "calls": ("a per-call cost study", "calls.report", "format_calls"),
    "dispatch": ("a dispatch study", "dispatch.report", "format_dispatch"),
    "kernels": ("a kernels file", "user_kernels.report", "format_kernels"),
}


def plot(
    run_json: Annotated[
        Path,
        typer.Argument(
            metavar="RUN.json",
            help="Results file of any study (`run`, `dispatch`, `graphics`, `calls`, `engines`, `tune`).",
        ),
    ],
    output: Annotated[
        Optional[Path],
        typer.Option(
            "--output", "-o", metavar="FILE", help="Figure file; .png, .svg or .pdf (default: beside RUN.json)."
        ),
    ] = None,
    point: Annotated[
        Optional[List[str]],
        typer.Option(
            "--point",
            metavar="POINT",
            help=f"Put your own kernel on the roofline (repeatable): POINT is {POINT_FORM}, its FLOPs, bytes "
            "moved and seconds of one run of it. Prints its GFLOP/s, intensity, the roof that binds it, the share "
            "of it reached and the verdict.",
        ),
    ] = None,
    ceilings: Annotated[
        str,
        typer.Option(
            "--ceilings", metavar="CEILINGS", help="Ceilings to draw: default, all, or names separated by commas."
        ),
    ] = "default",
    kernels: KernelsOption = None,
    kernels_match: KernelsMatchOption = None,
    kernels_min_share: KernelsMinShareOption = "0",
    kernels_any_device: KernelsAnyDeviceOption = False,
) -> None:
    """Draw the roofline of a saved run, with your own kernels (--point, --kernels) on it; or the latency
    histograms of a dispatch study (dispatch.json); or the figures of a graphics study (fill rate and
    tile memory, texture cache: both beside graphics.json, or the first with -o); or the figure of
    an engines study (engines.png), a per-call cost study (calls.png) or a tuning study (tune.png:
    throughput against block size)."""
    points = [parse_point(text) for text in point or ()]
    kernel_set = load_kernels_option(kernels, kernels_match, kernels_min_share)
    loaded = load_results(run_json)
    if _plot_study(loaded, run_json, output, bool(points) or kernel_set is not None):
        return
    run = load_run(run_json)
    kernel_set = kernels_for_run(kernel_set, run.device_name, kernels_any_device)
    _plot_run(run, run_json, output, points, ceilings, kernel_set)


def _plot_study(loaded: Any, run_json: Path, output: Optional[Path], points_given: bool) -> bool:
    """``plot`` of a results file other than a roofline run: a graphics study's figures
    (:func:`_plot_graphics`) or the one figure of the studies of :data:`_ONE_FIGURE`, written beside
    ``run_json`` or to ``output``; True when it was one of them. Exits 2 where ``--point`` or
    ``--kernels`` were given (such a study has no roofline), 1 for a kernels file (no roofline of its
    own)."""
    from ..graphics.model import GraphicsStudy

    if isinstance(loaded, GraphicsStudy):
        if points_given:
            fail("--point and --kernels place kernels on a roofline; a graphics study has none", EXIT_USAGE)
        _plot_graphics(loaded, run_json, output)
        return True
    if getattr(loaded, "KIND", None) == "kernels":  # nothing of its own to draw on
        fail(
            f"{run_json} is a kernels file: it has no roofline of its own; draw it on a run's with "
            f"`plot RUN.json --kernels {run_json}`",
            EXIT_FAILED,
        )
    for kind, name, noun, draw_one in _ONE_FIGURE:
        if getattr(loaded, "KIND", None) == kind:
            target = output if output is not None else run_json.parent / name
            check_plot_suffix(target, "-o")
            if points_given:
                fail(f"--point and --kernels place kernels on a roofline; {noun} has none", EXIT_USAGE)
            check_writable_dir(target)
            save_plot(partial(draw_one, loaded), target, f"{run_json}: cannot plot")
            typer.echo(f"wrote {target}")
            return True
    return False


def _plot_graphics(study: "GraphicsStudy", run_json: Path, output: Optional[Path]) -> None:
    """A graphics study's figures: graphics-fill.png (fill rate and tile memory) and
    graphics-texture.png (texture cache), each where the study has its suites, beside ``run_json``;
    ``output`` names one figure, the first of them (the fill figure where the study has one)."""
    from ..graphics.plot import plot_fill, plot_texture

    figures = [
        (name, draw)
        for name, draw, suites in (
            ("graphics-fill.png", plot_fill, ("fillrate", "tilemem")),
            ("graphics-texture.png", plot_texture, ("texture",)),
        )
        if any(study.suite(s) for s in suites)
    ]
    if output is not None:  # -o names one figure: the fill figure, or the texture one if that is all there is
        figures = figures[:1]
    for name, draw in figures or [("graphics-fill.png", plot_fill)]:
        target = output if output is not None else run_json.parent / name
        check_plot_suffix(target, "-o")
        check_writable_dir(target)
        save_plot(partial(draw, study), target, f"{run_json}: cannot plot")
        typer.echo(f"wrote {target}")


def _plot_run(
    run: "Run",
    run_json: Path,
    output: Optional[Path],
    points: Sequence["Point"],
    ceilings: str,
    kernel_set: "Optional[KernelSet]",
) -> None:
    """``plot`` of a roofline run: its figure (``output``, default roofline.png beside ``run_json``)
    with ``points`` and the kernels of ``kernel_set`` on it, each point's line and the kernels'
    placements printed first. Exits 2 for a run of no measurements or a bad ``--ceilings``, 1 when
    the run has no ceiling to draw against."""
    from ..errors import OptionError
    from ..roofline.model.selection import parse_ceilings_option
    from ..roofline.views.draw import no_ceilings_message
    from ..roofline.views.tables import model_of

    if not run.measurements:  # a results file of nothing: no figure of it, and the file is at fault
        fail(f"{run_json} holds no measurements: nothing to plot (a run that measured something has them)", EXIT_USAGE)
    try:
        which = parse_ceilings_option(ceilings, sorted({c.name for c in run.ceilings}))  # the check `run` makes
    except OptionError as exc:
        fail_option(exc)
    target = output if output is not None else run_json.parent / "roofline.png"
    check_plot_suffix(target, "-o")
    check_writable_dir(target)
    model = model_of(run)
    if model is None:
        # a figure without ceilings would be empty axes; say why there is nothing to draw
        fail(no_ceilings_message(run, run_json), EXIT_FAILED)
    if points:
        _print_points(model, points, run_json)
    from ..roofline.views.run_figures import roofline_figure
    from ..user_kernels.place import place

    placed = place(model, kernel_set) if kernel_set is not None else []
    if kernel_set is not None:
        print_placements(model, kernel_set)
    save_plot(
        lambda: roofline_figure(run, model, points=points, ceilings=which, kernels=placed),
        target,
        f"{run_json}: cannot plot",
    )
    typer.echo(f"wrote {target}")


#: The results file of each study's folder and the module and function that write its files:
#: what ``report DIR`` looks for, in this order.
_WRITERS: Tuple[Tuple[str, str, str], ...] = (
    ("run.json", "roofline.views.outputs", "write_run_files"),
    ("graphics.json", "graphics.outputs", "write_graphics"),
    ("dispatch.json", "dispatch.outputs", "write_study"),
    ("calls.json", "calls.outputs", "write_calls"),
    ("engines.json", "engines.outputs", "write_engines"),
    ("tune.json", "tuning.outputs", "write_tune"),
)


def _write_again(folder: Path) -> None:
    """``report DIR``: the files of the study in ``folder`` written again from its results file (the
    first of :data:`_WRITERS` there), the folder's lock held meanwhile: what a run whose write phase
    was cut lists as missing (status "files missing"), and its results file then says none is. Exit
    2 for a folder without a results file, or one another command is writing."""
    hold_folder(folder, "report")
    for name, module, function in _WRITERS:
        if (folder / name).is_file():
            break
    else:
        fail(
            f"{folder} holds no results file (valid: a folder holding one of {', '.join(n for n, _, _ in _WRITERS)})",
            EXIT_USAGE,
        )
    study = load_results(folder / name)
    written, problems = write_outputs(getattr(import_module(f"..{module}", __package__), function), study, folder)
    print_written(written, problems)


def report(
    run_json: Annotated[
        Path,
        typer.Argument(
            metavar="RUN.json",
            help="Results file of any study (`run`, `dispatch`, `graphics`, `calls`, `engines`, `tune`); or a "
            "study's folder, whose files are then written again from its results file.",
        ),
    ],
    fmt: Annotated[
        str, typer.Option("--format", "-f", metavar="FORMAT", help="md, csv, json or html (html: roofline runs).")
    ] = "md",
    kernels: KernelsOption = None,
    kernels_match: KernelsMatchOption = None,
    kernels_min_share: KernelsMinShareOption = "0",
    kernels_any_device: KernelsAnyDeviceOption = False,
) -> None:
    """Print a saved run, dispatch, graphics, per-call cost, engines or tuning study as Markdown,
    CSV, JSON (or, for a run, self-contained HTML) on stdout; with --kernels (md and html), your
    kernels on the run's roofline. Given a study's folder (DIR), write its files again from its
    results file: the files a cut write phase left missing."""
    if run_json.is_dir():
        if kernels is not None or fmt != "md":
            fail("report DIR writes the study's files again; --format and --kernels are for a results file", EXIT_USAGE)
        _write_again(run_json)
        return
    if fmt not in REPORT_FORMATS:
        fail(f"--format {fmt!r} is not a report format (valid: {', '.join(REPORT_FORMATS)})", EXIT_USAGE)
    kernel_set = load_kernels_option(kernels, kernels_match, kernels_min_share)
    if kernel_set is not None and fmt not in ("md", "html"):
        fail(f"--kernels adds a section to the md and html reports, not to --format {fmt}", EXIT_USAGE)
    loaded = load_results(run_json)
    kind = getattr(loaded, "KIND", None)
    if kind in _REPORTS and kernel_set is not None:
        fail(f"--kernels places kernels on a roofline; {_REPORTS[kind][0]} has none", EXIT_USAGE)
    if kind in _REPORTS:
        noun, module, name = _REPORTS[kind]
        if fmt == "html":
            fail(f"--format html is for roofline runs; {noun} has md, csv and json", EXIT_USAGE)
        text = getattr(import_module(f"..{module}", __package__), name)(loaded, fmt)
    else:
        from ..roofline.views.html import to_html
        from ..roofline.views.report import to_csv, to_markdown

        run = load_run(run_json)
        kernel_set = kernels_for_run(kernel_set, run.device_name, kernels_any_device)
        if fmt == "md":
            text = to_markdown(run, kernels=kernel_set)
        elif fmt == "html":
            text = to_html(run, kernels=kernel_set)
        else:
            text = to_csv(run) if fmt == "csv" else run.to_json()
    typer.echo(text, nl=not text.endswith("\n"))
