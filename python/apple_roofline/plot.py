"""Roofline pictures: log-log plots of ceilings, ridge points and measurements.

The construction follows Williams, Waterman and Patterson 2009: performance
(GFLOP/s, 1e9 FLOP/s) against arithmetic intensity (FLOP/byte), both axes
logarithmic; the bandwidth ceiling (GB/s) is the diagonal ``y = B * x``, each
compute ceiling a horizontal line starting at its ridge point ``P / B``
(FLOP/byte), as in the M5 GPU roofline analysis. Measured ceilings are solid,
theoretical ones dashed (DESIGN section 6).

Ceilings of one source whose values agree within 0.5 % are drawn as one line
whose label names them all ("FP32 vector = GEMM FP32: 461 GFLOP/s
(theoretical)"). Each measured compute line has its own colour from a
colour-blind-safe palette, and a theoretical line takes the colour of the
measured class it names first; bandwidth is black. The horizontal ceilings
are labelled in a column right of the axes, joined to their lines by leader
lines, so no label covers a data marker; the diagonal bandwidth label and the
ridge-point labels are placed clear of data markers and of each other.

Figures are built with :class:`matplotlib.figure.Figure` and the Agg canvas,
never pyplot, so nothing touches matplotlib's global state; matplotlib is
imported inside the functions, not when this module is imported.
"""

from __future__ import annotations

import importlib
import io
import itertools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

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


__all__ = ["plot_roofline", "plot_compare", "save_figure", "FIGSIZE", "DPI", "X_LABEL", "Y_LABEL", "MERGE_RTOL"]

#: Default figure size in inches (width, height): the axes, the ceiling-label
#: column right of them and the legend below them.
FIGSIZE: Tuple[float, float] = (11.0, 7.0)
#: Resolution of saved raster images, dots per inch.
DPI: int = 150
X_LABEL = "Arithmetic intensity (FLOP/byte)"
Y_LABEL = "Performance (GFLOP/s)"
#: Ceilings of one source and kind within this relative distance of the
#: highest of them are drawn as one line (0.5 %).
MERGE_RTOL: float = 0.005

_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
# colour-blind-safe qualitative palette: Okabe & Ito (yellow left out: too
# light on white), then Paul Tol's wine, green, indigo and olive
_PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
    "#882255", "#117733", "#332288", "#999933",
)
_RUN_COLORS = ("#0072B2", "#D55E00")  # plot_compare: run A, run B
_BANDWIDTH_COLOR = "#000000"
_NEUTRAL = "#4d4d4d"  # legend proxies for "measured" / "theoretical"
_USER_MARKERS = ("*", "D", "P", "X", "^", "v", "s", "p")
_SWEEP_MARKERS = ("o", "s", "^", "v", "D", "P")
# sweeps in black and greys (the ceilings own the colours), told apart by marker
_SWEEP_COLORS = ("#000000", "#808080", "#404040", "#a6a6a6")
_WRAP = 46  # ceiling labels longer than this break after the names
_LABEL_SIZE = 8.0
_COLUMN_GAP_PT = 20.0  # leader length: from the right edge of the axes to the label column
_BW_POSITIONS = (1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0)  # along the diagonal, times xlo


# --------------------------------------------------------------------------
# geometry of a roofline


@dataclass(frozen=True)
class _Line:
    """One drawn ceiling: the ceilings of one source and kind whose values
    agree within :data:`MERGE_RTOL`, in label order."""

    source: str  # "measured" | "theoretical"
    kind: str  # "bandwidth" | "compute"
    members: Tuple[Ceiling, ...]

    @property
    def value(self) -> float:
        return max(c.value for c in self.members)

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(c.name for c in self.members)

    @property
    def name(self) -> str:
        return " = ".join(self.names)

    def _parts(self) -> Tuple[str, str]:
        values: List[str] = []
        for c in self.members:
            v = _fmt3(c.value)
            if v not in values:
                values.append(v)
        unit = self.members[0].unit or ("GB/s" if self.kind == "bandwidth" else "GFLOP/s")
        joiner = " = " if len(values) == 1 else " ≈ "
        rest = f"{' / '.join(values)} {unit}" + (" (theoretical)" if self.source == "theoretical" else "")
        return joiner.join(self.names), rest

    def label(self) -> str:
        """``"<name> = <name>: <value> <unit>"`` (``" (theoretical)"`` appended
        for theoretical lines); members whose 3-figure values differ are
        joined by ``"≈"`` and all their values given."""
        names, rest = self._parts()
        return f"{names}: {rest}"

    def wrapped(self, prefix: str = "") -> str:
        """``prefix`` + :meth:`label`, broken after the names (``":\\n"``)
        when longer than ``_WRAP`` characters."""
        names, rest = self._parts()
        text = f"{prefix}{names}: {rest}"
        return text if len(text) <= _WRAP else f"{prefix}{names}:\n{rest}"


