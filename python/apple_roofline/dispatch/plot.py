"""The picture of a dispatch-latency study: latency histograms and the round trip's steps.

One figure, four panels, every figure per launch in microseconds (µs, 1e-6 s):

* (a) throughput, (b) round trip, (c) start latency: a histogram of each valid series' samples on
  a logarithmic µs axis, with log-spaced bins shared by all series of the panel, drawn as step
  outlines (``histtype="step"``) so that they overlay; the height of a bin is the fraction of the
  series' samples that fall in it, so series with different sample counts compare. A triangle on
  the top edge, with a short tick below it, marks each series' median (p50). Colour tells kernel and
  path apart, line width the clock (host thin, device thick and lighter); every line is solid, as
  every measured line of every figure (:data:`~apple_roofline.figures.MEASURED`; dashed is for
  theoretical values). Samples <= 0 (possible for start latency, whose device instant
  is mapped onto the host clock) cannot be drawn on a log axis; the panel says how many were left
  out.
* (d) the round trip's steps (the native path's; the python path's on WebGPU): for each kernel, a
  horizontal bar stacking the median of each step (:func:`~.report.step_medians`), labelled with the step's name and
  value; a negative median (the GPU started before the launch call returned) is drawn as 0 and its
  value given in the label.

A footnote gives the binding's cost, kernel by kernel, as the report does (:func:`~.report.cost_text`:
the median of the paired python − native differences, its interval, and "not resolved" where the
interval does not resolve it), so that the distance between two histograms' medians is not read as
the cost. Series that failed validation are left out of every panel and listed in the footnote, with
the paths the study skipped. Figures are built with :class:`matplotlib.figure.Figure` on the Agg canvas,
never pyplot, so nothing touches matplotlib's global state; matplotlib is imported inside the
functions (:mod:`apple_roofline.figures`).
"""

from __future__ import annotations

import itertools
import math
import os
import textwrap
from typing import Any

import numpy as np

from ..figures import MEASURED, PALETTE, Axes, Figure, check_suffix, mpl, new_figure, save_figure
from ..text import date_of, sig_figs
from .model import DispatchStudy, LatencySeries
from .report import binding_cost, cost_text, step_medians, steps_path

__all__ = ["HIST_MEASURES", "LATENCY_FIGSIZE", "X_LABEL_US", "plot_dispatch"]

#: Figure size in inches (width, height).
LATENCY_FIGSIZE: tuple[float, float] = (14.0, 10.0)
#: The measures drawn as histograms, panels (a) to (c).
HIST_MEASURES: tuple[str, ...] = ("throughput", "round_trip", "start_latency")
X_LABEL_US = "µs per launch (log scale)"

_TITLES = {
    "throughput": "(a) throughput: back-to-back launches",
    "round_trip": "(b) round trip: launch, then wait",
    "start_latency": "(c) start latency: host submit to device start",
}
#: (line width, opacity) of each clock's histogram outline.
_CLOCK_WIDTHS = {"host": (1.2, 1.0), "device": (2.6, 0.55)}
# (dark, light) per path: dark for the first kernel, light for the second (Okabe & Ito, Paul Tol)
_PATH_HUES = {"native": ("#0072B2", "#56B4E9"), "python": ("#D55E00", "#E69F00")}
_PEER_HUES = (("#009E73", "#7FD4B9"), ("#882255", "#CC79A7"), ("#332288", "#8C84D0"), ("#777722", "#BBBB55"))
_NOT_MEASURED = "not measured"
_FOOT_WRAP = 190


def _label(s: LatencySeries) -> str:
    """``"kernel · path (clock)"``, the legend entry of a histogram."""
    return f"{s.kernel} · {s.path} ({s.clock})"


def _bins(values: list[np.ndarray]) -> np.ndarray:
    """Log-spaced bin edges (µs) covering every positive value of ``values``."""
    lo = min(float(v.min()) for v in values)
    hi = max(float(v.max()) for v in values)
    if hi <= lo * 1.05:
        lo, hi = lo / 1.5, hi * 1.5
    else:
        pad = (hi / lo) ** 0.02
        lo, hi = lo / pad, hi * pad
    total = sum(v.size for v in values)
    count = int(min(80, max(12, round(2.0 * math.sqrt(total / len(values)))))) | 1  # odd: a lone value mid-bin
    return np.geomspace(lo, hi, count + 1)


