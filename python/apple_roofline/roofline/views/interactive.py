"""The interactive roofline of ``report.html``: a Plotly figure (a plain dict) built from a run.

The same ceilings (:func:`~.selection.select_ceilings`) and measurements as the static figure (:mod:`.plot`),
on log-log axes (Williams, Waterman and Patterson 2009), in the same colours (:func:`~.plot.ceiling_classes`):
each ceiling one trace (legend entry), in a legend group of its source, the cache levels (the cache-aware
roofline) in their own group, a ceiling set by noisy samples dash-dotted and named so (:func:`~.plot.noise_mark`);
the measurements one trace per sweep kernel (``vec4``, ``scalar8``: a line each) and per other suite, the GEMM
sizes the ladder check flags as disturbed a trace of their own, hollow and grey (:func:`point_series`), a point
above its physical limit an open cross. Both axes label their decades and mark every digit between them with a
shorter minor tick (:data:`LOG_TICKS`). Performance is drawn in GFLOP/s, or
TFLOP/s above 10,000 (:func:`~.axes.scale_for`, as the static figure; ``layout.meta["gflops_per_y"]`` says
which). Clicking a legend entry hides or shows that ceiling, level or suite
(``legend.groupclick = "toggleitem"``), a group title the whole group. Plotly's modebar zooms, pans and resets
the axes (a double click resets too). The buttons above the plot switch between the measured and the
theoretical ceilings and, where the run measured cache levels, between the DRAM roofline and the cache-aware
one; they set every ceiling trace's visibility, and never hide a measurement.

Hovering a ceiling gives its value, source and where it came from (the ridge point on a compute
ceiling's first point); hovering a measurement gives its kernel and parameters, rates and intensity,
samples, the clock it ran at, validation, its provenance (suite, timer, tool, run) and the ceiling
that binds it with the share of that roof it reaches (one roof: the measured ones where the run has them,
:mod:`.binding`), or why it lies above every roof. Every trace carries ``meta``
(``{"role": "ceiling" | "points", ...}``) that :func:`figure_data` and the page's tests read. Ceiling
lines are sampled at :data:`LINE_SAMPLES` points, so that a hover finds one anywhere along a line.
"""

from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ...study.records import TIMER_PARAM, Ceiling, Measurement, format_params
from ...suites import registry
from ...text import percent, sig_figs
from ...timing.clocks import pass_clock
from ..model.binding import binding, dram_bandwidth
from ..model.model import RooflineModel
from ..model.run import Run
from ..model.selection import select_ceilings
from .axes import X_LABEL, Scale, limits, scale_for
from .plot import DISTURBED, OVER_LIMIT_COLOR, ceiling_classes, noise_mark, spare_colors
from .plotly_embed import INTERACTIVE_CLASS, PLOTLY_MISSING, SWITCH_SCRIPT, PlotlyFigures, data_link, plotly_available

__all__ = [
    "LINE_SAMPLES",
    "LOG_TICKS",
    "SOURCES",
    "roofline_figure",
    "figure_data",
    "measurement_hover",
    "ceiling_hover",
    "ceiling_segment",
    "drawn_measurements",
    "point_series",
    "view_buttons",
    "axes_layout",
    "interactive_roofline",
]

#: Points per ceiling line (log-spaced): where a hover can land on it.
LINE_SAMPLES = 24
#: The ceilings' sources, in the order of the view buttons.
SOURCES: Tuple[str, ...] = ("measured", "theoretical")
#: The ticks of both log axes, as in the static figure (:func:`~.axes.setup_axes`): each decade labelled
#: at full size with a long tick and a grid line; Plotly's ticks between decades (its 2 and 5, where the
#: axis spans few decades) labelled in small digits (``minorloglabels``, three quarters of the decade
#: labels' size); a short unlabelled minor tick and a fainter grid line at every digit. Zoomed within
#: a decade, Plotly labels the ticks in full.
LOG_TICKS: Dict[str, Any] = {
    "ticks": "outside",
    "ticklen": 7,
    "tickfont": {"size": 12},
    "minorloglabels": "small digits",
    "showgrid": True,
    "gridcolor": "#d9d9d9",
    "minor": {"dtick": "D1", "ticks": "outside", "ticklen": 3, "showgrid": True, "gridcolor": "#f0f0f0"},
}
_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "triangle-down", "cross", "star", "pentagon")


