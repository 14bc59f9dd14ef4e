"""The frame every kind of study shares (docs/design/files.md, "Results files").

A study is a kind of measurement with its own results file — the roofline run, the dispatch-latency
study and the ones to come. Each is a subpackage of the same shape (model, runner, report, plot) and
its results file is a :class:`~.document.Document`: one header (schema version, kind, tool,
created, finished, host, device, command, warnings, complete), read by one strict
:class:`~.reader.Reader` and written atomically (:mod:`.files`). Runners report progress through
one :class:`~.progress.Progress` protocol, and keep each finished measurement in a
:class:`~.journal.Journal` (``DIR/<stem>.journal.jsonl``, read back by :func:`~.journal.read_journal`
to resume).
"""

from __future__ import annotations

from .document import Document, ToolInfo
from .files import ResultsError, parse_results_json, read_results_text, write_bytes_atomic, write_text_atomic
from .journal import Journal, journal_path, read_journal
from .progress import Progress
from .reader import Reader, json_type

__all__ = [
    "Document",
    "Journal",
    "Progress",
    "Reader",
    "ResultsError",
    "ToolInfo",
    "json_type",
    "journal_path",
    "parse_results_json",
    "read_journal",
    "read_results_text",
    "write_bytes_atomic",
    "write_text_atomic",
]
