"""Roofline pictures: log-log plots of ceilings, ridge points and measurements.

The construction follows Williams, Waterman and Patterson 2009: performance
(GFLOP/s, 1e9 FLOP/s) against arithmetic intensity (FLOP/byte), both axes
logarithmic; the bandwidth ceiling (GB/s) is the diagonal ``y = B * x``, each
compute ceiling a horizontal line starting at its ridge point ``P / B``
(FLOP/byte), as in the M5 GPU roofline analysis. Measured ceilings are solid,
theoretical ones dashed (DESIGN section 6).

Figures are built with :class:`matplotlib.figure.Figure` and the Agg canvas,
never pyplot, so nothing touches matplotlib's global state; matplotlib is
imported inside the functions, not when this module is imported.
"""

from __future__ import annotations

import importlib
import io
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .report import run_date
from .results import Ceiling, Measurement, Run, _fmt3, write_bytes_atomic
from .roofline import Point

# matplotlib types, as Any: matplotlib is imported lazily through importlib so
# that importing this module (and type-checking it for Python 3.9 against any
# installed matplotlib) never loads it.
Figure = Any  # matplotlib.figure.Figure
Axes = Any  # matplotlib.axes.Axes
Annotation = Any  # matplotlib.text.Annotation


def _mpl(module: str) -> Any:
    """Import a matplotlib module on first use (never at module import)."""
    return importlib.import_module(module)

__all__ = ["plot_roofline", "plot_compare", "save_figure", "FIGSIZE", "DPI", "X_LABEL", "Y_LABEL"]

#: Default figure size in inches (width, height).
FIGSIZE: Tuple[float, float] = (10.0, 6.5)
#: Resolution of saved raster images, dots per inch.
DPI: int = 150
X_LABEL = "Arithmetic intensity (FLOP/byte)"
Y_LABEL = "Performance (GFLOP/s)"

_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
# colour-blind-friendly qualitative palette (Okabe & Ito), no black or grey
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#117733")
_USER_MARKERS = ("*", "D", "P", "X", "^", "v", "s", "p")
_MEASURED_COLOR = "#1a1a1a"
_THEORETICAL_COLOR = "#6e6e6e"
_LABEL_SIZE = 8.0


# --------------------------------------------------------------------------
# geometry of a roofline


@dataclass(frozen=True)
class _Roof:
    """The ceilings of one source (measured or theoretical) of one run."""

    bandwidth: Optional[Ceiling]
    compute: Tuple[Ceiling, ...]  # highest first
    source: str

    def ridge(self, c: Ceiling) -> Optional[float]:
        return c.value / self.bandwidth.value if self.bandwidth is not None else None


def _roof(ceilings: Sequence[Ceiling], source: str) -> _Roof:
    bws = sorted((c for c in ceilings if c.kind == "bandwidth" and c.source == source), key=lambda c: -c.value)
    comp = sorted((c for c in ceilings if c.kind == "compute" and c.source == source), key=lambda c: -c.value)
    return _Roof(bws[0] if bws else None, tuple(comp), source)


def _limits(
    roofs: Sequence[_Roof], xs: Sequence[float], ys: Sequence[float]
) -> Tuple[float, float, float, float]:
    """(xlo, xhi, ylo, yhi): x from 1/16 of the smallest intensity to 4x the
    largest intensity or ridge point; y from below the lowest point of the
    bandwidth roof and the data to well above the highest ceiling."""
    ridges = [r for roof in roofs for c in roof.compute for r in [roof.ridge(c)] if r is not None]
    xcand = [x for x in xs if x > 0] + ridges
    if xcand:
        xlo, xhi = min(xcand) / 16.0, max(xcand) * 4.0
    else:
        xlo, xhi = 1e-2, 1e3
    if xhi / xlo < 100.0:  # at least two decades
        mid = math.sqrt(xhi * xlo)
        xlo, xhi = mid / 10.0, mid * 10.0
    tops = [c.value for roof in roofs for c in roof.compute]
    bottoms = [y for y in ys if y > 0]
    for roof in roofs:
        if roof.bandwidth is not None:
            bottoms.append(roof.bandwidth.value * xlo)
            tops.append(roof.bandwidth.value * xlo)
    tops += [y for y in ys if y > 0]
    if not bottoms:
        bottoms = tops or [1.0]
    if not tops:
        tops = [10.0]
    ylo = min(bottoms) / 2.0
    yhi = max(tops) * 2.5
    if yhi / ylo < 100.0:
        ylo = yhi / 100.0
    return xlo, xhi, ylo, yhi


