"""Rooflines overlaid, one colour per run (``apple-roofline compare -o``): run A blue, B vermillion,
C green, D purple, E orange, F sky blue, G wine, H olive (:data:`RUN_COLORS`: the Okabe–Ito
colour-blind-safe set without its yellow and black, which text and white would hide, and Tol's wine
and olive; a ninth run takes A's colour again, dash-dotted).

Each run shows its default ceilings (:func:`~.selection.select_ceilings`), the measured ones only
unless ``theoretical`` (then dashed, in the run's colour); the ridge points of its measured
compute ceilings are marked. Line widths nest (run A widest, each later run narrower and on top), so
that runs of the same device, whose lines coincide, show every colour. With two runs, each run's bandwidth roof (on its diagonal) and its peak
compute ceiling (in the label column) are labelled on the plot, prefixed ``"A: "`` / ``"B: "``, and
every other ceiling is listed with its value in the legend, under the run's entry. With more runs
the plot carries no text of its own: the legend names each run once (its colour), and the values
are the comparison's tables (:mod:`.compare`). Every line has a gid ``<tag>:ceiling:<source>:<kind>:
<name>`` (tag in lower case) for the HTML page's hover text. Axes and units as :mod:`.plot`.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from ..figures import Figure, mpl, text_color
from .compare import run_tags
from .axes import finish, limits, new_roofline_figure, scale_for, setup_axes
from .labels import COLUMN_GAP_PT, LEADER_RELPOS, Labels
from .model import RooflineModel
from .records import Ceiling
from .selection import select_ceilings

__all__ = ["plot_compare", "RUN_COLORS"]

#: The colour of run A, B, C … (module docstring).
RUN_COLORS: Tuple[str, ...] = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#999933")
#: Up to this many runs the plot labels each run's ceilings itself; beyond, the legend names the runs.
LABELLED_RUNS = 2
_LABEL_SIZE = 8.0
_BBOX = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)
_BW_POSITIONS = (1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 96.0)


def _best(ceilings: Tuple[Ceiling, ...], kind: str, source: str) -> Optional[Ceiling]:
    return max((c for c in ceilings if c.kind == kind and c.source == source), key=lambda c: c.value, default=None)


def plot_compare(models: Sequence[RooflineModel], names: Optional[Sequence[str]] = None, *,
                 theoretical: bool = False) -> Figure:
    """Overlay the rooflines of ``models`` (two or more), each in its colour (module docstring);
    ``names`` (one per model, default each model's title) name the runs in the legend. The title is
    ``"A: <name> vs B: <name>"`` for two runs, ``"<n> rooflines overlaid"`` for more.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.

    Raises:
        ValueError: fewer than two models, or names not one per model.
    """
    if len(models) < 2:
        raise ValueError(f"a comparison needs two or more rooflines, got {len(models)}")
    titles = list(names) if names is not None else [m.title or "" for m in models]
    if len(titles) != len(models):
        raise ValueError(f"{len(titles)} names for {len(models)} rooflines")
    tags = run_tags(len(models))
    titles = [t or f"roofline {tag}" for t, tag in zip(titles, tags)]
    labelled = len(models) <= LABELLED_RUNS
    fig, ax = new_roofline_figure()
    runs = [(tag, model, tuple(c for c in select_ceilings(model) if theoretical or c.source == "measured"),
             RUN_COLORS[i % len(RUN_COLORS)]) for i, (tag, model) in enumerate(zip(tags, models))]
    every = [c for _t, _m, shown, _c in runs for c in shown]
    # ridge points from each model (against its highest bandwidth of the ceiling's source), as its report
    tables = [model.ridge_table() for _t, model, _s, _c in runs]
    ridges = [r for table, (_t, _m, shown, _c) in zip(tables, runs) for c in shown if c.kind == "compute"
              for r in [table.ridge(c)] if r is not None]
    tops = [c.value for c in every if c.kind == "compute"]
    scale = scale_for(max(tops + [1.0]))
    xlo, xhi, ylo, yhi = limits([], [], ridges, tops, [c.value for c in every if c.kind == "bandwidth"])
    setup_axes(ax, (xlo, xhi, scale.y(ylo), scale.y(yhi)), scale)
    ax.set_title(f"A: {titles[0]} vs B: {titles[1]}" if len(models) == 2 else f"{len(models)} rooflines overlaid")
    labels = Labels(fig)
    Line2D = mpl("matplotlib.lines").Line2D
    columns: List[Tuple[List[Any], List[str]]] = []
    main_bws = [(_best(shown, "bandwidth", "measured") or _best(shown, "bandwidth", "theoretical"))
                for _t, _m, shown, _c in runs]
    a_higher = labelled and (main_bws[0] is None or main_bws[1] is None or main_bws[0].value >= main_bws[1].value)
    for i, (tag, model, shown, color) in enumerate(runs):
        measured_style = "-" if i < len(RUN_COLORS) else "-."
        # nested widths: run A widest and lowest, each later run narrower on top, so that runs of the same
        # device, whose lines coincide, show as stripes of every colour instead of the last one
        wide = 1.2 + (1.6 if len(runs) == 2 else 3.0) * (len(runs) - 1 - i) / (len(runs) - 1)
        handles: List[Any] = [Line2D([], [], color=color, linewidth=wide, linestyle=measured_style)]
        names_i = [f"{tag}: {titles[i]}"]
        g = tag.lower()
        peak = max((c for c in shown if c.kind == "compute" and c.source == "measured"), key=lambda c: c.value,
                   default=None) or max((c for c in shown if c.kind == "compute"), key=lambda c: c.value, default=None)
        for c in sorted(shown, key=lambda c: (c.kind != "bandwidth", c.source != "measured", -c.value)):
            style = measured_style if c.source == "measured" else "--"
            width = wide if c.source == "measured" else 1.4
            gid = f"{g}:ceiling:{c.source}:{c.kind}:{c.name}"
            tail = "" if c.source == "measured" else " (theoretical)"
            if c.kind == "bandwidth":
                top = max((t.value for t in shown if t.kind == "compute" and t.source == c.source), default=None)
                x_end = min(max(top / c.value, xlo), xhi) if top is not None else xhi
                ax.plot([xlo, x_end], [scale.y(c.value * xlo), scale.y(c.value * x_end)], linestyle=style,
                        color=color, linewidth=width, zorder=3 + i / len(runs), gid=gid)
                text = f"{tag}: {c.name} {scale.bandwidth(c.value)}{tail}"
                if labelled and c is main_bws[i]:
                    ann = ax.annotate(text, xy=(xlo * 1.5, scale.y(c.value * xlo * 1.5)), xytext=(0.0, 3.0),
                                      textcoords="offset points", rotation_mode="anchor", ha="left", va="bottom",
                                      fontsize=_LABEL_SIZE, color=text_color(color), bbox=_BBOX, zorder=6,
                                      gid=f"{g}:label:bandwidth:{c.name}")
                    sides = ("above", "below") if (i == 0) == a_higher else ("below", "above")
                    labels.add_diag(ann, ax, xlo, x_end, scale.y(c.value),
                                    [(xlo * f, side) for side in sides for f in _BW_POSITIONS])
                    continue
            else:
                ridge = tables[i].ridge(c)
                x0 = min(max(ridge, xlo), xhi) if ridge is not None else xlo
                ax.plot([x0, xhi], [scale.y(c.value)] * 2, linestyle=style, color=color, linewidth=width, zorder=3 + i / len(runs),
                        gid=gid)
                if ridge is not None and c.source == "measured":
                    ax.plot([ridge], [scale.y(c.value)], linestyle="none", marker="o", markersize=2.5 + wide * 1.3, color=color,
                            zorder=5, gid=f"{g}:ridge:{c.source}:{c.name}")
                    labels.add_markers(ax, [ridge], [scale.y(c.value)], 5.0)
                text = f"{tag}: {c.name} {scale.rate(c.value)}{tail}"
                if labelled and c is peak:
                    ann = ax.annotate(text, xy=(1.0, scale.y(c.value)), xycoords=ax.get_yaxis_transform(),
                                      xytext=(COLUMN_GAP_PT, 0.0), textcoords="offset points", ha="left", va="center",
                                      fontsize=_LABEL_SIZE, color=text_color(color), zorder=6, annotation_clip=False,
                                      gid=f"{g}:label:compute:{c.name}",
                                      arrowprops=dict(arrowstyle="-", relpos=LEADER_RELPOS, color=color,
                                                      linewidth=0.8, shrinkA=2.0))
                    labels.add_column(ann, ax, scale.y(c.value))
                    continue
            if labelled:
                handles.append(Line2D([], [], color=color, linestyle=style, linewidth=width))
                names_i.append(text)
        columns.append((handles, names_i))
    rows = max(len(h) for h, _ in columns)
    handles_all: List[Any] = []
    names_all: List[str] = []
    for h, n in columns:  # column-major: pad each run's column so that the next run's starts a column
        pad = rows - len(h) if labelled else 0
        handles_all += h + [Line2D([], [], linestyle="none", marker="none") for _ in range(pad)]
        names_all += n + [""] * pad
    finish(ax, labels, True, (handles_all, names_all), ncol=2)
    return fig
