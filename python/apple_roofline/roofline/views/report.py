"""Text reports of a run: Markdown and CSV (views of the run and its model; comparisons: :mod:`.compare`).

The Markdown report states the provenance and counting conventions of the run, its ceilings
(measured and theoretical), the ridge point of every compute ceiling (Williams, Waterman, Patterson
2009; ridge point = compute ceiling / bandwidth as in the M5 GPU roofline analysis, from
:meth:`~.model.RooflineModel.ridge_table`), one table per suite, skipped kernels and warnings
(noisy measurements with CV > 5 %, docs/design/measurement.md, "Measurement", and invalid ones). The tables
are :mod:`.tables`' (the HTML report renders the same). Numbers have 3 significant figures; units
are GB/s (1e9 B/s), GFLOP/s (1e9 FLOP/s) and FLOP/byte.
"""

from __future__ import annotations

import csv
import io
import json
from typing import List, Optional, Tuple

from ...study.markdown import provenance_lines, title_lines, warnings_lines
from ...study.table import Table
from ...suites import registry
from ...text import markdown_table
from ...user_kernels.model import KernelSet
from ...user_kernels.place import place
from ...user_kernels.tables import placements_table, unplaced_table
from ..model.run import Run
from .clock_table import clock_table
from .tables import (
    ceilings_table,
    efficiency_table,
    model_of,
    report_warnings,
    ridge_table,
    skipped_sections,
    suite_tables,
    suite_time_table,
    telemetry_note,
    theoretical_table,
)

__all__ = ["to_markdown", "to_csv", "clocks_and_power_lines", "skipped_lines", "table_lines", "CSV_COLUMNS"]

#: Columns of :func:`to_csv`, in order.
CSV_COLUMNS: Tuple[str, ...] = (
    "suite",
    "kernel",
    "dtype",
    "params",
    "flops",
    "bytes",
    "intensity",
    "median_s",
    "min_s",
    "max_s",
    "cv",
    "gflops",
    "gbps",
    "valid",
    "over_limit",
)


def table_lines(table: Table, empty: str = "None.") -> List[str]:
    """``table`` as Markdown: its notes (one line each), a blank line, then the table; ``empty``
    instead of a table without rows (nothing when ``empty`` is "")."""
    lines: List[str] = list(table.notes)
    if table.rows:
        return lines + ([""] if lines else []) + markdown_table(table.header, table.rows, table.align)
    if empty:
        lines += ([""] if lines else []) + [empty]
    return lines


def kernels_section(run: Run, kernels: KernelSet) -> List[Tuple[str, Optional[Table]]]:
    """Your kernels as report parts: (sentence, table) pairs — the placed dots
    (:func:`~apple_roofline.user_kernels.tables.placements_table`) and the kernels not placed with
    why (:func:`~apple_roofline.user_kernels.tables.unplaced_table`)."""
    model = model_of(run)
    what = f"{len(kernels.kernels())} kernel(s) from {kernels.source or 'the kernels given'}" + (
        f" ({kernels.device})" if kernels.device else ""
    )
    theirs, ours = (kernels.device or "").lower(), run.device_name.lower()
    other = (
        f" They ran on another device than this run's {run.device_name}: these ceilings are not their device's."
        if theirs and theirs != "unknown" and theirs not in ours and ours not in theirs
        else ""
    )
    if model is None:
        return [(f"{what}: no roofline to place them on (the run needs a bandwidth and a compute ceiling).", None)]
    parts: List[Tuple[str, Optional[Table]]] = [
        (f"{what}, on this run's measured ceilings.{other}", placements_table(place(model, kernels)))
    ]
    if kernels.unplaced:
        parts.append(("Not placed:", unplaced_table(kernels)))
    return parts


