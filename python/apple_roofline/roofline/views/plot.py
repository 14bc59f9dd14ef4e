"""The roofline figure: a log-log picture of a :class:`~.model.RooflineModel` and its measurements.

The construction follows Williams, Waterman and Patterson 2009: performance against arithmetic
intensity, both logarithmic (:mod:`.axes`); each bandwidth ceiling is a diagonal ``y = B * x``, each
compute ceiling a horizontal line from its ridge point ``P / B``, as in the M5 GPU roofline
analysis. A figure a reader can take in at a glance:

* one colour per ceiling class, never repeated within a figure (:func:`class_colors`: a fixed
  colour per known class, so a class looks the same in every figure); the line styles of every
  figure (:data:`~apple_roofline.figures.MEASURED` and the others): the measured ceiling solid, its
  theoretical counterpart dashed in the same colour, and dotted at the effective clock the measured
  ceiling's kernel ran at (:func:`clocked_theoretical`, where the run knows both clocks;
  docs/design/clocks.md, "Clocks"); a measured ceiling set by noisy samples (:attr:`~.records.Ceiling.noisy`)
  dash-dotted (:data:`NOISY_LINE`), its label saying "noisy samples, CV N %" (docs/design/measurement.md, "Noisy
  samples");
* one line per height: ceilings of one source within :data:`MERGE_RTOL` of each other
  (:func:`equal_heights`) are drawn as one line, grey (:data:`NEUTRAL`) when it stands for several
  classes; a theoretical one gets its own label in the column naming them all (the measured ones are
  named by their classes' column labels, whose leaders meet at the line);
* the bandwidth of each cache level the hierarchy suite found (the cache-aware roofline: Ilic,
  Pratas and Sousa, IEEE CAL 2014) as a thinner solid diagonal (it is measured), its working sets in
  its label; DRAM's stays the black one that the ridge points are taken against;
* one label per class, never overlapping: compute classes in a column right of the axes, joined to
  their line by a leader (``"GEMM FP16: 767 TFLOP/s"`` and, below, its ridge point and theoretical
  value, and its GFLOP/s per watt where the ceiling's measurement had power); each bandwidth class
  along its diagonal (with its GB/s per watt likewise);
* which ceilings are shown is :func:`~.selection.select_ceilings`'s choice (``"default"``,
  ``"all"`` or names);
* measurements drawn one marker each, as their suite's :class:`~apple_roofline.suites.registry.SuiteSpec`
  says (STREAM's are the bandwidth ceiling; a sweep kernel's points joined by a curve, each in a palette
  colour no ceiling has; vendor GEMM dots and peak kernels in the colour of their class, grey when it is
  not shown); a point a suite's own check flags as disturbed (gemm's ladder,
  :func:`apple_roofline.suites.registry.disturbed`) hollow and grey; invalid measurements are never drawn; a
  measurement above the physical limit of what it is labelled with (docs/design/limits.md, "Physical
  limits": it sets no ceiling) is drawn hollow under a cross (:func:`draw_over_limit`), and the legend
  says how many there are; user points as large markers, each labelled beside it;
* every kind of mark and line in the legend below the axes.

Artists carry ``gid``\\ s: ``ceiling:<source>:<kind>:<name>`` (source ``theoretical-at-clock`` for the dotted
line), ``ridge:<source>:<name>``, ``label:<kind>:<name>``, ``<suite>:<kernel> (<dtype>)`` (the line joining
a curve: ``sweep:vec4 (fp32)``), ``m-<i>`` (the marker of ``model.measurements[i]``: :func:`measurement_gid`),
``over-limit:m-<i>`` (the cross on one above its limit), ``point:<name>`` and ``pointlabel:<name>``,
``shared:<source>:<names>`` (the label of a line several classes share); :mod:`.html` hangs hover text on them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import (
    Any,
    Callable,
    Collection,
    Dict,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
)

from ...figures import AT_CLOCK, MEASURED, PALETTE, THEORETICAL, Axes, Figure, mpl, text_color
from ...study.records import Ceiling, Measurement, working_set_text
from ...suites import registry
from ...text import sig_figs
from ...timing.clocks import at_clock
from ...user_kernels.place import Placement
from ..model.efficiency import CeilingEfficiency, ceiling_efficiency, ceiling_measurements
from ..model.limits import CLOCK_MISREAD, run_clock, share_text
from ..model.model import Point, RooflineModel
from ..model.selection import select_ceilings
from .axes import FIGSIZE, X_LABEL, Scale, axes_for, finish, limits, scale_for, setup_axes
from .kernel_dots import draw_kernels
from .labels import Labels, point_label_offsets

__all__ = [
    "plot_roofline",
    "clocked_theoretical",
    "draw_over_limit",
    "over_limit_legend",
    "OVER_LIMIT_COLOR",
    "CeilingClass",
    "ceiling_classes",
    "class_colors",
    "spare_colors",
    "measurement_gid",
    "curve_count",
    "CLASS_POINTS",
    "equal_heights",
    "DISTURBED",
    "FIGSIZE",
    "X_LABEL",
    "MERGE_RTOL",
    "CLASS_COLORS",
    "CLASS_ORDER",
    "NEUTRAL",
    "NOISY_LINE",
    "noise_mark",
]

#: Ceilings of one source within this relative distance (3 %: closer lines overlap at their width) are
#: drawn as one line (:func:`equal_heights`).
MERGE_RTOL: float = 0.03
#: The colour of each known class, the same in every figure. Chosen so that classes whose lines lie
#: close together on real rooflines differ clearly in hue and lightness (CIELAB distance >= 45): the
#: FP32/FP64 cluster (FP32 vector, GEMM FP64, FP32 scalar ILP, GEMM FP32, FP64 on a GPU; FP32, GEMM
#: FP32, FP64, GEMM FP64 on a CPU), the tensor-core GEMMs (INT8, BF16 over FP16, TF32) and the FP16
#: classes between them. Okabe & Ito's colours first, then Paul Tol's.
CLASS_COLORS: Dict[str, str] = {
    "FP32 vector": "#0072B2",
    "FP32 scalar ILP": "#D55E00",
    "FP16 vector": "#009E73",
    "FP16 scalar ILP": "#CC79A7",
    "FP64": "#E69F00",
    "GEMM FP32": "#AA4499",
    "GEMM FP64": "#44AA99",
    "GEMM FP16": "#882255",
    "GEMM BF16": "#999933",
    "GEMM TF32": "#332288",
    "GEMM INT8": "#56B4E9",
    "CPU GEMM FP32": "#661100",
    "CPU GEMM FP64": "#117733",
    "CPU GEMM FP16": "#6699CC",
}
#: Known classes (those of :data:`CLASS_COLORS`), each keeping its colour in every figure; other
#: classes take the palette's colours left.
CLASS_ORDER: Tuple[str, ...] = tuple(CLASS_COLORS)
#: Legend proxies and markers of classes not shown.
NEUTRAL = "#4d4d4d"
_UNSHOWN = "#b3b3b3"
_BANDWIDTH = "#000000"
_SWEEP_MARKERS = ("o", "s", "^", "v", "D", "P")
#: The colour of a GEMM size the ladder check flags as disturbed (:func:`apple_roofline.suites.registry.disturbed`).
DISTURBED = "#7a7a7a"
_USER_MARKERS = ("*", "D", "P", "X", "^", "v", "s", "p")
_LABEL_SIZE = 8.0
_BBOX = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)
_BW_POSITIONS = tuple(1.5 * 2 ** (k / 2) for k in range(15))  # along the diagonal, times xlo: 1.5 .. 192
_T = TypeVar("_T")


#: The line style of a measured ceiling set by noisy samples (:attr:`~.records.Ceiling.noisy`), beside
#: the styles every figure shares (:data:`~apple_roofline.figures.MEASURED` and the others).
NOISY_LINE = "-."


def noise_mark(c: Optional[Ceiling]) -> str:
    """``" (noisy samples, CV 189%)"`` after the value of a ceiling set by noisy samples
    (:attr:`~.records.Ceiling.noise`), else ``""``: how every figure's label marks one."""
    noise = c.noise if c is not None else None
    return f" ({noise})" if noise is not None else ""