def drawn_measurements(measurements: Sequence[Measurement]) -> List[Tuple[int, Measurement]]:
    """The measurements the figure draws, with their index in the run: valid ones with FLOPs (zero
    intensity has no place on a log axis) that their suite draws
    (:func:`~apple_roofline.suites.registry.drawn`: STREAM's only above their physical limit), as in
    :mod:`.plot`."""
    return [(i, m) for i, m in enumerate(measurements) if m.valid and m.flops > 0 and registry.drawn(m)]


def _br(lines: Sequence[str]) -> str:
    return "<br>".join(html.escape(ln) for ln in lines)


def ceiling_hover(c: Ceiling) -> List[str]:
    """The hover lines of a ceiling: name, source, value, where it came from, working sets of a level."""
    lines = [f"{c.name} ({c.source}): {sig_figs(c.value)} {c.unit}", f"from {c.from_}"]
    if c.working_set is not None:
        lines.append(f"working sets {c.working_set[0]:,} to {c.working_set[1]:,} bytes")
    return lines


def measurement_hover(m: Measurement, run: Run) -> List[str]:
    """The hover lines of a measurement: kernel and parameters; GFLOP/s, GB/s, FLOP/B; samples; the
    clock it ran at; the one roof that binds it with the share of it reached, or why it lies above
    every roof (:func:`~.binding.binding`); validation; provenance (suite, timer, tool, run)."""
    params = format_params(m.params)
    clock = pass_clock(m.params)
    lines = [
        f"{m.label}" + (f" ({params})" if params else ""),
        f"{sig_figs(m.gflops)} GFLOP/s, {sig_figs(m.gbps)} GB/s, {sig_figs(m.intensity)} FLOP/B",
        f"median {sig_figs(m.median_s * 1e6)} µs of {m.summary.n} samples, CV {percent(m.cv)}",
        f"clock: {sig_figs(clock)} MHz" if clock is not None else "clock: not recorded",
    ]
    b = binding(m, run.ceilings)
    if b is not None:
        lines.append(b.text)
    if m.over_limit is not None:
        lines.append(f"above its physical limit: {m.over_limit.text}; no ceiling, no level")
    lines.append(f"validation: {m.validation or ('passed' if m.valid else 'failed')}")
    timer = m.params.get(TIMER_PARAM)
    lines.append(
        f"provenance: {m.suite} suite"
        + (f", {timer} timer" if timer else "")
        + f"; {run.tool.name} {run.tool.version}, run of {run.created} on {run.device_name}"
    )
    return lines


def ceiling_segment(c: Ceiling, ceilings: Sequence[Ceiling], xlo: float, xhi: float) -> Tuple[float, float]:
    """Where ceiling ``c``'s line runs on the x axis (FLOP/byte): a bandwidth from ``xlo`` to where
    it meets the highest compute ceiling of its source; a compute ceiling from its ridge point against
    the DRAM bandwidth of its source (:func:`~.binding.dram_bandwidth`) to ``xhi``; each clipped to
    ``[xlo, xhi]``."""
    if c.kind == "bandwidth":
        tops = [t.value for t in ceilings if t.kind == "compute" and t.source == c.source] or [
            t.value for t in ceilings if t.kind == "compute"
        ]
        end = max(tops) / c.value if tops else xhi
        return xlo, min(max(end, xlo * 1.01), xhi)
    bw = dram_bandwidth(ceilings, c.source)
    start = c.value / bw.value if bw is not None else xlo
    return min(max(start, xlo), xhi / 1.01), xhi


def _line(c: Ceiling, ceilings: Sequence[Ceiling], xlo: float, xhi: float) -> Tuple[List[float], List[float]]:
    a, b = ceiling_segment(c, ceilings, xlo, xhi)
    xs = [a * (b / a) ** (k / (LINE_SAMPLES - 1)) for k in range(LINE_SAMPLES)]
    return xs, [c.value * x if c.kind == "bandwidth" else c.value for x in xs]


