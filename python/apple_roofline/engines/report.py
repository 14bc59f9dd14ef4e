"""Text report of an engines study: Markdown (and CSV/JSON).

Sections: provenance and settings; the models and their accounting (FLOPs and bytes from the kernel
table, the weight bytes each model really holds); the M5 article's tables — decode (B = 1) GFLOP/s
per size and compute unit, batch scaling per size, W8A16 against FP16 —; per-prediction times
(median, p10, p90, p99 on the native path, the Python path's median and what Python adds) with the
devices Core ML planned; points not measured; warnings. A study without predictions (off macOS)
says so at the top and has no numbers in its tables (docs/design/studies.md, "The engines study").
"""

from __future__ import annotations

import csv
import io
from typing import Dict, List, Optional, Tuple

from ..study.markdown import end_report, format_report, header_warnings, provenance_lines, title_lines
from ..text import DASH, key_value_pairs, markdown_table, sig_figs
from .kernels import UNITS, matmul_bytes
from .model import EnginePoint, EnginesStudy, planned_devices

__all__ = ["FORMATS", "NO_PREDICTIONS", "gflops_table", "format_engines"]

#: Formats of :func:`format_engines`.
FORMATS: Tuple[str, ...] = ("md", "csv", "json")
#: The banner of a study without predictions.
NO_PREDICTIONS = "No predictions were made: {why}. Nothing in this report is a measurement"


def _us(s: float) -> str:
    return sig_figs(s * 1e6)


def _shape_key(p: EnginePoint) -> Tuple[int, int]:
    return (p.k, p.m)


def gflops_table(
    study: EnginesStudy, precision: str, *, batch: Optional[int] = None, shape: Optional[str] = None
) -> Tuple[List[str], List[List[str]]]:
    """A GFLOP/s table of the native path, one column per compute unit: rows are the sizes at
    ``batch`` (the article's decode table) or the batches of ``shape`` (its batch-scaling table).
    Cells are blank where a point was not measured or failed validation. Returns (header, rows)."""
    units = [u for u in UNITS if any(p.units == u for p in study.points)]
    pts = [
        p
        for p in study.points
        if p.precision == precision and (batch is None or p.batch == batch) and (shape is None or p.shape == shape)
    ]
    keys: List[Tuple[int, int, int]] = sorted({(p.k, p.m, p.batch) for p in pts})
    rows = []
    for k, m, b in keys:
        cells = []
        for u in units:
            hit = [p for p in pts if (p.k, p.m, p.batch, p.units) == (k, m, b, u)]
            g = hit[0].gflops("native") if hit else None
            cells.append(sig_figs(g) if g is not None else DASH)
        name = str(k) if k == m else f"{k}x{m}"
        rows.append([name if batch is not None else str(b)] + cells)
    return (["N" if batch is not None else "Batch"] + units, rows)


def _tables(study: EnginesStudy) -> List[str]:
    lines: List[str] = []
    precisions = [p for p in ("fp16", "w8a16") if any(q.precision == p for q in study.points)]
    for precision in precisions:
        if any(p.batch == 1 for p in study.points):
            head, rows = gflops_table(study, precision, batch=1)
            lines += ["", f"### Decode (batch 1), {precision}: GFLOP/s", ""] + markdown_table(head, rows)
        shapes = sorted({(p.k, p.m) for p in study.points if p.precision == precision})
        for k, m in shapes:
            name = str(k) if k == m else f"{k}x{m}"
            head, rows = gflops_table(study, precision, shape=name)
            if len(rows) > 1:
                lines += ["", f"### Batch scaling, {precision}, {name}: GFLOP/s", ""] + markdown_table(head, rows)
    return lines


def _speedups(study: EnginesStudy) -> List[str]:
    fp16: Dict[Tuple[str, int, int, int], float] = {}
    for p in study.points:
        g = p.gflops("native")
        if p.precision == "fp16" and g:
            fp16[(p.units, p.k, p.m, p.batch)] = g
    rows = []
    for p in study.points:
        g = p.gflops("native")
        ref = fp16.get((p.units, p.k, p.m, p.batch))
        if p.precision == "w8a16" and g and ref:
            rows.append(
                [p.phase or DASH, p.shape, str(p.batch), p.units, sig_figs(ref), sig_figs(g), f"{g / ref:.2f}x"]
            )
    if not rows:
        return ["Not measured."]
    return markdown_table(
        ["Phase", "Size", "Batch", "Units", "FP16 GFLOP/s", "W8A16 GFLOP/s", "Speedup"], rows, "llrlrrr"
    )