def _merge(ceilings: Sequence[Ceiling], source: str, kind: str, order: Dict[str, int]) -> List[_Line]:
    """Group equal-valued ceilings (within :data:`MERGE_RTOL` of the group's
    highest), highest group first; members ordered by ``order`` (names not
    in it after, highest value first)."""
    cs = sorted((c for c in ceilings if c.kind == kind and c.source == source), key=lambda c: -c.value)
    groups: List[List[Ceiling]] = []
    for c in cs:
        if groups and groups[-1][0].value - c.value <= MERGE_RTOL * groups[-1][0].value:
            groups[-1].append(c)
        else:
            groups.append([c])
    big = len(order) + 1
    return [
        _Line(source, kind, tuple(sorted(g, key=lambda c: (order.get(c.name, big), -c.value))))
        for g in groups
    ]


@dataclass(frozen=True)
class _Roof:
    """The ceilings of one source (measured or theoretical) of one run."""

    bandwidth: Optional[_Line]
    compute: Tuple[_Line, ...]  # highest first
    source: str

    def ridge(self, line: _Line) -> Optional[float]:
        return line.value / self.bandwidth.value if self.bandwidth is not None else None


def _roof(ceilings: Sequence[Ceiling], source: str, order: Optional[Dict[str, int]] = None) -> _Roof:
    """The roof of ``source``: the best bandwidth ceiling and the merged
    compute lines (members ordered by ``order``, e.g. the measured order)."""
    bws = sorted((c for c in ceilings if c.kind == "bandwidth" and c.source == source), key=lambda c: -c.value)
    bw = _Line(source, "bandwidth", (bws[0],)) if bws else None
    return _Roof(bw, tuple(_merge(ceilings, source, "compute", order or {})), source)


def _roofs(run: Run) -> Tuple[_Roof, _Roof]:
    """(measured, theoretical); theoretical members listed in measured order."""
    measured = _roof(run.ceilings, "measured")
    order = {n: i for i, n in enumerate(n for line in measured.compute for n in line.names)}
    return measured, _roof(run.ceilings, "theoretical", order)


def _class_colors(measured: _Roof, theoretical: _Roof) -> Tuple[Dict[str, str], Iterator[str]]:
    """A colour per ceiling class: one per measured line, highest first, then
    one per theoretical line naming no measured class; and the palette
    iterator, positioned after them (for data series)."""
    palette = itertools.cycle(_PALETTE)
    colors: Dict[str, str] = {}
    for line in measured.compute:
        col = next(palette)
        for n in line.names:
            colors[n] = col
    for line in theoretical.compute:
        if not any(n in colors for n in line.names):
            col = next(palette)
            for n in line.names:
                colors[n] = col
    return colors, palette


def _text_color(color: str) -> str:
    """``color`` darkened for text on white when it is light (sky blue, orange)."""
    h = color.lstrip("#")
    if len(h) != 6:
        return color
    r, g, b = (int(h[i:i + 2], 16) / 255.0 for i in (0, 2, 4))
    if 0.2126 * r + 0.7152 * g + 0.0722 * b <= 0.45:
        return color
    return "#" + "".join(f"{int(round(255 * v * 0.68)):02x}" for v in (r, g, b))


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
class _Diag:
    """A label along a diagonal bandwidth roof ``y = slope * x``."""

    ann: Annotation
    ax: Axes
    x0: float
    x1: float
    slope: float
    positions: Tuple[Tuple[float, str], ...]  # (x, "above" | "below"), in order of preference


@dataclass
class _Column:
    """A horizontal ceiling's label in the column right of the axes."""

    ann: Annotation
    ax: Axes
    y: float  # the ceiling, data coordinates


@dataclass
class _Free:
    """A label near a point (ridge point, user point)."""

    ann: Annotation
    candidates: Tuple[Tuple[Tuple[float, float], str, str], ...]  # (offset points, ha, va)
    direction: Tuple[float, float]
    order: Tuple[float, float]


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


