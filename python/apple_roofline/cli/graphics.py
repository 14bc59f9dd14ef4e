"""``apple-roofline graphics``: the render-pass and texture paths of a GPU (the graphics study).

Writes DIR/graphics.json, graphics.md, graphics-fill.png and graphics-texture.png and exits by the
rule of docs/design/files.md, "Exit codes": 0 when every pass is valid, 1 when one failed validation, the
device failed, wgpu is not installed or finds no adapter, or the device ran none of the passes
(nothing is written); 2 for bad usage (an unknown device, adapter, suite or pattern, ``--overdraw
0``, a negative F, a malformed ``--budget``), 130 when interrupted (the partial study is written).
After the counts it prints the time per suite against its budget (a suite cut short by its budget
says so) and the steady clock with how many passes ran below it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Dict, Optional

import typer

from ..errors import OptionError
from .common import (
    EXIT_FAILED,
    EXIT_USAGE,
    OutOption,
    as_integer,
    as_integers,
    fail,
    fail_if_invalid,
    fail_option,
    files_interrupted,
    measure_on_device,
    prepare_out,
    print_written,
    real_command,
)
from .journal import RESUME_HELP, study_journal

if TYPE_CHECKING:
    from ..graphics.options import GraphicsOptions

__all__ = ["graphics"]


def graphics(
    ctx: typer.Context,
    device: Annotated[
        str, typer.Option("--device", "-d", metavar="DEVICE", help="wgpu:N (a wgpu adapter) or metal:N (native).")
    ] = "wgpu:0",
    suite: Annotated[
        Optional[str],
        typer.Option(
            "--suite", "-s", metavar="SUITE,...", help="Comma-separated: fillrate,tilemem,texture (default: all)."
        ),
    ] = None,
    overdraw: Annotated[str, typer.Option("--overdraw", metavar="O", help="Layers per fill pass (1 to 4096).")] = "128",
    f: Annotated[
        Optional[str],
        typer.Option("--f", metavar="F,...", help="FMA iterations per pixel, each 0 to 512 (default 0,1,2,4 … 512)."),
    ] = None,
    pattern: Annotated[
        Optional[str],
        typer.Option("--pattern", metavar="PATTERN,...", help="Texture patterns: coherent,random (default both)."),
    ] = None,
    resolution: Annotated[
        str, typer.Option("--resolution", metavar="WIDTHxHEIGHT", help="Render target, WIDTHxHEIGHT.")
    ] = "1920x1080",
    sizes: Annotated[
        Optional[str],
        typer.Option(
            "--sizes", metavar="S,...", help="Texture sizes, powers of two 4 to 16384 (default 64,128 … 8192)."
        ),
    ] = None,
    fetches: Annotated[
        Optional[str],
        typer.Option(
            "--fetches", metavar="N,...", help="Texture fetches per pixel, 1 to 64 (default 1,16; --quick 16)."
        ),
    ] = None,
    filter_: Annotated[
        Optional[str],
        typer.Option("--filter", metavar="FILTER,...", help="Texture filters: nearest,bilinear (default both)."),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="A look in under 30 s: F = 0, 64, 512; four texture sizes at 16 fetches.")
    ] = False,
    full: Annotated[
        bool,
        typer.Option("--full", help="Every point: F = 0, 1, 2 … 512 both store actions, 1 … 16 fetches; no budgets."),
    ] = False,
    budget: Annotated[
        Optional[str],
        typer.Option(
            "--budget",
            metavar="SUITE=SEC,...",  # short: the help column keeps room for its longest word
            help="Seconds each named suite may take, e.g. texture=60 (up to 3600), or none. A suite whose "
            "budget runs out stops before its next pass and the report says so. Default: fillrate 20, "
            "tilemem 15, texture 45 (--quick 6, 5, 12; --full none).",
        ),
    ] = None,
    reps: Annotated[str, typer.Option("--reps", metavar="N", help="Samples per pass (1 to 10000).")] = "10",
    out: OutOption = Path("out"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
) -> None:
    """Measure the fill-rate roofline, tile memory and the texture cache of a GPU; write
    DIR/graphics.json, graphics.md, graphics-fill.png and graphics-texture.png."""
    from ..graphics import runner
    from ..graphics.outputs import FIGURE_JOBS, GRAPHICS_PRELOAD, write_timed_graphics
    from ..graphics.report import summary_lines
    from ..graphics.wgpu_device import WgpuUnavailable
    from ..roofline.views.draw import figure_pool
    from ..study.outputs import FilesInterrupted
    from ..study.timing import process_start

    grid = _grid_name(quick, full)
    numbers = _numbers(overdraw, reps, f, sizes, fetches)
    options = _graphics_options(device, suite, pattern, filter_, resolution, grid, budget, numbers)
    from ..graphics.model import GraphicsStudy

    out, journal = study_journal(ctx, out, resume, "graphics", GraphicsStudy)
    prepare_out(out)
    started = process_start()
    # the figures' processes import the plotting stack while the study measures (docs/design/wall-time.md,
    # "Where the time goes")
    with figure_pool(len(FIGURE_JOBS), GRAPHICS_PRELOAD) as pool:
        try:
            study = measure_on_device(
                lambda progress: runner.GraphicsRunner(
                    options, progress=progress, journal=journal, started=started
                ).run(),
                "graphics.json",
                out,
                device,
            )
        except WgpuUnavailable as exc:  # the machine: wgpu not installed, or no adapter at all
            fail(str(exc), EXIT_FAILED)
        try:
            study, written, problems = write_timed_graphics(study, out, started[0], pool)
        except FilesInterrupted as exc:  # graphics.json lists the files not written
            files_interrupted(exc)
        except (OSError, ValueError) as exc:
            fail(str(exc), EXIT_FAILED)
    typer.echo(
        f"{study.device_name} ({options.api}): {len(study.measurements)} passes, "
        f"{sum(m.valid for m in study.measurements)} valid, {len(study.skipped)} skipped"
    )
    for line in summary_lines(study):
        typer.echo(line)
    print_written(written, [*problems, *study.warnings])
    fail_if_invalid(sum(not m.valid for m in study.measurements), "pass(es)", out / "graphics.md")


def _grid_name(quick: bool, full: bool) -> str:
    """The grid ``--quick`` or ``--full`` asks for (:mod:`apple_roofline.graphics.grid`), else
    ``"default"``; exits 2 when both are given."""
    if quick and full:
        fail("--quick and --full ask for two grids (valid: one of them, or neither)", EXIT_USAGE)
    return "full" if full else ("quick" if quick else "default")


def _numbers(
    overdraw: str, reps: str, f: Optional[str], sizes: Optional[str], fetches: Optional[str]
) -> Dict[str, Any]:
    """The numeric flags as :class:`~apple_roofline.graphics.options.GraphicsOptions`'s keywords
    (``overdraw``, ``reps``, ``f_values``, ``sizes``, ``fetches``; None where not given): each the
    integer it is, or its text for the options' checks to reject (:func:`~.common.as_integer`)."""
    return {
        "overdraw": as_integer(overdraw),
        "reps": as_integer(reps),
        "f_values": as_integers(f) if f is not None else None,
        "sizes": as_integers(sizes) if sizes is not None else None,
        "fetches": as_integers(fetches) if fetches is not None else None,
    }


def _graphics_options(
    device: str,
    suite: Optional[str],
    pattern: Optional[str],
    filter_: Optional[str],
    resolution: str,
    grid: str,
    budget: Optional[str],
    numbers: Dict[str, Any],
) -> "GraphicsOptions":
    """The study's options from its flags, built and checked once
    (:class:`~apple_roofline.graphics.options.GraphicsOptions`), ``numbers`` from :func:`_numbers`;
    exits 2 with the library's message naming the flag and its valid range."""
    from ..graphics.options import GraphicsOptions, parse_resolution

    try:
        width, height = parse_resolution(resolution)
        return GraphicsOptions(
            device=device,
            suites=suite,
            patterns=pattern,
            filters=filter_,
            width=width,
            height=height,
            grid=grid,
            budget=budget,
            command=real_command(),
            **numbers,
        )
    except OptionError as exc:
        fail_option(exc)