def _measured_style(c: Ceiling) -> str:
    """The line style of measured ceiling ``c``: solid, dash-dotted where noisy."""
    return NOISY_LINE if c.noisy else MEASURED


#: The colour of the cross drawn over a measurement above its physical limit.
OVER_LIMIT_COLOR = "#C00000"


def measurement_gid(index: int) -> str:
    """The gid of the marker of ``model.measurements[index]``."""
    return f"m-{index}"


def draw_over_limit(ax: Axes, x: float, y: float, size: float, index: int) -> None:
    """The cross over the (hollow) marker of ``measurements[index]`` at ``(x, y)``, which lies above
    the physical limit of what it is labelled with (docs/design/limits.md, "Physical limits")."""
    ax.plot(
        [x],
        [y],
        linestyle="none",
        marker="x",
        markersize=size * 1.25,
        color=OVER_LIMIT_COLOR,
        markeredgewidth=1.3,
        zorder=5,
        gid=f"over-limit:{measurement_gid(index)}",
    )


def over_limit_legend(count: int) -> Tuple[str, Any]:
    """The legend entry (text, handle) that says ``count`` drawn measurements lie above their limits."""
    handle = mpl("matplotlib.lines").Line2D(
        [], [], linestyle="none", marker="x", markersize=6.0, color=OVER_LIMIT_COLOR, markeredgewidth=1.3
    )
    return (f"above its physical limit ({count}): no ceiling, reason in the report", handle)


@dataclass(frozen=True)
class CeilingClass:
    """One ceiling class as drawn: its measured and theoretical ceiling (either may be None) and
    its colour."""

    name: str
    kind: str
    measured: Optional[Ceiling]
    theoretical: Optional[Ceiling]
    color: str

    @property
    def main(self) -> Ceiling:
        """The ceiling the label's leader points at: the measured one, else the theoretical."""
        c = self.measured or self.theoretical
        assert c is not None
        return c


def class_colors(names: Sequence[str]) -> Dict[str, str]:
    """A colour per compute class name, never repeated: known classes keep their own colour
    (:data:`CLASS_COLORS`), others take the palette's entries left, in the order given. Beyond the
    palette's sixteen colours (``ceilings="all"`` on a crowded run) colours repeat."""
    out: Dict[str, str] = {}
    taken = set()
    for name in names:
        if name in CLASS_COLORS:
            out[name] = CLASS_COLORS[name]
            taken.add(out[name])
    spare: Iterator[str] = itertools.cycle([c for c in PALETTE if c not in taken] or list(PALETTE))
    for name in names:
        if name not in out:
            out[name] = next(spare)
    return out


