"""The ``apple-roofline`` command line: thin Typer commands over the library.

Commands::

    apple-roofline devices [--json]
    apple-roofline run [--device D] [--suite S,...] [--quick] [--reps N] [--array-size SIZE] [--out DIR]
    apple-roofline plot RUN.json [-o FILE] [--point NAME:FLOPS:BYTES:SECONDS ...]
    apple-roofline report RUN.json [--format md|csv|json]
    apple-roofline compare A.json B.json [-o FILE]
    apple-roofline dispatch [--device D] [--reps N] [--launches N] [--warmup N] [--no-peers] [--out DIR]
    apple-roofline --version

Each command parses its options, calls library functions (:mod:`.devices`,
:mod:`.runner`, :mod:`.results`, :mod:`.report`, :mod:`.plot`), prints, and maps
errors to exit codes:

* 0 -- success;
* 1 -- a measurement failed validation, a device error (``_core.BackendError``)
  while measuring, a run with no ceilings to plot, or a file that could not be
  written;
* 2 -- bad usage: unknown device or suite, a ``--reps`` that is not an integer
  or is out of range, a bad ``--array-size``, a missing, empty, truncated or
  wrong-schema results file (:class:`.results.ResultsError`), an unsupported
  plot suffix, an output directory that does not exist or is not writable;
* 130 -- ``run`` was interrupted (Ctrl-C); the partial results are written.

Every error is one line on stderr, ``error: ...``, naming the value and the
valid range; no traceback. Progress goes to stderr: a Rich progress bar per
suite when stderr is a terminal, plain lines otherwise. Summaries and reports
go to stdout.

The library is imported lazily, inside the commands, so ``--help`` and the
file commands work without the native extension.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Dict, List, NoReturn, Optional, Sequence, Tuple, Type, Union

import typer

from ._version import __version__

if TYPE_CHECKING:
    from .latency import DispatchStudy
    from .results import Run

__all__ = ["app", "main", "CliProgress", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INTERRUPTED"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

REPS_MIN = 1
REPS_MAX = 10000
PLOT_SUFFIXES: Tuple[str, ...] = (".png", ".svg", ".pdf")
REPORT_FORMATS: Tuple[str, ...] = ("md", "csv", "json")

app = typer.Typer(
    name="apple-roofline",
    help="Measure the roofline of this machine: STREAM bandwidth, FMA peaks, arithmetic-intensity sweeps, GEMM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


# --------------------------------------------------------------------------
# helpers


def _one_line(text: object) -> str:
    """``text`` as one line: its first non-empty line, with a marker when more followed."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return type(text).__name__ if isinstance(text, BaseException) else ""
    return lines[0] + (" (...)" if len(lines) > 1 else "")


def _fail(message: str, code: int) -> NoReturn:
    """Print ``error: message`` (one line) on stderr and exit with ``code``."""
    typer.echo(f"error: {_one_line(message)}", err=True)
    raise typer.Exit(code)


def _warn(message: str) -> None:
    typer.echo(f"warning: {_one_line(message)}", err=True)


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _backend_error_type() -> Type[BaseException]:
    """``_core.BackendError``, or a class nothing raises when the extension is absent."""
    try:
        from ._native import _core
    except ImportError:

        class _NoBackendError(Exception):
            pass

        return _NoBackendError
    err: Type[BaseException] = _core.BackendError
    return err


_INT_RE = re.compile(r"[+-]?[0-9]+")


def _parse_int(option: str, text: str, lo: int, hi: int) -> int:
    """``text`` as an integer in ``lo..hi``; exit 2 naming the value and the range otherwise.

    Numeric options are taken as strings and parsed here, so that a bad value
    gets the one-line ``error:`` message rather than Click's usage box.
    """
    stripped = text.strip()
    if not _INT_RE.fullmatch(stripped):
        _fail(f"{option} {text!r} is not an integer (valid: {lo} to {hi})", EXIT_USAGE)
    value = int(stripped)
    if not lo <= value <= hi:
        _fail(f"{option} {value} is out of range (valid: {lo} to {hi})", EXIT_USAGE)
    return value


