"""What every command shares: exit codes, one-line errors, option parsing, output directories,
reading results files, and turning the library's typed errors into messages.

Every error is one line on stderr, ``error: ...``, naming the value and the valid range; no
traceback. Exit codes (docs/design/files.md, "Exit codes"): 0 something was measured (or a file was
read and shown); 1 the machine cannot measure what was asked (nothing measurable here, a device
error, a measurement that failed validation, a file that could not be written); 2 bad arguments
or a bad results file; 128 + N on signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Dict, Iterable, List, NoReturn, Optional, Sequence, Tuple, Type, TypeVar

import typer

from ..errors import CannotMeasure, DeviceStopped, OptionError
from ..figures import save_figure
from ..study.progress import Progress, StudyInterrupted
from ..text import one_line
from .progress import CliProgress
from .signals import end_now, interrupted_code, interrupted_words

__all__ = [
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "EXIT_INTERRUPTED",
    "FLAGS",
    "PLOT_SUFFIXES",
    "fail",
    "warn",
    "fail_option",
    "as_integer",
    "as_integers",
    "backend_error_type",
    "import_failure",
    "real_command",
    "resume_command",
    "os_reason",
    "check_writable_dir",
    "check_out_name",
    "OutOption",
    "hold_folder",
    "prepare_out",
    "check_plot_suffix",
    "save_plot",
    "print_written",
    "load_results",
    "measure_study",
    "measure_on_device",
    "interruption",
    "write_partial",
    "write_outputs",
    "files_interrupted",
    "print_skipped",
    "fail_if_invalid",
]

S = TypeVar("S")
#: What a study's writer returns: the paths written and one sentence per file it could not make.
Written = Tuple[List[Path], List[str]]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: The command-line flag of each library parameter an OptionError can name.
FLAGS: Dict[str, str] = {
    "device": "--device",
    "suites": "--suite",
    "reps": "--reps",
    "array_bytes": "--array-bytes",
    "launches": "--launches",
    "warmup": "--warmup",
    "ceilings": "--ceilings",
    "overdraw": "--overdraw",
    "f": "--f",
    "patterns": "--pattern",
    "resolution": "--resolution",
    "paths": "--path",
    "max_reps": "--max-reps",
    "sustain_s": "--sustain",
    "units": "--units",
    "sizes": "--sizes",
    "batches": "--batches",
    "precisions": "--precisions",
    "budget": "--budget",
    "fetches": "--fetches",
    "filters": "--filter",
    "resume": "--resume",
    "outlier_pct": "--outlier-pct",
}
PLOT_SUFFIXES = (".png", ".svg", ".pdf")
_INT_RE = re.compile(r"[+-]?[0-9]+")


def fail(message: str, code: int) -> NoReturn:
    """Print ``error: message`` (its first line) on stderr and exit with ``code``."""
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(code)


def warn(message: str) -> None:
    """Print ``warning: message`` (its first line) on stderr."""
    typer.echo(f"warning: {one_line(message)}", err=True)


def fail_option(exc: OptionError) -> NoReturn:
    """Exit 2 with the library's OptionError, its parameter written as the command's flag."""
    fail(exc.describe(FLAGS.get(exc.option, exc.option)), EXIT_USAGE)


def as_integer(text: str) -> object:
    """``text`` as an int when it is one (surrounding blanks and a sign allowed: ``" +12"`` -> 12);
    else ``text`` itself, for the library's check (:func:`apple_roofline.errors.check_int`) to reject
    with its one-line message naming the option and the valid range.

    Numeric options are taken as strings and converted here, so that a bad value gets the one-line
    ``error:`` message rather than Click's usage box.
    """
    stripped = text.strip()
    return int(stripped) if _INT_RE.fullmatch(stripped) else text


def as_integers(text: str) -> List[object]:
    """A comma-separated list, each non-blank item through :func:`as_integer` (``"1, 16,"`` -> [1, 16])."""
    return [as_integer(v) for v in text.split(",") if v.strip()]


def backend_error_type() -> Type[BaseException]:
    """``_core.BackendError``, or a class nothing raises when the extension is absent."""
    try:
        from .._native import _core
    except ImportError:

        class NoBackendError(Exception):
            """Stands in for ``_core.BackendError`` when the extension cannot be imported."""

        return NoBackendError
    err: Type[BaseException] = _core.BackendError
    return err


def import_failure(exc: ImportError) -> NoReturn:
    """Exit 1: the native extension cannot be imported."""
    fail(f"the native extension cannot be imported ({exc}); reinstall apple_roofline", EXIT_FAILED)


def real_command() -> List[str]:
    """The command line as typed: ``sys.argv`` with argv[0] reduced to its basename;
    ``python -m apple_roofline ...`` is recorded as ``<python> -m apple_roofline ...``."""
    argv = [str(a) for a in sys.argv]
    if not argv:
        return ["apple-roofline"]
    prog = os.path.basename(argv[0]) or argv[0]
    if prog == "__main__.py":
        return [os.path.basename(sys.executable) or "python", "-m", "apple_roofline", *argv[1:]]
    return [prog, *argv[1:]]


#: The flags that name a study's output directory, which ``--resume DIR`` replaces.
_DIR_FLAGS = ("--out", "-o", "--resume")


def resume_command(argv: Sequence[str], out: Path) -> str:
    """The command that continues the study ``argv`` ran (:func:`real_command`) from its journal in
    ``out``: the same command and options with ``--out DIR`` (``-o DIR``, ``--out=DIR``, ``-oDIR``)
    or an earlier ``--resume DIR`` replaced by ``--resume out``, quoted for a POSIX shell
    (``apple-roofline run --quick --resume out``)."""
    kept: List[str] = []
    args = iter(argv)
    for arg in args:
        if arg in _DIR_FLAGS:
            next(args, None)  # its value
        elif not arg.startswith(tuple(f"{f}=" for f in _DIR_FLAGS)) and not (arg.startswith("-o") and len(arg) > 2):
            kept.append(arg)
    return shlex.join([*kept, "--resume", str(out)])


def os_reason(exc: OSError) -> str:
    """Why an OSError happened, without the file name it carries (maybe a temporary file)."""
    return exc.strerror or one_line(exc) or type(exc).__name__


def check_writable_dir(target: Path) -> None:
    """Exit 2 unless ``target``'s parent directory exists and is writable (nothing is written), and
    no other command is writing a study there (:func:`hold_folder`, its lock taken where it has one)."""
    parent = target.parent if str(target.parent) else Path(".")
    check_out_name(str(target), "cannot write")
    if not parent.exists():
        why = f"directory {str(parent)!r} does not exist"
    elif not parent.is_dir():
        why = f"{str(parent)!r} is not a directory"
    elif not os.access(parent, os.W_OK | os.X_OK):
        why = f"directory {str(parent)!r} is not writable"
    else:
        hold_folder(parent, f"cannot write {str(target)!r}:", create=False)
        return
    fail(f"cannot write {str(target)!r}: {why}", EXIT_USAGE)


def _name_max(path: Path) -> int:
    """The longest file name the folder that would hold ``path`` takes (NAME_MAX; 255 where unknown)."""
    here = path
    while True:
        try:
            return int(os.pathconf(here, "PC_NAME_MAX"))
        except (OSError, ValueError, AttributeError):
            if here == here.parent:
                return 255
            here = here.parent


def check_out_name(text: str, what: str = "--out") -> str:
    """``text`` if it can name a folder or file here; else exit 2 with one line: empty, a component
    longer than the file system's NAME_MAX (255 bytes on most), the whole longer than PATH_MAX
    (``os.pathconf``; 4096 where unknown) or holding a NUL byte."""
    if not text.strip():
        fail(f"{what} {text!r} is empty (valid: a folder's path)", EXIT_USAGE)
    if "\x00" in text:
        fail(f"{what} {text!r} holds a NUL byte (valid: a folder's path)", EXIT_USAGE)
    path = Path(text)
    longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
    name_max = _name_max(path.parent if str(path.parent) else Path("."))
    if longest > name_max:
        fail(f"{what} {text[:40]!r}...: a name of {longest} bytes (valid: at most {name_max} bytes a name)", EXIT_USAGE)
    path_max = 4096
    try:
        path_max = int(os.pathconf(".", "PC_PATH_MAX"))
    except (OSError, ValueError, AttributeError):
        pass
    if len(os.fsencode(text)) >= path_max:
        fail(f"{what} {text[:40]!r}...: {len(os.fsencode(text))} bytes (valid: under {path_max} bytes)", EXIT_USAGE)
    return text


def _out_path(value: Any) -> Path:
    """``--out``'s text as a Path, checked by :func:`check_out_name` (Click gives the default as a Path)."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    return Path(check_out_name(text))


