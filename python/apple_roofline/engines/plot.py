"""The picture of an engines study: GFLOP/s against the batch, per compute unit and precision.

One panel per weight size (the M5 article's batch-scaling table drawn): x is the batch B (log 2),
y the native path's GFLOP/s at the median prediction time (log); colour is the compute-units
setting, the marker the precision (FP16 filled, W8A16 hollow); every line is solid, as every measured
line of every figure (:data:`~apple_roofline.figures.MEASURED`; dashed is for theoretical values). Only
measured, valid points are drawn;
a study with none (off macOS: no predictions) has no figure, and :func:`plot_engines` says why.
Built with :class:`matplotlib.figure.Figure`, never pyplot (:mod:`apple_roofline.figures`).
"""

from __future__ import annotations

import math
from typing import Dict, List, Tuple

from ..figures import MEASURED, PALETTE, Figure, mpl, new_figure
from ..text import date_of, sig_figs
from .kernels import UNITS
from .model import EnginePoint, EnginesStudy

__all__ = ["plot_engines", "UNIT_COLORS", "PRECISION_HOLLOW"]

#: Colour of each compute-units setting.
UNIT_COLORS: Dict[str, str] = {u: PALETTE[i % len(PALETTE)] for i, u in enumerate(UNITS)}
#: Whether each precision's markers are hollow (its line is solid either way: both are measured).
PRECISION_HOLLOW: Dict[str, bool] = {"fp16": False, "w8a16": True}


def plot_engines(study: EnginesStudy) -> Figure:
    """The figure of the module docstring.

    Raises:
        ValueError: the study has no measured, valid point (the message says why: off macOS, no
            predictions were made).
    """
    pts = [p for p in study.measured if p.valid and p.gflops("native")]
    if not pts:
        why = str(study.params.get("predictions") or "no point was measured and valid")
        raise ValueError(f"engines study has nothing to draw: {why}")
    shapes = sorted({(p.k, p.m) for p in pts})
    cols = min(3, len(shapes))
    rows = math.ceil(len(shapes) / cols)
    fig = new_figure((5.0 * cols + 1.0, 4.0 * rows + 1.0))
    fig.subplots_adjust(left=0.08, right=0.98, top=0.88, bottom=0.1, hspace=0.4, wspace=0.25)
    ticker = mpl("matplotlib.ticker")
    for i, (k, m) in enumerate(shapes):
        ax = fig.add_subplot(rows, cols, i + 1)
        lines: Dict[Tuple[str, str], List[EnginePoint]] = {}
        for p in pts:
            if (p.k, p.m) == (k, m):
                lines.setdefault((p.units, p.precision), []).append(p)
        for (units, precision), ps in sorted(lines.items(), key=lambda kv: (UNITS.index(kv[0][0]), kv[0][1])):
            ps.sort(key=lambda p: p.batch)
            color = UNIT_COLORS.get(units, "#555555")
            ax.plot(
                [p.batch for p in ps],
                [p.gflops("native") or 0.0 for p in ps],
                marker="o",
                markersize=4.5,
                color=color,
                linestyle=MEASURED,
                markerfacecolor="white" if PRECISION_HOLLOW.get(precision, True) else color,
                label=f"{units} {precision}",
                gid=f"engines:{k}x{m}:{units}:{precision}",
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: sig_figs(v)))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("batch B (1 = decode, >= 64 = prefill)")
        ax.set_ylabel("GFLOP/s (native, median)")
        ax.set_title(f"{k} x {m} weight" if k != m else f"N = {k}", fontsize=10, loc="left")
        ax.grid(True, which="major", color="#d0d0d0", linewidth=0.5)
        ax.legend(fontsize=7, loc="best")
    status = "" if study.complete else " — INTERRUPTED, partial results"
    fig.suptitle(
        f"Core ML matmul GFLOP/s by compute units: {study.device_name} — {date_of(study.created)}{status}", fontsize=11
    )
    return fig