def _times(study: EnginesStudy) -> List[str]:
    rows = []
    for p in study.measured:
        n, py = p.native, p.python
        assert n is not None
        s = n.summary
        over = _us(py.median_s - n.median_s) if py is not None else DASH
        g = p.gflops("native")
        rows.append(
            [
                p.units,
                p.precision,
                p.shape,
                str(p.batch),
                _us(s.median),
                _us(s.p10),
                _us(s.p90),
                _us(s.p99),
                str(s.n),
                _us(py.median_s) if py else DASH,
                over,
                sig_figs(g) if g else DASH,
                planned_devices(p.plan),
                "yes" if p.valid else "**NO**",
            ]
        )
    if not rows:
        return ["Not measured."]
    return markdown_table(
        [
            "Units",
            "Precision",
            "Size",
            "Batch",
            "Native µs (median)",
            "p10",
            "p90",
            "p99",
            "Predictions",
            "Python µs (median)",
            "Python adds µs",
            "GFLOP/s",
            "Planned devices",
            "Valid",
        ],
        rows,
        "lllrrrrrrrrrll",
    )


def _models(study: EnginesStudy) -> List[str]:
    rows = []
    for m in study.models:
        b, k, n = int(m["batch"]), int(m["k"]), int(m["m"])
        rows.append(
            [
                str(m["precision"]),
                str(k) if k == n else f"{k}x{n}",
                str(b),
                str(2 * b * k * n),
                str(matmul_bytes(b, k, n, str(m["precision"]))),
                str(m["weight_bytes_counted"]),
                str(m["weight_bytes_in_model"]),
                "yes" if m.get("accounting_ok") else "**NO**",
                "cached" if m.get("cached") else f"{float(m.get('build_s', 0)):.2f} s",
            ]
        )
    if not rows:
        return ["None."]
    return [
        "FLOPs = 2·B·K·M per prediction; bytes = weights + 2·B·K input + 2·B·M output bytes; weights 2·K·M "
        "(fp16) or K·M + 3·M (w8a16: INT8 data, FP16 scale and INT8 zero point per column). "
        '"In model" is what coremltools says the built model holds.',
        "",
    ] + markdown_table(
        [
            "Precision",
            "Size",
            "Batch",
            "FLOPs",
            "Bytes",
            "Weight bytes counted",
            "Weight bytes in model",
            "Accounting",
            "Built",
        ],
        rows,
        "llrrrrrll",
    )


def _not_measured(study: EnginesStudy) -> List[str]:
    skipped = [p for p in study.points if p.status == "skipped"]
    failed = [p for p in study.points if p.status == "failed"]
    lines: List[str] = []
    reasons = sorted({p.reason for p in skipped})
    for r in reasons:
        lines.append(f"- {sum(p.reason == r for p in skipped)} of {len(study.points)} points skipped: {r}")
    if failed:
        lines += [""] + markdown_table(["Point", "Core ML"], [[p.label, p.reason] for p in failed])
    partial = [p for p in study.measured if p.reason]
    lines += [f"- {p.label}: {p.reason}" for p in partial]
    return lines or ["None."]


def _markdown(study: EnginesStudy) -> str:
    why = str(study.params.get("predictions", ""))
    lines = title_lines("Core ML and the Neural Engine", study)
    if why:
        lines += [f"**{NO_PREDICTIONS.format(why=why)}.**", ""]
    lines += provenance_lines(study)
    lines += ["", "## Settings", "", key_value_pairs(study.params)]
    lines += ["", "## Models", ""] + _models(study)
    lines += [
        "",
        "## GFLOP/s (native path, median)",
        "",
        "One matmul y = x·W per prediction, timed one prediction at a time from Objective-C++ after a "
        "warm-up; GFLOP/s = 2·B·K·M / median seconds. CPU_AND_NE allows the CPU and the Neural Engine (not "
        "the GPU) and does not force the Neural Engine: the planned devices below say where Core ML meant "
        "to run each model. Batch 1 is the M5 article's decode, batch >= 64 its prefill.",
    ]
    lines += _tables(study) if study.measured else ["", "Not measured."]
    lines += ["", "## W8A16 against FP16", ""] + _speedups(study)
    lines += ["", "## Per-prediction times", ""] + _times(study)
    lines += ["", "## Not measured", ""] + _not_measured(study)
    return end_report(lines, header_warnings(study, "study"))


def _csv(study: EnginesStudy) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "units",
            "precision",
            "k",
            "m",
            "batch",
            "flops",
            "bytes",
            "status",
            "native_median_s",
            "python_median_s",
            "gflops",
            "planned",
            "valid",
            "reason",
        ]
    )
    for p in study.points:
        n, py = p.native, p.python
        g = p.gflops("native")
        w.writerow(
            [
                p.units,
                p.precision,
                p.k,
                p.m,
                p.batch,
                p.flops,
                p.bytes,
                p.status,
                repr(n.median_s) if n else "",
                repr(py.median_s) if py else "",
                repr(g) if g else "",
                planned_devices(p.plan),
                "true" if p.valid else "false",
                p.reason,
            ]
        )
    return buf.getvalue()


def format_engines(study: EnginesStudy, fmt: str = "md") -> str:
    """The study as text: ``"md"`` (module docstring), ``"csv"`` (one row per point) or ``"json"``.

    Raises:
        OptionError: an unknown format (the message lists them).
    """
    return format_report(study, fmt, FORMATS, _markdown, _csv, option="format")