def _stack(wants: Sequence[float], heights: Sequence[float], gap: float, lo: float, hi: float) -> List[float]:
    """Centres, as close to ``wants`` (ascending) as possible in least
    squares, at least ``(h_i + h_j) / 2 + gap`` apart, in order, kept within
    [lo, hi] where there is room."""
    if not wants:
        return []
    cum = [0.0]
    for h0, h1 in zip(heights, heights[1:]):
        cum.append(cum[-1] + 0.5 * (h0 + h1) + gap)
    p = [q + c for q, c in zip(_isotonic([w - c for w, c in zip(wants, cum)]), cum)]
    n = len(p)
    p[-1] = min(p[-1], hi - 0.5 * heights[-1])
    for i in range(n - 2, -1, -1):
        p[i] = min(p[i], p[i + 1] - (cum[i + 1] - cum[i]))
    p[0] = max(p[0], lo + 0.5 * heights[0])
    for i in range(1, n):
        p[i] = max(p[i], p[i - 1] + (cum[i] - cum[i - 1]))
    return p


class _Labels:
    """Overlap avoidance for annotations, in display coordinates.

    Three kinds of label, placed in this order:

    - diagonal (bandwidth roofs): the first of their positions along the
      line, above or below it, that stays inside the axes and clears every
      data marker and label placed before; they then block others along
      their diagonal only;
    - column (horizontal ceilings): right of the axes at their line's
      height, spread vertically as little as possible so that none overlap,
      keeping the order of their lines (least squares, pool adjacent
      violators), within the height of the axes; a leader line joins each to
      its ceiling;
    - free (ridge-point and user-point labels): each tries its candidate
      offsets, then is nudged from the first along its direction, 2 points at
      a time, until it clears every label and marker placed before it.
    """

    def __init__(self, fig: Figure) -> None:
        self.fig = fig
        self.diags: List[_Diag] = []
        self.columns: List[_Column] = []
        self.frees: List[_Free] = []
        self.markers: List[Tuple[Axes, float, float, float]] = []

    def add_diag(self, ann: Annotation, ax: Axes, x0: float, x1: float, slope: float,
                 positions: Sequence[Tuple[float, str]]) -> None:
        self.diags.append(_Diag(ann, ax, x0, x1, slope, tuple(positions)))

    def add_column(self, ann: Annotation, ax: Axes, y: float) -> None:
        self.columns.append(_Column(ann, ax, y))

    def add_free(
        self,
        ann: Annotation,
        candidates: Sequence[Tuple[Tuple[float, float], str, str]],
        *,
        direction: Tuple[float, float] = (0.0, 1.0),
        order: Tuple[float, float] = (0.0, 0.0),
    ) -> None:
        self.frees.append(_Free(ann, tuple(candidates), direction, order))

    def add_markers(self, ax: Axes, xs: Sequence[float], ys: Sequence[float], size_pt: float) -> None:
        """Markers that labels must not cover (size = diameter, points)."""
        self.markers += [(ax, x, y, size_pt) for x, y in zip(xs, ys)]

    def column_width(self) -> float:
        """Width (pixels) of the widest column label, leader included."""
        renderer = _renderer(self.fig)
        if renderer is None or not self.columns:
            return 0.0
        widest = max(float(_text_extent(c.ann, renderer).width) for c in self.columns)
        return widest + _COLUMN_GAP_PT * float(self.fig.dpi) / 72.0

    def layout(self) -> float:
        """Place all labels; return how far (pixels) the highest free label
        pokes above its axes (<= 0 when all fit)."""
        Bbox = _mpl("matplotlib.transforms").Bbox

        renderer = _renderer(self.fig)
        if renderer is None:
            return 0.0
        px_per_pt = self.fig.dpi / 72.0
        placed: List[Any] = []
        for ax, x, y, size in self.markers:
            cx, cy = ax.transData.transform((x, y))
            r = 0.5 * size * px_per_pt + 1.0
            placed.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))

        def box(ann: Annotation) -> Any:
            return _text_extent(ann, renderer).expanded(1.03, 1.12)

        for d in self.diags:
            frame = d.ax.get_window_extent(renderer)
            theta = _angle(d.ax, d.x0, d.slope * d.x0, d.x1, d.slope * d.x1)
            d.ann.set_rotation(theta)
            nx, ny = -math.sin(math.radians(theta)), math.cos(math.radians(theta))
            best: Optional[Tuple[Tuple[int, int], int]] = None  # ((outside, overlaps), position)
            chosen: Optional[List[Any]] = None
            for k, (x, side) in enumerate(d.positions):
                if not d.x0 <= x < d.x1:
                    continue
                sign = 1.0 if side == "above" else -1.0
                d.ann.xy = (x, d.slope * x)
                d.ann.xyann = (sign * 3.0 * nx, sign * 3.0 * ny)
                d.ann.set_va("bottom" if side == "above" else "top")
                extent = _text_extent(d.ann, renderer)
                boxes = _along(extent, theta, Bbox)
                inside = frame.x0 <= extent.x0 and extent.x1 <= frame.x1 and frame.y0 <= extent.y0 \
                    and extent.y1 <= frame.y1
                hits = sum(1 for p in placed if any(b.overlaps(p) for b in boxes))
                if inside and hits == 0:
                    chosen = boxes
                    break
                score = (0 if inside else 1, hits)
                if best is None or score < best[0]:
                    best = (score, k)
            if chosen is None:
                x, side = d.positions[best[1] if best is not None else 0]
                sign = 1.0 if side == "above" else -1.0
                d.ann.xy = (x, d.slope * x)
                d.ann.xyann = (sign * 3.0 * nx, sign * 3.0 * ny)
                d.ann.set_va("bottom" if side == "above" else "top")
                chosen = _along(_text_extent(d.ann, renderer), theta, Bbox)
            placed += chosen

        axes_list: List[Axes] = []
        for c in self.columns:
            if not any(c.ax is a for a in axes_list):
                axes_list.append(c.ax)
        for ax in axes_list:
            frame = ax.get_window_extent(renderer)
            cols = sorted((c for c in self.columns if c.ax is ax), key=lambda c: c.y)
            heights, wants = [], []
            for c in cols:
                c.ann.xyann = (_COLUMN_GAP_PT, 0.0)
                c.ann.set_va("center")
                b = box(c.ann)
                heights.append(b.height)
                wants.append(0.5 * (b.y0 + b.y1))
            centres = _stack(wants, heights, 1.0 * px_per_pt, frame.y0, frame.y1)
            for c, want, p in zip(cols, wants, centres):
                c.ann.xyann = (_COLUMN_GAP_PT, (p - want) / px_per_pt)
                placed.append(box(c.ann))

        tops: List[float] = []
        for f in sorted(self.frees, key=lambda f: f.order):
            ann = f.ann
            frame = ann.axes.get_window_extent(renderer) if ann.axes is not None else None
            ok = False
            b = None
            for offset, ha, va in f.candidates:
                ann.xyann = offset
                ann.set_ha(ha)
                ann.set_va(va)
                b = box(ann)
                fits = frame is None or (frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1)
                if fits and not any(b.overlaps(p) for p in placed):
                    ok = True
                    break
            if not ok:
                offset, ha, va = f.candidates[0]
                ann.xyann = offset
                ann.set_ha(ha)
                ann.set_va(va)
                b = box(ann)
                dx, dy = f.direction
                for _ in range(80):
                    if not any(b.overlaps(p) for p in placed):
                        break
                    ox, oy = ann.xyann
                    ann.xyann = (ox + 2.0 * dx, oy + 2.0 * dy)
                    b = box(ann)
            if b is not None:
                placed.append(b)
                if frame is not None:
                    tops.append(b.y1 - frame.y1)
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


