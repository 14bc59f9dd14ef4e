"""Writing a study's files into a directory: each atomically, in order, the one that fails named;
and the write phase atomic as a whole (docs/design/files.md, "Journal and resume").

Most studies write ``<stem>.json``, ``<stem>.md`` and ``<stem>.png`` (:func:`write_study_files`);
one with other figures writes them through :class:`OutputFiles` itself. Either way the results file
is written first listing every other file as missing (:attr:`~.document.Document.missing`, status
"files missing"), the files of those names an earlier study left are removed (:func:`begin_files`),
and once the last file is written the results file is written again with none missing. A signal
(KeyboardInterrupt) or a file that cannot be written in between leaves a results file that lists
the files not written (:func:`files_cut`): the results file's status and list agree with the folder.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple, TypeVar

from ..text import one_line
from .document import Document
from .files import write_text_atomic

__all__ = ["OutputFiles", "FilesInterrupted", "whole", "begin_files", "files_cut", "write_study_files", "MAKE_MISSING"]

D = TypeVar("D", bound=Document)

#: The command that makes a study's missing files from its results file, ``{folder}`` its folder.
MAKE_MISSING = "apple-roofline report {folder}"


class FilesInterrupted(Exception):
    """A signal (KeyboardInterrupt) came while a study's files were written.

    Attributes:
        study: the study as its results file now holds it, :attr:`~.document.Document.missing` the
            files not written.
        path: the results file.
        missing: the names of the files not written, in the study's folder.
        error: why the results file itself could not be written again (None when it was).
    """

    def __init__(self, study: Document, path: Path, error: Optional[OSError] = None) -> None:
        self.study = study
        self.path = path
        self.missing = study.missing
        self.error = error
        super().__init__(f"interrupted while writing {path.parent}: not written: {', '.join(study.missing)}")


def whole(study: D) -> D:
    """``study`` with no file missing: what its results file says once its write phase has ended."""
    return dataclasses.replace(study, missing=()) if study.missing else study


def begin_files(study: Document, out: Path, results: str, planned: Sequence[str], stale: Sequence[str] = ()) -> None:
    """The write phase's start: ``out/results`` written holding ``study`` with every other name of
    ``planned`` missing, then each file of ``planned`` and ``stale`` (the names the study's kind
    writes) other than ``results`` that an earlier study left in ``out`` removed.

    Raises:
        OSError: the results file cannot be written (nothing else is touched).
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    others = tuple(n for n in planned if n != results)
    shown = dataclasses.replace(study, missing=others)
    text = shown.to_json()  # checks the study before any file is touched
    write_text_atomic(out / results, text)
    for name in dict.fromkeys((*others, *stale)):
        old = out / name
        if name != results and (old.is_file() or old.is_symlink()):
            try:
                old.unlink()
            except OSError:  # one that cannot be removed is written over, or named when that fails
                pass


def files_cut(study: D, out: Path, results: str, planned: Sequence[str]) -> FilesInterrupted:
    """The write phase cut (a signal, a file that could not be written): ``out/results`` written
    holding ``study`` with the files of ``planned`` not in ``out`` missing (each is written atomically,
    so one there is whole). Returns the exception that says so; a results file that cannot be written
    is its ``error``."""
    missing = tuple(n for n in planned if n != results and not (out / n).exists())
    cut = dataclasses.replace(study, missing=missing)
    try:
        write_text_atomic(out / results, cut.to_json())
    except OSError as exc:
        return FilesInterrupted(cut, out / results, exc)
    return FilesInterrupted(cut, out / results)


class OutputFiles:
    """The files of one study written into ``out`` (an existing, writable directory).

    ``written`` lists the paths written, in order; ``problems`` holds one sentence per file that could
    not be made (a figure without data), which the caller adds with :meth:`skip`.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.written: List[Path] = []
        self.problems: List[str] = []

    def write(self, name: str, save: Callable[[Path], None]) -> None:
        """Write ``out/name`` with ``save(path)`` (which writes atomically).

        Raises:
            OSError: naming ``out/name`` (not a temporary file beside it) and why.
        """
        path = self.out / name
        try:
            save(path)
        except OSError as exc:
            raise OSError(exc.errno, f"cannot write {path}: {exc.strerror or one_line(exc)}") from None
        self.written.append(path)

    def skip(self, problem: str) -> None:
        """Record that a file could not be made, and why."""
        self.problems.append(problem)

    def text(self, name: str, text: str) -> None:
        """Write ``out/name`` holding ``text`` (:meth:`write`)."""
        self.write(name, lambda p: write_text_atomic(p, text))

    def figure(self, name: str, draw: Callable[[Path], None], what: Optional[str] = None) -> None:
        """Write the figure ``out/name`` with ``draw(path)``; when ``draw`` raises ValueError (no data
        for the figure), nothing is written and ``"no <what>: <why>"`` is recorded (:meth:`skip`),
        ``what`` defaulting to ``name``."""
        try:
            self.write(name, draw)
        except ValueError as exc:
            self.skip(f"no {what or name}: {exc}")


def write_study_files(
    out: Path,
    stem: str,
    study: Document,
    markdown: Callable[[], str],
    draw: Callable[[Path], None],
    *,
    what: Optional[str] = None,
) -> Tuple[List[Path], List[str]]:
    """Write ``<stem>.json`` (``study``), ``<stem>.md`` (``markdown()``) and the figure
    ``<stem>.png`` (``draw(path)``, skipped as in :meth:`OutputFiles.figure`) into ``out``, in order,
    the write phase atomic as a whole (module docstring): ``<stem>.json`` lists the other two missing
    until both are written (a figure that cannot be made is not missing, it is a problem).

    Returns:
        ``(written, problems)``: the paths written, in order, and one sentence per file that could
        not be made.

    Raises:
        FilesInterrupted: a signal came before the last file was written (the results file lists
            the files not written).
        OSError: a file could not be written (the message names it); the results file lists the
            files not written.
        ResultsError: the study holds a non-finite number (nothing is written).
    """
    results, planned = f"{stem}.json", (f"{stem}.json", f"{stem}.md", f"{stem}.png")
    study = whole(study)
    files = OutputFiles(out)
    files.write(results, lambda p: begin_files(study, out, results, planned))
    try:
        files.text(f"{stem}.md", markdown())
        files.figure(f"{stem}.png", draw, what)
    except KeyboardInterrupt:
        raise files_cut(study, out, results, planned) from None
    except OSError:
        files_cut(study, out, results, planned)
        raise
    try:
        write_text_atomic(out / results, study.to_json())
    except KeyboardInterrupt:
        raise files_cut(study, out, results, planned) from None
    return files.written, files.problems
