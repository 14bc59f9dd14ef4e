"""``apple-roofline tune``: the threadgroup / block size of the suites' kernels (the tuning study).

Writes DIR/tune.json, tune.md and tune.png and exits by the rule of docs/design/files.md, "Exit codes": 0
when every timed point is valid, 1 when one failed validation, the device failed or no point could
be timed (every size rejected: nothing is written), 2 for bad usage (an unknown device or
suite, a device without a threadgroup size such as the CPU, a size that is not a multiple of the
SIMD width or above the device's limit), 130 when interrupted (the partial study is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Dict, Optional

import typer

from ..errors import OptionError
from ..sizes import format_size
from .common import (
    OutOption,
    as_integer,
    fail_if_invalid,
    fail_option,
    measure_on_device,
    prepare_out,
    print_written,
    real_command,
    write_outputs,
)
from .journal import RESUME_HELP, study_journal

__all__ = ["tune"]


def tune(
    ctx: typer.Context,
    device: Annotated[
        Optional[str],
        typer.Option("--device", "-d", metavar="DEVICE", help="cuda:N or metal:N (default: the best available)."),
    ] = None,
    suite: Annotated[
        Optional[str],
        typer.Option(
            "--suite", "-s", metavar="SUITE,...", help="Comma-separated: stream,sweep,peak,idiv (default: all four)."
        ),
    ] = None,
    kernel: Annotated[
        Optional[str],
        typer.Option(
            "--kernel",
            "-k",
            metavar="KERNEL,...",
            help="Only these kernels, comma-separated (triad, vec4_indep4, peak/scalar_indep8/fp64).",
        ),
    ] = None,
    block: Annotated[
        Optional[str],
        typer.Option(
            "--block",
            metavar="B,...",
            help="Block sizes to try (default: every multiple of the SIMD width up to the device's limit).",
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="The SIMD width times powers of two only, shorter warm-up, STREAM and sweep arrays at 4x the "
            "last-level cache where it is known (the smallest that measures DRAM).",
        ),
    ] = False,
    reps: Annotated[str, typer.Option("--reps", metavar="N", help="Timed samples per point (1 to 10000).")] = "10",
    out: OutOption = Path("out"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
) -> None:
    """Measure each kernel's throughput against its threadgroup / block size; write DIR/tune.json,
    tune.md and tune.png (the best size of each kernel marked)."""
    from ..tuning import runner
    from ..tuning.outputs import write_tune

    try:  # the options built and checked once (TuneOptions); numbers as their text where no integer
        numbers: Dict[str, Any] = {"reps": as_integer(reps)}
        options = runner.TuneOptions(
            suites=suite,
            kernels=[k for k in kernel.split(",") if k.strip()] if kernel is not None else None,
            blocks=[as_integer(v) for v in block.split(",") if v.strip()] if block is not None else None,
            quick=quick,
            command=real_command(),
            **numbers,
        )
    except OptionError as exc:
        fail_option(exc)
    from ..tuning.model import TuneStudy

    out, journal = study_journal(ctx, out, resume, "tune", TuneStudy)
    prepare_out(out)
    study = measure_on_device(
        lambda progress: runner.TuneRunner(device, options, progress=progress, journal=journal).run(),
        "tune.json",
        out,
        device,
    )
    written, problems = write_outputs(write_tune, study, out)
    best = study.blocks()
    typer.echo(
        f"{study.device_name}: {len(study.measurements)} points, {sum(m.valid for m in study.measurements)} valid, "
        f"{len(study.rejected)} rejected, {len(study.skipped)} skipped; "
        f"STREAM and sweep arrays {format_size(int(study.params['array_bytes']))}"
    )
    for k, b in best.items():
        typer.echo(f"  {k}: best block {b}")
    print_written(written, [*problems, *study.warnings])
    fail_if_invalid(sum(not m.valid for m in study.measurements), "point(s)", out / "tune.md")
