"""What every report shares: the title line, the partial-results banner, the provenance table of the
header (:class:`~.document.Document`), the skipped and warnings sections that end it, and the choice
of a report's format."""

from __future__ import annotations

from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, TypeVar

from ..errors import OptionError
from ..text import DASH, date_of, key_value_pairs, markdown_table
from .document import CUT_BY_BUDGET, FILES_MISSING, INTERRUPTED_STATUS, Document
from .timing import cut_note

__all__ = [
    "INTERRUPTED",
    "PARTIAL",
    "FILES_NOT_WRITTEN",
    "status_text",
    "figure_status",
    "title_lines",
    "provenance_lines",
    "resumed_line",
    "warnings_lines",
    "tool_line",
    "header_warnings",
    "skipped_lines",
    "end_report",
    "format_report",
]

D = TypeVar("D", bound=Document)

#: How a report marks an interrupted study.
INTERRUPTED = "INTERRUPTED — partial results"
#: How a report marks a study with a suite cut short by its time budget.
PARTIAL = "PARTIAL — cut by budget"
#: How a report marks a study whose files were not all written.
FILES_NOT_WRITTEN = "FILES MISSING — not written"


def status_text(doc: Document) -> str:
    """:attr:`~.document.Document.status` in words, for reports, figures, ``compare`` and a node's
    table: ``"complete"``; :data:`INTERRUPTED`; or :data:`PARTIAL` with each cut suite and the cases
    it lacks (``"PARTIAL — cut by budget: stream cut by its 10 s budget (3 of 4 planned cases
    measured; not measured from stream/triad/fp32 n=1048576 on)"``). An interrupted study names its
    cut suites too."""
    cuts = "; ".join(cut_note(t) for t in doc.budget_cuts())
    if doc.status == INTERRUPTED_STATUS:
        return INTERRUPTED + (f"; {cuts}" if cuts else "")
    if doc.status == CUT_BY_BUDGET:
        return f"{PARTIAL}: {cuts}"
    if doc.status == FILES_MISSING:
        return f"{FILES_NOT_WRITTEN}: {', '.join(doc.missing)} (apple-roofline report DIR makes them)" + (
            f"; {PARTIAL}: {cuts}" if cuts else ""
        )
    return doc.status


def figure_status(doc: Document, suites: Optional[Sequence[str]] = None) -> Optional[str]:
    """The note a figure of ``doc`` carries when it lacks cases (:func:`~apple_roofline.figures.add_note`):
    that the study was interrupted, and each suite among ``suites`` (every suite when None) cut by
    its budget, with the cases it lacks; None when the figure lacks nothing."""
    parts = [INTERRUPTED] if doc.status == INTERRUPTED_STATUS else []
    cuts = [cut_note(t) for t in doc.budget_cuts() if suites is None or t.suite in suites]
    if cuts:
        parts.append("PARTIAL, not every case drawn: " + "; ".join(cuts))
    return ". ".join(parts) + "." if parts else None


def tool_line(doc: Document) -> str:
    """``"apple_roofline 0.1.0 (git abc1234)"``."""
    tool = f"{doc.tool.name} {doc.tool.version}"
    return tool + (f" (git {doc.tool.git_revision})" if doc.tool.git_revision else "")


def title_lines(what: str, doc: Document) -> List[str]:
    """``# <what>: <device> (<backend>) — <date>``, then a bold banner when the study is partial
    (interrupted, or a suite cut by its budget: :func:`status_text`)."""
    lines = [f"# {what}: {doc.device_name} ({doc.backend}) — {date_of(doc.created)}", ""]
    if doc.partial:
        lines += [f"**{status_text(doc)}.**", ""]
    return lines


def provenance_lines(doc: Document, extra: Sequence[Tuple[str, object]] = ()) -> List[str]:
    """The ``## Provenance`` section: tool, git revision, created, finished, host, device, command,
    status, in a resumed study where its kept measurements were made (:func:`resumed_line`), then
    the ``extra`` rows (field, value)."""
    rows: List[Sequence[object]] = [
        ["Tool", tool_line(doc)],
        ["Git revision", doc.tool.git_revision or "unknown"],
        ["Created", doc.created],
        ["Finished", doc.finished or DASH],
        ["Host", key_value_pairs(doc.host)],
        ["Device", key_value_pairs(doc.device)],
        ["Command", f"`{' '.join(doc.command)}`" if doc.command else DASH],
        ["Status", status_text(doc)],
    ]
    if doc.resumed is not None:
        rows.append(["Resumed", resumed_line(doc.resumed)])
    rows += [[k, v] for k, v in extra]
    return ["## Provenance", ""] + markdown_table(["Field", "Value"], rows)


def resumed_line(resumed: Mapping[str, Any]) -> str:
    """``"12 measurements kept from the journal of host-a, AMD EPYC (cpu), started 2026-…"``: the
    ``resumed`` header key in words."""
    n = len(resumed["measurements"])
    device = resumed["device"]
    return (
        f"{n} measurement{'s' if n != 1 else ''} kept from the journal of "
        f"{resumed['host'].get('hostname', 'an unknown host')}, {device['name']} ({device['backend']}), "
        f"started {resumed['created']}"
    )


def warnings_lines(warnings: Sequence[str]) -> List[str]:
    """The ``## Warnings`` section: one bullet per warning, or "None."."""
    return ["## Warnings", ""] + ([f"- {w}" for w in warnings] or ["None."])


def header_warnings(doc: Document, what: str) -> List[str]:
    """The document's own warnings once each, after a note that the ``what`` ("run", "study") was
    interrupted when it was and no warning says so already; a report adds its derived ones after."""
    out: List[str] = []
    if not doc.complete and not any("interrupt" in w.lower() for w in doc.warnings):
        out.append(f"{what} was interrupted: partial results")
    for w in doc.warnings:
        if w not in out:
            out.append(w)
    return out


def skipped_lines(header: Sequence[str], rows: Sequence[Sequence[object]]) -> List[str]:
    """The ``## Skipped`` section: a table of ``rows`` under ``header`` (what, reason), or "None."."""
    return ["## Skipped", ""] + (markdown_table(header, rows) if rows else ["None."])


def end_report(lines: Sequence[str], warnings: Sequence[str]) -> str:
    """A Markdown report's text: ``lines``, a blank line, the ``## Warnings`` section
    (:func:`warnings_lines`), ending in a newline."""
    return "\n".join([*lines, ""] + warnings_lines(warnings)) + "\n"


def format_report(
    study: D,
    fmt: str,
    formats: Sequence[str],
    markdown: Callable[[D], str],
    csv: Callable[[D], str],
    option: str = "fmt",
) -> str:
    """``study`` as text in the format ``fmt``: ``"md"`` (``markdown(study)``), ``"csv"``
    (``csv(study)``) or ``"json"`` (:meth:`~.document.Document.to_json`).

    Raises:
        OptionError: (naming ``option``) ``fmt`` is none of them; the message lists ``formats``.
    """
    if fmt == "md":
        return markdown(study)
    if fmt == "csv":
        return csv(study)
    if fmt == "json":
        return study.to_json()
    raise OptionError(option, fmt, ", ".join(formats), problem="is not a report format")
