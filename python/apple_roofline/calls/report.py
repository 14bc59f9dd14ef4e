"""Text reports of a per-call cost study: the per-shape table, the fits, the crossovers; Markdown,
CSV, JSON (docs/design/studies.md, "The per-call cost study").

Times are per call in microseconds (µs, 1e-6 s) to 3 significant figures; rates in GFLOP/s (1e9
FLOP/s) from the median; FLOPs per call as counted by the gemm suite (2·B·N²). The fits and
crossovers are recomputed from the valid measurements (:meth:`~.model.CallsStudy.fits`); a
crossover outside the FLOPs measured is marked as extrapolated.
"""

from __future__ import annotations

import csv
import io
from typing import List, Sequence, Tuple

from ..study.markdown import end_report, format_report, header_warnings, provenance_lines, skipped_lines, title_lines
from ..text import DASH, key_value_pairs, markdown_table, percent, sig_figs
from .fit import CallFit, Crossover, crossovers
from .model import CallsStudy

__all__ = [
    "FORMATS",
    "SHAPE_COLUMNS",
    "CSV_COLUMNS",
    "FIT_COLUMNS",
    "CROSSOVER_COLUMNS",
    "shape_table",
    "fit_table",
    "crossover_table",
    "format_calls",
]

#: Formats of :func:`format_calls`.
FORMATS: Tuple[str, ...] = ("md", "csv", "json")
SHAPE_COLUMNS: Tuple[str, ...] = (
    "Path",
    "B×N²",
    "FLOPs/call",
    "n",
    "p10 (µs)",
    "median (µs)",
    "p90 (µs)",
    "GFLOP/s",
    "valid",
)
CSV_COLUMNS: Tuple[str, ...] = (
    "path",
    "batch",
    "n",
    "rows",
    "flops",
    "bytes",
    "samples",
    "p10_s",
    "median_s",
    "p90_s",
    "gflops",
    "valid",
)
FIT_COLUMNS: Tuple[str, ...] = ("Path", "t0 (µs)", "R (GFLOP/s)", "RMS rel. error", "max rel. error", "points")
CROSSOVER_COLUMNS: Tuple[str, ...] = ("Paths", "Crossover (FLOPs/call)", "Time there (µs)", "Below", "Above")


def _us(seconds: float) -> str:
    return sig_figs(seconds * 1e6)


def _flops(f: float) -> str:
    return f"{f:.3g}"


def shape_table(study: CallsStudy) -> Tuple[Sequence[str], List[List[str]]]:
    """One row per measurement (path order, then FLOPs): :data:`SHAPE_COLUMNS`."""
    rows = []
    for p in study.paths:
        for m in study.of_path(p.name, valid_only=False):
            d = m.distribution
            rows.append(
                [
                    p.name,
                    m.shape,
                    _flops(m.flops),
                    str(d.n),
                    _us(d.p10),
                    _us(d.median),
                    _us(d.p90),
                    sig_figs(m.gflops),
                    "yes" if m.valid else f"NO: {m.validation}",
                ]
            )
    return SHAPE_COLUMNS, rows


def fit_table(fits: Sequence[CallFit]) -> Tuple[Sequence[str], List[List[str]]]:
    """One row per fit: :data:`FIT_COLUMNS` (t0 in µs, R in GFLOP/s, "no rate" when 1/R = 0)."""
    return FIT_COLUMNS, [
        [
            f.path,
            _us(f.t0_s),
            DASH + " (no rate)" if f.rate is None else sig_figs(f.rate / 1e9),
            percent(f.rms_rel),
            percent(f.max_rel),
            str(f.points),
        ]
        for f in fits
    ]