# --------------------------------------------------------------------------
# label placement


@dataclass
class _Item:
    ann: Annotation
    candidates: Tuple[Tuple[Tuple[float, float], str], ...]  # (offset points, va)
    direction: Tuple[float, float]
    order: Tuple[float, float]
    mode: str  # "fixed" | "stack" | "free"


def _isotonic(values: Sequence[float]) -> List[float]:
    """Least-squares non-decreasing fit (pool adjacent violators)."""
    blocks: List[List[float]] = []  # [mean, weight, count]
    for v in values:
        blocks.append([v, 1.0, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, n2 = blocks.pop()
            m1, w1, n1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    out: List[float] = []
    for m, _w, n in blocks:
        out += [m] * int(n)
    return out


class _Labels:
    """Overlap avoidance for annotations, in display coordinates.

    Three kinds of label, placed in this order:

    - ``fixed`` (text along the diagonal bandwidth roofs): never moved; they
      block others along their diagonal only;
    - ``stack`` (horizontal ceiling labels at the right edge): spread
      vertically as little as possible so that none overlap, keeping the
      order of their lines (a least-squares fit, pool adjacent violators);
    - ``free`` (ridge-point and user-point labels): each tries its candidate
      offsets, then is nudged from the first along its direction, 2 points at
      a time, until it clears every label and data marker placed before it.
    """

    def __init__(self, fig: Figure) -> None:
        self.fig = fig
        self.items: List[_Item] = []
        self.markers: List[Tuple[Axes, float, float, float]] = []

    def add(
        self,
        ann: Annotation,
        *,
        mode: str = "free",
        candidates: Sequence[Tuple[Tuple[float, float], str]] = (),
        direction: Tuple[float, float] = (0.0, 1.0),
        order: Tuple[float, float] = (0.0, 0.0),
    ) -> None:
        first = ((float(ann.xyann[0]), float(ann.xyann[1])), str(ann.get_va()))
        self.items.append(_Item(ann, (first,) + tuple(candidates), direction, order, mode))

    def add_markers(self, ax: Axes, xs: Sequence[float], ys: Sequence[float], size_pt: float) -> None:
        """Data markers that free labels must not cover (size = diameter, points)."""
        self.markers += [(ax, x, y, size_pt) for x, y in zip(xs, ys)]

    def layout(self) -> float:
        """Place all labels; return how far (pixels) the highest one pokes
        above its axes (<= 0 when all fit)."""
        Bbox = _mpl("matplotlib.transforms").Bbox

        renderer = _renderer(self.fig)
        if renderer is None or not self.items:
            return 0.0
        px_per_pt = self.fig.dpi / 72.0
        placed: List[Any] = []
        for ax, x, y, size in self.markers:
            cx, cy = ax.transData.transform((x, y))
            r = 0.5 * size * px_per_pt + 1.0
            placed.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))

        def box(ann: Annotation) -> Any:
            return ann.get_window_extent(renderer).expanded(1.03, 1.12)

        tops: List[float] = []

        def note(ann: Annotation, b: Any) -> None:
            if ann.axes is not None:
                tops.append(b.y1 - ann.axes.get_window_extent(renderer).y1)

        for item in self.items:
            if item.mode == "fixed":
                item.ann.xyann, _ = item.candidates[0]
                placed += _along(box(item.ann), float(item.ann.get_rotation()), Bbox)

        stack = sorted((i for i in self.items if i.mode == "stack"), key=lambda i: i.order[1])
        # first try: each label just above or just below its own line, highest first
        greedy: List[Any] = []
        for item in reversed(stack):
            found = None
            for nudge in range(0, 8):  # up to 14 points away from the line
                for (ox, oy), va in item.candidates:
                    item.ann.xyann = (ox, oy + (2.0 * nudge if oy >= 0 else -2.0 * nudge))
                    item.ann.set_va(va)
                    b = box(item.ann)
                    if not any(b.overlaps(p) for p in placed + greedy):
                        found = b
                        break
                if found is not None:
                    break
            if found is None:
                break
            greedy.append(found)
        if len(greedy) == len(stack):
            placed += greedy
            for item, b in zip(reversed(stack), greedy):
                note(item.ann, b)
        elif stack:
            # crowded: spread them as little as possible, keeping their order
            gap = 1.5 * px_per_pt
            heights, wants = [], []
            for item in stack:
                item.ann.xyann, va = item.candidates[0]
                item.ann.set_va(va)
                b = box(item.ann)
                heights.append(b.height)
                wants.append(0.5 * (b.y0 + b.y1))
            # positions p_i >= p_{i-1} + spacing_i: fit q_i = p_i - c_i isotonically
            cum = [0.0]
            for h0, h1 in zip(heights, heights[1:]):
                cum.append(cum[-1] + 0.5 * (h0 + h1) + gap)
            fitted = _isotonic([w - c for w, c in zip(wants, cum)])
            for item, want, q, c in zip(stack, wants, fitted, cum):
                ox, oy = item.ann.xyann
                item.ann.xyann = (ox, oy + (q + c - want) / px_per_pt)
                b = box(item.ann)
                placed.append(b)
                note(item.ann, b)

        for item in sorted((i for i in self.items if i.mode == "free"), key=lambda i: i.order):
            ann = item.ann
            ok = False
            for offset, va in item.candidates:
                ann.xyann = offset
                ann.set_va(va)
                b = box(ann)
                if not any(b.overlaps(p) for p in placed):
                    ok = True
                    break
            if not ok:
                offset, va = item.candidates[0]
                ann.xyann = offset
                ann.set_va(va)
                b = box(ann)
                dx, dy = item.direction
                for _ in range(80):
                    if not any(b.overlaps(p) for p in placed):
                        break
                    ox, oy = ann.xyann
                    ann.xyann = (ox + 2.0 * dx, oy + 2.0 * dy)
                    b = box(ann)
            placed.append(b)
            note(ann, b)
        return max(tops) if tops else 0.0