def _ceiling_traces(
    model: RooflineModel, shown: Sequence[Ceiling], xlo: float, xhi: float, scale: Scale
) -> List[Dict[str, Any]]:
    bws, comps = ceiling_classes(list(shown))
    color = {cls.name: cls.color for cls in bws + comps}
    traces: List[Dict[str, Any]] = []
    ridges = model.ridge_points("measured") if model.has("bandwidth", "measured") else {}
    order = sorted(shown, key=lambda c: (c.source != "measured", c.is_level, c.kind != "bandwidth", -c.value))
    for c in order:
        xs, ys = _line(c, shown, xlo, xhi)
        hover = _br(ceiling_hover(c))
        texts = [hover] * len(xs)
        ridge = ridges.get(c.name) if c.kind == "compute" and c.source == "measured" else None
        if ridge is not None:
            texts[0] = hover + "<br>" + html.escape(f"ridge point {sig_figs(ridge)} FLOP/B")
        group = "levels" if c.is_level else c.source
        title = {
            "levels": "Cache levels (cache-aware roofline)",
            "measured": "Measured ceilings",
            "theoretical": "Theoretical ceilings",
        }[group]
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers" if ridge is not None else "lines",
                "x": xs,
                "y": [scale.y(y) for y in ys],
                "legendgroup": group,
                "name": f"{c.name} {scale.bandwidth(c.value) if c.kind == 'bandwidth' else scale.rate(c.value)}"
                + noise_mark(c),
                "legendgrouptitle": {"text": title},
                "line": {
                    "color": color[c.name],
                    "width": 1.6 if c.is_level else 2.4,
                    "dash": ("dashdot" if c.noisy else "solid") if c.source == "measured" else "dash",
                },
                "marker": {"size": [9] + [0] * (len(xs) - 1), "color": color[c.name]},
                "hovertext": texts,
                "hoverinfo": "text",
                "meta": {
                    "role": "ceiling",
                    "source": c.source,
                    "kind": c.kind,
                    "name": c.name,
                    "level": c.is_level,
                    "value": c.value,
                    "ridge": ridge,
                    "noisy": c.noisy,
                },
            }
        )
    return traces


def point_series(
    measurements: Sequence[Measurement], drawn: Sequence[Tuple[int, Measurement]]
) -> Dict[Tuple[str, ...], List[Tuple[int, Measurement]]]:
    """The point traces of the figure: ``drawn`` (:func:`drawn_measurements` of ``measurements``)
    by series, in the order first drawn: ``("curve", suite, kernel, dtype)`` for each kernel of a suite
    whose points lie on curves (:func:`~apple_roofline.suites.registry.curves`: the sweep's; a line,
    as in :mod:`.plot`), ``("suite", name)`` for each other suite, and last ``("disturbed",)``, the
    points a suite's own check flags (:func:`~apple_roofline.suites.registry.disturbed`: gemm's
    ladder), apart from the valid ones."""
    disturbed = registry.disturbed(measurements)
    series: Dict[Tuple[str, ...], List[Tuple[int, Measurement]]] = {}
    for i, m in drawn:
        key = ("curve", m.suite, m.kernel, m.dtype) if registry.curves(m.suite) else ("suite", m.suite)
        series.setdefault(key, []).append((i, m))
    flagged = [(i, m) for i, m in drawn if i in disturbed]
    out = {k: [(i, m) for i, m in v if i not in disturbed] for k, v in series.items()}
    out = {k: v for k, v in out.items() if v}
    if flagged:
        out[("disturbed",)] = flagged
    return out


def _point_traces(
    run: Run, drawn: Sequence[Tuple[int, Measurement]], colors: Dict[str, str], scale: Scale
) -> List[Dict[str, Any]]:
    """One trace per :func:`point_series`: a curve's points (a sweep kernel's) joined by a line in a colour no
    ceiling has (:func:`~.plot.spare_colors`), another suite's coloured by their ceiling class, the
    disturbed GEMM sizes hollow and grey; a point above its physical limit an open cross in
    :data:`~.plot.OVER_LIMIT_COLOR` in its series."""
    spare = spare_colors(set(colors.values()))
    traces = []
    for k, (key, items) in enumerate(point_series(run.measurements, drawn).items()):
        own = spare[k % len(spare)]
        symbol = _SYMBOLS[k % len(_SYMBOLS)]
        line = {"width": 0.6, "color": "white"}
        trace: Dict[str, Any] = {"type": "scatter", "mode": "markers"}
        if key[0] == "curve":
            items = sorted(items, key=lambda it: it[1].intensity)
            name = f"{key[1]} {key[2]} ({key[3]}, {len(items)})"
            meta = {"suite": key[1], "kernel": key[2], "dtype": key[3]}
            trace.update(mode="lines+markers", line={"color": own, "width": 1.6})
            fills = [own] * len(items)
        elif key[0] == "disturbed":
            series = registry.disturbed(run.measurements)[items[0][0]]
            name, meta = f"{series} ({len(items)})", {"suite": items[0][1].suite, "flag": "disturbed"}
            symbol, fills, line = "circle-open", [DISTURBED] * len(items), {"width": 1.4, "color": DISTURBED}
        else:
            name, meta = f"{key[1]} ({len(items)})", {"suite": key[1]}
            fills = [colors.get(m.ceiling_class or "", own) for _i, m in items]
        over = [m.over_limit is not None for _i, m in items]
        trace.update(
            {
                "name": name,
                "legendgroup": "suites",
                "legendgrouptitle": {"text": "Suites"},
                "x": [m.intensity for _i, m in items],
                "y": [scale.y(m.gflops) for _i, m in items],
                "marker": {
                    "symbol": ["x-open" if o else symbol for o in over],
                    "size": 9,
                    "color": [OVER_LIMIT_COLOR if o else f for o, f in zip(over, fills)],
                    "line": line,
                },
                "hovertext": [_br(measurement_hover(m, run)) for _i, m in items],
                "hoverinfo": "text",
                "customdata": [i for i, _m in items],
                "meta": {"role": "points", **meta},
            }
        )
        traces.append(trace)
    return traces


