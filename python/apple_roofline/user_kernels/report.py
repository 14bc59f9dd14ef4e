"""``apple-roofline report KERNELS.json``: a kernels file on its own — each measured callable's
FLOPs, bytes, median time, rates and intensity (to put them on a roofline: ``plot RUN.json --kernels
KERNELS.json``)."""

from __future__ import annotations

import csv
import io
from typing import List, Tuple

from ..study.markdown import format_report, header_warnings, provenance_lines, title_lines, warnings_lines
from ..text import DASH, markdown_table, sig_figs
from .document import KernelsFile

__all__ = ["format_kernels", "FORMATS"]

FORMATS: Tuple[str, ...] = ("md", "csv", "json")


def _rows(doc: KernelsFile) -> List[List[str]]:
    return [[p.name, p.dtype or DASH, sig_figs(p.flops), sig_figs(p.bytes), sig_figs(p.seconds * 1e3),
             str(len(p.samples)) if p.samples else DASH, sig_figs(p.gflops), sig_figs(p.gbps),
             sig_figs(p.intensity) if p.flops > 0 else DASH] for p in doc.points]


def _markdown(doc: KernelsFile) -> str:
    lines = title_lines("Kernels", doc) + provenance_lines(doc, []) + [""]
    lines += ["## Measured callables", "",
              "FLOPs and bytes of one call as counted by the caller, the median time of one call "
              "(apple_roofline.measure); put them on a roofline with `plot RUN.json --kernels FILE`.", ""]
    lines += markdown_table(["Kernel", "dtype", "FLOPs", "Bytes", "Median ms", "Samples", "GFLOP/s", "GB/s", "FLOP/B"],
                            _rows(doc)) + [""]
    lines += warnings_lines(header_warnings(doc, "kernels file"))
    return "\n".join(lines) + "\n"


def _csv(doc: KernelsFile) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["kernel", "dtype", "flops", "bytes", "median_s", "n", "gflops", "gbps"])
    for p in doc.points:
        w.writerow([p.name, p.dtype or "", repr(float(p.flops)), repr(float(p.bytes)), repr(float(p.seconds)),
                    len(p.samples), repr(p.gflops), repr(p.gbps)])
    return buf.getvalue()


def format_kernels(doc: KernelsFile, fmt: str = "md") -> str:
    """The kernels file as text: ``"md"``, ``"csv"`` (one row per callable, full precision) or
    ``"json"`` (:meth:`KernelsFile.to_json`).

    Raises:
        OptionError: an unknown format (the message lists them).
    """
    return format_report(doc, fmt, FORMATS, _markdown, _csv, option="format")
