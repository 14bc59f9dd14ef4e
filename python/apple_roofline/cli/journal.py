"""``--resume DIR``: the journal a study command keeps, or the one it continues (docs/design/files.md,
"Journal and resume")."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple, Type

import typer

from ..study.document import Document
from ..study.files import ResultsError
from ..study.journal import Journal, journal_path, read_journal
from .common import EXIT_USAGE, check_out_name, fail, hold_folder, warn

__all__ = ["RESUME_HELP", "study_journal"]

RESUME_HELP = (
    "Continue the study in DIR from its journal (DIR/<study>.journal.jsonl): the measurements it holds "
    "are kept, the rest measured. The device and options must be the ones it was started with."
)


def _out_given(ctx: typer.Context) -> bool:
    source = ctx.get_parameter_source("out")
    return source is not None and source.name != "DEFAULT"


def study_journal(
    ctx: typer.Context, out: Path, resume: Optional[Path], stem: str, kind: Type[Document]
) -> Tuple[Path, Journal]:
    """The output directory and the journal of a study whose results file is ``<stem>.json``: a new
    journal ``out/<stem>.journal.jsonl``, or with ``resume`` the one in that directory, read back
    (its truncated last line dropped with a warning) and continued there.

    Exits 2 with one line when ``--out`` (given on the command line ``ctx`` parses) names another
    directory than ``--resume``, or the journal is
    missing or not this tool's journal of this kind of study, or another command holds the folder's
    lock (:func:`~.common.hold_folder`, taken before the journal is read and held to the end).
    """
    if resume is None:
        return out, Journal(journal_path(out, stem))
    if _out_given(ctx) and out.resolve() != resume.resolve():
        fail(
            f"--out {str(out)!r} and --resume {str(resume)!r} name two directories (valid: --resume DIR alone, "
            "which writes the results into DIR)",
            EXIT_USAGE,
        )
    check_out_name(str(resume), "--resume")
    if resume.is_dir():
        hold_folder(resume, "--resume")
    try:
        contents = read_journal(journal_path(resume, stem), kind)
    except ResultsError as exc:
        fail(f"--resume: {exc}", EXIT_USAGE)
    if contents.dropped:
        warn(contents.dropped)
    return resume, Journal(resume=contents)