def _along(b: Any, angle_deg: float, bbox_cls: Any) -> List[Any]:
    """Cover a rotated label (axis-aligned extent ``b``, rotation in degrees)
    with small boxes along its diagonal instead of its whole, mostly empty,
    axis-aligned extent."""
    t = math.radians(angle_deg)
    c, s_ = abs(math.cos(t)), abs(math.sin(t))
    if c < 1e-3 or s_ < 1e-3:
        return [b]
    # solve w*c + h*s = width, w*s + h*c = height for the text's own w, h
    det = c * c - s_ * s_
    h = abs((b.height * c - b.width * s_) / det) if abs(det) > 1e-3 else min(b.width, b.height) / 4
    h = max(h, 4.0)
    n = max(int(math.hypot(b.width, b.height) / h) + 1, 2)
    rising = math.sin(t) * math.cos(t) > 0
    boxes = []
    for i in range(n):
        f = (i + 0.5) / n
        x = b.x0 + f * b.width
        y = (b.y0 + f * b.height) if rising else (b.y1 - f * b.height)
        boxes.append(bbox_cls.from_extents(x - h / 2, y - h / 2, x + h / 2, y + h / 2))
    return boxes


def _renderer(fig: Figure) -> Any:
    canvas = fig.canvas
    get = getattr(canvas, "get_renderer", None)
    if get is not None:
        return get()
    get2 = getattr(fig, "_get_renderer", None)
    return get2() if get2 is not None else None


# --------------------------------------------------------------------------
# drawing


def _new_figure() -> Tuple[Figure, Axes]:
    fig = _mpl("matplotlib.figure").Figure(figsize=FIGSIZE, dpi=100)
    _mpl("matplotlib.backends.backend_agg").FigureCanvasAgg(fig)
    fig.subplots_adjust(left=0.08, right=0.73, bottom=0.10, top=0.92)
    ax = fig.add_subplot(1, 1, 1)
    return fig, ax