#: The ``--out DIR`` option of every study command, its name checked as it is parsed (:func:`check_out_name`).
OutOption = Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.", parser=_out_path)]


def hold_folder(folder: Path, what: str, *, create: bool = True) -> None:
    """Hold ``folder``'s lock until the command ends (:func:`apple_roofline.study.folder_lock.hold`,
    released by :class:`~.readable.ReadableCommand`;
    without ``create``, only where it has a lock file); exit 2 with one line naming the process that
    holds it, ``what`` first (``"--out 'o'"``)."""
    from ..study.folder_lock import FolderBusy, hold

    try:
        hold(folder, create=create)
    except FolderBusy as exc:
        who = f"process {exc.pid}" if exc.pid is not None else "another process"
        fail(
            f"{what} {str(folder)!r} is in use: {who} is writing a study there (valid: a folder no other "
            "apple-roofline command is writing; wait for it to end, or name another)",
            EXIT_USAGE,
        )
    except OSError as exc:
        fail(f"{what} {str(folder)!r}: its lock file cannot be written ({os_reason(exc)})", EXIT_USAGE)


def prepare_out(out: Path) -> bool:
    """Create the --out directory if needed (exit 2 when its name cannot be a folder's, it is a file,
    cannot be created or is not writable) and hold its lock for the whole command (:func:`hold_folder`:
    exit 2 naming the process that holds it); whether it was created here."""
    check_out_name(str(out))
    try:
        exists = out.exists()
        if exists and not out.is_dir():
            fail(f"--out {str(out)!r} is a file, not a directory", EXIT_USAGE)
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--out {str(out)!r} cannot be created ({exc.strerror or exc})", EXIT_USAGE)
    if not os.access(out, os.W_OK | os.X_OK):
        fail(f"--out {str(out)!r} is not writable", EXIT_USAGE)
    hold_folder(out, "--out")
    return not exists