def _text_extent(ann: Annotation, renderer: Any) -> Any:
    """The extent of an annotation's text alone (its leader line left out)."""
    ann.update_positions(renderer)
    return _mpl("matplotlib.text").Text.get_window_extent(ann, renderer)


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
    fig.subplots_adjust(left=0.07, right=0.70, bottom=0.20, top=0.93)
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


_BBOX = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)


def _draw_roof(
    ax: Axes,
    roof: _Roof,
    labels: _Labels,
    xlim: Tuple[float, float],
    *,
    color_of: Callable[[_Line], str],
    bw_color: str = _BANDWIDTH_COLOR,
    prefix: str = "",
    gid: str = "",
    mark_ridges: bool = True,
    annotate_ridges: bool = True,
    labelled: Optional[Callable[[_Line], bool]] = None,
    bw_sides: Tuple[str, ...] = ("above", "below"),
) -> None:
    """Draw one source's roof: diagonal bandwidth line up to the highest
    compute line, horizontal compute lines from their ridge points.

    Lines for which ``labelled`` is false (default: all are labelled) get no
    label on the plot but a legend entry ``prefix + label`` instead."""
    theoretical = roof.source == "theoretical"
    style = "--" if theoretical else "-"
    lw = 1.4 if theoretical else 1.9
    xlo, xhi = xlim
    top = roof.compute[0] if roof.compute else None
    bw = roof.bandwidth
    if bw is not None:
        show = labelled is None or labelled(bw)
        x_end = top.value / bw.value if top is not None else xhi
        x_end = min(max(x_end, xlo), xhi)
        ax.plot(
            [xlo, x_end], [bw.value * xlo, bw.value * x_end], linestyle=style, color=bw_color, linewidth=lw,
            gid=f"{gid}ceiling:{roof.source}:bandwidth:{bw.name}", zorder=3,
            label="_nolegend_" if show else prefix + bw.label(),
        )
        if show:
            ann = ax.annotate(
                prefix + bw.label(), xy=(xlo * 1.5, bw.value * xlo * 1.5), xytext=(0.0, 3.0),
                textcoords="offset points", rotation=0.0, rotation_mode="anchor", ha="left", va="bottom",
                fontsize=_LABEL_SIZE, color=_text_color(bw_color), bbox=_BBOX, zorder=6,
                gid=f"{gid}label:{roof.source}:bandwidth:{bw.name}",
            )
            positions = [(xlo * f, side) for side in bw_sides for f in _BW_POSITIONS]
            labels.add_diag(ann, ax, xlo, x_end, bw.value, positions)
    for line in roof.compute:
        show = labelled is None or labelled(line)
        col = color_of(line)
        ridge = roof.ridge(line)
        x0 = min(max(ridge, xlo), xhi) if ridge is not None else xlo
        ax.plot(
            [x0, xhi], [line.value, line.value], linestyle=style, color=col, linewidth=lw,
            gid=f"{gid}ceiling:{roof.source}:compute:{line.name}", zorder=3,
            label="_nolegend_" if show else prefix + line.label(),
        )
        if show:
            ann = ax.annotate(
                line.wrapped(prefix), xy=(1.0, line.value), xycoords=ax.get_yaxis_transform(),
                xytext=(_COLUMN_GAP_PT, 0.0), textcoords="offset points", ha="left", va="center",
                fontsize=_LABEL_SIZE, color=_text_color(col), zorder=6, annotation_clip=False,
                gid=f"{gid}label:{roof.source}:compute:{line.name}",
                arrowprops=dict(arrowstyle="-", color=col, linewidth=0.8, linestyle=style, shrinkA=2.0,
                                shrinkB=0.0),
            )
            labels.add_column(ann, ax, line.value)
    if mark_ridges and bw is not None:
        for line in roof.compute:
            col = color_of(line)
            ridge = line.value / bw.value
            ax.plot(
                [ridge], [line.value], linestyle="none", marker="o", markersize=5.5,
                markerfacecolor="white" if theoretical else col, markeredgecolor=col, markeredgewidth=1.2,
                gid=f"{gid}ridge:{roof.source}:{line.name}", zorder=5,
            )
            labels.add_markers(ax, [ridge], [line.value], 5.5)
            if annotate_ridges:
                ann = ax.annotate(
                    f"{_ridge_text(ridge)} FLOP/B", xy=(ridge, line.value), xytext=(-6.0, 4.5),
                    textcoords="offset points", ha="right", va="bottom", fontsize=_LABEL_SIZE - 0.5,
                    color=_text_color(col), bbox=_BBOX, zorder=6, gid=f"{gid}ridgelabel:{roof.source}:{line.name}",
                )
                # upper left of the knee (above the roof: no data there), else left of it;
                # lowest first, so a crowded higher knee's label moves up, away from the lower one
                labels.add_free(
                    ann,
                    [((-6.0, 4.5), "right", "bottom"), ((-8.0, 0.0), "right", "center"),
                     ((-2.0, 7.0), "right", "bottom"), ((0.0, 8.0), "center", "bottom")],
                    order=(2.0, line.value),
                )