def _not_measured(ax: Axes, text: str = _NOT_MEASURED) -> None:
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=11,
        color="#808080",
        gid="not-measured",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def _tick(v: float, _pos: Any) -> str:
    return f"{v:,.6g}"


def _log_axis(ax: Axes, lo: float, hi: float) -> None:
    """A log x axis from ``lo`` to ``hi`` (µs) with labelled ticks however narrow the range."""
    ticker = mpl("matplotlib.ticker")
    decades = math.log10(hi / lo)
    subs: tuple[float, ...] = (
        (1.0,) if decades > 2.5 else (1.0, 2.0, 5.0) if decades > 1.2 else tuple(float(i) for i in range(1, 10))
    )
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(ticker.LogLocator(base=10.0, subs=subs))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(_tick))
    ax.xaxis.set_minor_locator(ticker.LogLocator(base=10.0, subs=tuple(float(i) for i in range(1, 10))))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _colors(series: list[LatencySeries]) -> dict[tuple[str, str], str]:
    """A colour per (kernel, path): a hue per path (native blue, python vermillion, then the peers),
    dark for the first kernel and light for the second."""
    peers = itertools.cycle(_PEER_HUES)
    hues: dict[str, tuple[str, str]] = dict(_PATH_HUES)
    kernels: dict[str, int] = {}
    out: dict[tuple[str, str], str] = {}
    for s in series:
        if s.path not in hues:
            hues[s.path] = next(peers)
        k = kernels.setdefault(s.kernel, len(kernels))
        out.setdefault((s.kernel, s.path), hues[s.path][k % 2])
    return out


def _histogram(ax: Axes, title: str, series: list[LatencySeries], colors: dict[tuple[str, str], str]) -> None:
    """Panel (a)-(c): step histograms of ``series`` (all valid) on a log µs axis."""
    ax.set_title(title, fontsize=10, loc="left")
    if not series:
        _not_measured(ax)
        return
    data, hidden = _positive_samples(series)
    drawable = [pos for _s, _us, pos in data if pos.size]
    if not drawable:
        _not_measured(ax, "no sample > 0 µs to draw on a log axis\n(see the report for the values)")
        return
    bins = _bins(drawable)
    _log_axis(ax, float(bins[0]), float(bins[-1]))
    peak = 0.0
    for s, us, pos in data:
        color = colors[(s.kernel, s.path)]
        peak = max(peak, _series_outline(ax, s, us, pos, bins, color))
        _median_tick(ax, s, color)
    ax.set_xlabel(X_LABEL_US)
    ax.set_ylabel("fraction of samples")
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.5)
    ax.set_axisbelow(True)
    _histogram_legend(ax, peak)
    if hidden:
        ax.text(
            0.01,
            0.98,
            f"{hidden} sample{'s' if hidden != 1 else ''} <= 0 µs not drawn (log axis)",
            transform=ax.transAxes,
            ha="left",
            va="top",
            fontsize=7,
            color="#4d4d4d",
        )


def _positive_samples(
    series: list[LatencySeries],
) -> tuple[list[tuple[LatencySeries, np.ndarray, np.ndarray]], int]:
    """``(data, hidden)``: per series, itself, its samples in µs and those above 0 µs (what a log
    axis can draw); and how many samples of all the series are at or below 0 µs."""
    data: list[tuple[LatencySeries, np.ndarray, np.ndarray]] = []
    hidden = 0
    for s in series:
        us = np.asarray(s.samples_s, dtype=np.float64) * 1e6
        pos = us[us > 0]
        hidden += int(us.size - pos.size)
        data.append((s, us, pos))
    return data, hidden


