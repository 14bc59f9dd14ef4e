"""The memory-hierarchy figure: bandwidth against working set (docs/design/hierarchy.md, "The memory
hierarchy").

One line per hierarchy kernel (``read``: per-lane reads; ``rmw``: read-modify-write) through its
points (each at its best sample, as the plateaus are found), log-log; each plateau found
(:mod:`.plateaus`) and told apart (:mod:`.agreement`) as a horizontal bar over its working sets,
labelled with its level and rate beside it, on the side away from the other kernel's line where there
is room (:class:`.labels.Labels`: no label covers another or a marker), and one that could not be told
apart as no bar, its level named in a note under the axes; the documented cache sizes as dashed
vertical lines named at the top, and the shared-memory ceiling, where measured, as a thin solid
horizontal line (the line styles of every figure: published dashed, measured solid,
:data:`~apple_roofline.figures.MEASURED`). A point above the physical limit of the level it was planned
in (docs/design/limits.md, "Physical limits") stays on its line but in no plateau, drawn hollow under a
cross, and the legend says so. The y axis has plain-number log ticks
(:func:`~apple_roofline.figures.log_ticks`: 50, 100, 200, 500, 1k). Every marker carries the gid of
its measurement (:func:`.plot.measurement_gid`), so the HTML report's hover text works on it; each
plateau label the gid ``plateaulabel:<kernel>:<level>``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...figures import MEASURED, PALETTE, THEORETICAL, Figure, log_ticks, mpl, new_figure, text_color
from ...roofline.model.run import Run
from ...roofline.views.labels import Labels
from ...roofline.views.plot import draw_over_limit, measurement_gid, over_limit_legend
from ...roofline.views.tables import model_of
from ...sizes import format_size
from ...study.records import Ceiling, Measurement
from ...text import sig_figs
from .levels import LevelCurve, level_curves

__all__ = ["plot_hierarchy", "hierarchy_figure", "HIERARCHY_FIGSIZE"]

#: Figure size in inches (width, height).
HIERARCHY_FIGSIZE: Tuple[float, float] = (9.5, 5.6)
_MARKERS = ("o", "s", "^", "v")
_COLORS = {"read": PALETTE[0], "rmw": PALETTE[1]}
_MARKER_SIZE = 4.5
#: Distance of a plateau's label from its bar, points.
LABEL_GAP_PT = 5.0


def _above_others(curves: Sequence[LevelCurve], k: int, x: float, y: float) -> bool:
    """Whether curve ``k`` at working set ``x`` (rate ``y``) lies at or above the other curves there
    (their nearest point in log working set): its label then goes above, else below."""
    others = [
        min(c.points, key=lambda p: abs(math.log(p[0] / x)))[1] for j, c in enumerate(curves) if j != k and c.points
    ]
    return all(y >= o for o in others)


def _label_candidates(above: bool) -> List[Tuple[Tuple[float, float], str, str]]:
    """Places for a plateau label, nearest first: centred over (or under) its bar, then shifted to
    either side, on the preferred side first, then the other, then twice as far."""
    out: List[Tuple[Tuple[float, float], str, str]] = []
    for far in (1.0, 2.5):
        for up in (True, False) if above else (False, True):
            dy = LABEL_GAP_PT * far * (1.0 if up else -1.0)
            va = "bottom" if up else "top"
            out += [((0.0, dy), "center", va), ((-2.0, dy), "right", va), ((2.0, dy), "left", va)]
    return out


def plot_hierarchy(
    measurements: Sequence[Measurement], *, ceilings: Sequence[Ceiling] = (), title: Optional[str] = None
) -> Figure:
    """Draw a run's working-set sweep (module docstring).

    Args:
        measurements: a run's measurements (its valid ``hierarchy`` points are drawn).
        ceilings: the run's ceilings; the measured ``Shared memory bandwidth`` is drawn as a reference.
        title: what the figure is of (``"<device> (<backend>) — <date>"``).

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.

    Raises:
        ValueError: there is no valid working-set measurement.
    """
    curves = level_curves(measurements)
    if not curves:
        raise ValueError("no valid working-set measurements to draw")
    index: Dict[int, int] = {id(m): i for i, m in enumerate(measurements)}
    fig = new_figure(HIERARCHY_FIGSIZE)
    fig.subplots_adjust(left=0.09, right=0.97, top=0.86, bottom=0.15)
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    labels = Labels(fig)
    for k, curve in enumerate(curves):
        color = _COLORS.get(curve.kernel, PALETTE[(k + 2) % len(PALETTE)])
        _draw_curve(ax, labels, curve, k, color, index)
        _draw_plateaus(ax, labels, curves, k, color)
    _draw_levels(ax, curves)
    _draw_shared(ax, ceilings)
    _set_axes(ax)
    _note_unresolved(ax, curves)
    _legend(fig, ax, curves)
    head = "Memory hierarchy: bandwidth against working set"
    fig.suptitle(f"{head}\n{title}" if title else head, fontsize=11)
    ax.get_xlim()  # settle the autoscaled limits before measuring where labels go
    labels.layout()
    return fig


def _draw_curve(ax: Any, labels: Labels, curve: LevelCurve, k: int, color: str, index: Dict[int, int]) -> None:
    """Curve ``k``'s line through its points and a marker per point (hollow under a cross where
    above its limit), each marker carrying its measurement's gid (``index``: id -> position)."""
    xs = [w for w, _g in curve.points]
    ys = [g for _w, g in curve.points]
    name = f"{curve.kernel} ({curve.dtype})"
    ax.plot(xs, ys, color=color, linewidth=1.3, zorder=3, label=name, gid=f"hierarchy:{name}")
    for m, x, y in zip(curve.measurements, xs, ys):
        over = m.over_limit is not None  # above its limit: hollow under a cross, in no plateau
        ax.plot(
            [x],
            [y],
            linestyle="none",
            marker=_MARKERS[k % len(_MARKERS)],
            markersize=_MARKER_SIZE,
            color=color,
            markerfacecolor="white" if over else color,
            markeredgecolor=color if over else "white",
            markeredgewidth=1.1 if over else 0.5,
            zorder=4,
            gid=measurement_gid(index[id(m)]),
        )
        if over:
            draw_over_limit(ax, x, y, _MARKER_SIZE, index[id(m)])
    labels.add_markers(ax, xs, ys, _MARKER_SIZE)