def ceiling_classes(ceilings: Sequence[Ceiling]) -> Tuple[List[CeilingClass], List[CeilingClass]]:
    """``(bandwidth classes, compute classes)`` of ``ceilings``, each highest first, the bandwidths of
    cache levels after the others. The first bandwidth class (DRAM's) is black; the others and the
    compute classes take :func:`class_colors`."""
    groups: Dict[Tuple[str, str], Dict[str, Ceiling]] = {}
    for c in ceilings:
        best = groups.setdefault((c.kind, c.name), {})
        if c.source not in best or c.value > best[c.source].value:
            best[c.source] = c

    def make(kind: str) -> List[Tuple[str, Dict[str, Ceiling]]]:
        items = [(name, g) for (k, name), g in groups.items() if k == kind]
        # cache levels after the others, so that DRAM's bandwidth is the black one
        return sorted(items, key=lambda it: (_main(it[1]).is_level, -_main(it[1]).value))

    bws, comps = make("bandwidth"), make("compute")
    colors = class_colors([n for n, _ in comps] + [n for n, _ in bws[1:]])
    bandwidth = [
        CeilingClass(n, "bandwidth", g.get("measured"), g.get("theoretical"), _BANDWIDTH if i == 0 else colors[n])
        for i, (n, g) in enumerate(bws)
    ]
    compute = [CeilingClass(n, "compute", g.get("measured"), g.get("theoretical"), colors[n]) for n, g in comps]
    return bandwidth, compute


def _main(group: Dict[str, Ceiling]) -> Ceiling:
    """The measured ceiling of a class's group, else its theoretical one."""
    return group.get("measured") or group["theoretical"]


def spare_colors(taken: Collection[str]) -> List[str]:
    """The palette's colours that no ceiling drawn has (``taken``), for sweeps and user points: no
    grey (that is for classes not shown), the light ones (sand) last, since a thin line with small
    markers in them is hard to see on white; the whole palette where none is left."""
    spare = sorted((c for c in PALETTE if c not in taken and c != "#888888"), key=lambda c: text_color(c) != c)
    return spare or list(PALETTE)


def equal_heights(items: Sequence[_T], value: Callable[[_T], float], rtol: float = MERGE_RTOL) -> List[List[_T]]:
    """``items`` grouped by height, highest first: each group holds the items whose ``value`` lies
    within ``rtol`` (relative) of its highest, the ones a figure draws as one line."""
    groups: List[List[_T]] = []
    for it in sorted(items, key=lambda it: -value(it)):
        if groups and value(groups[-1][0]) - value(it) <= rtol * value(groups[-1][0]):
            groups[-1].append(it)
        else:
            groups.append([it])
    return groups


def clocked_theoretical(model: RooflineModel, cls: CeilingClass) -> Optional[Tuple[float, float]]:
    """``(MHz, GFLOP/s)``: the theoretical compute ceiling of ``cls`` at the clock of the measurement
    that set its measured ceiling (its effective clock, or the highest reading where that moved within
    the samples: :func:`~.limits.run_clock`; docs/design/clocks.md, "Clocks"); None where the class lacks
    either ceiling, the model the theoretical clock, or the measurement a clock."""
    if cls.kind != "compute" or cls.measured is None or cls.theoretical is None:
        return None
    m = ceiling_measurements(model.measurements).get(cls.name)
    mhz = run_clock(m.params)[0] if m is not None else None  # the clock its limit is taken at
    value = at_clock(cls.theoretical.value, model.theoretical_mhz, mhz)
    return (mhz, value) if mhz is not None and value is not None else None


def _compute_label(
    cls: CeilingClass,
    scale: Scale,
    ridges: Dict[str, Optional[float]],
    eff: Optional[CeilingEfficiency] = None,
    clocked: Optional[Tuple[float, float]] = None,
) -> str:
    """``"<name>: <value>"`` and a second line with the ridge point and the theoretical value (also
    at the effective clock, ``clocked``), and the measured ceiling's GFLOP/s per watt where its
    measurement had power."""
    if cls.measured is None:
        assert cls.theoretical is not None
        head = f"{cls.name}: {scale.rate(cls.theoretical.value)} (theoretical)"
        ridge = ridges.get("theoretical")
        return head + (f"\nridge {_ridge_text(ridge)} FLOP/B" if ridge is not None else "")
    parts = []
    ridge = ridges.get("measured")
    if ridge is not None:
        parts.append(f"ridge {_ridge_text(ridge)} FLOP/B")
    if cls.theoretical is not None:
        # shares never above 100 % (docs/design/limits.md, "Physical limits")
        parts.append(
            f"theoretical {sig_figs(scale.y(cls.theoretical.value))} "
            f"({share_text(cls.measured.value / cls.theoretical.value, CLOCK_MISREAD, whole=True)})"
        )
        if clocked is not None:
            parts.append(
                f"at {clocked[0]:.0f} MHz {sig_figs(scale.y(clocked[1]))} "
                f"({share_text(cls.measured.value / clocked[1], CLOCK_MISREAD, whole=True)})"
            )
    if eff is not None:
        parts.append(f"{sig_figs(eff.per_watt)} GFLOP/s per W")
    head = f"{cls.name}: {scale.rate(cls.measured.value)}{noise_mark(cls.measured)}"
    return head + ("\n" + ", ".join(parts) if parts else "")


def _bandwidth_label(cls: CeilingClass, scale: Scale, eff: Optional[CeilingEfficiency] = None) -> str:
    if cls.measured is None:
        assert cls.theoretical is not None
        return f"{cls.name} {scale.bandwidth(cls.theoretical.value)} (theoretical)"
    tail = f" (theoretical {scale.bandwidth(cls.theoretical.value)})" if cls.theoretical is not None else ""
    watts = f", {sig_figs(eff.per_watt)} GB/s per W" if eff is not None else ""
    ws = cls.measured.working_set
    span = (
        f"\nworking sets {working_set_text(ws)}" if ws is not None else ""
    )  # own line: labels of close levels stagger
    return f"{cls.name} {scale.bandwidth(cls.measured.value)}{noise_mark(cls.measured)}{tail}{watts}{span}"


