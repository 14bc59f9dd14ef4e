"""``apple-roofline run``: measure a device with the suites and write its files; with a device list
(``cuda:all``, ``cuda:0,2,3``) every GPU at once, one process each, and DIR/node.md, node.json
(:mod:`.node`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, List, Optional, Tuple, TypeVar, Union

import typer

from ..errors import OptionError
from ..node.devices import is_device_list
from ..node.report import DEFAULT_OUTLIER_PCT
from ..roofline.run.budget import budget_help
from ..study.timing import process_start, time_line
from ..suites import registry
from ..text import sig_figs, text_table
from ..timing.measure import MAX_REPS, check_reps
from ..timing.stats import CV_WARN, NOISY_CV
from .common import (
    EXIT_FAILED,
    EXIT_USAGE,
    OutOption,
    as_integer,
    backend_error_type,
    fail,
    fail_option,
    files_interrupted,
    import_failure,
    os_reason,
    prepare_out,
    print_written,
    real_command,
    write_partial,
)
from .journal import RESUME_HELP, study_journal
from .kernels import (
    KernelsAnyDeviceOption,
    KernelsMatchOption,
    KernelsMinShareOption,
    KernelsOption,
    kernels_for_run,
    load_kernels_option,
)
from .node import OUTLIER_HELP, parse_outlier_pct, run_on_node
from .progress import CliProgress

if TYPE_CHECKING:
    from ..devices import DeviceSpec
    from ..roofline.model.run import Run
    from ..roofline.run.options import RunOptions, Tuner
    from ..roofline.views.draw import DrawPool
    from ..study.journal import Journal
    from ..user_kernels.model import KernelSet

__all__ = ["run", "parse_count", "ridge_summary", "summed_warnings", "suite_help"]

T = TypeVar("T")


def suite_help() -> str:
    """``run --suite``'s help, from the registry (:mod:`apple_roofline.suites.registry`): every suite in
    run order, the default ones, and what a suite measures differently when named."""
    forms = "; ".join(f"{s.name}: {s.summary}" for s in registry.specs() if s.summary)
    return (  # the names apart, so that a narrow terminal wraps the lists instead of cutting them
        f"Comma-separated suites: {', '.join(registry.suite_names())} "
        f"(default: {', '.join(registry.default_suites())}" + (f"; {forms}" if forms else "") + ")."
    )


def parse_count(text: str, check: Callable[[object], T]) -> T:
    """``text`` as an integer checked by the library's ``check`` (which raises OptionError naming
    the parameter and its range); a text that is no integer is passed to ``check`` as it is, so
    the message is the library's. Exits 2 with the message."""
    try:
        return check(as_integer(text))
    except OptionError as exc:
        fail_option(exc)


def ridge_summary(run: "Run") -> Tuple[List[str], List[List[str]]]:
    """Notes and rows (name, intensity) of the ridge points the model's defaults give
    (:attr:`~apple_roofline.roofline.model.model.RidgeTable.default`): measured compute ceilings against
    the highest measured bandwidth; where a kind was not measured, its theoretical ceilings stand in
    and the rows and a note say so. With no bandwidth or no compute ceiling at all, a note saying why."""
    from ..roofline.views.tables import missing_ceilings, model_of

    model = model_of(run)
    if model is None:
        return [f"no ridge points: the run has {' and '.join(missing_ceilings(run))}"], []
    table = model.ridge_table()
    bw = table.default_bandwidth
    assert bw is not None and table.default  # a model has both kinds
    comp_src = table.default[0][0].source
    notes: List[str] = []
    if bw.source != "measured" or comp_src != "measured":
        notes.append(
            f"ridge points of {comp_src} compute ceilings against the {bw.source} {bw.name} "
            f"({sig_figs(bw.value)} {bw.unit})"
            + ("; no compute ceiling was measured" if comp_src != "measured" else "")
            + ("; no bandwidth ceiling was measured" if bw.source != "measured" else "")
        )
    label = "" if comp_src == "measured" else " (theoretical)"
    return notes, [[f"{c.name}{label}", f"{sig_figs(ridge)} FLOP/byte"] for c, ridge in table.default]


