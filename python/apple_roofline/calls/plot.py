"""The figure of a per-call cost study (docs/design/studies.md, "The per-call cost study").

Log-log: time per call (µs) against FLOPs per call. Per path (one colour of
:data:`apple_roofline.figures.PALETTE` each): the medians of its valid shapes with p10–p90 bars,
and its fitted t(F) = t0 + F/R as a line over every FLOP count of the study; each crossover that
lies in that range is a black marker labelled with the two paths. Measurements that failed
validation are left out and counted in a footnote.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import numpy as np

from ..figures import PALETTE, Axes, Figure, check_suffix, new_figure, save_figure
from ..text import date_of, sig_figs
from .fit import CallFit, crossovers
from .model import CallMeasurement, CallsStudy

__all__ = ["CALLS_FIGSIZE", "plot_calls"]

#: Figure size in inches.
CALLS_FIGSIZE = (9.0, 6.0)


def plot_calls(study: CallsStudy, path: Optional[Union[str, "os.PathLike[str]"]] = None) -> Figure:
    """Draw ``study`` (module docstring) and save it to ``path`` (``.png``, ``.svg`` or ``.pdf``,
    written atomically) unless None.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.

    Raises:
        ValueError: ``path`` has another suffix (checked before drawing), or the study has no valid
            measurement.
        OSError: the file cannot be written.
    """
    if path is not None:
        check_suffix(path)
    valid = [m for m in study.measurements if m.valid]
    if not valid:
        what = "no measurements" if not study.measurements else "no valid measurement"
        raise ValueError(f"per-call cost study of {study.device_name} holds {what}; nothing to plot")
    fig = new_figure(CALLS_FIGSIZE)
    ax = fig.add_subplot(1, 1, 1)
    lo = min(m.flops for m in valid)
    hi = max(m.flops for m in valid)
    line_f = np.geomspace(lo, hi, 200)
    fit_list = study.fits()
    fits = {f.path: f for f in fit_list}
    for i, p in enumerate(study.paths):
        ms = study.of_path(p.name)
        if ms:
            _draw_path(ax, p.name, ms, PALETTE[i % len(PALETTE)], fits.get(p.name), line_f)
    drawn = _draw_crossovers(ax, fit_list, lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs per call (2·B·N²)")
    ax.set_ylabel("time per call (µs; median, p10–p90)")
    ax.grid(True, which="both", color="#e0e0e0", linewidth=0.5)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, loc="upper left")
    status = "" if study.complete else " — INTERRUPTED, partial results"
    ax.set_title(
        f"Per-call cost of C[B×N] = A[B×N]·W[N×N] (fp32): {study.device_name} ({study.backend}) — "
        f"{date_of(study.created)}{status}",
        fontsize=10,
    )
    foot = _footnote(drawn, len(study.measurements) - len(valid))
    if foot:
        fig.text(0.01, 0.01, foot, fontsize=7, color="#4d4d4d", gid="footnote")
    fig.subplots_adjust(left=0.09, right=0.98, top=0.93, bottom=0.1)
    if path is not None:
        save_figure(fig, path)
    return fig


def _draw_path(
    ax: Axes, name: str, ms: Sequence[CallMeasurement], color: str, fit: Optional[CallFit], line_f: np.ndarray
) -> None:
    """One path's valid shapes as medians with p10–p90 bars (µs against FLOPs per call), and its
    fitted line over ``line_f`` when it has a fit (the fit's t0 and rate in its legend entry)."""
    f = np.array([m.flops for m in ms], dtype=float)
    d = [m.distribution for m in ms]
    med = np.array([x.median for x in d]) * 1e6
    err = np.array([[x.median - x.p10 for x in d], [x.p90 - x.median for x in d]]) * 1e6
    label = name
    if fit is not None:
        rate = "no rate" if fit.rate is None else f"R {sig_figs(fit.rate / 1e9)} GFLOP/s"
        label += f": t0 {sig_figs(fit.t0_s * 1e6)} µs, {rate}"
        ax.plot(line_f, (fit.t0_s + line_f * fit.inv_rate) * 1e6, color=color, linewidth=1.2, alpha=0.8)
    ax.errorbar(f, med, yerr=err, fmt="o", color=color, markersize=4, capsize=2, linewidth=0.8, label=label)


def _draw_crossovers(ax: Axes, fit_list: Sequence[CallFit], lo: float, hi: float) -> int:
    """A black marker, labelled with the two paths, at each crossover of two fits between ``lo``
    and ``hi`` FLOPs per call; how many were drawn."""
    drawn = 0
    for c in crossovers(fit_list):
        if c.flops is not None and c.seconds is not None and lo <= c.flops <= hi:
            drawn += 1
            ax.plot([c.flops], [c.seconds * 1e6], marker="X", color="black", markersize=8, linestyle="none")
            ax.annotate(
                f"{c.a}/{c.b}", (c.flops, c.seconds * 1e6), xytext=(4, -10), textcoords="offset points", fontsize=7
            )
    return drawn


def _footnote(drawn: int, bad: int) -> str:
    """What the markers are (when any was drawn) and how many measurements failed validation."""
    foot = "X: crossover of two fitted paths." if drawn else ""
    if bad:
        foot += f" Left out: {bad} measurement(s) that failed validation."
    return foot.strip()