def _shared_label(head: str, names: Sequence[str], width: int = 46) -> str:
    """``"<head> <name>, <name>"`` on one line where it fits in ``width`` characters, else the head
    on its own line and the names after it, never broken inside a name."""
    one = f"{head} {', '.join(names)}"
    if len(one) <= width:
        return one
    lines = [head, ""]
    for name in names:
        part = f"{name}," if name != names[-1] else name
        if lines[-1] and len(lines[-1]) + 1 + len(part) > width:
            lines.append("")
        lines[-1] = f"{lines[-1]} {part}".strip()
    return "\n".join(lines)


def _ridge_text(r: float) -> str:
    """Ridge point for a label: whole numbers from 100 FLOP/B up ("479"), one decimal from 1 up
    ("6.5", "31.5"), two significant figures below."""
    if r >= 100.0:
        return f"{r:,.0f}"
    return f"{r:,.1f}" if r >= 1.0 else f"{r:.2g}"


@dataclass(frozen=True)
class _Marker:
    """How one measurement is drawn: its series (legend entry), marker style, and the colour of its
    legend entry (grey for a series coloured by each point's ceiling); ``curve``, the gid of the line
    that joins its series' points (``"<suite>:<kernel> (<dtype>)"``), or None for a point alone."""

    series: str
    marker: str
    size: float
    color: str
    hollow: bool = False
    legend_color: str = NEUTRAL
    curve: Optional[str] = None


#: How the points of a suite without a marker of its own are drawn (:attr:`~apple_roofline.suites.registry.
#: SuiteSpec.marker`): the peak kernels' diamonds, each in the colour of its class.
CLASS_POINTS = registry.PointMarker(
    "peak kernels (colour = their ceiling)", "d", 4.5, by_class=True, not_drawn="peak kernel of a ceiling not drawn"
)


def _class_marker(mark: registry.PointMarker, cls: str, colors: Mapping[str, str]) -> _Marker:
    """A point coloured by the ceiling its class sets (``colors``), in ``mark``'s series; grey, in its
    "not drawn" series, where that ceiling is not drawn."""
    shown = cls in colors
    return _Marker(
        mark.series if shown else mark.not_drawn,
        mark.symbol,
        mark.size,
        colors.get(cls, _UNSHOWN),
        legend_color=NEUTRAL if shown else _UNSHOWN,
    )


def _point_marker(m: Measurement, colors: Mapping[str, str]) -> _Marker:
    """How a point that lies on no curve is drawn: beside the class its suite compares it with
    (:func:`~apple_roofline.suites.registry.compare_class`: hollow, in that class's colour), else in its
    suite's marker (:func:`~apple_roofline.suites.registry.point_marker`), else as :data:`CLASS_POINTS`."""
    compared = registry.compare_class(m)
    if compared is not None:
        color = colors.get(compared, NEUTRAL)
        return _Marker(f"{m.kernel} ({m.dtype})", "s", 5.0, color, True, color)
    mark = registry.point_marker(m.suite) or CLASS_POINTS
    if mark.by_class:
        return _class_marker(mark, m.ceiling_class or "", colors)
    return _Marker(mark.series, mark.symbol, mark.size, NEUTRAL)


def curve_count(measurements: Sequence[Measurement]) -> int:
    """How many curves the figures join ``measurements``' points into: their kernels and dtypes of the
    suites whose points lie on curves (:func:`~apple_roofline.suites.registry.curves`: the sweep's)."""
    return len({(m.suite, m.kernel, m.dtype) for m in measurements if registry.curves(m.suite)})


def _markers(
    model: RooflineModel, colors: Dict[str, str], sweep_colors: Sequence[str], disturbed: Mapping[int, str]
) -> List[Tuple[int, Measurement, _Marker]]:
    """The measurements drawn and how: valid ones with FLOPs (zero intensity has no place on a log
    axis) that their suite draws (:func:`~apple_roofline.suites.registry.drawn`: STREAM's only
    above their limit). Each curve (:func:`~apple_roofline.suites.registry.curves`: a sweep kernel's)
    takes the next of ``sweep_colors``; another point is drawn as :func:`_point_marker` says; the
    ``disturbed`` indices are drawn hollow and grey in their series."""
    curves: Dict[str, int] = {}
    out: List[Tuple[int, Measurement, _Marker]] = []
    for i, m in enumerate(model.measurements):
        if not m.valid or m.flops <= 0 or not registry.drawn(m):
            continue
        if registry.curves(m.suite):
            k = curves.setdefault(f"{m.suite}:{m.kernel} ({m.dtype})", len(curves))
            color = sweep_colors[k % len(sweep_colors)]
            series = f"{m.suite} {m.kernel} ({m.dtype})"
            marker = _SWEEP_MARKERS[k % len(_SWEEP_MARKERS)]
            style = _Marker(series, marker, 4.5, color, legend_color=color, curve=f"{m.suite}:{m.kernel} ({m.dtype})")
        else:
            style = _point_marker(m, colors)
        if i in disturbed:
            style = _Marker(disturbed[i], style.marker, style.size, DISTURBED, True, DISTURBED)
        out.append((i, m, style))
    return out


def _legend_handle(s: _Marker) -> Any:
    """The legend entry of a marker series: its marker (hollow where drawn hollow), joined by a line
    for a curve."""
    sweep = s.curve is not None
    return mpl("matplotlib.lines").Line2D(
        [],
        [],
        color=s.legend_color,
        linestyle=MEASURED if sweep else "none",
        marker=s.marker,
        markersize=max(s.size, 5.5),
        markerfacecolor="white" if s.hollow else s.legend_color,
        markeredgecolor=s.legend_color if s.hollow or sweep else "white",
        markeredgewidth=1.1 if s.hollow else 0.6,
    )