def check_plot_suffix(path: Path, option: str) -> None:
    """Exit 2 unless ``path`` ends in a figure suffix (.png, .svg, .pdf)."""
    if path.suffix.lower() not in PLOT_SUFFIXES:
        fail(
            f"{option} {str(path)!r} has an unsupported suffix {path.suffix or '(none)'!r} "
            f"(valid: {', '.join(PLOT_SUFFIXES)})",
            EXIT_USAGE,
        )


def save_plot(make: Callable[[], Any], target: Path, what: str) -> None:
    """Draw a figure and write it to ``target``; a failure is one line and exit code 1."""
    try:
        fig = make()
    except (ValueError, LookupError) as exc:
        fail(f"{what}: {exc}", EXIT_FAILED)
    try:
        save_figure(fig, target)
    except OSError as exc:  # its message may name the temporary file; name the target
        fail(f"cannot write {target}: {os_reason(exc)}", EXIT_FAILED)
    except ValueError as exc:
        fail(f"cannot write {target}: {exc}", EXIT_FAILED)


def print_written(written: Sequence[Path], warnings: Sequence[str]) -> None:
    """After a command's summary: a blank line, ``wrote PATH`` per file, then each warning on stderr."""
    typer.echo("")
    for path in written:
        typer.echo(f"wrote {path}")
    for w in warnings:
        warn(w)


def load_results(path: Path) -> object:
    """Read any results file once (:func:`apple_roofline.results.load_results`); exit 2 with its
    one-line ResultsError on failure."""
    from ..results import load_results as load
    from ..study.files import ResultsError

    try:
        return load(path)
    except ResultsError as exc:
        fail(str(exc), EXIT_USAGE)


def interruption(stopped: Optional[DeviceStopped]) -> Tuple[str, int]:
    """How a study that ended early ends: the start of its last line and the exit status. A device
    that stopped responding (``stopped``): its message and 1; else the interruption's words and
    128 + the signal (:mod:`.signals`). Either way the process then leaves at once
    (:func:`.signals.end_now`)."""
    end_now()
    if stopped is not None:
        return f"error: {stopped}", EXIT_FAILED
    return interrupted_words(), interrupted_code()


def write_partial(partial: Any, path: Path, stopped: Optional[DeviceStopped] = None) -> NoReturn:
    """The study was interrupted (Ctrl-C, SIGTERM, SIGHUP: :mod:`.signals`) or its device stopped
    responding (``stopped``): write the ``partial`` study (a results document, ``complete`` false) to
    ``path``, say so on stderr and exit 128 + the signal (130 for Ctrl-C), or 1 after a device stop
    (:func:`interruption`; with an error when it cannot be written). Only the results file is written,
    not the report and figures, which take seconds to draw where a signal's end must take less than
    two (docs/design/watchdog.md, "A watchdog on every device wait"): ``report`` and ``plot`` make them from it.
    Where the study's journal is beside ``path``, the line names first the command that continues it
    (:func:`resume_command`: ``continue with: apple-roofline run --quick --resume out``)."""
    from ..study.files import write_text_atomic
    from ..study.journal import journal_path

    words, code = interruption(stopped)
    try:
        write_text_atomic(path, partial.to_json())
    except (OSError, ValueError) as write_exc:
        why = os_reason(write_exc) if isinstance(write_exc, OSError) else str(write_exc)
        fail(f"{words}, and the partial results could not be written to {path}: {why}", code)
    journal = journal_path(path.parent, path.stem)
    resume = f"continue with: {resume_command(real_command(), path.parent)}; " if journal.exists() else ""
    typer.echo(
        f"{words}: {resume}partial results written to {path} (its report and figures: apple-roofline report, plot)",
        err=True,
    )
    raise typer.Exit(code) from None


