"""Text reports of a run: Markdown, CSV and a two-run comparison (views of the run and its model).

The Markdown report states the provenance and counting conventions of the run, its ceilings
(measured and theoretical), the ridge point of every compute ceiling (Williams, Waterman, Patterson
2009; ridge point = compute ceiling / bandwidth as in the M5 GPU roofline analysis, from
:meth:`~.model.RooflineModel.ridge_table`), one table per suite, skipped kernels and warnings
(noisy measurements with CV > 5 %, docs/design.md, "Measurement", and invalid ones). The tables
are :mod:`.tables`' (the HTML report renders the same). Numbers have 3 significant figures; units
are GB/s (1e9 B/s), GFLOP/s (1e9 FLOP/s) and FLOP/byte.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Dict, List, Tuple

from ..study.markdown import provenance_lines, title_lines, warnings_lines
from ..text import DASH, date_of, markdown_table, sig_figs
from .efficiency import ceiling_efficiency
from .hierarchy_table import hierarchy_table
from .idiv_table import idiv_table
from .matrix_table import matrix_shapes_table, matrix_summary_table
from .records import Ceiling
from .run import Run
from .tables import Table, ceilings_table, efficiency_table, model_of, report_warnings, ridge_table, skipped_table, \
    suite_tables, suite_time_table, telemetry_note, theoretical_table

__all__ = ["to_markdown", "to_csv", "clocks_and_power_lines", "compare_markdown", "compare_efficiency_lines",
           "table_lines", "CSV_COLUMNS"]

#: Columns of :func:`to_csv`, in order.
CSV_COLUMNS: Tuple[str, ...] = (
    "suite", "kernel", "dtype", "params", "flops", "bytes", "intensity",
    "median_s", "min_s", "max_s", "cv", "gflops", "gbps", "valid",
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


def to_markdown(run: Run) -> str:
    """The run as a Markdown report (str ending in a newline).

    Sections: title (device name, backend, date), provenance, theoretical peaks (where the run has
    them), conventions, ceilings, ridge points, one table per suite (kernel, dtype, parameters,
    FLOP/B, median GFLOP/s, GB/s, CV, valid), the integer-divide table where the run measured the
    idiv suite (:func:`~.idiv_table.idiv_table`), the memory hierarchy where it measured the hierarchy
    suite (:func:`~.hierarchy_table.hierarchy_table`), the matrix units where it measured the matrix suite
    (:mod:`.matrix_table`: the best tile per precision beside the vendor GEMM, every tile shape), clocks and power (where the run sampled them: power,
    GFLOP/s and GB/s per watt, clocks), time per suite against its budget, skipped kernels, warnings. An interrupted run
    (``complete`` false) says "INTERRUPTED — partial results" under the title. Never raises for a
    well-formed :class:`~.run.Run`; sections with nothing to show say so.
    """
    lines: List[str] = title_lines("Roofline", run)
    lines += provenance_lines(run, [("Schema version", run.schema_version)])
    theoretical = theoretical_table(run.device)
    if theoretical is not None:
        lines += ["", "## Theoretical peaks", ""]
        lines += markdown_table(theoretical.header, theoretical.rows, theoretical.align)
        lines += ([""] + [f"- {n}" for n in theoretical.notes]) if theoretical.notes else []
    lines += ["", "## Conventions", ""]
    lines += [f"- **{k}**: {v}" for k, v in run.conventions.items()] or ["- none recorded"]
    lines += ["", "## Ceilings", ""] + table_lines(ceilings_table(run.ceilings), "No ceilings.")
    lines += ["", "## Ridge points", ""] + table_lines(ridge_table(model_of(run)), "")
    for st in suite_tables(run.measurements):
        lines += ["", f"## Suite: {st.suite}", ""] + table_lines(st.table)
        for timer in st.timers:
            lines += ["", timer]
    idiv = idiv_table(run)
    if idiv is not None:
        lines += ["", "## Integer divide", ""] + table_lines(idiv)
    hierarchy = hierarchy_table(run)
    if hierarchy is not None:
        lines += ["", "## Memory hierarchy", ""] + table_lines(hierarchy)
    shapes = matrix_shapes_table(run)
    if shapes is not None:
        summary = matrix_summary_table(run)
        lines += ["", "## Matrix units", ""] + (table_lines(summary) + [""] if summary is not None else [])
        lines += table_lines(shapes)
    if not run.measurements:
        lines += ["", "No measurements."]
    lines += clocks_and_power_lines(run)
    times = suite_time_table(run)
    if times is not None:
        lines += ["", "## Time per suite", ""] + table_lines(times)
    lines += ["", "## Skipped", ""] + table_lines(skipped_table(run))
    lines += [""] + warnings_lines(report_warnings(run))
    return "\n".join(lines) + "\n"


def clocks_and_power_lines(run: Run) -> List[str]:
    """The ``## Clocks and power`` section (docs/design.md, "Clocks and power"): what sampled, or
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
    GB/s, ``cv`` a fraction, ``valid`` ``true``/``false``. Floats are written
    with full precision (``repr``).
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for m in run.measurements:
        w.writerow([
            m.suite, m.kernel, m.dtype, json.dumps(dict(m.params), separators=(",", ":")), m.flops, m.bytes,
            repr(m.intensity), repr(m.median_s), repr(m.min_s), repr(m.max_s), repr(m.cv), repr(m.gflops),
            repr(m.gbps), "true" if m.valid else "false",
        ])
    return buf.getvalue()