def to_markdown(run: Run, *, kernels: Optional[KernelSet] = None) -> str:
    """The run as a Markdown report (str ending in a newline).

    Sections: title (device name, backend, date), provenance, theoretical peaks (where the run has
    them), conventions, ceilings, ridge points, one table per suite (kernel, dtype, parameters,
    FLOP/B, median GFLOP/s, GB/s, CV, valid), the sections of the suites that have one where the run
    measured them (:func:`~apple_roofline.suites.registry.sections`: integer divide, memory hierarchy,
    matrix units, the rules), clocks and power (where the run sampled them: power,
    GFLOP/s and GB/s per watt, clocks), time per suite against its budget, skipped kernels, warnings. A partial run
    (interrupted, or a suite cut by its budget) says so under the title and in its status
    (:func:`~apple_roofline.study.markdown.status_text`). Never raises for a
    well-formed :class:`~.run.Run`; sections with nothing to show say so. With ``kernels`` (a file's
    :class:`~apple_roofline.user_kernels.model.KernelSet`), a section "Your kernels" after the ridge
    points: each dot, the ceiling that binds it and the speedup left; the kernels not placed and why.
    """
    lines: List[str] = title_lines("Roofline", run)
    lines += provenance_lines(run, [("Schema version", run.schema_version)])
    lines += _theoretical_lines(run)
    lines += ["", "## Conventions", ""]
    lines += [f"- **{k}**: {v}" for k, v in run.conventions.items()] or ["- none recorded"]
    lines += ["", "## Ceilings", ""] + table_lines(ceilings_table(run.ceilings), "No ceilings.")
    lines += ["", "## Ridge points", ""] + table_lines(ridge_table(model_of(run)), "")
    lines += _kernels_lines(run, kernels) if kernels is not None else []
    clocked = clock_table(run)
    if clocked is not None:
        lines += ["", "## Ceilings at the clock", ""] + table_lines(clocked, "")
    lines += _suite_lines(run)
    if not run.measurements:
        lines += ["", "No measurements."]
    lines += clocks_and_power_lines(run)
    times = suite_time_table(run)
    if times is not None:
        lines += ["", "## Time per suite", ""] + table_lines(times)
    lines += skipped_lines(run)
    lines += [""] + warnings_lines(report_warnings(run))
    return "\n".join(lines) + "\n"


def _theoretical_lines(run: Run) -> List[str]:
    """The ``## Theoretical peaks`` section and its notes, where the run has them."""
    theoretical = theoretical_table(run.device)
    if theoretical is None:
        return []
    lines = ["", "## Theoretical peaks", ""]
    lines += markdown_table(theoretical.header, theoretical.rows, theoretical.align)
    return lines + (([""] + [f"- {n}" for n in theoretical.notes]) if theoretical.notes else [])


def _kernels_lines(run: Run, kernels: KernelSet) -> List[str]:
    """The ``## Your kernels`` section (:func:`kernels_section`)."""
    lines = ["", "## Your kernels", ""]
    for sentence, table in kernels_section(run, kernels):
        lines += [sentence, ""] + (table_lines(table) + [""] if table is not None else [])
    lines.pop()
    return lines


def _suite_lines(run: Run) -> List[str]:
    """One ``## Suite: <name>`` table per suite with its timers' notes, then the suites' own sections
    that have tables for this run (:func:`~apple_roofline.suites.registry.sections`)."""
    lines: List[str] = []
    for st in suite_tables(run.measurements):
        lines += ["", f"## Suite: {st.suite}", ""] + table_lines(st.table)
        for timer in st.timers:
            lines += ["", timer]
    for _suite, section in registry.sections():
        tables = section.tables(run)
        if tables:
            lines += ["", f"## {section.title}", ""]
            for i, table in enumerate(tables):
                lines += ([""] if i else []) + table_lines(table)
    return lines


def skipped_lines(run: Run) -> List[str]:
    """The ``## Skipped`` section and, where the device records what its backend cannot reach (a WebGPU
    run), ``## Not reachable through WebGPU`` (:func:`~.tables.skipped_sections`)."""
    lines: List[str] = []
    for title, table in skipped_sections(run):
        lines += ["", f"## {title}", ""] + table_lines(table)
    return lines


def clocks_and_power_lines(run: Run) -> List[str]:
    """The ``## Clocks and power`` section (docs/design/power.md, "Clocks and power"): what sampled, or
    why nothing did, and :func:`~.tables.efficiency_table` where power was measured; no lines for a
    run that predates sampling and measured no power."""
    note, table = telemetry_note(run.device), efficiency_table(run.measurements)
    if note is None and table is None:
        return []
    lines = ["", "## Clocks and power", ""] + ([note] if note else [])
    if table is not None:
        lines += ([""] if note else []) + table_lines(table)
    return lines


def to_csv(run: Run) -> str:
    """One CSV row per measurement (str, "\\n" line endings), with a header.

    Columns: :data:`CSV_COLUMNS`. ``params`` is a JSON object; times in
    seconds, ``intensity`` in FLOP/byte, ``gflops`` in GFLOP/s, ``gbps`` in
    GB/s, ``cv`` a fraction, ``valid`` ``true``/``false``, ``over_limit`` the reason its figure lies
    above the physical limit of what it is labelled with (docs/design/limits.md, "Physical limits"), else
    empty. Floats are written with full precision (``repr``).
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for m in run.measurements:
        w.writerow(
            [
                m.suite,
                m.kernel,
                m.dtype,
                json.dumps(dict(m.params), separators=(",", ":")),
                m.flops,
                m.bytes,
                repr(m.intensity),
                repr(m.median_s),
                repr(m.min_s),
                repr(m.max_s),
                repr(m.cv),
                repr(m.gflops),
                repr(m.gbps),
                "true" if m.valid else "false",
                m.over_limit.reason if m.over_limit is not None else "",
            ]
        )
    return buf.getvalue()
