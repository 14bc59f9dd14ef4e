"""``apple-roofline calls``: the per-call cost study from the command line.

Writes DIR/calls.json, calls.md and calls.png (:func:`apple_roofline.calls.outputs.write_calls`),
prints each path's fit and the crossovers, and exits like ``run``: 0 when every measurement is
valid, 1 when one failed validation or the device failed, 2 for bad usage (an unknown path, B or N
out of range), 130 when interrupted (the partial study is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Dict, List, Optional

import typer

from ..errors import OptionError
from ..text import sig_figs, text_table
from .common import (
    OutOption,
    as_integer,
    fail_if_invalid,
    fail_option,
    measure_on_device,
    prepare_out,
    print_skipped,
    print_written,
    real_command,
    write_outputs,
)
from .journal import RESUME_HELP, study_journal

if TYPE_CHECKING:
    from ..calls.model import CallsStudy

__all__ = ["calls"]


def _split(text: Optional[str]) -> Optional[List[str]]:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def _print_study(study: "CallsStudy") -> None:
    rows = [
        [
            f.path,
            sig_figs(f.t0_s * 1e6),
            "no rate" if f.rate is None else sig_figs(f.rate / 1e9),
            f"{f.rms_rel * 100:.3g} %",
        ]
        for f in study.fits()
    ]
    typer.echo(f"{study.device_name} ({study.backend}): t(F) = t0 + F/R per call")
    for line in text_table(["path", "t0 (µs)", "R (GFLOP/s)", "RMS rel. error"], rows):
        typer.echo(line)
    for c in study.crossovers():
        if c.flops is None:
            typer.echo(f"{c.a} / {c.b}: never cross ({c.below} wins everywhere)")
        else:
            typer.echo(f"{c.a} / {c.b}: cross at {c.flops:.3g} FLOPs per call ({c.below} below, {c.above} above)")


def calls(
    ctx: typer.Context,
    device: Annotated[
        Optional[str],
        typer.Option("--device", "-d", metavar="DEVICE", help="cpu, cuda:N or metal:N (default: the best available)."),
    ] = None,
    path: Annotated[
        Optional[str],
        typer.Option(
            "--path",
            "-p",
            metavar="PATH,...",
            help="Comma-separated paths: blas, cublas, mps, kernel, coreml_* (default: every path of the device).",
        ),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="B 1, 16, 256 × N 64, 256, 1024 and a shorter budget.")
    ] = False,
    batch: Annotated[
        Optional[str],
        typer.Option("--batches", metavar="B,...", help="Batch sizes B, each 1 to 256 (default 1,4,16,64,256)."),
    ] = None,
    n: Annotated[
        Optional[str],
        typer.Option("--sizes", metavar="N,...", help="Sizes N, multiples of 16 from 16 to 2048 (default 64 … 2048)."),
    ] = None,
    max_reps: Annotated[
        str, typer.Option("--max-reps", metavar="N", help="Most timed calls per shape (10 to 10000).")
    ] = "200",
    out: OutOption = Path("out"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
) -> None:
    """Measure time per call against FLOPs per call of C[B×N] = A[B×N]·W[N×N] through every path
    (BLAS, cuBLAS, MPS, the tool's kernel), fit t0 + F/R per path and find the crossovers; write
    DIR/calls.json, calls.md and calls.png."""
    from ..calls import runner
    from ..calls.outputs import write_calls
    from ..devices import resolve_device

    try:  # the options built and checked once (CallsOptions); numbers as their text where no integer
        numbers: Dict[str, Any] = {
            "batches": [as_integer(v) for v in _split(batch) or []] if batch is not None else None,
            "sizes": [as_integer(v) for v in _split(n) or []] if n is not None else None,
            "max_reps": as_integer(max_reps),
        }
        options = runner.CallsOptions(
            paths=_split(path) or [] if path is not None else None, quick=quick, command=real_command(), **numbers
        )
        spec = resolve_device(device)
    except OptionError as exc:
        fail_option(exc)
    from ..calls.model import CallsStudy

    out, journal = study_journal(ctx, out, resume, "calls", CallsStudy)
    prepare_out(out)
    study = measure_on_device(
        lambda progress: runner.CallsRunner(str(spec), options, progress=progress, journal=journal).run(),
        "calls.json",
        out,
        spec,
    )
    written, problems = write_outputs(write_calls, study, out)
    _print_study(study)
    print_written(written, [*problems, *study.warnings])
    print_skipped((s.path, s.reason) for s in study.skipped)
    fail_if_invalid(sum(not m.valid for m in study.measurements), "measurement(s)", out / "calls.md")