def _real_command() -> List[str]:
    """The command line as typed: ``sys.argv`` with argv[0] reduced to its basename.

    ``python -m apple_roofline ...`` (argv[0] is the package's ``__main__.py``)
    is recorded as ``<python> -m apple_roofline ...``.
    """
    argv = [str(a) for a in sys.argv]
    if not argv:
        return ["apple-roofline"]
    prog = os.path.basename(argv[0]) or argv[0]
    if prog == "__main__.py":
        return [os.path.basename(sys.executable) or "python", "-m", "apple_roofline", *argv[1:]]
    return [prog, *argv[1:]]


def _os_reason(exc: OSError) -> str:
    """Why an OSError happened, without the file name it carries (maybe a temporary file)."""
    return exc.strerror or _one_line(exc) or type(exc).__name__


def _check_writable_dir(target: Path) -> None:
    """Exit 2 unless ``target``'s parent directory exists and is writable (nothing is written)."""
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        why = f"directory {str(parent)!r} does not exist"
    elif not parent.is_dir():
        why = f"{str(parent)!r} is not a directory"
    elif not os.access(parent, os.W_OK | os.X_OK):
        why = f"directory {str(parent)!r} is not writable"
    else:
        return
    _fail(f"cannot write {str(target)!r}: {why}", EXIT_USAGE)


def _prepare_out(out: Path) -> bool:
    """Create the --out directory if needed (exit 2 when it is a file, cannot be created or is not
    writable); whether it was created here."""
    if out.exists() and not out.is_dir():
        _fail(f"--out {str(out)!r} is a file, not a directory", EXIT_USAGE)
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _fail(f"--out {str(out)!r} cannot be created ({exc.strerror or exc})", EXIT_USAGE)
    if not os.access(out, os.W_OK | os.X_OK):
        _fail(f"--out {str(out)!r} is not writable", EXIT_USAGE)
    return created


def _print_written(written: Sequence[Path], warnings: Sequence[str]) -> None:
    """After a command's summary: a blank line, ``wrote PATH`` per file, then each warning on stderr."""
    typer.echo("")
    for path in written:
        typer.echo(f"wrote {path}")
    for w in warnings:
        _warn(w)


def _no_ceilings_message(run: "Run", source: object) -> str:
    n = len(run.measurements)
    held = f"{n} measurement{'s' if n != 1 else ''}, none valid for a ceiling" if n else "no measurements"
    return f"{source} has no ceilings to draw (it holds {held})"


def _load_results(path: Path) -> Union["Run", "DispatchStudy"]:
    """Read a results file once: a dispatch study (``"kind": "dispatch"``) or a roofline run. Exit 2
    with the ResultsError's one-line message on failure."""
    from .latency import DispatchStudy
    from .results import ResultsError, Run, parse_results_json, read_results_text

    source = str(path)
    try:
        data = parse_results_json(read_results_text(path), source=source)
        if isinstance(data, dict) and data.get("kind") == "dispatch":
            return DispatchStudy.from_dict(data, source=source)
        return Run.from_dict(data, source=source)
    except ResultsError as exc:
        _fail(str(exc), EXIT_USAGE)


def _load_run(path: Path) -> "Run":
    """Load a roofline run; exit 2 for a bad file or a dispatch study."""
    from .results import Run

    loaded = _load_results(path)
    if not isinstance(loaded, Run):
        _fail(f"{path} is a dispatch study, not a roofline run", EXIT_USAGE)
    return loaded


def _check_plot_suffix(path: Path, option: str) -> None:
    if path.suffix.lower() not in PLOT_SUFFIXES:
        _fail(
            f"{option} {str(path)!r} has an unsupported suffix {path.suffix or '(none)'!r} "
            f"(valid: {', '.join(PLOT_SUFFIXES)})",
            EXIT_USAGE,
        )


def _fmt(x: float) -> str:
    from .results import _fmt3

    return _fmt3(x)


