"""Two rooflines overlaid: run A in blue, run B in vermillion (``apple-roofline compare -o``).

Each run's measured ceilings are solid and its theoretical ones dashed, in the run's colour; the
ridge points of its measured ceilings are marked. Only each run's bandwidth roof (on its diagonal)
and its peak compute ceiling (in the label column) are labelled on the plot, prefixed ``"A: "`` /
``"B: "``; every other ceiling is listed with its value in the legend below the axes, under the
run's entry. Axes and units as :mod:`.plot`.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from ..figures import Figure, mpl, text_color
from .axes import finish, limits, new_roofline_figure, scale_for, setup_axes
from .labels import COLUMN_GAP_PT, LEADER_RELPOS, Labels
from .model import RooflineModel
from .records import Ceiling
from .selection import select_ceilings

__all__ = ["plot_compare", "RUN_COLORS"]

#: Run A, run B.
RUN_COLORS: Tuple[str, str] = ("#0072B2", "#D55E00")
_LABEL_SIZE = 8.0
_BBOX = dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85)
_BW_POSITIONS = (1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 96.0)


def _best(ceilings: Tuple[Ceiling, ...], kind: str, source: str) -> Optional[Ceiling]:
    return max((c for c in ceilings if c.kind == kind and c.source == source), key=lambda c: c.value, default=None)


def plot_compare(a: RooflineModel, b: RooflineModel) -> Figure:
    """Overlay the rooflines of ``a`` and ``b`` (the default ceilings of each,
    :func:`~.selection.select_ceilings`); the title is ``"A: <title> vs B: <title>"``.

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.
    """
    fig, ax = new_roofline_figure()
    runs = [(tag, model, select_ceilings(model), color) for tag, model, color in zip("AB", (a, b), RUN_COLORS)]
    every = [c for _t, _m, shown, _c in runs for c in shown]
    # ridge points from each model (against its highest bandwidth of the ceiling's source), as its report
    tables = [model.ridge_table() for _t, model, _s, _c in runs]
    ridges = [r for table, (_t, _m, shown, _c) in zip(tables, runs) for c in shown if c.kind == "compute"
              for r in [table.ridge(c)] if r is not None]
    tops = [c.value for c in every if c.kind == "compute"]
    scale = scale_for(max(tops + [1.0]))
    xlo, xhi, ylo, yhi = limits([], [], ridges, tops, [c.value for c in every if c.kind == "bandwidth"])
    setup_axes(ax, (xlo, xhi, scale.y(ylo), scale.y(yhi)), scale)
    ax.set_title(f"A: {a.title or 'roofline A'} vs B: {b.title or 'roofline B'}")
    labels = Labels(fig)
    Line2D = mpl("matplotlib.lines").Line2D
    columns: List[Tuple[List[Any], List[str]]] = []
    main_bws = [(_best(shown, "bandwidth", "measured") or _best(shown, "bandwidth", "theoretical"))
                for _t, _m, shown, _c in runs]
    a_higher = main_bws[0] is None or main_bws[1] is None or main_bws[0].value >= main_bws[1].value
    for i, (tag, model, shown, color) in enumerate(runs):
        handles: List[Any] = [Line2D([], [], color=color, linewidth=1.9)]
        names = [f"{tag}: {model.title or 'roofline ' + tag}"]
        peak = max((c for c in shown if c.kind == "compute" and c.source == "measured"), key=lambda c: c.value,
                   default=None) or max((c for c in shown if c.kind == "compute"), key=lambda c: c.value, default=None)
        for c in sorted(shown, key=lambda c: (c.kind != "bandwidth", c.source != "measured", -c.value)):
            style = "-" if c.source == "measured" else "--"
            width = 1.9 if c.source == "measured" else 1.4
            gid = f"{'ab'[i]}:ceiling:{c.source}:{c.kind}:{c.name}"
            tail = "" if c.source == "measured" else " (theoretical)"
            if c.kind == "bandwidth":
                top = max((t.value for t in shown if t.kind == "compute" and t.source == c.source), default=None)
                x_end = min(max(top / c.value, xlo), xhi) if top is not None else xhi
                ax.plot([xlo, x_end], [scale.y(c.value * xlo), scale.y(c.value * x_end)], linestyle=style,
                        color=color, linewidth=width, zorder=3, gid=gid)
                text = f"{tag}: {c.name} {scale.bandwidth(c.value)}{tail}"
                if c is main_bws[i]:
                    ann = ax.annotate(text, xy=(xlo * 1.5, scale.y(c.value * xlo * 1.5)), xytext=(0.0, 3.0),
                                      textcoords="offset points", rotation_mode="anchor", ha="left", va="bottom",
                                      fontsize=_LABEL_SIZE, color=text_color(color), bbox=_BBOX, zorder=6,
                                      gid=f"{'ab'[i]}:label:bandwidth:{c.name}")
                    sides = ("above", "below") if (i == 0) == a_higher else ("below", "above")
                    labels.add_diag(ann, ax, xlo, x_end, scale.y(c.value),
                                    [(xlo * f, side) for side in sides for f in _BW_POSITIONS])
                    continue
            else:
                ridge = tables[i].ridge(c)
                x0 = min(max(ridge, xlo), xhi) if ridge is not None else xlo
                ax.plot([x0, xhi], [scale.y(c.value)] * 2, linestyle=style, color=color, linewidth=width, zorder=3,
                        gid=gid)
                if ridge is not None and c.source == "measured":
                    ax.plot([ridge], [scale.y(c.value)], linestyle="none", marker="o", markersize=5.0, color=color,
                            zorder=5, gid=f"{'ab'[i]}:ridge:{c.source}:{c.name}")
                    labels.add_markers(ax, [ridge], [scale.y(c.value)], 5.0)
                text = f"{tag}: {c.name} {scale.rate(c.value)}{tail}"
                if c is peak:
                    ann = ax.annotate(text, xy=(1.0, scale.y(c.value)), xycoords=ax.get_yaxis_transform(),
                                      xytext=(COLUMN_GAP_PT, 0.0), textcoords="offset points", ha="left", va="center",
                                      fontsize=_LABEL_SIZE, color=text_color(color), zorder=6, annotation_clip=False,
                                      gid=f"{'ab'[i]}:label:compute:{c.name}",
                                      arrowprops=dict(arrowstyle="-", relpos=LEADER_RELPOS, color=color,
                                                      linewidth=0.8, shrinkA=2.0))
                    labels.add_column(ann, ax, scale.y(c.value))
                    continue
            handles.append(Line2D([], [], color=color, linestyle=style, linewidth=width))
            names.append(text)
        columns.append((handles, names))
    rows = max(len(h) for h, _ in columns)
    handles_all: List[Any] = []
    names_all: List[str] = []
    for h, n in columns:  # column-major: pad run A's column so that run B's starts a column
        pad = rows - len(h)
        handles_all += h + [Line2D([], [], linestyle="none", marker="none") for _ in range(pad)]
        names_all += n + [""] * pad
    finish(ax, labels, True, (handles_all, names_all), ncol=2)
    return fig