#: A compute class's ridge point of each source (FLOP/byte, None where the class lacks that ceiling), by class name.
_Ridges = Dict[str, Dict[str, Optional[float]]]
#: A line several compute classes of one source share: its source and its ``(class, ceiling)`` members.
_SharedLine = Tuple[str, List[Tuple[CeilingClass, Ceiling]]]


@dataclass(frozen=True)
class _Canvas:
    """What each step of :func:`plot_roofline` draws on: the axes, the labels placed at the end, the
    y axis's scale and the axes' limits (x in FLOP/byte, y in GFLOP/s)."""

    ax: Axes
    labels: Labels
    scale: Scale
    xlo: float
    xhi: float
    ylo: float

    def clip(self, x: float) -> float:
        """``x`` (FLOP/byte) held within the x axis."""
        return min(max(x, self.xlo), self.xhi)


@dataclass
class _Lines:
    """What the ceiling steps drew that the legend names: a theoretical ceiling at its effective clock
    (``clocked``), the sources of the ridge points drawn, and the lines several classes share."""

    clocked: bool = False
    ridge_sources: Set[str] = field(default_factory=set)
    shared: List[_SharedLine] = field(default_factory=list)


def _class_ridges(model: RooflineModel, comp_classes: Sequence[CeilingClass]) -> _Ridges:
    """Each compute class's ridge points from the model (against its highest bandwidth of each source,
    shown or not), so that the figure and the report agree whatever ``ceilings`` hides."""
    rows = {row.name: row for row in model.ridge_table().rows}
    return {
        cls.name: {
            "measured": rows[cls.name].measured_ridge if cls.measured is not None else None,
            "theoretical": rows[cls.name].theoretical_ridge if cls.theoretical is not None else None,
        }
        for cls in comp_classes
    }


def _open_canvas(
    fig: Figure, ax: Axes, shown: Sequence[Ceiling], ridges: _Ridges, marks: Tuple[List[float], List[float]]
) -> _Canvas:
    """The scale and limits that hold the ceilings ``shown``, their ``ridges`` and the ``marks``
    (intensities, GFLOP/s), set on ``ax``."""
    xs, ys = marks
    tops = [c.value for c in shown if c.kind == "compute"]
    scale = scale_for(max(tops + ys + [1.0]))
    xlo, xhi, ylo, yhi = limits(
        xs,
        ys,
        [r for d in ridges.values() for r in d.values() if r is not None],
        tops,
        [c.value for c in shown if c.kind == "bandwidth"],
    )
    setup_axes(ax, (xlo, xhi, scale.y(ylo), scale.y(yhi)), scale)
    return _Canvas(ax, Labels(fig), scale, xlo, xhi, ylo)


def _line_colors(comp_classes: Sequence[CeilingClass]) -> Tuple[Dict[Tuple[str, str], str], List[_SharedLine]]:
    """The colour of each compute class's line of each source, ``(source, class) -> colour``: its own,
    grey where classes of one source share a height (:func:`equal_heights`); and those shared lines."""
    line_color: Dict[Tuple[str, str], str] = {}
    shared: List[_SharedLine] = []
    for source in ("measured", "theoretical"):
        members = [
            (cls, c)
            for cls in comp_classes
            for c in [cls.measured if source == "measured" else cls.theoretical]
            if c is not None
        ]
        for group in equal_heights(members, lambda it: it[1].value):
            for cls, _c in group:
                line_color[(source, cls.name)] = group[0][0].color if len(group) == 1 else NEUTRAL
            if len(group) > 1:
                shared.append((source, group))
    return line_color, shared


def _draw_compute_line(
    cv: _Canvas, cls: CeilingClass, source: str, c: Ceiling, color: str, ridge: Optional[float]
) -> bool:
    """The horizontal of compute ceiling ``c`` of ``source`` from its ``ridge`` point (the axis's left
    edge without one) and the ridge point's circle; whether a ridge point was drawn."""
    x0 = cv.clip(ridge) if ridge is not None else cv.xlo
    cv.ax.plot(
        [x0, cv.xhi],
        [cv.scale.y(c.value)] * 2,
        linestyle=_measured_style(c) if source == "measured" else THEORETICAL,
        color=color,
        linewidth=1.9 if source == "measured" else 1.4,
        zorder=3,
        gid=f"ceiling:{source}:compute:{cls.name}",
    )
    if ridge is None:
        return False
    cv.ax.plot(
        [ridge],
        [cv.scale.y(c.value)],
        linestyle="none",
        marker="o",
        markersize=5.5,
        zorder=5,
        markerfacecolor=color if source == "measured" else "white",
        markeredgecolor=color,
        markeredgewidth=1.2,
        gid=f"ridge:{source}:{cls.name}",
    )
    cv.labels.add_markers(cv.ax, [ridge], [cv.scale.y(c.value)], 5.5)
    return True


def _draw_clocked(cv: _Canvas, cls: CeilingClass, clocked: Tuple[float, float], ridge: Optional[float]) -> None:
    """The theoretical ceiling of ``cls`` at the effective clock its measurement ran at (``clocked``:
    MHz, GFLOP/s), dotted from the theoretical ``ridge`` point scaled to that clock."""
    scaled_ridge = ridge * clocked[1] / cls.theoretical.value if ridge is not None and cls.theoretical else None
    x0 = cv.clip(scaled_ridge) if scaled_ridge is not None else cv.xlo
    cv.ax.plot(
        [x0, cv.xhi],
        [cv.scale.y(clocked[1])] * 2,
        linestyle=AT_CLOCK,
        color=cls.color,
        linewidth=1.4,
        zorder=3,
        gid=f"ceiling:theoretical-at-clock:compute:{cls.name}",
    )


