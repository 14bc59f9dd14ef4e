"""What the roofline figures share: log-log axes, their limits, the performance unit, the legend
below the axes and the final label layout.

Axes follow Williams, Waterman and Patterson 2009: performance against arithmetic intensity
(FLOP/byte), both logarithmic. Performance is drawn in GFLOP/s, or in TFLOP/s when the highest
ceiling reaches 10,000 GFLOP/s (a GPU with tensor cores), so tick labels stay short; bandwidths are
written in GB/s or TB/s the same way. The model's numbers are always GFLOP/s and GB/s: only the
drawing is scaled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from ...figures import Axes, Figure, mpl, new_figure
from ...text import sig_figs
from .labels import Labels, renderer_of

__all__ = [
    "FIGSIZE",
    "X_LABEL",
    "MAX_DECADES",
    "Scale",
    "scale_for",
    "new_roofline_figure",
    "axes_for",
    "setup_axes",
    "limits",
    "finish",
]

#: Default figure size in inches (width, height): the axes, the ceiling-label column right of
#: them and the legend below them.
FIGSIZE: Tuple[float, float] = (11.0, 7.0)
X_LABEL = "Arithmetic intensity (FLOP/byte)"
#: From this many GFLOP/s on, figures are drawn in TFLOP/s.
TERA_FROM = 1e4
#: The y axis spans at most this many decades: below, launch-bound points (a GEMM of N = 16 on a GPU
#: with tensor cores) would squash the region the roofline is about; such points are counted instead.
MAX_DECADES = 5.5


@dataclass(frozen=True)
class Scale:
    """The unit a figure draws performance in: ``factor`` GFLOP/s per drawn unit (1 or 1000)."""

    factor: float
    unit: str  # "GFLOP/s" | "TFLOP/s"

    @property
    def y_label(self) -> str:
        """``"Performance (GFLOP/s)"`` or ``"Performance (TFLOP/s)"``."""
        return f"Performance ({self.unit})"

    def y(self, gflops: float) -> float:
        """A rate in GFLOP/s in the drawn unit."""
        return gflops / self.factor

    def rate(self, gflops: float) -> str:
        """A compute rate for a label, in the drawn unit (``"64.4 TFLOP/s"``)."""
        return f"{sig_figs(gflops / self.factor)} {self.unit}"

    def bandwidth(self, gbps: float) -> str:
        """A bandwidth for a label: ``"122 GB/s"``, or ``"4.34 TB/s"`` from 1,000 GB/s on."""
        return f"{sig_figs(gbps / 1e3)} TB/s" if gbps >= 1e3 else f"{sig_figs(gbps)} GB/s"


def scale_for(top_gflops: float) -> Scale:
    """TFLOP/s when ``top_gflops`` (the highest ceiling or point drawn) reaches
    :data:`TERA_FROM`, else GFLOP/s."""
    return Scale(1e3, "TFLOP/s") if top_gflops >= TERA_FROM else Scale(1.0, "GFLOP/s")


def new_roofline_figure() -> Tuple[Figure, Axes]:
    """A :data:`FIGSIZE` figure with one axes, room on the right for the label column."""
    fig = new_figure(FIGSIZE)
    fig.subplots_adjust(left=0.07, right=0.70, bottom=0.20, top=0.93)
    return fig, fig.add_subplot(1, 1, 1)


def axes_for(ax: Optional[Axes]) -> Tuple[Figure, Axes, bool]:
    """(figure, axes, whether the figure is ours): a new figure when ``ax`` is None.

    Raises:
        ValueError: ``ax`` is not attached to a figure.
    """
    if ax is None:
        fig, new_ax = new_roofline_figure()
        return fig, new_ax, True
    fig = ax.get_figure()
    if fig is None:
        raise ValueError("ax is not attached to a figure")
    return fig, ax, False


def setup_axes(ax: Axes, lims: Tuple[float, float, float, float], scale: Scale) -> None:
    """Log-log axes over ``lims`` (x in FLOP/byte, y in the drawn unit), labelled, with a grid."""
    ticker = mpl("matplotlib.ticker")
    xlo, xhi, ylo, yhi = lims
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel(scale.y_label)

    def tick(v: float, _pos: Any) -> str:
        return f"{v:,.0f}" if v >= 1 else f"{v:g}"

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(ticker.LogLocator(base=10.0))
        axis.set_major_formatter(ticker.FuncFormatter(tick))
        axis.set_minor_locator(ticker.LogLocator(base=10.0, subs=tuple(range(2, 10))))
        axis.set_minor_formatter(ticker.NullFormatter())
    ax.grid(True, which="major", color="#b0b0b0", linewidth=0.6, alpha=0.7)
    ax.grid(True, which="minor", color="#d8d8d8", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)


def limits(
    xs: Sequence[float],
    ys: Sequence[float],
    ridges: Sequence[float],
    tops: Sequence[float],
    bandwidths: Sequence[float],
) -> Tuple[float, float, float, float]:
    """(xlo, xhi, ylo, yhi) in FLOP/byte and GFLOP/s: x from 1/16 of the smallest intensity or
    ridge point to 4x the largest (at least two decades); y from below the lowest data point and the
    bandwidth roofs' start to well above the highest ceiling or point (at least two decades, at most
    :data:`MAX_DECADES`)."""
    xcand = [x for x in xs if x > 0] + [r for r in ridges if r > 0]
    xlo, xhi = (min(xcand) / 16.0, max(xcand) * 4.0) if xcand else (1e-2, 1e3)
    if xhi / xlo < 100.0:
        mid = math.sqrt(xhi * xlo)
        xlo, xhi = mid / 10.0, mid * 10.0
    data = [y for y in ys if y > 0]
    bottoms = data + [b * xlo for b in bandwidths]
    top_values = list(tops) + data + [b * xlo for b in bandwidths]
    ylo = min(bottoms or top_values or [1.0]) / 2.0
    yhi = max(top_values or [10.0]) * 2.5
    if yhi / ylo < 100.0:
        ylo = yhi / 100.0
    return xlo, xhi, max(ylo, yhi / 10**MAX_DECADES), yhi


def finish(ax: Axes, labels: Labels, own_figure: bool, legend: Tuple[List[Any], List[str]], ncol: int = 4) -> None:
    """The legend (below the axes in a figure of our own, inside otherwise), room for the label
    column, then the labels placed, raising the top of the y axis until the free ones all fit."""
    handles, names = legend
    if own_figure:
        fig = ax.get_figure()
        renderer = renderer_of(fig)
        width_px, height_px = fig.get_figwidth() * fig.dpi, fig.get_figheight() * fig.dpi
        column = labels.column_width()
        right = min(max(1.0 - (column + 14.0) / width_px if column > 0 else 0.97, 0.45), 0.97)
        fig.subplots_adjust(right=right)
        if handles:
            left = fig.subplotpars.left
            leg = ax.legend(
                handles,
                names,
                loc="lower center",
                bbox_to_anchor=(0.5 * (left + right), 0.01),
                bbox_transform=fig.transFigure,
                ncol=min(ncol, len(handles)),
                fontsize=8,
                frameon=False,
                columnspacing=1.6,
                handlelength=2.4,
            )
            leg_h = leg.get_window_extent(renderer).height if renderer is not None else 60.0
            fig.subplots_adjust(bottom=min((leg_h + 0.01 * height_px + 52.0) / height_px, 0.45))
    elif handles:
        ax.legend(handles, names, loc="best", fontsize=8)
    for _ in range(4):
        overflow = labels.layout()
        if overflow <= 0:
            break
        ylo, yhi = ax.get_ylim()
        height = ax.get_window_extent().height or 1.0
        ax.set_ylim(ylo, yhi * 10 ** (math.log10(yhi / ylo) * (overflow + 8.0) / height))