def _print_summary(run: "Run") -> None:
    typer.echo(
        f"{run.device_name} ({run.backend}): {len(run.measurements)} measurements, "
        f"{len(run.valid_measurements)} valid, {len(run.skipped)} skipped"
    )
    if run.ceilings:
        typer.echo("")
        rows = [[c.name, f"{sig_figs(c.value)} {c.unit}", c.source] for c in run.ceilings]
        for ln in text_table(["ceiling", "value", "source"], rows):
            typer.echo(ln)
    if run.suite_times:
        typer.echo("")
        typer.echo("time per suite: " + time_line(run.suite_times, run.phase_times))
    notes, rows = ridge_summary(run)
    typer.echo("")
    for note in notes:
        typer.echo(note)
    if rows:
        for ln in text_table(["ridge point", "intensity"], rows):
            typer.echo(ln)


def run(
    ctx: typer.Context,
    device: Annotated[
        Optional[str],
        typer.Option(
            "--device",
            "-d",
            metavar="DEVICE",
            help="cpu, cuda:N, metal:N or wgpu:N (a WebGPU adapter, as `devices` lists them; default: the best "
            "available); cuda:all or cuda:0,2,3: those GPUs at once, one process each.",
        ),
    ] = None,
    suite: Annotated[Optional[str], typer.Option("--suite", "-s", metavar="SUITE,...", help=suite_help())] = None,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick",
            help="A fast look: trims the sweep to F = 1, 4, 16 … 1024 and shortens time budgets "
            "(sweep launch budget, GEMM size ladder, warm-up). Array sizes are not changed.",
        ),
    ] = False,
    reps: Annotated[
        str, typer.Option("--reps", metavar="N", help=f"Timed samples per kernel, an integer (1 to {MAX_REPS}).")
    ] = "10",
    array_bytes: Annotated[
        Optional[str],
        typer.Option("--array-bytes", metavar="SIZE", help="Bytes per STREAM array, e.g. 256MiB, 1GiB, 512MB."),
    ] = None,
    ceilings: Annotated[
        str,
        typer.Option(
            "--ceilings",
            metavar="CEILINGS",
            help="Ceilings the roofline figure shows: default, all, or names separated by commas.",
        ),
    ] = "default",
    tune: Annotated[
        bool,
        typer.Option("--tune", help="Before each suite, a quick tune of its kernels' block size; measure at the best."),
    ] = False,
    tune_file: Annotated[
        Optional[Path],
        typer.Option(
            "--tune-file", metavar="FILE", help="With --tune: the best block sizes of this tune.json instead."
        ),
    ] = None,
    out: OutOption = Path("out"),
    outlier_pct: Annotated[
        str, typer.Option("--outlier-pct", metavar="PCT", help=OUTLIER_HELP)
    ] = f"{DEFAULT_OUTLIER_PCT:g}",
    power_window: Annotated[
        bool,
        typer.Option(
            "--power-window",
            help="Lengthen every measurement's timed samples to twice the power sensor's averaging "
            "(NVML: 0.1 s instantaneous, 1 s average), so every measurement gets power and per-watt figures. "
            "Slower; off by default.",
        ),
    ] = False,
    sustain: Annotated[
        Optional[str],
        typer.Option(
            "--sustain",
            metavar="SECONDS",
            help="Time every measurement for at least SECONDS (0 to 60): the sustained rate, after the "
            "power and thermal limits have acted, not a short burst's. Much slower.",
        ),
    ] = None,
    budget: Annotated[
        Optional[str],
        typer.Option(
            "--budget",
            metavar="SUITE=SEC,...",  # short: the help column keeps room for its longest word
            help=budget_help(),
        ),
    ] = None,
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="DIR", help=RESUME_HELP)] = None,
    kernels: KernelsOption = None,
    kernels_match: KernelsMatchOption = None,
    kernels_min_share: KernelsMinShareOption = "0",
    kernels_any_device: KernelsAnyDeviceOption = False,
) -> None:
    """Measure the device and write DIR/run.json, report.md, report.html, roofline.png/.svg,
    sweep.png/.svg and the figures of the suites that have one (hierarchy.png/.svg ...);
    each measurement is also kept in DIR/run.journal.jsonl as it finishes (--resume DIR continues from it)."""
    # -- validate everything before measuring: the library's checks, its messages
    n_reps = parse_count(reps, check_reps)  # the text as the number RunOptions checks
    tuner = _tuner(tune, tune_file, n_reps)
    options = _run_options(suite, quick, n_reps, _array_bytes(array_bytes), tuner, power_window, sustain, budget)
    which = _ceilings(ceilings)
    kernel_set = load_kernels_option(kernels, kernels_match, kernels_min_share)
    pct = parse_outlier_pct(outlier_pct)
    if is_device_list(device):
        prepare_out(out)
        return run_on_node(ctx, str(device), out, pct, "run.json")
    spec = _device_spec(device)
    options = dataclasses.replace(options, device=spec)
    kernel_set = _kernels_for_device(kernel_set, spec, kernels_any_device)
    from ..roofline.model.run import Run
    from ..roofline.views.draw import drawing_pool

    out, journal = study_journal(ctx, out, resume, "run", Run)
    created_out = prepare_out(out)
    with drawing_pool(spec.backend) as pool:  # docs/design/wall-time.md, "Where the time goes"
        result = _measure(options, journal, out, created_out)
        # -- write and summarise
        result, written, problems = _write(result, out, which, kernel_set, pool)
    _print_summary(result)
    print_written(written, [*problems, *summed_warnings(result, out)])
    invalid = [m for m in result.measurements if not m.valid]
    if invalid:
        names = ", ".join(m.label for m in invalid[:5]) + (f" and {len(invalid) - 5} more" if len(invalid) > 5 else "")
        fail(f"{len(invalid)} measurement(s) failed validation: {names} (see {out / 'report.md'})", EXIT_FAILED)


