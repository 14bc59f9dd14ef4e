"""``apple-roofline dispatch``: the dispatch-latency study from the command line.

Writes DIR/dispatch.json, dispatch.md and dispatch.png (:func:`apple_roofline.dispatch.outputs.write_study`),
prints the p50/p99 table and the binding's cost per launch (the median of paired differences with
its interval, and whether the interval resolves it), and exits like ``run``: 0 when every
series is valid, 1 when one failed validation or the device failed, 2 for bad usage, 130 when
interrupted (the partial study is written). With a device list (``cuda:all``, ``cuda:0,2,3``) every
GPU at once, one process each, and DIR/node.md, node.json (:mod:`.node`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Dict, Optional

import typer

from ..errors import OptionError
from ..node.devices import is_device_list
from ..node.report import DEFAULT_OUTLIER_PCT
from ..text import text_table
from .common import (
    EXIT_FAILED,
    OutOption,
    as_integer,
    fail,
    fail_option,
    import_failure,
    measure_on_device,
    prepare_out,
    print_skipped,
    print_written,
    real_command,
    write_outputs,
)
from .journal import RESUME_HELP, study_journal
from .node import OUTLIER_HELP, parse_outlier_pct, run_on_node

if TYPE_CHECKING:
    from ..dispatch.model import DispatchStudy

__all__ = ["dispatch"]


def _print_study(study: "DispatchStudy") -> None:
    from ..dispatch.report import binding_cost, cost_text

    def us(x: float) -> str:
        return f"{x * 1e6:.3g}"

    rows = []
    for s in study.series:
        if s.measure == "step":
            continue
        d = s.distribution
        rows.append(
            [
                s.kernel,
                s.measure,
                s.path,
                s.clock,
                us(d.p10),
                us(d.p50),
                us(d.p99),
                us(d.max),
                "" if s.valid else "INVALID",
            ]
        )
    typer.echo(f"{study.device_name} ({study.backend}): µs per launch")
    for line in text_table(["kernel", "measure", "path", "clock", "p10", "p50", "p99", "max", ""], rows):
        typer.echo(line)
    for c in binding_cost(study):
        peers = "".join(f", {name} {us(v)} µs" for name, v in sorted(c.peers.items()))
        typer.echo(
            f"{c.kernel} {c.measure}: binding {cost_text(c)}; p50 Python {us(c.python_p50_s)} µs, "
            f"native {us(c.native_p50_s)} µs{peers}"
        )


def dispatch(
    ctx: typer.Context,
    device: Annotated[
        Optional[str],
        typer.Option(
            "--device",
            "-d",
            metavar="DEVICE",
            help="cpu, cuda:N, metal:N or wgpu:N (default: the best available); "
            "cuda:all or cuda:0,2,3: those GPUs at once, one process each.",
        ),
    ] = None,
    reps: Annotated[
        str,
        typer.Option(
            "--reps",
            metavar="N",
            help="Samples per series, and pairs of the interleaved native and Python loops (1 to 100000).",
        ),
    ] = "200",
    launches: Annotated[
        str, typer.Option("--launches", metavar="N", help="Launches per throughput sample (1 to 100000).")
    ] = "100",
    warmup: Annotated[
        str, typer.Option("--warmup", metavar="N", help="Untimed launches before each kernel (0 to 100000).")
    ] = "50",
    peers: Annotated[
        bool,
        typer.Option(
            "--peers/--no-peers", help="Also time CuPy/PyTorch (CUDA), MLX (Metal, CPU), PyObjC (Metal) if installed."
        ),
    ] = True,
    out: OutOption = Path("out"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
    outlier_pct: Annotated[
        str, typer.Option("--outlier-pct", metavar="PCT", help=OUTLIER_HELP)
    ] = f"{DEFAULT_OUTLIER_PCT:g}",
) -> None:
    """Measure what one kernel launch costs: throughput, round trip, start latency and each step,
    from native code and from Python; write DIR/dispatch.json, dispatch.md and dispatch.png."""
    from ..devices import resolve_device

    try:
        from ..dispatch.outputs import write_study
        from ..dispatch.run import runner
    except ImportError as exc:
        import_failure(exc)
    try:  # the options built and checked once (DispatchOptions); numbers as their text where no integer
        counts: Dict[str, Any] = {
            "reps": as_integer(reps),
            "launches": as_integer(launches),
            "warmup": as_integer(warmup),
        }
        options = runner.DispatchOptions(peers=peers, command=real_command(), **counts)
        pct = parse_outlier_pct(outlier_pct)
        if is_device_list(device):
            prepare_out(out)
            return run_on_node(ctx, str(device), out, pct, "dispatch.json")
        spec = resolve_device(device)
    except OptionError as exc:
        fail_option(exc)
    except ImportError as exc:
        import_failure(exc)
    from ..dispatch.model import DispatchStudy

    out, journal = study_journal(ctx, out, resume, "dispatch", DispatchStudy)
    prepare_out(out)
    study = measure_on_device(
        lambda progress: runner.DispatchRunner(str(spec), options, progress=progress, journal=journal).run(),
        "dispatch.json",
        out,
        spec,
    )
    written, problems = write_outputs(write_study, study, out)
    _print_study(study)
    print_written(written, [*problems, *study.warnings])
    print_skipped((s.path, s.reason) for s in study.skipped)
    invalid = [s for s in study.series if not s.valid]
    if invalid:
        fail(
            f"{len(invalid)} series failed validation: {', '.join(s.label for s in invalid[:5])} "
            f"(see {out / 'dispatch.md'})",
            EXIT_FAILED,
        )