def _series_outline(ax: Axes, s: LatencySeries, us: np.ndarray, pos: np.ndarray, bins: np.ndarray, color: str) -> float:
    """The step outline of one series' samples above 0 µs (``pos`` of all ``us``), each weighted
    1/len(us) so a bar is a fraction of the series' samples, or only its legend entry when none is
    above 0; the tallest bar's fraction (0.0 when none is drawn)."""
    width, alpha = _CLOCK_WIDTHS.get(s.clock, (1.2, 1.0))
    if not pos.size:
        ax.plot([], [], color=color, linestyle=MEASURED, linewidth=width, alpha=alpha, label=_label(s))
        return 0.0
    counts, _edges, _patches = ax.hist(
        pos,
        bins=bins,
        weights=np.full(pos.size, 1.0 / us.size),
        histtype="step",
        color=color,
        linestyle=MEASURED,
        linewidth=width,
        alpha=alpha,
        label=_label(s),
        gid=f"hist:{_label(s)}",
    )
    return float(np.max(counts))


def _median_tick(ax: Axes, s: LatencySeries, color: str) -> None:
    """The series' median (p50, µs) as a tick down from the top edge with a triangle on it, clear of
    the outlines' own edges; nothing for a median at or below 0 µs (off the log axis)."""
    p50 = s.distribution.p50 * 1e6
    if p50 > 0:
        ax.plot(
            [p50, p50],
            [1.0, 0.94],
            transform=ax.get_xaxis_transform(),
            color=color,
            linestyle=MEASURED,
            linewidth=1.2,
            marker="v",
            markevery=[0],
            markersize=6,
            clip_on=False,
            gid=f"p50:{_label(s)}",
        )


def _histogram_legend(ax: Axes, peak: float) -> None:
    """The panel's legend (the series, then the median's triangle), one or two columns, and the y
    range from 0 to the tallest bar (``peak``, a fraction) with head room for the legend."""
    handles, names = ax.get_legend_handles_labels()
    handles.append(mpl("matplotlib.lines").Line2D([], [], color="#4d4d4d", linestyle="none", marker="v", markersize=6))
    names.append("p50 (median)")
    ncol = 2 if len(names) > 6 else 1
    ax.legend(handles, names, fontsize=7, loc="upper right", ncol=ncol, framealpha=0.85)
    # head room for the legend: about 6 % of the axes' height per legend row
    room = min(0.06 * math.ceil(len(names) / ncol) + 0.05, 0.6)
    ax.set_ylim(0.0, (peak or 1.0) / (1.0 - room))


def _steps_title(study: DispatchStudy) -> str:
    """Panel (d)'s title, naming the path whose steps it draws (native where none is drawn)."""
    return f"(d) round-trip steps, {steps_path(study) or 'native'} path: median of each step"