def view_buttons(traces: Sequence[Dict[str, Any]]) -> Tuple[List[Dict[str, Any]], int]:
    """The buttons that switch the figure's ceilings (one per view: a source, and DRAM or
    cache-aware where a trace is a cache level), each setting every trace's ``visible``; and the
    index of the view shown first (measured, cache-aware where there are levels). A source without
    a DRAM bandwidth of its own shows the measured one in its view."""
    metas = [t["meta"] for t in traces]
    sources = [s for s in SOURCES if any(m["role"] == "ceiling" and m["source"] == s for m in metas)]
    levels = any(m.get("level") for m in metas)
    own_bw = {
        s: any(
            m["role"] == "ceiling" and m["source"] == s and m["kind"] == "bandwidth" and not m["level"] for m in metas
        )
        for s in sources
    }
    buttons: List[Dict[str, Any]] = []
    first = 0
    for source in sources:
        for aware in (False, True) if levels else (False,):

            def shown(m: Dict[str, Any]) -> bool:
                if m["role"] != "ceiling":
                    return True
                if m["level"]:
                    return aware and m["source"] == source
                bw_here = m["source"] == source or (m["kind"] == "bandwidth" and not own_bw[source])
                return bool(bw_here)

            label = f"{source.capitalize()} ceilings" + (
                (", cache-aware" if aware else ", DRAM roofline") if levels else ""
            )
            if source == "measured" and (aware or not levels):
                first = len(buttons)
            buttons.append({"label": label, "method": "restyle", "args": [{"visible": [shown(m) for m in metas]}]})
    return buttons, first


def roofline_figure(run: Run, model: RooflineModel, ceilings: Union[str, Sequence[str]] = "default") -> Dict[str, Any]:
    """The interactive roofline of ``run`` (module docstring) as a Plotly figure dict, the
    ``ceilings`` chosen as :func:`~.selection.select_ceilings` (``model`` is the run's).

    Raises:
        ValueError: an unknown ceiling name in ``ceilings``.
    """
    shown = select_ceilings(model, ceilings)
    drawn = drawn_measurements(run.measurements)
    tops = [c.value for c in shown if c.kind == "compute"]
    ridges = [r for r in model.ridge_points("measured").values()] if model.has("bandwidth", "measured") else []
    xlo, xhi, ylo, yhi = limits(
        [m.intensity for _i, m in drawn],
        [m.gflops for _i, m in drawn],
        ridges,
        tops,
        [c.value for c in shown if c.kind == "bandwidth"],
    )
    bws, comps = ceiling_classes(list(shown))
    colors = {cls.name: cls.color for cls in bws + comps}
    scale = scale_for(max(tops + [1.0]))
    traces = _ceiling_traces(model, shown, xlo, xhi, scale) + _point_traces(run, drawn, colors, scale)
    buttons, first = view_buttons(traces)
    for t, visible in zip(traces, buttons[first]["args"][0]["visible"] if buttons else []):
        t["visible"] = visible
    layout: Dict[str, Any] = {
        "title": {"text": html.escape(f"{run.device_name} ({run.backend})"), "x": 0.01, "xanchor": "left"},
        **axes_layout(scale, (xlo, xhi), (ylo, yhi), height=660, top=100),
        "updatemenus": [
            {
                "type": "buttons",
                "direction": "right",
                "buttons": buttons,
                "active": first,
                "x": 0.0,
                "xanchor": "left",
                "y": 1.02,
                "yanchor": "bottom",
                "showactive": True,
                "pad": {"r": 4, "t": 2},
            }
        ]
        if len(buttons) > 1
        else [],
    }
    return {"data": traces, "layout": layout}


