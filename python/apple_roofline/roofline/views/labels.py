"""Label placement for figures with many labels: no two labels overlap and none covers a marker.

Three kinds of label (:class:`Labels`), placed in this order: diagonal labels along a sloped line
(a bandwidth roof), column labels right of the axes joined to their line by a leader (horizontal
ceilings, spread vertically as little as possible, least squares with pool adjacent violators),
and free labels beside a point, at the first of their candidate offsets that clears everything placed
before (never pushed away from their point). All geometry is in display coordinates, measured with the
figure's renderer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ...figures import Axes, Figure, mpl, text_color

__all__ = [
    "Labels",
    "COLUMN_GAP_PT",
    "LEADER_RELPOS",
    "DIAG_SPACING_PT",
    "text_extent",
    "renderer_of",
    "angle",
    "rotated_boxes",
    "point_label_offsets",
    "extents",
    "overlap_count",
]

Annotation = Any  # matplotlib.text.Annotation

#: Leader length, points: from the right edge of the axes to the label column.
COLUMN_GAP_PT = 20.0
#: Distance of a diagonal label from its line, points: clear of markers drawn on the line.
DIAG_GAP_PT = 5.0
#: Least distance of a free label from the edge of its axes, points.
FREE_MARGIN_PT = 3.0
#: Least distance between two diagonal labels, points: the labels of close roofs (L2 and L3 a few
#: percent apart) stagger along their lines instead of stacking into one block.
DIAG_SPACING_PT = 6.0
#: Where a column label's leader meets it (``arrowprops`` of the annotation): the middle of its left
#: edge. The leader then runs only in the gap between the axes and the column, so it never crosses
#: another label's text, and leaders of labels stacked in their lines' order never cross each other.
LEADER_RELPOS: Tuple[float, float] = (0.0, 0.5)


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
    """A label beside a point (user point) or along a line (a shared theoretical ceiling)."""

    ann: Annotation
    candidates: Tuple[Tuple[Tuple[float, float], str, str], ...]  # (offset points, ha, va)
    order: Tuple[float, float]


def point_label_offsets(gap: float) -> List[Tuple[Tuple[float, float], str, str]]:
    """Candidate places for a point's label, nearest first: right, left, above and below the point,
    then the four corners, each ``gap`` points from its centre, then the same at twice and three
    times ``gap``; (offset in points, ha, va) as :meth:`Labels.add_free` takes them."""
    ring = [
        ((1.0, 0.0), "left", "center"),
        ((-1.0, 0.0), "right", "center"),
        ((0.0, 1.0), "center", "bottom"),
        ((0.0, -1.0), "center", "top"),
        ((0.7, -0.7), "left", "top"),
        ((0.7, 0.7), "left", "bottom"),
        ((-0.7, 0.7), "right", "bottom"),
        ((-0.7, -0.7), "right", "top"),
    ]
    return [((dx * gap * k, dy * gap * k), ha, va) for k in (1.0, 2.0, 3.0) for (dx, dy), ha, va in ring]


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


class Labels:
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
    - free (user-point labels, shared-line labels): each takes the first of
      its candidate offsets that stays inside the axes and clears every label
      and marker placed before it, else the candidate with the fewest
      overlaps; so a label always stays beside its point.
    """

    def __init__(self, fig: Figure) -> None:
        self.fig = fig
        self.diags: List[_Diag] = []
        self.columns: List[_Column] = []
        self.frees: List[_Free] = []
        self.markers: List[Tuple[Axes, float, float, float]] = []

    def add_diag(
        self, ann: Annotation, ax: Axes, x0: float, x1: float, slope: float, positions: Sequence[Tuple[float, str]]
    ) -> None:
        self.diags.append(_Diag(ann, ax, x0, x1, slope, tuple(positions)))

    def add_column(
        self, ax: Axes, text: str, y: float, color: str, gid: str, *, fontsize: float, linestyle: Any = "-"
    ) -> Annotation:
        """A compute ceiling's label in the column right of ``ax`` at height ``y`` (data units): its
        text in ``color``'s readable shade (``fontsize`` points) and a leader to the line in ``color``
        and ``linestyle``; placed with the column's other labels by :meth:`place`. Returns it."""
        ann: Annotation = ax.annotate(
            text,
            xy=(1.0, y),
            xycoords=ax.get_yaxis_transform(),
            xytext=(COLUMN_GAP_PT, 0.0),
            textcoords="offset points",
            ha="left",
            va="center",
            fontsize=fontsize,
            color=text_color(color),
            zorder=6,
            annotation_clip=False,
            linespacing=1.15,
            gid=gid,
            arrowprops=dict(
                arrowstyle="-",
                relpos=LEADER_RELPOS,
                color=color,
                linewidth=0.8,
                shrinkA=2.0,
                shrinkB=0.0,
                linestyle=linestyle,
            ),
        )
        self.columns.append(_Column(ann, ax, y))
        return ann

    def add_free(
        self,
        ann: Annotation,
        candidates: Sequence[Tuple[Tuple[float, float], str, str]],
        *,
        order: Tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """A label placed at one of ``candidates`` ((offset points, ha, va), in order of preference;
        at least one); labels of lower ``order`` are placed first.

        Raises:
            ValueError: ``candidates`` is empty.
        """
        if not candidates:
            raise ValueError("a free label needs at least one candidate offset")
        self.frees.append(_Free(ann, tuple(candidates), order))

    def add_markers(self, ax: Axes, xs: Sequence[float], ys: Sequence[float], size_pt: float) -> None:
        """Markers that labels must not cover (size = diameter, points)."""
        self.markers += [(ax, x, y, size_pt) for x, y in zip(xs, ys)]

    def column_width(self) -> float:
        """Width (pixels) of the widest column label, leader included."""
        renderer = renderer_of(self.fig)
        if renderer is None or not self.columns:
            return 0.0
        widest = max(float(text_extent(c.ann, renderer).width) for c in self.columns)
        return widest + COLUMN_GAP_PT * float(self.fig.dpi) / 72.0

    def layout(self) -> float:
        """Place all labels; return how far (pixels) the highest free label
        pokes above its axes (<= 0 when all fit)."""
        renderer = renderer_of(self.fig)
        if renderer is None:
            return 0.0
        px_per_pt = self.fig.dpi / 72.0
        placed = self._marker_boxes(px_per_pt)
        self._place_diags(renderer, placed, px_per_pt)
        self._place_columns(renderer, placed, px_per_pt)
        return self._place_frees(renderer, placed, px_per_pt)

    def _marker_boxes(self, px_per_pt: float) -> List[Any]:
        """A box (display coordinates) around each marker, a pixel wider than it."""
        Bbox = mpl("matplotlib.transforms").Bbox
        boxes: List[Any] = []
        for ax, x, y, size in self.markers:
            cx, cy = ax.transData.transform((x, y))
            r = 0.5 * size * px_per_pt + 1.0
            boxes.append(Bbox.from_extents(cx - r, cy - r, cx + r, cy + r))
        return boxes

    def _place_diags(self, renderer: Any, placed: List[Any], px_per_pt: float) -> None:
        """Each diagonal label at its first position clear of ``placed`` and of the diagonal labels
        before it (grown by :data:`DIAG_SPACING_PT`); its boxes added to ``placed``."""
        spacing = DIAG_SPACING_PT * px_per_pt
        diag_boxes: List[Any] = []  # the diagonal labels placed, grown by ``spacing``
        for d in self.diags:
            chosen = _place_diag(d, renderer, extents(placed + diag_boxes))
            placed += chosen
            diag_boxes += [b.padded(spacing) for b in chosen]

    def _place_columns(self, renderer: Any, placed: List[Any], px_per_pt: float) -> None:
        """The column labels of each axes stacked in their lines' order (:func:`_stack`), within the
        axes' height; their boxes added to ``placed``."""
        axes_list: List[Axes] = []
        for c in self.columns:
            if not any(c.ax is a for a in axes_list):
                axes_list.append(c.ax)
        for ax in axes_list:
            frame = ax.get_window_extent(renderer)
            cols = sorted((c for c in self.columns if c.ax is ax), key=lambda c: c.y)
            heights, wants = [], []
            for c in cols:
                c.ann.xyann = (COLUMN_GAP_PT, 0.0)
                c.ann.set_va("center")
                b = _label_box(c.ann, renderer)
                heights.append(b.height)
                wants.append(0.5 * (b.y0 + b.y1))
            centres = _stack(wants, heights, 1.0 * px_per_pt, frame.y0, frame.y1)
            for c, want, p in zip(cols, wants, centres):
                c.ann.xyann = (COLUMN_GAP_PT, (p - want) / px_per_pt)
                placed.append(_label_box(c.ann, renderer))

    def _place_frees(self, renderer: Any, placed: List[Any], px_per_pt: float) -> float:
        """The free labels, lowest ``order`` first, each at its best candidate (:func:`_place_free`),
        its box added to ``placed``; how far (pixels) the highest pokes above its axes."""
        tops: List[float] = []
        for f in sorted(self.frees, key=lambda f: f.order):
            b, top = _place_free(f, renderer, extents(placed), px_per_pt)
            placed.append(b)
            if top is not None:
                tops.append(top)
        return max(tops) if tops else 0.0


def _label_box(ann: Annotation, renderer: Any) -> Any:
    """The box a label keeps clear: its text's extent, a little grown."""
    return text_extent(ann, renderer).expanded(1.03, 1.12)


def _within(frame: Any, b: Any) -> bool:
    """Whether box ``b`` lies inside box ``frame`` (display coordinates)."""
    return bool(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1)


def _set_diag(d: _Diag, x: float, side: str, normal: Tuple[float, float]) -> None:
    """Put diagonal label ``d`` at ``x`` on its line, on ``side`` of it (``"above"`` or ``"below"``),
    :data:`DIAG_GAP_PT` away along the line's ``normal``."""
    sign = 1.0 if side == "above" else -1.0
    d.ann.xy = (x, d.slope * x)
    d.ann.xyann = (sign * DIAG_GAP_PT * normal[0], sign * DIAG_GAP_PT * normal[1])
    d.ann.set_va("bottom" if side == "above" else "top")


def _place_diag(d: _Diag, renderer: Any, against: "np.ndarray[Any, np.dtype[np.float64]]") -> List[Any]:
    """Rotate diagonal label ``d`` along its line and put it at the first of its positions inside its
    axes and clear of ``against`` (:func:`extents`), else at the one least outside and overlapping;
    the small boxes that cover it (:func:`rotated_boxes`)."""
    Bbox = mpl("matplotlib.transforms").Bbox
    frame = d.ax.get_window_extent(renderer)
    theta = angle(d.ax, d.x0, d.slope * d.x0, d.x1, d.slope * d.x1)
    d.ann.set_rotation(theta)
    normal = (-math.sin(math.radians(theta)), math.cos(math.radians(theta)))
    best: Optional[Tuple[Tuple[int, int], int]] = None  # ((outside, overlaps), position)
    for k, (x, side) in enumerate(d.positions):
        if not d.x0 <= x < d.x1:
            continue
        _set_diag(d, x, side, normal)
        extent = text_extent(d.ann, renderer)
        boxes = rotated_boxes(extent, theta, Bbox)
        score = (0 if _within(frame, extent) else 1, overlap_count(against, extents(boxes)))
        if score == (0, 0):
            return boxes
        if best is None or score < best[0]:
            best = (score, k)
    x, side = d.positions[best[1] if best is not None else 0]
    _set_diag(d, x, side, normal)
    return rotated_boxes(text_extent(d.ann, renderer), theta, Bbox)


def _set_free(f: _Free, k: int) -> None:
    """Put free label ``f`` at its ``k``-th candidate (offset points, ha, va)."""
    offset, ha, va = f.candidates[k]
    f.ann.xyann = offset
    f.ann.set_ha(ha)
    f.ann.set_va(va)


def _place_free(
    f: _Free, renderer: Any, taken: "np.ndarray[Any, np.dtype[np.float64]]", px_per_pt: float
) -> Tuple[Any, Optional[float]]:
    """Put free label ``f`` at the first of its candidates inside its axes (less a margin: text
    rendered at another resolution is a little wider or narrower) and clear of ``taken``
    (:func:`extents`), else at the one least outside and overlapping: its box, and how far (pixels)
    it pokes above its axes (None for a label on no axes)."""
    frame = f.ann.axes.get_window_extent(renderer) if f.ann.axes is not None else None
    inner = frame.padded(-FREE_MARGIN_PT * px_per_pt) if frame is not None else None
    pick: Optional[Tuple[Tuple[int, int], int]] = None  # ((outside, overlaps), candidate)
    for k in range(len(f.candidates)):
        _set_free(f, k)
        b = _label_box(f.ann, renderer)
        score = (0 if inner is None or _within(inner, b) else 1, overlap_count(taken, extents([b])))
        if pick is None or score < pick[0]:
            pick = (score, k)
        if score == (0, 0):
            break
    assert pick is not None  # add_free keeps at least one candidate
    _set_free(f, pick[1])
    b = _label_box(f.ann, renderer)
    return b, (b.y1 - frame.y1 if frame is not None else None)


def extents(boxes: Sequence[Any]) -> "np.ndarray[Any, np.dtype[np.float64]]":
    """``boxes`` (:class:`matplotlib.transforms.Bbox`) as an (n, 4) array of (x0, y0, x1, y1), each
    box's corners ordered (x0 <= x1, y0 <= y1), as :meth:`~matplotlib.transforms.Bbox.overlaps` orders them."""
    e = np.array([b.extents for b in boxes], dtype=np.float64).reshape(-1, 4)
    return np.concatenate([np.minimum(e[:, :2], e[:, 2:]), np.maximum(e[:, :2], e[:, 2:])], axis=1)


def overlap_count(
    placed: "np.ndarray[Any, np.dtype[np.float64]]", boxes: "np.ndarray[Any, np.dtype[np.float64]]"
) -> int:
    """How many of ``placed`` ((n, 4), :func:`extents`) overlap any of ``boxes`` ((m, 4)): the count
    of matplotlib's ``Bbox.overlaps`` (edges that touch overlap; NaN overlaps nothing), on arrays
    rather than box by box (a label's layout tries each candidate against every placed box)."""
    if not len(placed) or not len(boxes):
        return 0
    p, b = placed[:, None, :], boxes[None, :, :]
    hit = (b[..., 0] <= p[..., 2]) & (p[..., 0] <= b[..., 2]) & (b[..., 1] <= p[..., 3]) & (p[..., 1] <= b[..., 3])
    return int(np.count_nonzero(hit.any(axis=1)))


def rotated_boxes(b: Any, angle_deg: float, bbox_cls: Any) -> List[Any]:
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


def text_extent(ann: Annotation, renderer: Any) -> Any:
    """The extent of an annotation's text alone (its leader line left out)."""
    ann.update_positions(renderer)
    return mpl("matplotlib.text").Text.get_window_extent(ann, renderer)


def renderer_of(fig: Figure) -> Any:
    canvas = fig.canvas
    get = getattr(canvas, "get_renderer", None)
    if get is not None:
        return get()
    get2 = getattr(fig, "_get_renderer", None)
    return get2() if get2 is not None else None


def angle(ax: Axes, x1: float, y1: float, x2: float, y2: float) -> float:
    (p1x, p1y), (p2x, p2y) = ax.transData.transform([(x1, y1), (x2, y2)])
    return math.degrees(math.atan2(p2y - p1y, p2x - p1x))