def _ridge_text(r: float) -> str:
    """Ridge point for a label: one decimal from 1 FLOP/B up ("6.5", "31.5"),
    two significant figures below."""
    if r >= 1.0:
        return f"{r:,.1f}"
    return f"{r:.2g}"


def _series(
    run: Run, group_of: Callable[[Measurement], str] = lambda m: m.ceiling_class or m.dtype
) -> Tuple[Dict[str, List[Measurement]], Dict[str, List[Measurement]], Dict[str, List[Measurement]]]:
    """Valid measurements with FLOPs: sweeps by "<kernel> (<dtype>)", library GEMMs
    by dtype (other GEMM kernels by "<kernel> (<dtype>)"), peak kernels by ``group_of`` (default: ceiling class, dtype when
    they have none)."""
    sweep: Dict[str, List[Measurement]] = {}
    gemm: Dict[str, List[Measurement]] = {}
    peak: Dict[str, List[Measurement]] = {}
    for m in run.measurements:
        if not m.valid or m.flops <= 0:
            continue  # invalid measurements are never plotted; zero intensity has no place on a log axis
        if m.suite == "sweep":
            sweep.setdefault(f"{m.kernel} ({m.dtype})", []).append(m)
        elif m.suite == "gemm":
            # library GEMMs (class "GEMM <dtype>") by dtype; others (the tiled comparison kernel,
            # the host's GEMMs on a unified-memory GPU) by kernel and dtype
            key = m.dtype if (m.ceiling_class or "").startswith("GEMM ") else f"{m.kernel} ({m.dtype})"
            gemm.setdefault(key, []).append(m)
        elif m.suite == "peak":
            peak.setdefault(group_of(m), []).append(m)
    for ms in sweep.values():
        ms.sort(key=lambda m: m.intensity)
    return sweep, gemm, peak