def _setup_axes(ax: Axes, limits: Tuple[float, float, float, float]) -> None:
    ticker = _mpl("matplotlib.ticker")
    FuncFormatter, LogLocator, NullFormatter = ticker.FuncFormatter, ticker.LogLocator, ticker.NullFormatter

    xlo, xhi, ylo, yhi = limits
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel(Y_LABEL)

    def tick(v: float, _pos: Any) -> str:
        if v >= 1:
            return f"{v:,.0f}"
        return f"{v:g}"

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10.0))
        axis.set_major_formatter(FuncFormatter(tick))
        axis.set_minor_locator(LogLocator(base=10.0, subs=tuple(range(2, 10))))
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="#b0b0b0", linewidth=0.6, alpha=0.7)
    ax.grid(True, which="minor", color="#d8d8d8", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)


def _angle(ax: Axes, x1: float, y1: float, x2: float, y2: float) -> float:
    (p1x, p1y), (p2x, p2y) = ax.transData.transform([(x1, y1), (x2, y2)])
    return math.degrees(math.atan2(p2y - p1y, p2x - p1x))


def _draw_roof(
    ax: Axes,
    roof: _Roof,
    labels: _Labels,
    xlim: Tuple[float, float],
    *,
    color: str,
    prefix: str = "",
    gid: str = "",
    mark_ridges: bool = True,
    annotate_ridges: bool = True,
    bw_label_side: str = "below",
    bw_label_at: float = 1.5,
    compute_label_at: str = "end",
) -> None:
    """Draw one source's roof: diagonal bandwidth line up to the highest
    compute ceiling, horizontal compute lines from their ridge points."""
    theoretical = roof.source == "theoretical"
    style = "--" if theoretical else "-"
    lw = 1.3 if theoretical else 1.8
    xlo, xhi = xlim
    suffix = " (theoretical)" if theoretical else ""
    bbox = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.8)
    top = roof.compute[0] if roof.compute else None
    bw = roof.bandwidth
    if bw is not None:
        x_end = top.value / bw.value if top is not None else xhi
        x_end = min(max(x_end, xlo), xhi)
        ax.plot(
            [xlo, x_end], [bw.value * xlo, bw.value * x_end], linestyle=style, color=color, linewidth=lw,
            gid=f"{gid}ceiling:{roof.source}:bandwidth:{bw.name}", zorder=3,
        )
        xa = xlo * bw_label_at
        theta = _angle(ax, xlo, bw.value * xlo, x_end, bw.value * x_end)
        nx, ny = -math.sin(math.radians(theta)), math.cos(math.radians(theta))
        below = bw_label_side == "below"
        sign = -1.0 if below else 1.0
        ann = ax.annotate(
            f"{prefix}{bw.name} {_fmt3(bw.value)} GB/s{suffix}",
            xy=(xa, bw.value * xa), xytext=(sign * 3.0 * nx, sign * 3.0 * ny), textcoords="offset points",
            rotation=theta, rotation_mode="anchor", ha="left", va="top" if below else "bottom",
            fontsize=_LABEL_SIZE, color=color, bbox=bbox, zorder=6,
            gid=f"{gid}label:{roof.source}:bandwidth:{bw.name}",
        )
        labels.add(ann, mode="fixed")
    for c in roof.compute:
        ridge = roof.ridge(c)
        x0 = min(max(ridge, xlo), xhi) if ridge is not None else xlo
        ax.plot(
            [x0, xhi], [c.value, c.value], linestyle=style, color=color, linewidth=lw,
            gid=f"{gid}ceiling:{roof.source}:compute:{c.name}", zorder=3,
        )
        at_end = compute_label_at == "end" or ridge is None
        dx = -4.0 if at_end else 9.0
        ann = ax.annotate(
            f"{prefix}{c.name} {_fmt3(c.value)} GFLOP/s{suffix}",
            xy=(xhi if at_end else x0, c.value), xytext=(dx, 2.5), textcoords="offset points",
            ha="right" if at_end else "left", va="bottom", fontsize=_LABEL_SIZE, color=color, bbox=bbox,
            zorder=6, gid=f"{gid}label:{roof.source}:compute:{c.name}",
        )
        labels.add(ann, mode="stack" if at_end else "free", candidates=[((dx, -2.5), "top")],
                   order=(1.0, c.value))
    if mark_ridges and bw is not None:
        for c in roof.compute:
            ridge = c.value / bw.value
            ax.plot(
                [ridge], [c.value], linestyle="none", marker="o", markersize=5,
                markerfacecolor="white" if theoretical else color, markeredgecolor=color,
                gid=f"{gid}ridge:{roof.source}:{c.name}", zorder=5,
            )
            if annotate_ridges:
                ann = ax.annotate(
                    f"{_ridge_text(ridge)} FLOP/B", xy=(ridge, c.value), xytext=(-6.0, 3.0),
                    textcoords="offset points", ha="right", va="bottom", fontsize=_LABEL_SIZE - 0.5,
                    color=color, bbox=bbox, zorder=6, gid=f"{gid}ridgelabel:{roof.source}:{c.name}",
                )
                # lowest first, so a crowded higher knee's label moves up, away from the lower one
                labels.add(ann, order=(2.0, c.value))