def measure_study(run: Callable[[Progress], S], results: str, out: Path) -> S:
    """``run(progress)`` with the command line's progress drawn; on Ctrl-C or a device that stopped
    responding (the runner's :class:`~apple_roofline.study.progress.StudyInterrupted`) the partial
    study is written to ``out/results`` and the command exits 128 + the signal, or 1
    (:func:`write_partial`); when the machine cannot measure anything asked
    (:class:`~apple_roofline.errors.CannotMeasure`) it exits 1 with the reason and writes nothing; a
    record of a resumed journal that cannot be read (a ResultsError naming the journal) exits 2, a
    journal that cannot be written exits 1. The runner's other errors pass."""
    from ..study.files import ResultsError
    from ..study.journal import JournalWriteError

    try:
        with CliProgress() as progress:
            return run(progress)
    except StudyInterrupted as exc:
        write_partial(exc.partial, out / results, exc.stopped)
    except ResultsError as exc:
        fail(str(exc), EXIT_USAGE)
    except JournalWriteError as exc:
        fail(exc.strerror or str(exc), EXIT_FAILED)
    except CannotMeasure as exc:  # nothing measurable here: no study file
        fail(str(exc), EXIT_FAILED)


def measure_on_device(run: Callable[[Progress], S], results: str, out: Path, device: object) -> S:
    """:func:`measure_study`, exiting 1 with ``device DEVICE: MESSAGE`` when the device fails
    (``_core.BackendError``) and 2 for an option the runner rejects (:func:`fail_option`)."""
    backend_error = backend_error_type()
    try:
        return measure_study(run, results, out)
    except backend_error as exc:
        fail(f"device {device}: {exc}", EXIT_FAILED)
    except OptionError as exc:
        fail_option(exc)


def write_outputs(write: Callable[[S, Path], Written], study: S, out: Path) -> Written:
    """``write(study, out)``: the study's files; exit 1 with its message when one cannot be written,
    128 + N when a signal cut the write phase (:func:`files_interrupted`)."""
    from ..study.outputs import FilesInterrupted

    try:
        return write(study, out)
    except FilesInterrupted as exc:
        files_interrupted(exc)
    except (OSError, ValueError) as exc:
        fail(str(exc), EXIT_FAILED)


def files_interrupted(exc: Any) -> NoReturn:
    """A signal cut a study's write phase (:class:`~apple_roofline.study.outputs.FilesInterrupted`):
    one line naming the files not written, the results file that lists them and the command that
    makes them (``apple-roofline report DIR``), and exit 128 + the signal; the process then leaves at
    once (:func:`interruption`)."""
    from ..study.outputs import MAKE_MISSING

    words, code = interruption(None)
    folder = exc.path.parent
    if exc.error is not None:
        fail(f"{words} while writing {folder}, and {exc.path} could not be written again: {os_reason(exc.error)}", code)
    if not exc.missing:
        typer.echo(f"{words}: every file of {folder} was written", err=True)
        raise typer.Exit(code)
    make = MAKE_MISSING.format(folder=shlex.quote(str(folder)))
    typer.echo(
        f"{words} while writing {folder}: not written: {', '.join(exc.missing)} ({exc.path} lists them); "
        f"make them with: {make}",
        err=True,
    )
    raise typer.Exit(code)


def print_skipped(skipped: Iterable[Tuple[str, str]]) -> None:
    """``skipped WHAT: REASON`` on stderr for each (what, reason)."""
    for what, reason in skipped:
        typer.echo(f"skipped {what}: {reason}", err=True)


def fail_if_invalid(count: int, what: str, report: Path) -> None:
    """Exit 1 when ``count`` ``what`` ("measurement(s)", "pass(es)") failed validation, naming the
    report that says which."""
    if count:
        fail(f"{count} {what} failed validation (see {report})", EXIT_FAILED)
