"""``apple-roofline dispatch``: the dispatch-latency study from the command line.

    apple-roofline dispatch [--device D] [--reps N] [--launches N] [--warmup N] [--no-peers] [--out DIR]

Writes DIR/dispatch.json (:class:`~apple_roofline.latency.DispatchStudy`), dispatch.md (the
report) and dispatch.png (the latency histograms), prints the p50/p99 table and the binding's
cost per launch, and exits like ``run``: 0 when every series is valid, 1 when one failed
validation or the device failed, 2 for bad usage, 130 when interrupted (the partial study is
written). ``apple-roofline plot`` and ``report`` accept dispatch.json too (``cli._load_results``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, List, Optional, Tuple

import typer

from .cli import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliProgress,
    _backend_error_type,
    _check_device_available,
    _fail,
    _os_reason,
    _parse_int,
    _prepare_out,
    _print_written,
    _real_command,
    _table,
    app,
)

if TYPE_CHECKING:
    from .latency import DispatchStudy

__all__ = ["dispatch", "write_study"]


def write_study(study: "DispatchStudy", out: Path) -> Tuple[List[Path], List[str]]:
    """Write dispatch.json, dispatch.md and dispatch.png into ``out``; the paths written and the
    problems (a plot needs one valid series). Raises OSError naming the file that failed."""
    from .latency_plot import plot_latency
    from .latency_report import format_latency
    from .results import write_text_atomic

    written: List[Path] = []
    problems: List[str] = []

    def write(path: Path, save: Callable[[Path], None]) -> None:
        try:
            save(path)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write {path}: {_os_reason(exc)}") from None
        written.append(path)

    write(out / "dispatch.json", study.save)
    write(out / "dispatch.md", lambda p: write_text_atomic(p, format_latency(study, "md")))
    try:
        write(out / "dispatch.png", lambda p: plot_latency(study, p))
    except ValueError as exc:
        problems.append(f"no plot: {exc}")
    return written, problems


def _print_study(study: "DispatchStudy") -> None:
    from .latency_report import binding_cost

    def us(x: float) -> str:
        return f"{x * 1e6:.3g}"

    rows = []
    for s in study.series:
        if s.measure == "step":
            continue
        d = s.distribution
        rows.append([s.kernel, s.measure, s.path, s.clock, us(d.p10), us(d.p50), us(d.p99), us(d.max),
                     "" if s.valid else "INVALID"])
    typer.echo(f"{study.device_name} ({study.backend}): µs per launch")
    for line in _table(["kernel", "measure", "path", "clock", "p10", "p50", "p99", "max", ""], rows):
        typer.echo(line)
    for c in binding_cost(study):
        peers = "".join(f"; {name} {us(v)} µs" for name, v in sorted(c.peers.items()))
        typer.echo(f"{c.kernel} {c.measure}: Python {us(c.python_p50_s)} µs, native {us(c.native_p50_s)} µs, "
                   f"binding +{us(c.delta_s)} µs per launch{peers}")


@app.command()
def dispatch(
    device: Annotated[
        Optional[str], typer.Option("--device", "-d", help="cpu, cuda:N or metal:N (default: the best available).")
    ] = None,
    reps: Annotated[str, typer.Option("--reps", metavar="N", help="Samples per series (1 to 100000).")] = "200",
    launches: Annotated[
        str, typer.Option("--launches", metavar="N", help="Launches per throughput sample (1 to 100000).")
    ] = "100",
    warmup: Annotated[
        str, typer.Option("--warmup", metavar="N", help="Untimed launches before each kernel (0 to 100000).")
    ] = "50",
    peers: Annotated[
        bool, typer.Option("--peers/--no-peers", help="Also time CuPy/PyTorch (CUDA), MLX/PyObjC (Metal) if installed.")
    ] = True,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out"),
) -> None:
    """Measure what one kernel launch costs: throughput, round trip, start latency and each step,
    from native code and from Python; write DIR/dispatch.json, dispatch.md and dispatch.png."""
    from .dispatch import MAX_LAUNCHES, MAX_REPS

    n_reps = _parse_int("--reps", reps, 1, MAX_REPS)
    n_launches = _parse_int("--launches", launches, 1, MAX_LAUNCHES)
    n_warmup = _parse_int("--warmup", warmup, 0, MAX_LAUNCHES)
    if device is not None:
        from .devices import parse_device

        try:
            parse_device(device)
        except ValueError as exc:
            _fail(f"--device: {exc}", EXIT_USAGE)
    backend_error = _backend_error_type()
    if device is not None:
        _check_device_available(device, backend_error)
    _prepare_out(out)
    try:
        from . import dispatch as study_module
    except ImportError as exc:
        _fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)

    try:
        with CliProgress() as progress:
            study = study_module.run_dispatch(device, reps=n_reps, launches=n_launches, warmup=n_warmup, peers=peers,
                                              progress=progress, command=_real_command())
    except study_module.DispatchInterrupted as exc:
        try:
            write_study(exc.partial, out)
        except (OSError, ValueError) as write_exc:
            _fail(f"interrupted, and the partial study could not be written to {out}: {write_exc}", EXIT_INTERRUPTED)
        typer.echo(f"interrupted: partial study written to {out}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except backend_error as exc:
        _fail(f"device {device or 'default'}: {exc}", EXIT_FAILED)
    except ValueError as exc:
        _fail(str(exc), EXIT_USAGE)

    try:
        written, problems = write_study(study, out)
    except (OSError, ValueError) as exc:
        _fail(str(exc), EXIT_FAILED)
    _print_study(study)
    _print_written(written, [*problems, *study.warnings])
    for s in study.skipped:
        typer.echo(f"skipped {s.path}: {s.reason}", err=True)
    invalid = [s for s in study.series if not s.valid]
    if invalid:
        _fail(f"{len(invalid)} series failed validation: {', '.join(s.label for s in invalid[:5])} "
              f"(see {out / 'dispatch.md'})", EXIT_FAILED)