def _draw_compute_class(
    cv: _Canvas,
    model: RooflineModel,
    cls: CeilingClass,
    ridges: Dict[str, Optional[float]],
    line_color: Mapping[Tuple[str, str], str],
    eff: Optional[CeilingEfficiency],
    lines: _Lines,
) -> None:
    """Compute class ``cls``: its measured and theoretical horizontals with their ridge points, its
    theoretical ceiling at the effective clock where the run knows it, and its column label (``eff``:
    its measured ceiling's efficiency); what the legend names is noted in ``lines``."""
    for source, c in (("measured", cls.measured), ("theoretical", cls.theoretical)):
        if c is not None and _draw_compute_line(cv, cls, source, c, line_color[(source, cls.name)], ridges[source]):
            lines.ridge_sources.add(source)
    clocked = clocked_theoretical(model, cls)
    if clocked is not None:
        _draw_clocked(cv, cls, clocked, ridges["theoretical"])
        lines.clocked = True
    cv.labels.add_column(
        cv.ax,
        _compute_label(cls, cv.scale, ridges, eff if cls.measured else None, clocked),
        cv.scale.y(cls.main.value),
        cls.color,
        f"label:compute:{cls.name}",
        fontsize=_LABEL_SIZE,
        linestyle=_measured_style(cls.measured) if cls.measured is not None else THEORETICAL,
    )


def _label_shared_lines(cv: _Canvas, shared: Sequence[_SharedLine]) -> None:
    """A theoretical line several classes share: one label naming them all, in the column with the
    classes' own (the column never covers a line or another label), its leader dashed. The measured
    classes' own column labels name a shared measured line; their leaders meet at it."""
    for source, group in shared:
        if source != "theoretical":
            continue
        names = ", ".join(cls.name for cls, _c in group)
        y = cv.scale.y(group[0][1].value)
        text = _shared_label(f"theoretical {cv.scale.rate(group[0][1].value)}:", [cls.name for cls, _c in group])
        cv.labels.add_column(
            cv.ax, text, y, NEUTRAL, f"shared:{source}:{names}", fontsize=_LABEL_SIZE, linestyle=THEORETICAL
        )


def _draw_computes(
    cv: _Canvas,
    model: RooflineModel,
    comp_classes: Sequence[CeilingClass],
    ridges: _Ridges,
    eff: Mapping[str, CeilingEfficiency],
) -> _Lines:
    """Every compute ceiling: horizontals from the ridge point, one line per height, grey where
    shared (:func:`_line_colors`), each class labelled in the column, then the shared lines."""
    line_color, shared = _line_colors(comp_classes)
    lines = _Lines(shared=shared)
    for cls in comp_classes:
        _draw_compute_class(cv, model, cls, ridges[cls.name], line_color, eff.get(cls.name), lines)
    _label_shared_lines(cv, shared)
    return lines


def _diagonal_end(cv: _Canvas, top: Optional[float], c: Ceiling) -> float:
    """Where bandwidth ceiling ``c``'s diagonal ends (FLOP/byte): where it meets ``top``, the highest
    compute ceiling of its source, within the x axis; the axis's right edge without one."""
    return cv.clip(top / c.value) if top is not None else cv.xhi


def _draw_bandwidth_class(
    cv: _Canvas, cls: CeilingClass, top: Mapping[str, Optional[float]], eff: Optional[CeilingEfficiency]
) -> None:
    """Bandwidth class ``cls``: its measured and theoretical diagonals, each up to the highest compute
    ceiling of its source (``top``), a cache level's thinner (the cache-aware roofline), and its label
    along the main one (``eff``: its measured ceiling's efficiency)."""
    for source, c in (("measured", cls.measured), ("theoretical", cls.theoretical)):
        if c is None:
            continue
        x_end = _diagonal_end(cv, top[source], c)
        cv.ax.plot(
            [cv.xlo, x_end],
            [cv.scale.y(c.value * cv.xlo), cv.scale.y(c.value * x_end)],
            color=cls.color,
            zorder=3,
            linestyle=_measured_style(c) if source == "measured" else THEORETICAL,
            linewidth=1.2 if c.is_level else 1.9 if source == "measured" else 1.4,
            gid=f"ceiling:{source}:bandwidth:{cls.name}",
        )
    main = cls.main
    x_end = _diagonal_end(cv, top[main.source], main)
    ann = cv.ax.annotate(
        _bandwidth_label(cls, cv.scale, eff if cls.measured else None),
        xy=(cv.xlo * 1.5, cv.scale.y(main.value * cv.xlo * 1.5)),
        xytext=(0.0, 3.0),
        textcoords="offset points",
        rotation=0.0,
        rotation_mode="anchor",
        ha="left",
        va="bottom",
        fontsize=_LABEL_SIZE,
        color=text_color(cls.color),
        bbox=_BBOX,
        zorder=6,
        linespacing=1.1,
        gid=f"label:bandwidth:{cls.name}",
    )
    sides = ("above", "below") if cls.theoretical is None or cls.measured is None else ("below", "above")
    cv.labels.add_diag(
        ann,
        cv.ax,
        cv.xlo,
        x_end,
        cv.scale.y(main.value),
        [(cv.xlo * f, side) for side in sides for f in _BW_POSITIONS],
    )