def _finish(
    ax: Axes, labels: _Labels, own_figure: bool, ncol: int = 4,
    legend: Optional[Tuple[List[Any], List[str]]] = None,
) -> None:
    """Legend (below the axes in a figure of our own; ``legend`` = (handles,
    labels), default the axes'), room for the label column, then place the
    labels, raising the top of the y axis until the free ones all fit."""
    if own_figure:
        fig = ax.get_figure()
        renderer = _renderer(fig)
        width_px, height_px = fig.get_figwidth() * fig.dpi, fig.get_figheight() * fig.dpi
        column = labels.column_width()
        right = 1.0 - (column + 14.0) / width_px if column > 0 else 0.97
        right = min(max(right, 0.45), 0.97)
        fig.subplots_adjust(right=right)
        handles, names = legend if legend is not None else ax.get_legend_handles_labels()
        if handles:
            left = fig.subplotpars.left
            leg = ax.legend(
                handles, names, loc="lower center", bbox_to_anchor=(0.5 * (left + right), 0.01),
                bbox_transform=fig.transFigure, ncol=min(ncol, len(handles)), fontsize=8, frameon=False,
                columnspacing=1.6, handlelength=2.4,
            )
            leg_h = leg.get_window_extent(renderer).height if renderer is not None else 60.0
            fig.subplots_adjust(bottom=min((leg_h + 0.01 * height_px + 52.0) / height_px, 0.45))
    else:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=8)
    for _ in range(4):
        overflow = labels.layout()
        if overflow <= 0:
            break
        ylo, yhi = ax.get_ylim()
        height = ax.get_window_extent().height or 1.0
        decades = math.log10(yhi / ylo)
        ax.set_ylim(ylo, yhi * 10 ** (decades * (overflow + 8.0) / height))


def _axes_for(ax: Optional[Axes]) -> Tuple[Figure, Axes, bool]:
    if ax is None:
        fig, new_ax = _new_figure()
        return fig, new_ax, True
    fig_any = ax.get_figure()
    if fig_any is None:
        raise ValueError("ax is not attached to a figure")
    return fig_any, ax, False


def _legend_proxies(ax: Axes, *, theoretical: bool, ridges: bool) -> None:
    ax.plot([], [], "-", color=_NEUTRAL, linewidth=1.9, label="measured ceiling (colour = class)")
    if theoretical:
        ax.plot([], [], "--", color=_NEUTRAL, linewidth=1.4, label="theoretical ceiling")
    if ridges:
        ax.plot([], [], linestyle="none", marker="o", markersize=5.5, color=_NEUTRAL, label="ridge point")