def _ridge_text(r: float) -> str:
    """Ridge point for a label: one decimal from 1 FLOP/B up ("6.5", "31.5"),
    two significant figures below."""
    if r >= 1.0:
        return f"{r:,.1f}"
    return f"{r:.2g}"


def _series(run: Run) -> Tuple[Dict[str, List[Measurement]], Dict[str, List[Measurement]], Dict[str, List[Measurement]]]:
    sweep: Dict[str, List[Measurement]] = {}
    gemm: Dict[str, List[Measurement]] = {}
    peak: Dict[str, List[Measurement]] = {}
    for m in run.measurements:
        if not m.valid or m.flops <= 0:
            continue  # invalid measurements are never plotted; zero intensity has no place on a log axis
        if m.suite == "sweep":
            sweep.setdefault(f"{m.kernel} ({m.dtype})", []).append(m)
        elif m.suite == "gemm":
            gemm.setdefault(m.dtype, []).append(m)
        elif m.suite == "peak":
            peak.setdefault(m.dtype, []).append(m)
    for ms in sweep.values():
        ms.sort(key=lambda m: m.intensity)
    return sweep, gemm, peak


def _finish(ax: Axes, labels: _Labels, own_figure: bool) -> None:
    """Place labels; raise the top of the y axis until they all fit."""
    for _ in range(4):
        overflow = labels.layout()
        if overflow <= 0:
            break
        ylo, yhi = ax.get_ylim()
        height = ax.get_window_extent().height or 1.0
        decades = math.log10(yhi / ylo)
        ax.set_ylim(ylo, yhi * 10 ** (decades * (overflow + 8.0) / height))
    if own_figure:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)
    else:
        ax.legend(loc="best", fontsize=8)


def _axes_for(ax: Optional[Axes]) -> Tuple[Figure, Axes, bool]:
    if ax is None:
        fig, new_ax = _new_figure()
        return fig, new_ax, True
    fig_any = ax.get_figure()
    if fig_any is None:
        raise ValueError("ax is not attached to a figure")
    return fig_any, ax, False


def _legend_proxies(ax: Axes, *, theoretical: bool, ridges: bool) -> None:
    ax.plot([], [], "-", color=_MEASURED_COLOR, linewidth=1.8, label="measured ceiling")
    if theoretical:
        ax.plot([], [], "--", color=_THEORETICAL_COLOR, linewidth=1.3, label="theoretical ceiling")
    if ridges:
        ax.plot([], [], linestyle="none", marker="o", markersize=5, color=_MEASURED_COLOR, label="ridge point")


