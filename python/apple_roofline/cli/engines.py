"""``apple-roofline engines``: Core ML and the Neural Engine (the engines study).

Builds the matmul models with coremltools (the ``coreml`` extra) into the cache, checks their
accounting, and times Core ML predictions per compute unit from Objective-C++ and from Python.
Writes DIR/engines.json, engines.md and engines.png and exits by the rule of docs/design/files.md, "Exit
codes": 0 when everything built, held its accounting and validated; 1 when the machine cannot
measure (off macOS: "Core ML predictions need macOS", nothing built or written; coremltools not
installed; Core ML refused every point), an output failed validation, a model's accounting did not
hold, or a model could not be built (coremltools' message); 2 for bad usage (an unknown compute unit
or precision, a bad size or batch); 130 when interrupted (the partial study is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Dict, Optional

import typer

from ..errors import OptionError
from .common import (
    EXIT_FAILED,
    OutOption,
    as_integer,
    fail,
    fail_option,
    measure_study,
    prepare_out,
    print_written,
    real_command,
    write_outputs,
)
from .journal import RESUME_HELP, study_journal

__all__ = ["engines"]


def engines(
    ctx: typer.Context,
    units: Annotated[
        Optional[str],
        typer.Option(
            "--units",
            metavar="UNIT,...",
            help="Compute units: CPU_ONLY,CPU_AND_GPU,CPU_AND_NE,ALL (default: all four).",
        ),
    ] = None,
    sizes: Annotated[
        Optional[str],
        typer.Option(
            "--sizes",
            metavar="N,...",
            help="Weights: N (square), KxM or ffn (default 256,512,1024,2048,4096,2048x8192).",
        ),
    ] = None,
    batches: Annotated[
        Optional[str],
        typer.Option("--batches", metavar="B,...", help="Batches, each 1 to 4096 (default 1,4,16,64,256)."),
    ] = None,
    precisions: Annotated[
        Optional[str], typer.Option("--precisions", metavar="PRECISION,...", help="fp16,w8a16 (default both).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Sizes 256 and 1024, batches 1 and 64, 20 predictions.")
    ] = False,
    reps: Annotated[
        Optional[str],
        typer.Option("--reps", metavar="N", help="Predictions timed per point and path (1 to 100000; default 100)."),
    ] = None,
    cache_dir: Annotated[
        Optional[Path],
        typer.Option(
            "--cache-dir", metavar="DIR", help="Where models are built (default ~/.cache/apple_roofline/coreml)."
        ),
    ] = None,
    out: OutOption = Path("out"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
) -> None:
    """Core ML matmuls per compute unit (CPU, GPU, Neural Engine): build the models, check their FLOPs
    and bytes, time predictions on macOS; write DIR/engines.json, engines.md and engines.png."""
    from ..engines import runner
    from ..engines.models import CoremltoolsMissing, ModelBuildError
    from ..engines.outputs import write_engines

    try:  # the options built and checked once (EnginesOptions); numbers as their text where no integer
        numbers: Dict[str, Any] = {
            "batches": [as_integer(v) for v in batches.split(",") if v.strip()] if batches is not None else None,
            "reps": as_integer(reps) if reps is not None else None,
        }
        options = runner.EnginesOptions(
            units=units,
            sizes=sizes,
            precisions=precisions,
            quick=quick,
            cache_dir=cache_dir,
            command=real_command(),
            **numbers,
        )
    except OptionError as exc:
        fail_option(exc)
    from ..engines.model import EnginesStudy

    out, journal = study_journal(ctx, out, resume, "engines", EnginesStudy)
    prepare_out(out)
    try:
        study = measure_study(
            lambda progress: runner.EnginesRunner(options, progress=progress, journal=journal).run(),
            "engines.json",
            out,
        )
    except OptionError as exc:
        fail_option(exc)
    except CoremltoolsMissing as exc:  # the machine: the coreml extra is not installed
        fail(str(exc), EXIT_FAILED)
    except ModelBuildError as exc:
        fail(str(exc), EXIT_FAILED)
    except OSError as exc:
        fail(f"cannot build models in the cache: {exc}", EXIT_FAILED)
    written, problems = write_outputs(write_engines, study, out)
    measured = len(study.measured)
    typer.echo(
        f"{study.device_name}: {len(study.models)} models built and checked, {len(study.points)} points, "
        f"{measured} measured, {sum(p.status == 'skipped' for p in study.points)} skipped"
        + (f" ({study.params['predictions']})" if study.params.get("predictions") else "")
    )
    print_written(written, [*problems, *study.warnings])
    if not study.valid:
        fail(
            f"an output failed validation or a model's accounting did not hold (see {out / 'engines.md'})", EXIT_FAILED
        )