def _draw_bandwidths(
    cv: _Canvas, shown: Sequence[Ceiling], bw_classes: Sequence[CeilingClass], eff: Mapping[str, CeilingEfficiency]
) -> None:
    """Every bandwidth ceiling: diagonals up to the highest compute ceiling of the same source."""
    top = {
        s: max((c.value for c in shown if c.kind == "compute" and c.source == s), default=None)
        for s in ("measured", "theoretical")
    }
    for cls in bw_classes:
        _draw_bandwidth_class(cv, cls, top, eff.get(cls.name))


_Drawn = List[Tuple[int, Measurement, _Marker]]


def _draw_curves(cv: _Canvas, drawn: _Drawn) -> None:
    """The line joining each curve's points (a sweep kernel's), in intensity order."""
    for curve in dict.fromkeys(s.curve for _i, _m, s in drawn if s.curve is not None):
        ms = sorted((m for _i, m, s in drawn if s.curve == curve), key=lambda m: m.intensity)
        style = next(s for _i, _m, s in drawn if s.curve == curve)
        cv.ax.plot(
            [m.intensity for m in ms],
            [cv.scale.y(m.gflops) for m in ms],
            linestyle=MEASURED,
            color=style.color,
            linewidth=1.3,
            zorder=4,
            gid=curve,
        )


def _draw_measurement(cv: _Canvas, i: int, m: Measurement, s: _Marker) -> None:
    """The marker of ``model.measurements[i]``, hollow under a cross where it lies above its
    physical limit."""
    hollow = s.hollow or m.over_limit is not None  # above its physical limit: hollow, under a cross
    cv.ax.plot(
        [m.intensity],
        [cv.scale.y(m.gflops)],
        linestyle="none",
        marker=s.marker,
        markersize=s.size,
        markerfacecolor="white" if hollow else s.color,
        markeredgecolor=s.color if hollow or s.curve is not None else "white",
        markeredgewidth=0.6 if not hollow else 1.1,
        color=s.color,
        zorder=4,
        gid=measurement_gid(i),
    )
    cv.labels.add_markers(cv.ax, [m.intensity], [cv.scale.y(m.gflops)], s.size)
    if m.over_limit is not None:
        draw_over_limit(cv.ax, m.intensity, cv.scale.y(m.gflops), s.size, i)


def _draw_measurements(cv: _Canvas, drawn: _Drawn) -> Dict[str, Any]:
    """The curves, then one marker per measurement; the legend entry of each series."""
    _draw_curves(cv, drawn)
    handles: Dict[str, Any] = {}
    for i, m, s in drawn:
        _draw_measurement(cv, i, m, s)
        handles.setdefault(s.series, _legend_handle(s))
    return handles


def _user_marker(j: int, color: str) -> Dict[str, Any]:
    """The marker style of the ``j``-th user point, in ``color``."""
    return dict(
        marker=_USER_MARKERS[j % len(_USER_MARKERS)],
        markersize=10,
        color=color,
        markeredgecolor="black",
        markeredgewidth=0.6,
    )


def _draw_user_point(cv: _Canvas, p: Point, style: Dict[str, Any]) -> None:
    """User point ``p``, a large marker, its name beside it in bold."""
    cv.ax.plot([p.intensity], [cv.scale.y(p.gflops)], linestyle="none", zorder=7, gid=f"point:{p.name}", **style)
    ann = cv.ax.annotate(
        p.name,
        xy=(p.intensity, cv.scale.y(p.gflops)),
        xytext=(7.0, -4.0),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=_LABEL_SIZE,
        color=text_color(style["color"]),
        fontweight="bold",
        bbox=_BBOX,
        zorder=7,
        gid=f"pointlabel:{p.name}",
    )
    cv.labels.add_free(ann, point_label_offsets(7.0), order=(3.0, 0.0))
    cv.labels.add_markers(cv.ax, [p.intensity], [cv.scale.y(p.gflops)], 10.0)


def _draw_user_points(cv: _Canvas, users: Sequence[Point], colors: Sequence[str]) -> Dict[str, Any]:
    """The user points, each in the next of ``colors``, labelled beside its marker; their legend entries."""
    Line2D = mpl("matplotlib.lines").Line2D
    handles: Dict[str, Any] = {}
    for j, p in enumerate(users):
        style = _user_marker(j, colors[j % len(colors)])
        _draw_user_point(cv, p, style)
        handles[p.name] = Line2D([], [], linestyle="none", **style)
    return handles


def _kernel_colors(user_colors: Sequence[str], users: Sequence[Point], kernels: Sequence[Placement]) -> List[str]:
    """Your kernels' colours: those the user points left, the palette's first where too few are."""
    kernel_colors = list(user_colors[len(users) :])
    if len(kernel_colors) < len({k.dot.kernel for k in kernels}):
        kernel_colors = [c for c in PALETTE if c not in kernel_colors] + kernel_colors
    return kernel_colors


def _count_entries(model: RooflineModel, drawn: _Drawn, ylo: float) -> Dict[str, Any]:
    """The legend entries that count points: those below the axis (launch-bound), and those above
    their physical limit that would have set a ceiling (a working-set point is the hierarchy figure's)."""
    handles: Dict[str, Any] = {}
    below = sum(1 for _i, m, _s in drawn if m.gflops < ylo)
    if below:
        handles[f"{below} launch-bound point{'s' if below != 1 else ''} below the axis"] = mpl(
            "matplotlib.lines"
        ).Line2D([], [], linestyle="none", marker="v", color=_UNSHOWN)
    over = sum(1 for m in model.measurements if m.valid and m.over_limit is not None and m.ceiling_class is not None)
    if over:
        text, handle = over_limit_legend(over)
        handles[text] = handle
    return handles