def axes_layout(scale: Any, x: Tuple[float, float], y: Tuple[float, float], *, height: int, top: int) -> Dict[str, Any]:
    """The layout keys every interactive roofline shares: log axes over intensities ``x`` (FLOP/byte)
    and rates ``y`` (GFLOP/s, shown in ``scale``'s unit, :func:`~.axes.scale_for`) with the ticks of
    :data:`LOG_TICKS`, the legend, the hover, the figure's ``height`` and top margin ``top`` (pixels)."""
    return {
        "xaxis": {
            "type": "log",
            "title": {"text": X_LABEL},
            "range": [math.log10(x[0]), math.log10(x[1])],
            **LOG_TICKS,
        },
        "yaxis": {
            "type": "log",
            "title": {"text": scale.y_label},
            "range": [math.log10(scale.y(y[0])), math.log10(scale.y(y[1]))],
            **LOG_TICKS,
        },
        "meta": {"gflops_per_y": scale.factor},
        "legend": {"groupclick": "toggleitem", "font": {"size": 11}},
        "hovermode": "closest",
        "hoverlabel": {"align": "left", "font": {"size": 11}},
        "plot_bgcolor": "white",
        "height": height,
        "margin": {"t": top, "r": 20},
    }


def figure_data(figure: Dict[str, Any]) -> Dict[str, Any]:
    """The data behind a figure of :func:`roofline_figure` (or :mod:`.compare_interactive`), as a
    JSON-ready dict: each ceiling (source, kind, name, value) and each mark (its trace's meta, its
    intensity in FLOP/byte, GFLOP/s and hover text without markup)."""
    factor = float(figure["layout"].get("meta", {}).get("gflops_per_y", 1.0))
    out: Dict[str, Any] = {"ceilings": [], "marks": []}
    for t in figure["data"]:
        meta = dict(t["meta"])
        if meta["role"] == "ceiling":
            out["ceilings"].append(meta)
            continue
        texts: Sequence[Optional[str]] = t.get("hovertext") or [None] * len(t["x"])
        for x, y, text in zip(t["x"], t["y"], texts):
            if x is None or y is None:
                continue
            plain = html.unescape(text.replace("<br>", "\n")) if text else None
            out["marks"].append({**meta, "intensity": x, "gflops": y * factor, "text": plain})
    return out


def interactive_roofline(
    run: Run,
    model: RooflineModel,
    ceilings: Union[str, Sequence[str]] = "default",
    figures: Optional[PlotlyFigures] = None,
) -> str:
    """The HTML block of ``report.html``'s interactive roofline: the figure (:func:`roofline_figure`,
    written by ``figures``, a new :class:`~.plotly_embed.PlotlyFigures` by default: the page's
    first figure, carrying plotly.js), a line on how to use it, and a link to download its data
    (:func:`figure_data`, JSON); without Plotly, the one line that says how to get it.

    Raises:
        ValueError: an unknown ceiling name in ``ceilings``.
    """
    figure = roofline_figure(run, model, ceilings)
    payload = {
        "device": run.device_name,
        "backend": run.backend,
        "created": run.created,
        "tool": f"{run.tool.name} {run.tool.version}",
        **figure_data(figure),
    }
    link = data_link(payload, "roofline-data.json", "Download the figure's data (JSON)")
    if not plotly_available():
        return f'<p class="{INTERACTIVE_CLASS}-missing">{html.escape(PLOTLY_MISSING)} {link}</p>'
    div = (figures or PlotlyFigures()).div(figure, "roofline")
    return (
        f'{SWITCH_SCRIPT}<div class="{INTERACTIVE_CLASS}">{div}<p class="sub">Click a legend entry to hide or '
        "show a ceiling, cache level or suite; drag to zoom, double-click or the modebar's house to reset; the "
        "buttons above switch between measured and theoretical ceilings"
        + (" and between the DRAM and the cache-aware roofline" if any(c.is_level for c in run.ceilings) else "")
        + ". "
        + link
        + "</p></div>"
    )