def _array_bytes(text: Optional[str]) -> Optional[int]:
    """``--array-bytes`` as bytes (:func:`~apple_roofline.sizes.parse_size`: ``256MiB``, ``1GiB``,
    ``512MB``); None when not given. Exits 2 naming the text and the accepted form; the range, which
    depends on the device, is checked once it is open
    (:meth:`~apple_roofline.roofline.run.options.RunOptions.array_bytes_for`)."""
    from ..sizes import parse_size

    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:  # names the text and the accepted form
        fail(f"--array-bytes: {exc}", EXIT_USAGE)


def _run_options(
    suite: Optional[str],
    quick: bool,
    reps: int,
    array_bytes: Optional[int],
    tuner: "Optional[Tuner]",
    power_window: bool,
    sustain: Optional[str],
    budget: Optional[str],
) -> "RunOptions":
    """The run's options from its flags, built and checked once
    (:class:`~apple_roofline.roofline.run.options.RunOptions`); exits 2 with the library's message
    naming the flag and its valid range."""
    try:
        from ..roofline.run.options import RunOptions, check_sustain

        return RunOptions(
            suites=suite,
            quick=quick,
            reps=reps,
            array_bytes=array_bytes,
            power_window=power_window,
            sustain_s=check_sustain(sustain) if sustain is not None else 0.0,
            budget=budget,
            tuner=tuner,
            command=real_command(),
        )
    except OptionError as exc:
        fail_option(exc)
    except ImportError as exc:
        import_failure(exc)


def _ceilings(ceilings: str) -> Union[str, List[str]]:
    """``--ceilings`` parsed (:func:`~apple_roofline.roofline.model.selection.parse_ceilings_option`) against
    every ceiling name a run can hold, before measuring; exits 2 with the library's message."""
    try:
        from ..roofline.model.ceiling_names import known_ceiling_names
        from ..roofline.model.selection import parse_ceilings_option
    except ImportError as exc:
        import_failure(exc)
    try:
        return parse_ceilings_option(ceilings, known_ceiling_names())
    except OptionError as exc:
        fail_option(exc)


def _device_spec(device: Optional[str]) -> "DeviceSpec":
    """``--device`` resolved (the best available when None); exits 2 when malformed or not available."""
    from ..devices import resolve_device

    try:
        return resolve_device(device)
    except OptionError as exc:
        fail_option(exc)
    except ImportError as exc:
        import_failure(exc)


def _kernels_for_device(kernels: "Optional[KernelSet]", spec: "DeviceSpec", any_device: bool) -> "Optional[KernelSet]":
    """``--kernels`` checked against the device about to be measured, by the name its backend gives
    (the run's device name), before anything is measured (:func:`~.kernels.kernels_for_run`: another
    device's profile exits 2 unless ``--kernels-any-device``). A device that cannot be opened is left
    to the measurement, which says why."""
    if kernels is None:
        return kernels_for_run(None, "", any_device)
    from ..devices import open_device

    try:
        name = str(open_device(spec).info().get("name") or "")
    except (ImportError, backend_error_type()):
        return kernels
    return kernels_for_run(kernels, name, any_device) if name else kernels