def _steps(ax: Axes, study: DispatchStudy) -> None:
    """Panel (d): one stacked bar of step medians per kernel (:func:`~.report.steps_path`'s path)."""
    ax.set_title(_steps_title(study), fontsize=10, loc="left")
    per_kernel = step_medians(study)
    if not per_kernel:
        _not_measured(ax)
        return
    order: dict[str, int] = {}
    for _kernel, steps in per_kernel:
        for s, _p in steps:
            order.setdefault(s.step, len(order))
    palette = list(itertools.islice(itertools.cycle(PALETTE), len(order)))
    totals = [sum(max(p, 0.0) for _s, p in steps) * 1e6 for _k, steps in per_kernel]
    xmax = max(totals) * 1.35 if max(totals) > 0 else 1.0
    height = 0.3
    arrow = {"arrowstyle": "-", "color": "#808080", "linewidth": 0.6, "shrinkA": 0.0, "shrinkB": 1.0}
    for row, (kernel, steps) in enumerate(per_kernel):
        y = -float(row)
        left = 0.0
        for j, (s, p50) in enumerate(steps):
            us = p50 * 1e6
            width = max(us, 0.0)
            ax.barh(
                y,
                width,
                left=left,
                height=height,
                color=palette[order[s.step]],
                edgecolor="white",
                linewidth=0.8,
                gid=f"step:{kernel}:{s.step}",
            )
            text = f"{s.step}\n{sig_figs(us)} µs" + ("\n(drawn as 0)" if us < 0 else "")
            ax.annotate(
                text,
                xy=(left + 0.5 * width, y - 0.5 * height),
                xycoords="data",
                xytext=((j + 0.5) / len(steps), y - 0.5 * height - 0.17),
                textcoords=("axes fraction", "data"),
                ha="center",
                va="top",
                fontsize=7.5,
                arrowprops=arrow,
                gid=f"steplabel:{kernel}:{s.step}",
            )
            left += width
        ax.annotate(
            f"sum of medians {sig_figs(sum(p for _s, p in steps) * 1e6)} µs",
            xy=(left, y),
            xytext=(4.0, 0.0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=8,
        )
    ax.set_yticks([-float(i) for i in range(len(per_kernel))])
    ax.set_yticklabels([k for k, _steps in per_kernel])
    ax.set_ylim(-float(len(per_kernel) - 1) - 0.95, 0.4)
    ax.set_xlim(0.0, xmax)
    ax.set_xlabel("µs per launch (medians, stacked)")
    ax.grid(True, axis="x", color="#d0d0d0", linewidth=0.5)
    ax.set_axisbelow(True)


def _footnote(study: DispatchStudy) -> str:
    parts: list[str] = []
    costs = binding_cost(study)
    if costs:
        parts.append("Binding cost: " + "; ".join(f"{c.kernel} {c.measure}: {cost_text(c)}" for c in costs) + ".")
    bad = [s for s in study.series if not s.valid]
    if bad:
        parts.append(
            "Left out, failed validation: "
            + "; ".join(s.label + (f" ({s.validation})" if s.validation else "") for s in bad)
            + "."
        )
    if study.skipped:
        parts.append("Not measured: " + "; ".join(f"{s.path} ({s.reason})" for s in study.skipped) + ".")
    return "\n".join(textwrap.fill(p, _FOOT_WRAP) for p in parts)


def plot_dispatch(study: DispatchStudy, path: str | os.PathLike[str] | None = None) -> Figure:
    """Draw a dispatch-latency study as one figure (module docstring: panels, units, colours).

    The title names the device, its backend and the study's date (and says when the study was
    interrupted). A footnote (a figure text) gives the binding's cost with its interval and verdict;
    series that failed validation are left out of every panel and listed in it, with the paths the
    study skipped; a panel with no valid series says "not measured".

    Args:
        study: the study to draw.
        path: where to save the figure, or None not to save it. The suffix picks the format:
            ``.png`` (150 dpi), ``.svg`` or ``.pdf``; the file is written atomically
            (:func:`apple_roofline.figures.save_figure`).

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas (not closed).

    Raises:
        ValueError: ``path`` has another suffix (the message lists the valid ones; checked before
            drawing, nothing is written), or the study holds no valid series.
        OSError: the file cannot be written.
    """
    if path is not None:
        check_suffix(path)
    valid = [s for s in study.series if s.valid]
    if not valid:
        what = "no series" if not study.series else f"no valid series (all {len(study.series)} failed validation)"
        raise ValueError(f"dispatch study of {study.device_name} holds {what}; nothing to plot")

    fig = new_figure(LATENCY_FIGSIZE)
    foot = _footnote(study)
    bottom = 0.07 + 0.016 * (foot.count("\n") + 1 if foot else 0)
    fig.subplots_adjust(left=0.06, right=0.98, top=0.91, bottom=bottom, hspace=0.38, wspace=0.16)
    axes = [fig.add_subplot(2, 2, i + 1) for i in range(4)]

    colors = _colors([s for s in valid if s.measure in HIST_MEASURES])
    for ax, measure in zip(axes, HIST_MEASURES):
        title = _TITLES[measure]
        mine = [s for s in valid if s.measure == measure]
        if measure == "throughput" and mine:
            counts = sorted({s.launches_per_sample for s in mine})
            each = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
            title += f" (each sample the mean of {each})"
        _histogram(ax, title, mine, colors)
    _steps(axes[3], study)

    status = "" if study.complete else " — INTERRUPTED, partial results"
    fig.suptitle(
        f"Dispatch latency per launch: {study.device_name} ({study.backend}) — {date_of(study.created)}{status}",
        fontsize=13,
    )
    if foot:
        fig.text(0.06, 0.008, foot, ha="left", va="bottom", fontsize=7, color="#4d4d4d", gid="footnote")
    if path is not None:
        save_figure(fig, path)
    return fig
