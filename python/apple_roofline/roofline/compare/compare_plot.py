"""Rooflines overlaid (``apple-roofline compare -o``): one colour per ceiling, one line style per run.

A ceiling keeps its colour in every run (:func:`~.plot.ceiling_classes` over every run's ceilings:
DRAM's bandwidth black, each compute class its fixed colour, as in the report's figure), so that one
ceiling's lines in the runs are told apart from another's at a glance; the run is the line's style
(:data:`RUN_DASHES`: run A solid, B dashed, C dotted, D dash-dotted …; a ninth run takes A's style
again). Line widths nest (run A widest, each later run narrower and on top), so that runs whose
lines coincide (the same device) still show every run.

Each run shows its default ceilings (:func:`~.selection.select_ceilings`), the measured ones only
unless ``theoretical`` (then the theoretical ones too, faint and thinner, in the same colour and
style); the ridge points of its measured compute ceilings are marked in the ceiling's colour. Each
ceiling is labelled once, at its end (a compute ceiling in the column right of the axes, a bandwidth
along its diagonal near where it meets the compute roof), in its colour; with up to
:data:`LABELLED_RUNS` runs the label gives each run's value (``"FP32 vector: A 64.4, B 59.9
TFLOP/s"``, and the theoretical values in brackets where drawn), with more the comparison's
tables do; a ceiling set by noisy samples says so after its run's value (``"A 113 GFLOP/s (noisy
samples, CV 90%)"``, :func:`~.plot.noise_mark`), with more runs after its name (``"(noisy samples in
A, C)"``). The legend is short: one entry per run (its line
style), and one for the theoretical ceilings where drawn. Every line has a gid
``<tag>:ceiling:<source>:<kind>:<name>`` (tag in lower case), every ridge point
``<tag>:ridge:<source>:<name>``, for the HTML page's hover text. Axes and units as :mod:`.plot`.

A published reference's figures (``published``, :class:`~.compare.PublishedLine`) are drawn as
ceilings too, in their ceiling's colour, thinner and in their own line style
(:data:`PUBLISHED_DASH`), with one legend entry that says they are published, not measured; each
ceiling's label gives the published value beside the runs' (``"FP32 vector: A 778, published 815
GFLOP/s"``); their gids are ``published:ceiling:<source>:<kind>:<name>``. With them, one run is
enough.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...figures import Figure, mpl, text_color
from ...study.records import Ceiling
from ..model.model import RidgeTable, RooflineModel
from ..model.selection import select_ceilings
from ..views.axes import Scale, finish, limits, new_roofline_figure, scale_for, setup_axes
from ..views.labels import Labels
from ..views.plot import ceiling_classes, noise_mark
from .compare import PublishedLine, run_tags

__all__ = [
    "plot_compare",
    "RUN_DASHES",
    "PUBLISHED_DASH",
    "LABELLED_RUNS",
    "mpl_dash",
    "plotly_dash",
    "svg_dash",
    "published_ceilings",
    "shown_published",
]

#: The dash pattern of run A, B, C … (on, off lengths in points; empty: solid): solid, dashed,
#: dotted, dash-dotted, long-dashed, short-dashed, dash-dot-dotted, sparse dots.
RUN_DASHES: Tuple[Tuple[float, ...], ...] = (
    (),
    (6.0, 3.0),
    (1.5, 2.0),
    (6.0, 2.0, 1.5, 2.0),
    (11.0, 3.0),
    (3.0, 1.5),
    (6.0, 2.0, 1.5, 2.0, 1.5, 2.0),
    (1.5, 4.5),
)
#: The dash pattern of a published reference's ceilings: long dashes between two dots.
PUBLISHED_DASH: Tuple[float, ...] = (8.0, 2.0, 1.0, 2.0, 1.0, 2.0)
#: Up to this many runs each ceiling's label gives every run's value.
LABELLED_RUNS = 2
_LABEL_SIZE = 8.0
_RUN_KEY = "#333333"
_BBOX = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)
_BW_POSITIONS = (1.3, 2.0, 3.0, 4.5, 7.0, 11.0, 16.0, 24.0, 36.0)  # back from the end of the diagonal


def mpl_dash(dash: Tuple[float, ...], width: float = 1.0) -> Any:
    """A :data:`RUN_DASHES` pattern as a matplotlib ``linestyle`` for a line ``width`` points wide:
    matplotlib scales dashes by the width, so the pattern is divided by it to stay in points (a dotted
    run reads dotted on a wide line too)."""
    return "-" if not dash else (0, tuple(v / width for v in dash))


def plotly_dash(dash: Tuple[float, ...]) -> str:
    """A :data:`RUN_DASHES` pattern as a Plotly ``line.dash`` (``"solid"`` or ``"6px,3px"``)."""
    return "solid" if not dash else ",".join(f"{v:g}px" for v in dash)


def svg_dash(dash: Tuple[float, ...]) -> str:
    """A :data:`RUN_DASHES` pattern as an SVG ``stroke-dasharray`` (``"none"`` or ``"6 3"``)."""
    return "none" if not dash else " ".join(f"{v:g}" for v in dash)


def shown_published(published: Sequence[PublishedLine], theoretical: bool) -> List[PublishedLine]:
    """The published lines a figure draws: those set beside measured ceilings, and with
    ``theoretical`` those beside theoretical ones too (as the runs' ceilings are shown)."""
    return [p for p in published if theoretical or p.source == "measured"]


def published_ceilings(published: Sequence[PublishedLine]) -> List[Ceiling]:
    """The published lines as ceilings of their name, kind, value and source, for the figures' colours
    and axes only (:func:`~.plot.ceiling_classes`): never shown as a run's."""
    return [Ceiling(p.name, p.kind, p.value, p.unit, p.source, p.note or "published") for p in published]


#: Each ceiling's ``(source, kind, name)`` -> ``[(run tag, value, x where its line ends, noise mark)]``:
#: what its one label gives.
_Ends = Dict[Tuple[str, str, str], List[Tuple[str, float, float, str]]]


@dataclass(frozen=True)
class _RunLines:
    """One run as the figure draws it: its tag (``A``), title, the ceilings shown, its line style
    (:data:`RUN_DASHES`) and its ridge points (:meth:`~.model.RooflineModel.ridge_table`)."""

    tag: str
    title: str
    shown: Tuple[Ceiling, ...]
    dash: Tuple[float, ...]
    table: RidgeTable


@dataclass(frozen=True)
class _Canvas:
    """Where the lines go: the axes, their labels, the drawn unit, the x range and each ceiling's colour."""

    ax: Any
    labels: Labels
    scale: Scale
    xlo: float
    xhi: float
    colors: Dict[str, str]


def plot_compare(
    models: Sequence[RooflineModel],
    names: Optional[Sequence[str]] = None,
    *,
    theoretical: bool = False,
    published: Sequence[PublishedLine] = (),
    reference: str = "",
) -> Figure:
    """Overlay the rooflines of ``models`` (two or more; one with ``published`` lines), a colour per
    ceiling and a style per run (module docstring); ``names`` (one per model, default each model's
    title) name the runs in the legend; ``published`` are a published reference's figures (named
    ``reference``) drawn beside them, labelled published. The title is ``"A: <name> vs B: <name>"``
    for two runs, ``"A: <name> vs published figures"`` for one, ``"<n> rooflines overlaid"`` for more.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.

    Raises:
        ValueError: fewer than two models (and no published line), or names not one per model.
    """
    pub = shown_published(published, theoretical)
    titles = _run_titles(models, names, pub)
    fig, ax = new_roofline_figure()
    runs = [
        _RunLines(
            tag,
            title,
            tuple(c for c in select_ceilings(model) if theoretical or c.source == "measured"),
            RUN_DASHES[i % len(RUN_DASHES)],
            model.ridge_table(),
        )
        for i, (tag, title, model) in enumerate(zip(run_tags(len(models)), titles, models))
    ]
    every = [c for run in runs for c in run.shown] + published_ceilings(pub)
    bws, comps = ceiling_classes(every)
    canvas = _set_up(ax, Labels(fig), runs, every, {cls.name: cls.color for cls in bws + comps})
    Line2D = mpl("matplotlib.lines").Line2D
    handles: List[Any] = []
    legend_names: List[str] = []
    ends: _Ends = {}
    for i, run in enumerate(runs):
        handles.append(Line2D([], [], color=_RUN_KEY, linewidth=1.6, linestyle=mpl_dash(run.dash, 1.6)))
        legend_names.append(f"{run.tag}: {run.title}")
        _draw_run(canvas, run, i, len(runs), ends)
    if pub:
        _draw_published(ax, pub, canvas.colors, canvas.scale, (canvas.xlo, canvas.xhi), ends)
        handles.append(Line2D([], [], color=_RUN_KEY, linewidth=1.1, linestyle=mpl_dash(PUBLISHED_DASH, 1.1)))
        where = ", ".join(dict.fromkeys(p.where for p in pub))
        legend_names.append(f"published: {reference or 'reference'} ({where}), not measured by this tool")
    if theoretical and any(c.source != "measured" for c in every):
        handles.append(Line2D([], [], color=_RUN_KEY, linewidth=1.0, alpha=0.45))
        legend_names.append("theoretical ceilings (faint)")
    _label_ceilings(canvas, ends, len(models) <= LABELLED_RUNS)
    finish(ax, canvas.labels, True, (handles, legend_names), ncol=2)
    return fig


def _run_titles(
    models: Sequence[RooflineModel], names: Optional[Sequence[str]], pub: Sequence[PublishedLine]
) -> List[str]:
    """Each run's name (``names``, default each model's title; ``roofline A`` for an empty one).

    Raises:
        ValueError: fewer than two models (one with published lines ``pub``), or names not one per model.
    """
    if len(models) < (1 if pub else 2):
        raise ValueError(f"a comparison needs two or more rooflines, got {len(models)}")
    titles = list(names) if names is not None else [m.title or "" for m in models]
    if len(titles) != len(models):
        raise ValueError(f"{len(titles)} names for {len(models)} rooflines")
    return [t or f"roofline {tag}" for t, tag in zip(titles, run_tags(len(models)))]


def _set_up(
    ax: Any, labels: Labels, runs: Sequence[_RunLines], every: Sequence[Ceiling], colors: Dict[str, str]
) -> _Canvas:
    """The axes over every ceiling drawn (``every``, the published ones among them) and the runs'
    ridge points, in the unit of the highest compute ceiling, titled by the runs (:func:`plot_compare`)."""
    # ridge points from each model (against its highest bandwidth of the ceiling's source), as its report
    ridges = [
        r for run in runs for c in run.shown if c.kind == "compute" for r in [run.table.ridge(c)] if r is not None
    ]
    tops = [c.value for c in every if c.kind == "compute"]
    scale = scale_for(max(tops + [1.0]))
    xlo, xhi, ylo, yhi = limits([], [], ridges, tops, [c.value for c in every if c.kind == "bandwidth"])
    setup_axes(ax, (xlo, xhi, scale.y(ylo), scale.y(yhi)), scale)
    titles = [run.title for run in runs]
    ax.set_title(
        f"A: {titles[0]} vs B: {titles[1]}"
        if len(runs) == 2
        else (f"A: {titles[0]} vs published figures" if len(runs) == 1 else f"{len(runs)} rooflines overlaid")
    )
    return _Canvas(ax, labels, scale, xlo, xhi, colors)


def _draw_run(canvas: _Canvas, run: _RunLines, i: int, n: int, ends: _Ends) -> None:
    """The ceilings of the ``i``-th of ``n`` runs in its line style, widest for run A (a theoretical
    one faint and thin), each measured compute ceiling's ridge point marked; each ceiling's line end
    joins its label's entry in ``ends``."""
    wide = 1.3 + 1.6 * (n - 1 - i) / max(n - 1, 1)
    g = run.tag.lower()
    for c in run.shown:
        measured = c.source == "measured"
        width, alpha = (wide, 1.0) if measured else (1.0, 0.45)
        line = dict(
            linestyle=mpl_dash(run.dash, width),
            color=canvas.colors[c.name],
            linewidth=width,
            alpha=alpha,
            zorder=3 + i / n,
            gid=f"{g}:ceiling:{c.source}:{c.kind}:{c.name}",
        )
        if c.kind == "bandwidth":
            x_end = _draw_bandwidth(canvas, run, c, line)
        else:
            x_end = _draw_compute(canvas, run, c, line, wide if measured else None)
        ends.setdefault((c.source, c.kind, c.name), []).append((run.tag, c.value, x_end, noise_mark(c)))


def _draw_bandwidth(canvas: _Canvas, run: _RunLines, c: Ceiling, line: Dict[str, Any]) -> float:
    """A bandwidth ceiling's diagonal, up to the run's highest compute ceiling of its source (the
    axes' end without one); where it ends."""
    ax, scale, xlo, xhi = canvas.ax, canvas.scale, canvas.xlo, canvas.xhi
    top = max((t.value for t in run.shown if t.kind == "compute" and t.source == c.source), default=None)
    x_end = min(max(top / c.value, xlo), xhi) if top is not None else xhi
    ax.plot([xlo, x_end], [scale.y(c.value * xlo), scale.y(c.value * x_end)], **line)
    return x_end


def _draw_compute(
    canvas: _Canvas, run: _RunLines, c: Ceiling, line: Dict[str, Any], marker_wide: Optional[float]
) -> float:
    """A compute ceiling's flat line from its ridge point (the axes' start without one), the ridge
    point marked where ``marker_wide`` (the run's line width) is given; where the line starts."""
    ax, scale, xlo, xhi = canvas.ax, canvas.scale, canvas.xlo, canvas.xhi
    ridge = run.table.ridge(c)
    x_end = min(max(ridge, xlo), xhi) if ridge is not None else xlo
    ax.plot([x_end, xhi], [scale.y(c.value)] * 2, **line)
    if ridge is not None and marker_wide is not None:
        ax.plot(
            [ridge],
            [scale.y(c.value)],
            linestyle="none",
            marker="o",
            markersize=2.5 + marker_wide * 1.3,
            color=line["color"],
            zorder=5,
            gid=f"{run.tag.lower()}:ridge:{c.source}:{c.name}",
        )
        canvas.labels.add_markers(ax, [ridge], [scale.y(c.value)], 5.0)
    return x_end


def _label_ceilings(canvas: _Canvas, ends: _Ends, labelled: bool) -> None:
    """One label per ceiling (the measured one's, else the theoretical one's), in its colour: a compute
    ceiling's in the column right of the axes, a bandwidth's along its diagonal; with ``labelled``
    (few runs) it gives each run's value."""
    named = set()
    for (source, kind, name), at in sorted(ends.items(), key=lambda it: (it[0][0] != "measured", it[0][1])):
        if name in named:  # one label per ceiling: the measured one's, else the theoretical one's
            continue
        named.add(name)
        _tag, top, x_end, _noise = max(at, key=lambda a: a[1])
        faint = ends.get(("theoretical", kind, name), []) if source == "measured" else []
        text = _label_text(canvas.scale, (source, kind, name), at, faint, labelled)
        color = canvas.colors[name]
        if kind == "compute":
            canvas.labels.add_column(
                canvas.ax, text, canvas.scale.y(top), color, f"label:compute:{name}", fontsize=_LABEL_SIZE
            )
        else:
            _bandwidth_label(canvas, text, name, top, x_end)


def _label_text(
    scale: Scale,
    key: Tuple[str, str, str],
    at: Sequence[Tuple[str, float, float, str]],
    faint: Sequence[Tuple[str, float, float, str]],
    labelled: bool,
) -> str:
    """A ceiling's label: its name and, with ``labelled``, each run's value (``at``) and noise mark, and
    the theoretical values in brackets (``faint``); else which runs were noisy. A theoretical
    ceiling's says so."""
    source, kind, name = key
    unit = scale.bandwidth if kind == "bandwidth" else scale.rate
    values = ", ".join(f"{t} {unit(v)}{noise}" for t, v, _x, noise in at)
    noisy = [t for t, _v, _x, noise in at if noise]
    text = f"{name}: {values}" if labelled else name + (f" (noisy samples in {', '.join(noisy)})" if noisy else "")
    text += "" if source == "measured" else " (theoretical)"
    if labelled and faint:
        text += " (theoretical " + ", ".join(f"{t} {unit(v)}" for t, v, _x, _n in faint) + ")"
    return text


def _bandwidth_label(canvas: _Canvas, text: str, name: str, top: float, x_end: float) -> None:
    """A bandwidth ceiling's label along its diagonal, at the first of :data:`_BW_POSITIONS` back from
    its end where it overlaps nothing (:meth:`~.labels.Labels.add_diag`)."""
    ax, scale, xlo = canvas.ax, canvas.scale, canvas.xlo
    ann = ax.annotate(
        text,
        xy=(x_end / 2.0, scale.y(top * x_end / 2.0)),
        xytext=(0.0, 3.0),
        textcoords="offset points",
        rotation_mode="anchor",
        ha="right",
        va="bottom",
        fontsize=_LABEL_SIZE,
        color=text_color(canvas.colors[name]),
        bbox=_BBOX,
        zorder=6,
        gid=f"label:bandwidth:{name}",
    )
    canvas.labels.add_diag(
        ann,
        ax,
        xlo,
        x_end,
        scale.y(top),
        [(max(x_end / f, xlo * 1.5), side) for f in _BW_POSITIONS for side in ("above", "below")],
    )


def _draw_published(
    ax: Any,
    pub: Sequence[PublishedLine],
    colors: Dict[str, str],
    scale: Any,
    xs: Tuple[float, float],
    ends: Dict[Tuple[str, str, str], List[Tuple[str, float, float, str]]],
) -> None:
    """The published lines on ``ax``, each in its ceiling's colour and :data:`PUBLISHED_DASH`: a
    bandwidth up to the highest published compute figure of its source, a compute figure from its
    ridge point against the highest published bandwidth of its source; each joins its ceiling's label
    (``ends``) as ``published``."""
    xlo, xhi = xs
    for p in pub:
        tops = [q.value for q in pub if q.kind == "compute" and q.source == p.source]
        bws = [q.value for q in pub if q.kind == "bandwidth" and q.source == p.source]
        if p.kind == "bandwidth":
            a, b = xlo, min(max(max(tops) / p.value, xlo), xhi) if tops else xhi
            ys = [scale.y(p.value * a), scale.y(p.value * b)]
        else:
            a, b = (min(max(p.value / max(bws), xlo), xhi) if bws else xlo), xhi
            ys = [scale.y(p.value)] * 2
        measured = p.source == "measured"
        ax.plot(
            [a, b],
            ys,
            linestyle=mpl_dash(PUBLISHED_DASH, 1.1),
            color=colors[p.name],
            linewidth=1.1,
            alpha=0.9 if measured else 0.45,
            zorder=2.5,
            gid=f"published:ceiling:{p.source}:{p.kind}:{p.name}",
        )
        ends.setdefault((p.source, p.kind, p.name), []).append(("published", p.value, b, ""))