def _format_bytes(n: object) -> str:
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        return str(n)
    from .sizes import format_size

    try:
        return format_size(int(n))
    except ValueError:
        return str(n)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """A plain-text table with columns padded to their widest cell."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return out


# --------------------------------------------------------------------------
# progress


class CliProgress:
    """The runner's progress protocol, drawn on stderr.

    ``start(suite, total)``, ``advance(description)`` (one kernel done),
    ``finish(suite)``. With a terminal on stderr each suite gets a Rich
    progress bar; otherwise one plain line per event. Use as a context
    manager so the bar is torn down on errors.
    """

    def __init__(self, rich: Optional[bool] = None) -> None:
        self._rich = _stderr_is_terminal() if rich is None else rich
        self._bar: Any = None
        self._tasks: Dict[str, Any] = {}
        self._totals: Dict[str, int] = {}
        self._done: Dict[str, int] = {}
        self._current: Optional[str] = None
        if self._rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.fields[suite]:<6}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=False,
            )

    def __enter__(self) -> "CliProgress":
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the progress display (idempotent)."""
        if self._bar is not None:
            self._bar.stop()

    def start(self, suite: str, total: int) -> None:
        """A suite of ``total`` steps begins."""
        self._current = suite
        self._totals[suite] = total
        self._done[suite] = 0
        if self._bar is not None:
            self._tasks[suite] = self._bar.add_task("", total=max(total, 0), suite=suite)
        else:
            typer.echo(f"[{suite}] {total} step{'s' if total != 1 else ''}", err=True)

    def advance(self, description: str) -> None:
        """One step of the current suite is done; ``description`` names it."""
        suite = self._current
        if suite is None:
            return
        self._done[suite] = self._done.get(suite, 0) + 1
        if self._bar is not None:
            self._bar.update(self._tasks[suite], advance=1, description=description)
        else:
            typer.echo(f"[{suite}] {self._done[suite]}/{self._totals.get(suite, 0)} {description}", err=True)

    def finish(self, suite: str) -> None:
        """The suite is over."""
        if self._bar is not None and suite in self._tasks:
            task = self._tasks[suite]
            self._bar.update(task, completed=self._totals.get(suite, 0), description="done")
        elif self._bar is None:
            typer.echo(f"[{suite}] done", err=True)
        if self._current == suite:
            self._current = None


# --------------------------------------------------------------------------
# --version


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"apple-roofline {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the package version and exit."
        ),
    ] = False,
) -> None:
    """Measure the roofline of this machine: STREAM bandwidth, FMA peaks, arithmetic-intensity sweeps, GEMM."""


# --------------------------------------------------------------------------
# devices

_DETAIL_KEYS: Tuple[str, ...] = (
    "threads",
    "logical_cpus",
    "isa",
    "vector_bits",
    "compute_units",
    "memory_bytes",
    "memory",
    "clock_hz",
)


def _details_summary(details: Dict[str, Any]) -> str:
    keys = [k for k in _DETAIL_KEYS if k in details] or [
        k for k, v in details.items() if k != "name" and isinstance(v, (str, int, float, bool))
    ]
    parts = []
    for k in keys:
        v = details[k]
        if "memory" in k or k.endswith("_bytes"):
            parts.append(f"{k.replace('_bytes', '')}={_format_bytes(v)}")
        elif k.endswith("_hz") and isinstance(v, (int, float)) and not isinstance(v, bool):
            parts.append(f"{k.replace('_hz', '')}={v / 1e9:.2f} GHz")
        else:
            parts.append(f"{k}={v}")
    return ", ".join(parts)