def _style_entries(shown: Sequence[Ceiling]) -> Dict[str, Any]:
    """The legend entries of the ceilings' line styles: measured, noisy, cache level, theoretical."""
    Line2D = mpl("matplotlib.lines").Line2D
    handles = {"measured ceiling": Line2D([], [], color=NEUTRAL, linestyle=MEASURED, linewidth=1.9)}
    if any(c.noisy for c in shown):
        handles["measured, noisy samples (CV in its label)"] = Line2D(
            [], [], color=NEUTRAL, linestyle=NOISY_LINE, linewidth=1.9
        )
    if any(c.is_level for c in shown):
        handles["cache level (working sets in its label)"] = Line2D(
            [], [], color=NEUTRAL, linestyle=MEASURED, linewidth=1.2
        )
    if any(c.source == "theoretical" for c in shown):
        handles["theoretical ceiling"] = Line2D([], [], color=NEUTRAL, linestyle=THEORETICAL, linewidth=1.4)
    return handles


def _line_entries(lines: _Lines) -> Dict[str, Any]:
    """The legend entries of what the compute steps drew: the clocked theoretical ceilings, the shared
    grey lines and the ridge points of each source."""
    Line2D = mpl("matplotlib.lines").Line2D
    handles: Dict[str, Any] = {}
    if lines.clocked:
        handles["theoretical at the effective clock"] = Line2D([], [], color=NEUTRAL, linestyle=AT_CLOCK, linewidth=1.4)
    if lines.shared:
        measured_shared = any(source == "measured" for source, _g in lines.shared)
        handles["grey: classes of equal height"] = Line2D(
            [],
            [],
            color=NEUTRAL,
            linestyle=MEASURED if measured_shared else THEORETICAL,
            linewidth=1.9 if measured_shared else 1.4,
        )
    if "measured" in lines.ridge_sources:
        handles["ridge point (measured)"] = Line2D([], [], linestyle="none", marker="o", markersize=5.5, color=NEUTRAL)
    if "theoretical" in lines.ridge_sources:
        handles["ridge point (theoretical)"] = Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=5.5,
            markerfacecolor="white",
            markeredgecolor=NEUTRAL,
            markeredgewidth=1.2,
        )
    return handles


def plot_roofline(
    model: RooflineModel,
    *,
    points: Sequence[Point] = (),
    ax: Optional[Axes] = None,
    title: Optional[str] = None,
    ceilings: Union[str, Sequence[str]] = "default",
    kernels: Sequence[Placement] = (),
) -> Figure:
    """Draw ``model`` (its ceilings and measurements) and ``points`` as a publication-style figure.

    Args:
        model: the roofline (from a run: :meth:`~.model.RooflineModel.from_run`).
        points: your own workloads (:func:`apple_roofline.measure`), large labelled markers;
            zero-FLOP points cannot be placed on log axes and are left out.
        ax: draw into these axes (log-scalable); default a new :data:`~.axes.FIGSIZE` figure on the
            Agg canvas, with the label column and the legend below.
        title: default the model's title (``"<device> (<backend>) — <date>"``), else "Roofline".
        ceilings: which ceilings to draw (:func:`~.selection.select_ceilings`).
        kernels: your kernels' dots placed on this model (:func:`apple_roofline.user_kernels.place.place`),
            one marker per kernel and level, sized by time share, each kernel labelled with the
            ceiling that binds it and the speedup left
            (:func:`~apple_roofline.roofline.views.kernel_dots.draw_kernels`).

    Returns:
        The :class:`matplotlib.figure.Figure` (the caller saves or closes it, e.g. with
        :func:`apple_roofline.figures.save_figure`).

    Raises:
        ValueError: an unknown ceiling name in ``ceilings``; ``ax`` not attached to a figure.
    """
    shown = select_ceilings(model, ceilings)
    fig, ax, own = axes_for(ax)
    bw_classes, comp_classes = ceiling_classes(shown)
    colors = {c.name: c.color for c in comp_classes}
    spare = spare_colors(set(colors.values()) | {c.color for c in bw_classes})
    n_curves = curve_count(model.measurements)
    drawn = _markers(model, colors, spare[: max(n_curves, 1)], registry.disturbed(model.measurements))
    users = [p for p in points if p.flops > 0]
    ridges = _class_ridges(model, comp_classes)
    xs = [m.intensity for _i, m, _s in drawn] + [p.intensity for p in users] + [k.dot.intensity for k in kernels]
    ys = [m.gflops for _i, m, _s in drawn] + [p.gflops for p in users] + [k.dot.gflops for k in kernels]
    cv = _open_canvas(fig, ax, shown, ridges, (xs, ys))
    ax.set_title(title if title is not None else (model.title or "Roofline"))
    # efficiency annotations where a ceiling's measurement had power (docs/design/power.md, "Clocks and power")
    eff = {e.name: e for e in ceiling_efficiency(model.measurements)}
    lines = _draw_computes(cv, model, comp_classes, ridges, eff)
    _draw_bandwidths(cv, shown, bw_classes, eff)
    handles = _draw_measurements(cv, drawn)
    user_colors = [c for c in spare[n_curves:] if c not in {s.color for _i, _m, s in drawn}] or list(PALETTE)
    handles.update(_draw_user_points(cv, users, user_colors))
    if kernels:  # your kernels' dots, in the colours the user points left (the palette's when too few are)
        handles.update(draw_kernels(ax, cv.scale, kernels, cv.labels, _kernel_colors(user_colors, users, kernels)))
    handles.update(_count_entries(model, drawn, cv.ylo))
    handles.update(_style_entries(shown))
    handles.update(_line_entries(lines))
    finish(ax, cv.labels, own, (list(handles.values()), list(handles)), ncol=3)
    return fig