def _draw_plateaus(ax: Any, labels: Labels, curves: Sequence[LevelCurve], k: int, color: str) -> None:
    """Curve ``k``'s told-apart plateaus: a bar over each one's working sets and its label (level,
    GB/s), placed by ``labels`` on the side away from the other curves."""
    curve = curves[k]
    for p in curve.plateaus:
        if not p.resolved:
            continue
        lo, hi = (p.lo / 1.05, p.hi * 1.05) if p.lo == p.hi else (p.lo, p.hi)
        ax.plot(
            [lo, hi],
            [p.gbps, p.gbps],
            color=color,
            linewidth=5.0,
            alpha=0.35,
            solid_capstyle="butt",
            zorder=2,
            gid=f"plateau:{curve.kernel}:{p.level}",
        )
        mid = (lo * hi) ** 0.5
        ann = ax.annotate(
            f"{p.level} {sig_figs(p.gbps)} GB/s",
            xy=(mid, p.gbps),
            xytext=(0.0, LABEL_GAP_PT),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7.5,
            color=text_color(color),
            zorder=5,
            gid=f"plateaulabel:{curve.kernel}:{p.level}",
            bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85),
        )
        labels.add_free(ann, _label_candidates(_above_others(curves, k, mid, p.gbps)), order=(float(k), mid))


def _draw_levels(ax: Any, curves: Sequence[LevelCurve]) -> None:
    """The documented cache sizes: a dashed vertical line each, named with its size at the top."""
    levels = {lv.name: lv.capacity for curve in curves for lv in curve.levels}
    for name, cap in levels.items():
        ax.axvline(cap, color="#777777", linestyle=THEORETICAL, linewidth=0.9, zorder=1, gid=f"level:{name}")
        ax.annotate(
            f"{name}\n{format_size(cap)}",
            xy=(cap, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0.0, 3.0),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7.5,
            color="#444444",
        )


def _draw_shared(ax: Any, ceilings: Sequence[Ceiling]) -> None:
    """The best measured ``Shared memory bandwidth`` ceiling, where there is one: a thin solid
    horizontal line, labelled at the right."""
    shared = max(
        (c for c in ceilings if c.source == "measured" and c.name == "Shared memory bandwidth"),
        key=lambda c: c.value,
        default=None,
    )
    if shared is None:
        return
    ax.axhline(
        shared.value,
        color="#000000",
        linestyle=MEASURED,
        linewidth=1.0,
        zorder=2,
        gid="reference:Shared memory bandwidth",
    )
    ax.annotate(
        f"shared memory {sig_figs(shared.value)} GB/s",
        xy=(1.0, shared.value),
        xycoords=("axes fraction", "data"),
        xytext=(-4.0, 3.0),
        textcoords="offset points",
        ha="right",
        va="bottom",
        fontsize=7.5,
    )


def _set_axes(ax: Any) -> None:
    """Sizes on the x axis, plain-number log ticks on the y axis (widened for the labels), the grid."""
    ticker = mpl("matplotlib.ticker")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: format_size(int(v)) if v >= 1 else ""))
    ax.set_xlabel("Working set (bytes, all lanes together)")
    ax.set_ylabel("GB/s (best sample; bytes through the level / time)")
    ax.grid(True, which="major", color="#c8c8c8", linewidth=0.5)
    ax.set_axisbelow(True)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo / 1.3, hi * 1.6)
    log_ticks(ax.yaxis, lo / 1.3, hi * 1.6)


def _note_unresolved(ax: Any, curves: Sequence[LevelCurve]) -> None:
    """A note under the axes naming the plateaus that could not be told apart, where there are any."""
    apart = [f"{c.kernel} {p.level}" for c in curves for p in c.plateaus if not p.resolved]
    if not apart:
        return
    ax.annotate(
        "could not be told apart (no level drawn): " + ", ".join(apart),
        xy=(0.0, 0.0),
        xycoords="axes fraction",
        xytext=(4.0, 4.0),
        textcoords="offset points",
        ha="left",
        va="bottom",
        fontsize=7.5,
        color="#444444",
        gid="hierarchy:unresolved",
    )


def _legend(fig: Figure, ax: Any, curves: Sequence[LevelCurve]) -> None:
    """The figure's legend under the axes: the curves, and the over-limit marker where a point is flagged."""
    handles, names = ax.get_legend_handles_labels()
    flagged = sum(len(c.over_limit) for c in curves)
    if flagged:
        text, handle = over_limit_legend(flagged)
        handles, names = [*handles, handle], [*names, text]
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8.5, frameon=False)


def hierarchy_figure(run: Run) -> Optional[Figure]:
    """The figure of ``run`` (:func:`plot_hierarchy`, titled as its roofline, or by its device without
    one), or None when it has no working-set curve."""
    if not level_curves(run.measurements):
        return None
    model = model_of(run)
    return plot_hierarchy(run.measurements, ceilings=run.ceilings, title=model.title if model else run.device_name)