@app.command()
def devices(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List every backend, compiled in or not: devices found, device name, key figures, why absent."""
    try:
        from .devices import list_devices

        statuses = list_devices()
    except ImportError as exc:
        _fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)
    except _backend_error_type() as exc:
        _fail(f"device discovery failed: {exc}", EXIT_FAILED)
    if as_json:
        payload = [
            {
                "backend": s.backend,
                "compiled": s.compiled,
                "devices": s.devices,
                "name": s.name,
                "reason": s.reason,
                "details": dict(s.details),
            }
            for s in statuses
        ]
        typer.echo(json.dumps(payload, indent=2, default=str))
        return
    rows = []
    for s in statuses:
        details = dict(s.details)
        rows.append(
            [
                s.backend,
                "yes" if s.compiled else "no",
                str(s.devices),
                s.name or "-",
                _details_summary(details) if details else "-",
                s.reason or "",
            ]
        )
    for ln in _table(["backend", "compiled", "devices", "name", "figures", "reason"], rows):
        typer.echo(ln)


# --------------------------------------------------------------------------
# run


def _write_outputs(run: "Run", out: Path) -> Tuple[List[Path], List[str]]:
    """Write run.json, report.md, roofline.png and roofline.svg into ``out``.

    Returns the paths written and warnings for the files that could not be
    (a plot needs a bandwidth and a compute ceiling).
    """
    from .report import to_markdown
    from .results import write_text_atomic

    written: List[Path] = []
    problems: List[str] = []

    def write(path: Path, save: Callable[[Path], None]) -> None:
        try:
            save(path)
        except OSError as exc:  # name the target, not the temporary file beside it
            raise OSError(exc.errno, f"cannot write {path}: {_os_reason(exc)}") from None
        written.append(path)

    write(out / "run.json", run.save)
    write(out / "report.md", lambda p: write_text_atomic(p, to_markdown(run)))
    if not run.ceilings:
        problems.append(f"no roofline plot: {_no_ceilings_message(run, 'the run')}")
        return written, problems
    try:
        from .plot import plot_roofline, save_figure

        fig = plot_roofline(run)
        for name in ("roofline.png", "roofline.svg"):
            write(out / name, lambda p: save_figure(fig, p))
    except (ValueError, LookupError, ImportError) as exc:
        problems.append(f"no roofline plot: {_one_line(exc)}")
    return written, problems


def _ridge_table(run: "Run") -> Tuple[List[str], List[List[str]]]:
    """Notes and rows (name, intensity) of the ridge points of ``run``.

    Measured compute ceilings against the highest measured bandwidth; where a
    kind was not measured, the theoretical ceilings of that kind stand in and
    the rows and a note say so. With no bandwidth or no compute ceiling at all,
    no rows and a note saying why.
    """
    def of(kind: str, source: str) -> List[Any]:
        return sorted((c for c in run.ceilings if c.kind == kind and c.source == source and c.value > 0),
                      key=lambda c: -c.value)

    bw_measured, bw_theory = of("bandwidth", "measured"), of("bandwidth", "theoretical")
    comp_measured, comp_theory = of("compute", "measured"), of("compute", "theoretical")
    bws = bw_measured or bw_theory
    comps = comp_measured or comp_theory
    if not bws or not comps:
        missing = []
        if not bws:
            missing.append("no bandwidth ceiling (measured by the stream suite; no theoretical one known)")
        if not comps:
            missing.append("no compute ceiling (measured by the peak and gemm suites; no theoretical one known)")
        return [f"no ridge points: the run has {' and '.join(missing)}"], []
    bw = bws[0]
    bw_src = "measured" if bw_measured else "theoretical"
    comp_src = "measured" if comp_measured else "theoretical"
    notes: List[str] = []
    if bw_src != "measured" or comp_src != "measured":
        notes.append(
            f"ridge points of {comp_src} compute ceilings against the {bw_src} {bw.name} "
            f"({_fmt(bw.value)} {bw.unit})"
            + ("; no compute ceiling was measured" if comp_src != "measured" else "")
            + ("; no bandwidth ceiling was measured" if bw_src != "measured" else "")
        )
    label = "" if comp_src == "measured" else " (theoretical)"
    rows = [[f"{c.name}{label}", f"{_fmt(c.value / bw.value)} FLOP/byte"] for c in comps]
    return notes, rows


def _print_summary(run: "Run") -> None:
    typer.echo(f"{run.device_name} ({run.backend}): {len(run.measurements)} measurements, "
               f"{len(run.valid_measurements)} valid, {len(run.skipped)} skipped")
    if run.ceilings:
        typer.echo("")
        rows = [[c.name, f"{_fmt(c.value)} {c.unit}", c.source] for c in run.ceilings]
        for ln in _table(["ceiling", "value", "source"], rows):
            typer.echo(ln)
    notes, rows = _ridge_table(run)
    typer.echo("")
    for note in notes:
        typer.echo(note)
    if rows:
        for ln in _table(["ridge point", "intensity"], rows):
            typer.echo(ln)


def _check_device_available(spec: str, backend_error: Type[BaseException]) -> None:
    """Exit 2 when ``spec`` (already well-formed) names a backend not built or a device not found."""
    from .devices import list_devices, parse_device

    backend, index = parse_device(spec)
    try:
        statuses = list_devices()
    except (ImportError, backend_error):
        return  # let the runner report it
    available = [
        s.backend if s.backend == "cpu" else f"{s.backend}:{i}"
        for s in statuses
        if s.compiled
        for i in range(s.devices if s.backend != "cpu" else min(s.devices, 1))
    ]
    for s in statuses:
        if s.backend != backend:
            continue
        if s.compiled and index < s.devices:
            return
        why = s.reason if (not s.compiled or s.devices == 0) and s.reason else f"{s.devices} device(s) found"
        _fail(f"--device {spec!r} is not available: {why} (valid: {', '.join(available) or 'none'})", EXIT_USAGE)


@app.command()
def run(
    device: Annotated[
        Optional[str], typer.Option("--device", "-d", help="cpu, cuda:N or metal:N (default: the best available).")
    ] = None,
    suite: Annotated[
        Optional[str], typer.Option("--suite", "-s", help="Comma-separated suites: stream,sweep,peak,gemm (default: all).")
    ] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="A fast look: trims the sweep to F = 1, 4, 16 … 1024 and shortens time budgets "
            "(sweep launch budget, GEMM size ladder, warm-up). Array sizes are not changed.",
        ),
    ] = False,
    reps: Annotated[
        str,
        typer.Option("--reps", metavar="N", help=f"Timed samples per kernel, an integer ({REPS_MIN} to {REPS_MAX})."),
    ] = "10",
    array_size: Annotated[
        Optional[str], typer.Option("--array-size", help="Bytes per STREAM array, e.g. 256MiB, 1GiB, 512MB.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out"),
) -> None:
    """Measure the device and write DIR/run.json, report.md, roofline.png and roofline.svg."""
    # -- validate everything before measuring
    from .devices import parse_device
    from .sizes import parse_size

    n_reps = _parse_int("--reps", reps, REPS_MIN, REPS_MAX)
    array_bytes: Optional[int] = None
    if array_size is not None:
        try:
            array_bytes = parse_size(array_size)
        except ValueError as exc:
            _fail(f"--array-size: {exc}", EXIT_USAGE)
    if device is not None:
        try:
            parse_device(device)
        except ValueError as exc:
            _fail(f"--device: {exc}", EXIT_USAGE)
    try:
        from . import runner
    except ImportError as exc:
        _fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)
    suites: Optional[Tuple[str, ...]] = None
    if suite is not None:
        try:
            suites = tuple(runner.parse_suites(suite))
        except ValueError as exc:
            _fail(f"--suite: {exc}", EXIT_USAGE)
    backend_error = _backend_error_type()
    if device is not None:
        _check_device_available(device, backend_error)
    created_out = _prepare_out(out)

    if device is None:
        try:
            from .devices import default_device

            device = default_device()
        except ImportError as exc:
            _fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)
        except backend_error as exc:
            _fail(f"no device could be opened: {exc}", EXIT_FAILED)

    command = _real_command()

    # -- measure
    try:
        with CliProgress() as progress:
            result = runner.run_roofline(
                device,
                suites,
                quick=quick,
                reps=n_reps,
                array_bytes=array_bytes,
                progress=progress,
                command=command,
            )
    except runner.RunInterrupted as exc:
        partial = exc.partial
        try:
            _, problems = _write_outputs(partial, out)
        except (OSError, ValueError) as write_exc:
            why = _os_reason(write_exc) if isinstance(write_exc, OSError) else _one_line(write_exc)
            _fail(f"interrupted, and the partial results could not be written to {out}: {why}", EXIT_INTERRUPTED)
        for p in problems:
            _warn(p)
        typer.echo(f"interrupted: partial results written to {out}", err=True)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except backend_error as exc:
        _fail(f"device {device}: {exc}", EXIT_FAILED)
    except ValueError as exc:  # a bad option the runner found before measuring
        if created_out:
            try:
                out.rmdir()  # only if still empty
            except OSError:
                pass
        _fail(str(exc), EXIT_USAGE)

    # -- write and summarise
    try:
        written, problems = _write_outputs(result, out)
    except OSError as exc:
        _fail(_os_reason(exc), EXIT_FAILED)
    except ValueError as exc:
        _fail(f"cannot write results to {out}: {exc}", EXIT_FAILED)
    _print_summary(result)
    _print_written(written, [*problems, *result.warnings])
    invalid = [m for m in result.measurements if not m.valid]
    if invalid:
        names = ", ".join(m.label for m in invalid[:5]) + (f" and {len(invalid) - 5} more" if len(invalid) > 5 else "")
        _fail(f"{len(invalid)} measurement(s) failed validation: {names} (see {out / 'report.md'})", EXIT_FAILED)


# --------------------------------------------------------------------------
# plot / report / compare


@app.command()
def plot(
    run_json: Annotated[Path, typer.Argument(metavar="RUN.json", help="Results file written by `run`.")],
    output: Annotated[
        Optional[Path],
        typer.Option("--output", "-o", help="Figure file; .png, .svg or .pdf (default: roofline.png beside RUN.json)."),
    ] = None,
    point: Annotated[
        Optional[List[str]],
        typer.Option(
            "--point", metavar="NAME:FLOPS:BYTES:SECONDS",
            help="Put your own kernel on the roofline (repeatable): FLOPs, bytes moved and seconds of one run "
                 "of it. Prints its GFLOP/s, intensity, attainable ceiling, efficiency and bound.",
        ),
    ] = None,
) -> None:
    """Draw the roofline of a saved run, with your own kernels (--point) on it; or the latency
    histograms of a dispatch study (dispatch.json)."""
    points = [_parse_point(text) for text in point or ()]
    from .latency import DispatchStudy

    loaded = _load_results(run_json)
    study = loaded if isinstance(loaded, DispatchStudy) else None
    target = output if output is not None else run_json.parent / ("dispatch.png" if study else "roofline.png")
    _check_plot_suffix(target, "-o")
    if study is not None:
        if points:
            _fail("--point places kernels on a roofline; a dispatch study has none", EXIT_USAGE)
        _check_writable_dir(target)
        from .latency_plot import plot_latency

        def draw_study() -> Any:
            return plot_latency(study)

        _save_plot(draw_study, target, f"{run_json}: cannot plot")
        typer.echo(f"wrote {target}")
        return
    assert not isinstance(loaded, DispatchStudy)
    _check_writable_dir(target)
    if not loaded.ceilings:
        # plot_roofline would draw empty axes; say why there is nothing to draw
        _fail(_no_ceilings_message(loaded, run_json), EXIT_FAILED)
    from .plot import plot_roofline

    if points:
        _print_points(loaded, points, run_json)
    _save_plot(lambda: plot_roofline(loaded, points=points), target, f"{run_json}: cannot plot")
    typer.echo(f"wrote {target}")


POINT_FORM = "NAME:FLOPS:BYTES:SECONDS"


def _parse_point(text: str) -> Any:
    """``NAME:FLOPS:BYTES:SECONDS`` -> Point (the name may contain colons: the numbers are the last
    three fields). A malformed value exits 2 naming the expected form."""
    from .roofline import Point

    parts = text.rsplit(":", 3)
    if len(parts) != 4 or not parts[0].strip():
        _fail(f"--point {text!r}: expected {POINT_FORM}, e.g. 'my kernel:2e9:4e8:0.05'", EXIT_USAGE)
    name = parts[0].strip()
    values: List[float] = []
    for field, raw, lo in zip(("FLOPS", "BYTES", "SECONDS"), parts[1:], (">= 0", "> 0", "> 0")):
        try:
            v = float(raw)
        except ValueError:
            v = math.nan
        if not math.isfinite(v) or (v < 0 if lo == ">= 0" else v <= 0):
            _fail(f"--point {text!r}: {field} must be a finite number {lo}, not {raw!r} "
                  f"(expected {POINT_FORM})", EXIT_USAGE)
        values.append(v)
    return Point(name, values[0], values[1], values[2])


def _print_points(run: Any, points: Sequence[Any], run_json: Path) -> None:
    """One line per point: GFLOP/s, intensity, attainable GFLOP/s, efficiency and bound."""
    from .roofline import Roofline

    try:
        model = Roofline.from_run(run)
    except ValueError as exc:
        _fail(f"{run_json}: cannot place points: {exc}", EXIT_FAILED)
    header = ("point", "GFLOP/s", "FLOP/B", "attainable GFLOP/s", "efficiency", "bound")
    rows: List[Tuple[str, ...]] = []
    for p in points:
        if p.flops <= 0:
            rows.append((p.name, "0", "0", "-", "-", "memory-bound (no FLOPs)"))
            continue
        try:
            attainable = model.attainable(p.intensity)
            rows.append((p.name, f"{p.gflops:.4g}", f"{p.intensity:.4g}", f"{attainable:.4g}",
                         f"{model.efficiency(p):.1%}", model.classify(p)))
        except (ValueError, LookupError) as exc:
            _fail(f"{run_json}: cannot place point {p.name!r}: {exc}", EXIT_FAILED)
    for line in _table(header, rows):
        typer.echo(line)


def _save_plot(make: Callable[[], Any], target: Path, what: str) -> None:
    """Draw a figure and write it to ``target``; a failure is one line and exit code 1."""
    from .plot import save_figure

    try:
        fig = make()
    except (ValueError, LookupError) as exc:
        _fail(f"{what}: {exc}", EXIT_FAILED)
    try:
        save_figure(fig, target)
    except OSError as exc:  # its message may name the temporary file; name the target
        _fail(f"cannot write {target}: {_os_reason(exc)}", EXIT_FAILED)
    except ValueError as exc:
        _fail(f"cannot write {target}: {exc}", EXIT_FAILED)


@app.command()
def report(
    run_json: Annotated[Path, typer.Argument(metavar="RUN.json", help="Results file written by `run`.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="md, csv or json.")] = "md",
) -> None:
    """Print a saved run (or dispatch study) as Markdown, CSV or JSON on stdout."""
    if fmt not in REPORT_FORMATS:
        _fail(f"--format {fmt!r} is not a report format (valid: {', '.join(REPORT_FORMATS)})", EXIT_USAGE)
    from .latency import DispatchStudy

    loaded = _load_results(run_json)
    if isinstance(loaded, DispatchStudy):
        from .latency_report import format_latency

        text = format_latency(study=loaded, fmt=fmt)
        typer.echo(text, nl=not text.endswith("\n"))
        return
    from .report import to_csv, to_markdown

    if fmt == "md":
        text = to_markdown(loaded)
    elif fmt == "csv":
        text = to_csv(loaded)
    else:
        text = loaded.to_json()
    typer.echo(text, nl=not text.endswith("\n"))


@app.command()
def compare(
    a_json: Annotated[Path, typer.Argument(metavar="A.json", help="First results file.")],
    b_json: Annotated[Path, typer.Argument(metavar="B.json", help="Second results file.")],
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Also write the overlaid rooflines (.png, .svg or .pdf).")
    ] = None,
) -> None:
    """Compare two saved runs: a Markdown table on stdout and, with -o, an overlaid plot."""
    if output is not None:
        _check_plot_suffix(output, "-o")
    a = _load_run(a_json)
    b = _load_run(b_json)
    if output is not None:
        _check_writable_dir(output)
    from .report import compare_markdown

    text = compare_markdown(a, b)
    typer.echo(text, nl=not text.endswith("\n"))
    if output is not None:
        from .plot import plot_compare

        _save_plot(lambda: plot_compare(a, b), output, "cannot plot the comparison")
        typer.echo(f"wrote {output}", err=True)


# The dispatch-latency command lives in its own module; importing it registers it on `app`.
from . import cli_dispatch as _cli_dispatch  # noqa: E402,F401


def main() -> None:
    """Entry point of the ``apple-roofline`` script."""
    app()
