"""Text report of a tuning study: Markdown, CSV or JSON.

Sections: provenance and settings; a summary (per kernel: the best block size, its throughput, the
worst valid size's and the spread between them); per kernel, every size tried with the statistics
of every suite (median time, throughput at the median and at the best sample, CV, IQR), the
occupancy where known (resident blocks and threads per SM) and the validation, the best marked;
rejected sizes with the compiler's or the pipeline's message; skipped kernels; warnings.
"""

from __future__ import annotations

import csv
import io
from typing import List, Tuple

from ..study.markdown import format_report, header_warnings, provenance_lines, title_lines, warnings_lines
from ..study.records import Measurement
from ..text import DASH, markdown_table, percent, sig_figs
from .model import TuneStudy, rate, rate_unit

__all__ = ["FORMATS", "summary_rows", "format_tune"]

#: Formats of :func:`format_tune`.
FORMATS: Tuple[str, ...] = ("md", "csv", "json")


def _best_rate(m: Measurement) -> float:
    return m.best_gbps if m.ceiling_kind == "bandwidth" else m.best_gflops


def summary_rows(study: TuneStudy) -> List[List[str]]:
    """One row per kernel: kernel, best block, its throughput, the worst valid block and its
    throughput, best / worst; a kernel without a valid point says so."""
    rows: List[List[str]] = []
    best = study.best()
    for kernel in study.kernels():
        b = best.get(kernel)
        valid = [m for m in study.points(kernel) if m.valid]
        if b is None:
            rows.append([kernel, DASH, "no valid point", DASH, DASH, DASH])
            continue
        w = min(valid, key=rate)
        unit = rate_unit(b)
        rows.append(
            [
                kernel,
                str(b.params["block"]),
                f"{sig_figs(rate(b))} {unit}",
                str(w.params["block"]),
                f"{sig_figs(rate(w))} {unit}",
                f"{rate(b) / rate(w):.2f}x",
            ]
        )
    return rows


def _point_rows(study: TuneStudy, kernel: str) -> List[List[str]]:
    best = study.best_of(kernel)
    rows: List[Tuple[int, List[str]]] = []
    for m in study.points(kernel):
        p = m.params
        rows.append(
            (
                int(p["block"]),
                [
                    f"**{p['block']}** (best)" if m is best else str(p["block"]),
                    sig_figs(m.median_s * 1e3),
                    f"{sig_figs(rate(m))}",
                    f"{sig_figs(_best_rate(m))}",
                    percent(m.cv),
                    sig_figs(m.iqr_s * 1e3),
                    str(p.get("resident_blocks_per_sm", DASH)),
                    str(p.get("resident_threads_per_sm", DASH)),
                    "valid" if m.valid else f"INVALID: {m.validation}",
                ],
            )
        )
    for x in study.rejected:
        if x.label == kernel:
            rows.append((x.block, [str(x.block), DASH, DASH, DASH, DASH, DASH, DASH, DASH, f"rejected: {x.message}"]))
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def _markdown(study: TuneStudy) -> str:
    p = study.params
    lines = title_lines("Threadgroup-size tuning", study)
    lines += provenance_lines(study, [("Settings", ", ".join(f"{k}={v}" for k, v in p.items()))]) + [""]
    lines += [
        "## Best block size per kernel",
        "",
        "Throughput at the median time: GB/s for bandwidth kernels, GFLOP/s (integer operations for "
        "idiv) for the others; FLOPs and bytes per launch from the kernel tables. Sizes are multiples "
        f"of the SIMD width ({p.get('simd_width', DASH)}) up to the device's limit "
        f"({p.get('max_block', DASH)} threads).",
        "",
    ]
    lines += markdown_table(
        ["Kernel", "Best block", "Throughput", "Worst block", "Throughput", "Best / worst"], summary_rows(study)
    ) + [""]
    for kernel in study.kernels():
        pts = study.points(kernel)
        unit = rate_unit(pts[0]) if pts else "GFLOP/s"
        lines += [f"## {kernel}", ""]
        lines += markdown_table(
            [
                "Block",
                "Median ms",
                f"{unit} (median)",
                f"{unit} (best)",
                "CV",
                "IQR ms",
                "Blocks / SM",
                "Threads / SM",
                "Validation",
            ],
            _point_rows(study, kernel),
        ) + [""]
    if study.skipped:
        lines += ["## Skipped", ""] + [f"- {s.label}: {s.reason}" for s in study.skipped] + [""]
    lines += warnings_lines(header_warnings(study, "tuning study"))
    return "\n".join(lines) + "\n"


def _csv(study: TuneStudy) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "kernel",
            "block",
            "valid",
            "median_s",
            "rate",
            "unit",
            "best_rate",
            "cv",
            "iqr_s",
            "resident_blocks_per_sm",
            "resident_threads_per_sm",
            "message",
        ]
    )
    best = study.best()
    for kernel in study.kernels():
        for m in study.points(kernel):
            w.writerow(
                [
                    kernel,
                    m.params["block"],
                    m.valid,
                    repr(m.median_s),
                    repr(rate(m)),
                    rate_unit(m),
                    repr(_best_rate(m)),
                    repr(m.cv),
                    repr(m.iqr_s),
                    m.params.get("resident_blocks_per_sm", ""),
                    m.params.get("resident_threads_per_sm", ""),
                    "best" if best.get(kernel) is m else ("" if m.valid else m.validation),
                ]
            )
        for x in study.rejected:
            if x.label == kernel:
                w.writerow([kernel, x.block, False, "", "", "", "", "", "", "", "", f"rejected: {x.message}"])
    return buf.getvalue()


def format_tune(study: TuneStudy, fmt: str = "md") -> str:
    """The study as text: ``"md"`` (module docstring), ``"csv"`` (one row per point and rejected size,
    seconds at full precision) or ``"json"`` (:meth:`TuneStudy.to_json`).

    Raises:
        OptionError: an unknown format (the message lists them).
    """
    return format_report(study, fmt, FORMATS, _markdown, _csv, option="format")