def plot_roofline(
    run: Run,
    *,
    points: Sequence[Point] = (),
    ax: Optional[Axes] = None,
    title: Optional[str] = None,
) -> Figure:
    """Draw the roofline of ``run`` (a publication-style log-log figure).

    Axes: x = arithmetic intensity (FLOP/byte), y = performance (GFLOP/s).
    Drawn: the measured bandwidth ceiling as a solid black diagonal up to the
    highest measured compute ceiling; every measured compute line (equal
    ceilings, within :data:`MERGE_RTOL`, merged into one) as a solid
    horizontal from its ridge point, each in its own colour; theoretical
    lines dashed the same way in the colour of the measured class they name
    first (horizontals across the whole plot when there is no theoretical
    bandwidth); every line labelled with its names and value in a column
    right of the axes, with leader lines; ridge points marked and annotated
    ("6.7 FLOP/B"); valid sweep measurements as one line with markers per
    kernel (x = intensity, y = median GFLOP/s); valid GEMM measurements as
    dots, one series per dtype, and valid peak-suite measurements as small
    markers per ceiling class, both in their class's colour; user ``points``
    as distinct labelled markers; the legend below the axes. Invalid
    measurements are never drawn. No two labels overlap and none covers a
    data marker. Artists carry ``gid``\\ s
    (``"ceiling:<source>:<kind>:<name>"`` with merged names joined by
    ``" = "``, ``"ridge:<source>:<name>"``, ``"label:..."``,
    ``"ridgelabel:..."``, ``"sweep:<kernel> (<dtype>)"``, ``"gemm:<dtype>"``,
    ``"peak:<class>"``, ``"point:<name>"``).

    Args:
        run: the run; its ``ceilings`` and ``measurements`` are drawn.
        points: extra workloads to place on the roofline.
        ax: draw into these axes (must be log-scalable); default a new
            :data:`FIGSIZE` figure on the Agg canvas.
        title: default ``"<device name> (<backend>) — <date of run.created>"``.

    Returns:
        The :class:`matplotlib.figure.Figure` (the caller closes or saves it,
        e.g. with :func:`save_figure`).
    """
    fig, ax, own = _axes_for(ax)
    measured, theoretical = _roofs(run)
    colors, palette = _class_colors(measured, theoretical)

    def color_of(line: _Line) -> str:
        return colors.get(line.names[0], _NEUTRAL)

    # peak kernels grouped by the measured line of their class: one colour, one legend entry
    line_of = {n: " / ".join(line.names) for line in measured.compute for n in line.names}
    sweep, gemm, peak = _series(run, lambda m: line_of.get(m.ceiling_class or "", m.ceiling_class or m.dtype))
    data = [m for group in (sweep, gemm, peak) for ms in group.values() for m in ms]
    xs = [m.intensity for m in data] + [p.intensity for p in points if p.flops > 0]
    ys = [m.gflops for m in data] + [p.gflops for p in points if p.flops > 0]
    xlo, xhi, ylo, yhi = _limits([measured, theoretical], xs, ys)
    _setup_axes(ax, (xlo, xhi, ylo, yhi))
    ax.set_title(title if title is not None else f"{run.device_name} ({run.backend}) — {run_date(run.created)}")

    labels = _Labels(fig)
    # with a theoretical bandwidth roof above the measured one, label the measured one below its line
    below_first = theoretical.bandwidth is not None and measured.bandwidth is not None \
        and theoretical.bandwidth.value >= measured.bandwidth.value
    _draw_roof(ax, measured, labels, (xlo, xhi), color_of=color_of,
               bw_sides=("below", "above") if below_first else ("above", "below"))
    _draw_roof(
        ax, theoretical, labels, (xlo, xhi), color_of=color_of, annotate_ridges=False,
        bw_sides=("above", "below") if below_first or measured.bandwidth is None else ("below", "above"),
    )

    def class_color(ms: Sequence[Measurement]) -> str:
        classes = [m.ceiling_class for m in ms if m.ceiling_class is not None and m.ceiling_class in colors]
        return colors[max(set(classes), key=classes.count)] if classes else next(palette)

    for i, (name, ms) in enumerate(sweep.items()):
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], linestyle="-",
            marker=_SWEEP_MARKERS[i % len(_SWEEP_MARKERS)], color=_SWEEP_COLORS[i % len(_SWEEP_COLORS)],
            markersize=4.5, linewidth=1.3, label=f"sweep {name}", gid=f"sweep:{name}", zorder=4,
        )
        labels.add_markers(ax, [m.intensity for m in ms], [m.gflops for m in ms], 4.5)
    for dtype, ms in gemm.items():
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], linestyle="none", marker="o", markersize=6,
            color=class_color(ms), markeredgecolor="white", markeredgewidth=0.6, label=f"GEMM {dtype}",
            gid=f"gemm:{dtype}", zorder=4,
        )
        labels.add_markers(ax, [m.intensity for m in ms], [m.gflops for m in ms], 6.0)
    for cls, ms in peak.items():
        ax.plot(
            [m.intensity for m in ms], [m.gflops for m in ms], linestyle="none", marker="d", markersize=4,
            color=class_color(ms), markeredgecolor="white", markeredgewidth=0.4, label=f"peak kernels {cls}",
            gid=f"peak:{cls}", zorder=4,
        )
        labels.add_markers(ax, [m.intensity for m in ms], [m.gflops for m in ms], 4.0)
    for i, p in enumerate(points):
        if p.flops <= 0:
            continue
        color = next(palette)
        ax.plot(
            [p.intensity], [p.gflops], linestyle="none", marker=_USER_MARKERS[i % len(_USER_MARKERS)],
            markersize=10, color=color, markeredgecolor="black", markeredgewidth=0.6, label=p.name,
            gid=f"point:{p.name}", zorder=7,
        )
        ann = ax.annotate(
            p.name, xy=(p.intensity, p.gflops), xytext=(7.0, -4.0), textcoords="offset points", ha="left",
            va="top", fontsize=_LABEL_SIZE, color=_text_color(color), fontweight="bold", bbox=_BBOX, zorder=7,
            gid=f"pointlabel:{p.name}",
        )
        labels.add_free(ann, [((7.0, -4.0), "left", "top"), ((7.0, 4.0), "left", "bottom"),
                              ((-7.0, 4.0), "right", "bottom"), ((-7.0, -4.0), "right", "top")],
                        direction=(0.0, -1.0), order=(3.0, 0.0))
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
    the run's colour, equal ones (within :data:`MERGE_RTOL`) merged per run;
    ridge points of the measured roofs are marked. Only each run's bandwidth
    and peak (highest measured compute ceiling; theoretical ones where it has
    no measured ones) are labelled on the plot, prefixed ``"A: "``/``"B: "``;
    every other ceiling is listed, with its value, in the legend below the
    axes, under the run's entry ``"A: <device> (<backend>, <date>)"``. Axes
    and units as :func:`plot_roofline`; the title is
    ``"A: <device> (<date>) vs B: <device> (<date>)"``.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.
    """
    fig, ax = _new_figure()
    pairs = [_roofs(a), _roofs(b)]
    xlo, xhi, ylo, yhi = _limits([r for pair in pairs for r in pair], [], [])
    _setup_axes(ax, (xlo, xhi, ylo, yhi))
    ax.set_title(f"A: {a.device_name} ({run_date(a.created)}) vs B: {b.device_name} ({run_date(b.created)})")
    labels = _Labels(fig)
    columns: List[Tuple[List[Any], List[str]]] = []  # legend: one column per run
    # the higher labelled bandwidth roof is labelled above its line, the lower one below
    bws = [(m.bandwidth or t.bandwidth) for m, t in pairs]
    a_higher = bws[0] is None or bws[1] is None or bws[0].value >= bws[1].value
    sides = [("above", "below"), ("below", "above")] if a_higher else [("below", "above"), ("above", "below")]
    for i, (run, (measured, theoretical), color) in enumerate(zip((a, b), pairs, _RUN_COLORS)):
        tag = "AB"[i]
        before = len(ax.lines)
        ax.plot([], [], "-", color=color, linewidth=1.9,
                label=f"{tag}: {run.device_name} ({run.backend}, {run_date(run.created)})")
        chosen: List[_Line] = []
        bw = measured.bandwidth or theoretical.bandwidth
        if bw is not None:
            chosen.append(bw)
        peak = measured.compute[0] if measured.compute else (theoretical.compute[0] if theoretical.compute else None)
        if peak is not None:
            chosen.append(peak)

        def labelled(line: _Line, chosen: List[_Line] = chosen) -> bool:
            return any(line is c for c in chosen)

        def run_color(_line: _Line, c: str = color) -> str:
            return c

        for roof in (measured, theoretical):
            _draw_roof(
                ax, roof, labels, (xlo, xhi), color_of=run_color, bw_color=color,
                prefix=f"{tag}: ", gid=f"{'ab'[i]}:", mark_ridges=roof is measured, annotate_ridges=False,
                labelled=labelled, bw_sides=sides[i],
            )
        mine = [ln for ln in ax.lines[before:] if not str(ln.get_label()).startswith("_")]
        columns.append((mine, [str(ln.get_label()) for ln in mine]))
    rows = max(len(h) for h, _ in columns)
    handles: List[Any] = []
    names: List[str] = []
    for h, n in columns:  # column-major: pad run A's column so run B's starts a column
        pad = rows - len(h)
        handles += h + [ax.plot([], [], linestyle="none", marker="none")[0] for _ in range(pad)]
        names += n + [""] * pad
    _finish(ax, labels, True, ncol=2, legend=(handles, names))
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