def crossover_table(fits: Sequence[CallFit], crossings: Sequence[Crossover]) -> Tuple[Sequence[str], List[List[str]]]:
    """One row per pair of paths: :data:`CROSSOVER_COLUMNS`; "never" where one path wins at every F,
    "(extrapolated)" where F* lies outside both paths' measured FLOPs."""
    span = {f.path: f.flops_range for f in fits}
    rows = []
    for c in crossings:
        pair = f"{c.a} / {c.b}"
        if c.flops is None or c.seconds is None:
            rows.append([pair, "never", DASH, f"{c.below} everywhere", DASH])
            continue
        lo = max(span[c.a][0], span[c.b][0])
        hi = min(span[c.a][1], span[c.b][1])
        where = "" if lo <= c.flops <= hi else " (extrapolated)"
        rows.append([pair, _flops(c.flops) + where, _us(c.seconds), c.below, c.above])
    return CROSSOVER_COLUMNS, rows


def _markdown(study: CallsStudy) -> str:
    lines = title_lines("Per-call cost", study) + provenance_lines(study)
    lines += ["", "## Parameters", "", key_value_pairs(study.params)]
    lines += ["", "## Paths", ""]
    if study.paths:
        lines += markdown_table(
            ["Path", "Runs on", "Library or kernel", "One call"],
            [[p.name, p.device, p.label, p.call] for p in study.paths],
        )
    else:
        lines += ["None measured."]
    lines += [
        "",
        "## Time per call",
        "",
        (
            "C[B×N] = A[B×N]·W[N×N] in fp32, 2·B·N² FLOPs per call. Each sample is one call (launch, then "
            "wait), timed on the host's steady clock by the native round-trip loop; p10, median and p90 "
            "of the samples; GFLOP/s from the median. The output of the last call is validated before "
            "the row counts."
        ),
        "",
    ]
    header, rows = shape_table(study)
    lines += markdown_table(header, rows, "llrrrrrrl") if rows else ["No measurements."]
    fits = study.fits()
    lines += [
        "",
        "## Fixed overhead and rate",
        "",
        (
            "t(F) = t0 + F/R fitted to each path's medians by least squares on the relative residuals "
            "(weights 1/t²; t0 and 1/R non-negative). t0 is the fixed cost of one call, R the asymptotic "
            "rate; the residuals say how well two numbers describe the path."
        ),
        "",
    ]
    header, rows = fit_table(fits)
    lines += markdown_table(header, rows, "lrrrrr") if rows else ["No path has two valid shapes to fit."]
    lines += [
        "",
        "## Crossovers",
        "",
        (
            "Where two paths' fitted times are equal, t0_a + F/R_a = t0_b + F/R_b: below it the path "
            'with less overhead wins, above it the faster one; "never" when one path wins at every F.'
        ),
        "",
    ]
    header, rows = crossover_table(fits, crossovers(fits))
    lines += markdown_table(header, rows, "lrrll") if rows else ["Fewer than two paths were fitted."]
    lines += [""] + skipped_lines(["Path", "Reason"], [[s.path, s.reason] for s in study.skipped])
    return end_report(lines, header_warnings(study, "study"))


def _csv(study: CallsStudy) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for p in study.paths:
        for m in study.of_path(p.name, valid_only=False):
            d = m.distribution
            w.writerow(
                [
                    m.path,
                    m.batch,
                    m.n,
                    m.rows,
                    m.flops,
                    m.bytes,
                    d.n,
                    repr(d.p10),
                    repr(d.median),
                    repr(d.p90),
                    repr(m.gflops),
                    "yes" if m.valid else "no",
                ]
            )
    return buf.getvalue()


def format_calls(study: CallsStudy, fmt: str = "md") -> str:
    """The study as text (ending in a newline).

    Formats:
        ``"md"``: heading, provenance, parameters, the paths and what one call includes, the
            per-shape table (:func:`shape_table`), the fits (:func:`fit_table`), the crossovers
            (:func:`crossover_table`), skipped paths, warnings.
        ``"csv"``: :data:`CSV_COLUMNS`, one row per measurement, seconds at full precision.
        ``"json"``: :meth:`CallsStudy.to_json`.

    Raises:
        OptionError: ``fmt`` is not one of :data:`FORMATS` (the message lists them).
    """
    return format_report(study, fmt, FORMATS, _markdown, _csv)