def plot_roofline(
    run: Run,
    *,
    points: Sequence[Point] = (),
    ax: Optional[Axes] = None,
    title: Optional[str] = None,
) -> Figure:
    """Draw the roofline of ``run`` (a publication-style log-log figure).

    Axes: x = arithmetic intensity (FLOP/byte), y = performance (GFLOP/s).
    Drawn: the measured bandwidth ceiling as a solid diagonal up to the
    highest measured compute ceiling; every measured compute ceiling as a
    solid horizontal from its ridge point; theoretical ceilings dashed the
    same way (horizontals across the whole plot when there is no theoretical
    bandwidth); every ceiling labelled with its value; ridge points marked
    and annotated ("6.7 FLOP/B"); valid sweep measurements as one line with
    markers per kernel (x = intensity, y = median GFLOP/s); valid GEMM
    measurements as dots, one series per dtype; valid peak-suite measurements
    as small markers; user ``points`` as distinct labelled markers. Invalid
    measurements are never drawn. Labels are nudged apart so they do not
    overlap. Artists carry ``gid``\\ s (``"ceiling:<source>:<kind>:<name>"``,
    ``"ridge:<source>:<name>"``, ``"sweep:<kernel> (<dtype>)"``,
    ``"gemm:<dtype>"``, ``"peak:<dtype>"``, ``"point:<name>"``).

    Args:
        run: the run; its ``ceilings`` and ``measurements`` are drawn.
        points: extra workloads to place on the roofline.
        ax: draw into these axes (must be log-scalable); default a new
            10 x 6.5 inch figure on the Agg canvas with the legend outside
            the axes on the right.
        title: default ``"<device name> (<backend>) — <date of run.created>"``.

    Returns:
        The :class:`matplotlib.figure.Figure` (the caller closes or saves it,
        e.g. with :func:`save_figure`).
    """
    fig, ax, own = _axes_for(ax)
    measured = _roof(run.ceilings, "measured")
    theoretical = _roof(run.ceilings, "theoretical")
    sweep, gemm, peak = _series(run)
    data = [m for group in (sweep, gemm, peak) for ms in group.values() for m in ms]
    xs = [m.intensity for m in data] + [p.intensity for p in points if p.flops > 0]
    ys = [m.gflops for m in data] + [p.gflops for p in points if p.flops > 0]
    xlo, xhi, ylo, yhi = _limits([measured, theoretical], xs, ys)
    _setup_axes(ax, (xlo, xhi, ylo, yhi))
    ax.set_title(title if title is not None else f"{run.device_name} ({run.backend}) — {run_date(run.created)}")

    labels = _Labels(fig)
    _draw_roof(ax, measured, labels, (xlo, xhi), color=_MEASURED_COLOR, bw_label_side="below")
    _draw_roof(
        ax, theoretical, labels, (xlo, xhi), color=_THEORETICAL_COLOR, annotate_ridges=False,
        bw_label_side="above",
    )
    colors = iter(_PALETTE * 4)
    for name, ms in sweep.items():
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], "-o", color=next(colors), markersize=4,
            linewidth=1.4, label=f"sweep {name}", gid=f"sweep:{name}", zorder=4,
        )
        labels.add_markers(ax, [m.intensity for m in ms], [m.gflops for m in ms], 4.0)
    for dtype, ms in gemm.items():
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], linestyle="none", marker="o", markersize=6,
            color=next(colors), markeredgecolor="white", markeredgewidth=0.6, label=f"GEMM {dtype}",
            gid=f"gemm:{dtype}", zorder=4,
        )
        labels.add_markers(ax, [m.intensity for m in ms], [m.gflops for m in ms], 6.0)
    for dtype, ms in peak.items():
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], linestyle="none", marker="d", markersize=3.5,
            color=next(colors), label=f"peak kernels {dtype}", gid=f"peak:{dtype}", zorder=4,
        )
    for i, p in enumerate(points):
        if p.flops <= 0:
            continue
        color = next(colors)
        ax.plot(
            [p.intensity], [p.gflops], linestyle="none", marker=_USER_MARKERS[i % len(_USER_MARKERS)],
            markersize=10, color=color, markeredgecolor="black", markeredgewidth=0.6, label=p.name,
            gid=f"point:{p.name}", zorder=7,
        )
        ann = ax.annotate(
            p.name, xy=(p.intensity, p.gflops), xytext=(7.0, -4.0), textcoords="offset points", ha="left",
            va="top", fontsize=_LABEL_SIZE, color=color, fontweight="bold", zorder=7, gid=f"pointlabel:{p.name}",
        )
        labels.add(ann, candidates=[((7.0, 4.0), "bottom")], direction=(0.0, -1.0), order=(3.0, 0.0))
        labels.add_markers(ax, [p.intensity], [p.gflops], 10.0)
    _legend_proxies(
        ax, theoretical=bool(theoretical.compute or theoretical.bandwidth),
        ridges=measured.bandwidth is not None and bool(measured.compute),
    )
    _finish(ax, labels, own)
    return fig