def _ceiling_key(c: Ceiling) -> Tuple[str, str, str]:
    return (c.source, c.kind, c.name)


def compare_markdown(a: Run, b: Run) -> str:
    """Side-by-side Markdown comparison of two runs, A and B.

    A ceilings table over the union of (source, kind, name) with the value in
    A, the value in B and the ratio B/A (``—`` where one run lacks it), then
    the ridge point (FLOP/byte) of every measured compute ceiling against each
    run's measured bandwidth, with the ratio B/A.
    """
    lines = [
        f"# Roofline comparison: {a.device_name} vs {b.device_name}",
        "",
        f"- **A**: {a.device_name} ({a.backend}), {date_of(a.created)}, {a.tool.name} {a.tool.version}"
        + ("" if a.complete else " — INTERRUPTED, partial results"),
        f"- **B**: {b.device_name} ({b.backend}), {date_of(b.created)}, {b.tool.name} {b.tool.version}"
        + ("" if b.complete else " — INTERRUPTED, partial results"),
        "",
        "## Ceilings",
        "",
    ]
    ca = {_ceiling_key(c): c for c in a.ceilings}
    cb = {_ceiling_key(c): c for c in b.ceilings}
    keys = list(ca) + [k for k in cb if k not in ca]
    keys.sort(key=lambda k: (k[0] != "measured", k[1] != "bandwidth", -(ca.get(k) or cb[k]).value))
    rows: List[List[object]] = []
    for k in keys:
        x, y = ca.get(k), cb.get(k)
        ref = x if x is not None else y
        unit = ref.unit if ref is not None else ""
        rows.append([
            k[2], k[1], k[0],
            f"{sig_figs(x.value)} {unit}" if x is not None else DASH,
            f"{sig_figs(y.value)} {unit}" if y is not None else DASH,
            f"{y.value / x.value:.2f}×" if (x is not None and y is not None) else DASH,
        ])
    if rows:
        lines += markdown_table(["Ceiling", "Kind", "Source", "A", "B", "B/A"], rows, "lllrrr")
    else:
        lines += ["Neither run has ceilings."]

    lines += ["", "## Ridge points (measured, FLOP/byte)", ""]
    ra, rb = _ridges(a), _ridges(b)
    names = list(ra) + [n for n in rb if n not in ra]
    if names:
        lines += markdown_table(
            ["Compute ceiling", "A", "B", "B/A"],
            [
                [
                    n,
                    sig_figs(ra[n]) if n in ra else DASH,
                    sig_figs(rb[n]) if n in rb else DASH,
                    f"{rb[n] / ra[n]:.2f}×" if (n in ra and n in rb) else DASH,
                ]
                for n in names
            ],
            "lrrr",
        )
    else:
        lines += ["No measured ridge points in either run."]
    lines += compare_efficiency_lines(a, b)
    return "\n".join(lines) + "\n"


def compare_efficiency_lines(a: Run, b: Run) -> List[str]:
    """The two runs' energy efficiency side by side (docs/design.md, "Clocks and power"): per
    measured ceiling whose measurement had power in either run, the rate, the watts and the rate
    per watt in A and in B, and B/A of the per-watt figures; no lines when neither run measured
    power at a ceiling."""
    ea = {e.name: e for e in ceiling_efficiency(a.measurements)}
    eb = {e.name: e for e in ceiling_efficiency(b.measurements)}
    names = list(ea) + [n for n in eb if n not in ea]
    if not names:
        return []
    rows: List[List[object]] = []
    for n in names:
        x, y = ea.get(n), eb.get(n)
        unit = x.unit if x is not None else y.unit if y is not None else ""
        rows.append([n, f"{sig_figs(x.rate)} {unit}" if x else DASH, f"{sig_figs(x.watts)}" if x else DASH,
                     sig_figs(x.per_watt) if x else DASH, f"{sig_figs(y.rate)} {unit}" if y else DASH,
                     f"{sig_figs(y.watts)}" if y else DASH, sig_figs(y.per_watt) if y else DASH,
                     f"{y.per_watt / x.per_watt:.2f}×" if (x and y) else DASH])
    return ["", "## Energy efficiency (measured ceilings with power)", ""] + markdown_table(
        ["Ceiling", "A rate", "A W", "A per W", "B rate", "B W", "B per W", "B/A per W"], rows, "lrrrrrrr") + [
        "", "Per W: GB/s per watt for bandwidths, GFLOP/s per watt for compute; W is the mean power over the "
            "ceiling's timed samples (a run without power there shows —)."]


def _ridges(run: Run) -> Dict[str, float]:
    model = model_of(run)
    if model is None or model.ridge_table().measured_bandwidth is None:
        return {}
    return {r.name: r.measured_ridge for r in model.ridge_table().rows if r.measured_ridge is not None}