def _measure(options: "RunOptions", journal: "Journal", out: Path, created_out: bool) -> "Run":
    """The Run of ``options`` on its device, with a progress display; an interrupted (or stopped) run's
    partial results are written to ``out``/run.json (:func:`~.common.write_partial`); a device
    failure exits 1, an option the device refuses (the array size) or an unreadable resumed journal 2,
    removing ``out`` if this run made it empty."""
    from ..study.files import ResultsError
    from ..study.journal import JournalWriteError

    try:
        from ..roofline.run import runner
    except ImportError as exc:
        import_failure(exc)
    backend_error = backend_error_type()
    try:
        with CliProgress() as progress:
            return runner.RooflineRunner(options, progress=progress, journal=journal, started=process_start()).run()
    except runner.RunInterrupted as exc:
        write_partial(exc.partial, out / "run.json", exc.stopped)
    except backend_error as exc:
        fail(f"device {options.device}: {exc}", EXIT_FAILED)
    except OptionError as exc:  # a limit that depends on the device (the array size)
        if created_out:
            try:
                out.rmdir()  # only if still empty
            except OSError:
                pass
        fail_option(exc)
    except ResultsError as exc:  # a resumed journal's record that cannot be read (names the journal)
        fail(str(exc), EXIT_USAGE)
    except JournalWriteError as exc:
        fail(exc.strerror or str(exc), EXIT_FAILED)


def summed_warnings(run: "Run", out: Path) -> List[str]:
    """The run's warnings for the terminal: the CV warnings (one per noisy measurement, often
    dozens) as one line that counts them and points to the report's Warnings table, every other
    warning as it is."""
    from ..roofline.run.runner import cv_warnings

    noisy = cv_warnings(run.measurements)
    others = [w for w in run.warnings if w not in set(noisy)]
    if not noisy:
        return others
    worst = sum(1 for m in run.valid_measurements if m.noisy)
    return [
        *others,
        f"{len(noisy)} measurement{'s' if len(noisy) != 1 else ''} with noisy samples "
        f"(CV > {CV_WARN:.0%})"
        + (f", {worst} of them above {NOISY_CV:.0%} even when measured twice (marked noisy)" if worst else "")
        + f": see the Warnings table of {out / 'report.md'} or report.html",
    ]


def _tuner(tune: bool, tune_file: Optional[Path], reps: int) -> "Optional[Tuner]":
    """The tuner of ``--tune`` / ``--tune-file`` (None without --tune); exits 2 for a tune file that
    cannot be read or is no tuning study."""
    if tune_file is not None and not tune:
        fail("--tune-file needs --tune (valid: --tune alone, or --tune --tune-file FILE)", EXIT_USAGE)
    if not tune:
        return None
    from ..study.files import ResultsError
    from ..tuning import FileTuner, QuickTuner, TuneStudy

    if tune_file is None:
        return QuickTuner(reps)
    try:
        return FileTuner(TuneStudy.load(tune_file), str(tune_file))
    except ResultsError as exc:
        fail(f"--tune-file: {exc}", EXIT_USAGE)


def _write(
    result: "Run", out: Path, which: Union[str, List[str]], kernels: "Optional[KernelSet]", pool: "DrawPool"
) -> Tuple["Run", List[Path], List[str]]:
    """The run's files (:func:`~apple_roofline.roofline.views.outputs.write_timed_run_files`, its end
    phase timed from the process's start); exits 1 when one cannot be written, 128 + N when a signal
    cut the write phase (run.json lists what was not written: :func:`~.common.files_interrupted`)."""
    from ..roofline.views.outputs import write_timed_run_files
    from ..study.outputs import FilesInterrupted

    try:
        return write_timed_run_files(result, out, process_start()[0], ceilings=which, kernels=kernels, pool=pool)
    except FilesInterrupted as exc:  # run.json lists the files not written
        files_interrupted(exc)
    except OSError as exc:
        fail(os_reason(exc), EXIT_FAILED)
    except ValueError as exc:
        fail(f"cannot write results to {out}: {exc}", EXIT_FAILED)