def plot_compare(a: Run, b: Run) -> Figure:
    """Overlay the rooflines of two runs, A and B, in two colours.

    Each run's measured ceilings are solid and theoretical ones dashed, in
    the run's colour, labelled with the run's device name (``"A: "``/``"B: "``
    are prefixed when both runs name the same device); ridge points are
    marked. Axes and units as :func:`plot_roofline`; the title is
    ``"<A device> vs <B device>"``.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.
    """
    fig, ax = _new_figure()
    roofs = [_roof(r.ceilings, s) for r in (a, b) for s in ("measured", "theoretical")]
    xlo, xhi, ylo, yhi = _limits(roofs, [], [])
    xlo, xhi = xlo / 2.0, xhi * 16.0  # room for the longer, prefixed labels
    _setup_axes(ax, (xlo, xhi, ylo, yhi))
    same = a.device_name == b.device_name
    names = (f"A: {a.device_name}", f"B: {b.device_name}") if same else (a.device_name, b.device_name)
    ax.set_title(f"{names[0]} vs {names[1]}")
    labels = _Labels(fig)
    # diagonal labels: the highest bandwidth roof labelled above its line, the
    # lowest below, any between above theirs further along the diagonal
    diag = sorted(
        ((r.bandwidth.value, i, r.source) for i, run in enumerate((a, b))
         for r in (_roof(run.ceilings, "measured"), _roof(run.ceilings, "theoretical")) if r.bandwidth is not None),
        reverse=True,
    )
    place: Dict[Tuple[int, str], Tuple[str, float]] = {}
    for k, (_v, i, source) in enumerate(diag):
        if k == 0:
            place[(i, source)] = ("above", 1.5)
        elif k == len(diag) - 1:
            place[(i, source)] = ("below", 1.5)
        else:
            place[(i, source)] = ("above", 1.5 * 8.0**k)
    for i, (run, name, color) in enumerate(zip((a, b), names, ("#0072B2", "#D55E00"))):
        for source in ("measured", "theoretical"):
            roof = _roof(run.ceilings, source)
            side, at = place.get((i, source), ("above", 1.5))
            _draw_roof(
                ax, roof, labels, (xlo, xhi), color=color, prefix=f"{name}: ", gid=f"{'ab'[i]}:",
                annotate_ridges=False, bw_label_side=side, bw_label_at=at,
            )
        ax.plot([], [], "-", color=color, linewidth=1.8, label=f"{name} ({run.backend}, {run_date(run.created)})")
    if any(c.source == "theoretical" for c in a.ceilings + b.ceilings):
        ax.plot([], [], "--", color=_THEORETICAL_COLOR, linewidth=1.3, label="theoretical ceiling")
    _finish(ax, labels, True)
    return fig


def save_figure(fig: Figure, path: Union[str, "os.PathLike[str]"]) -> None:
    """Save ``fig`` to ``path`` atomically; the format comes from the suffix.

    ``.png`` (raster, 150 dpi), ``.svg`` or ``.pdf`` (vector); the image is
    rendered to memory, then written to a temporary file in the same
    directory and renamed over ``path`` (:func:`results.write_bytes_atomic`).
    The figure is not closed.

    Raises:
        ValueError: for any other suffix (nothing is written).
        OSError: if the file cannot be written.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in _FORMATS:
        raise ValueError(f"{path}: cannot save a figure as {suffix or 'a file without suffix'!r}; "
                         f"use one of {', '.join(sorted(_FORMATS))}")
    buf = io.BytesIO()
    metadata: Dict[str, Any] = {"Date": None} if _FORMATS[suffix] == "svg" else {}
    fig.savefig(buf, format=_FORMATS[suffix], dpi=DPI, bbox_inches="tight", pad_inches=0.15, metadata=metadata)
    write_bytes_atomic(path, buf.getvalue())
