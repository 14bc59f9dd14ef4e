"""The interactive figure of ``compare.html``: the runs' rooflines overlaid, with arrows for each move
from the baseline to the other runs (a Plotly figure dict, :mod:`.plotly_embed` writes it).

Like the static figure (:mod:`.compare_plot`): one colour per ceiling (:func:`~.plot.ceiling_classes`
over every run's shown ceilings), one line style per run (:data:`~.compare_plot.RUN_DASHES`); each
run's ceilings are one legend group (its title names the run), each ceiling a legend entry that a
click hides or shows, named with "noisy samples, CV N %" where noisy samples set it (:func:`~.plot.noise_mark`).
Each run's drawn measurements (:func:`~.interactive.drawn_measurements`) are one trace of dots, hovered like the
report's.

The arrows (Intel Advisor's comparison of two results): for every run but the baseline, one trace of arrows
from the baseline to that run — a measured compute ceiling from the baseline's ridge point (its value over its
run's DRAM bandwidth) to the run's, a measured bandwidth from its height at :data:`ARROW_X_FRACTION` along the
x axis to the run's, and a kernel both runs measured (the same label, FLOPs and bytes per launch) from the
baseline's dot to the run's. Against ``--baseline median`` an arrow starts at the median of the runs that have
the ceiling or kernel. A move too small to see (under :data:`MIN_MOVE`, relative, on both axes) gets no arrow.
Hovering either end of an arrow names both ends and the ratio. A published reference's figures
(:attr:`~.compare.Comparison.published`) are ceilings of their own legend group, labelled published, in
:data:`~.compare_plot.PUBLISHED_DASH`, their hover naming the figure and its source (``meta`` role
``"published"``). Performance in GFLOP/s or TFLOP/s as the
report's figure (``layout.meta["gflops_per_y"]``; the arrows' ``meta`` stays in GFLOP/s). Every trace carries
``meta`` for :func:`~.interactive.figure_data` and the page's tests: an arrow trace's ``meta["arrows"]`` lists
each arrow's ``what``, ``tail`` and ``head``.
"""

from __future__ import annotations

import html
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...study.records import Ceiling, Measurement
from ...text import sig_figs
from ..model.binding import dram_bandwidth
from ..model.run import Run
from ..model.selection import select_ceilings
from ..views.axes import Scale, limits, scale_for
from ..views.interactive import (
    LINE_SAMPLES,
    axes_layout,
    ceiling_hover,
    ceiling_segment,
    drawn_measurements,
    measurement_hover,
)
from ..views.plot import ceiling_classes, noise_mark
from ..views.tables import model_of
from .compare import BASELINE_MEDIAN, Comparison, PublishedLine
from .compare_plot import PUBLISHED_DASH, RUN_DASHES, plotly_dash, published_ceilings, shown_published

__all__ = ["ARROW_X_FRACTION", "MIN_MOVE", "compare_figure", "ceiling_anchor", "kernel_key"]

#: Where along the x axis (as a fraction of its log range) a bandwidth ceiling's arrow stands.
ARROW_X_FRACTION = 0.08
#: A move below this relative change on both axes draws no arrow.
MIN_MOVE = 1e-3
Point = Tuple[float, float]


def kernel_key(m: Measurement) -> Tuple[str, int, int]:
    """How a kernel is matched across runs: its label, FLOPs and bytes per launch."""
    return (m.label, m.flops, m.bytes)


def ceiling_anchor(c: Ceiling, ceilings: Sequence[Ceiling], x_bandwidth: float) -> Optional[Point]:
    """Where a ceiling's arrow ends (FLOP/byte, GFLOP/s): a compute ceiling's ridge point against the
    DRAM bandwidth of its run (None without one), a bandwidth at ``x_bandwidth``."""
    if c.kind == "bandwidth":
        return (x_bandwidth, c.value * x_bandwidth)
    bw = dram_bandwidth(ceilings, c.source)
    return (c.value / bw.value, c.value) if bw is not None else None


def _median_point(points: Sequence[Point]) -> Point:
    return (statistics.median(p[0] for p in points), statistics.median(p[1] for p in points))


def _moved(a: Point, b: Point) -> bool:
    return any(abs(q - p) > MIN_MOVE * abs(p) for p, q in zip(a, b))


def _anchors(c: Comparison, x_bw: float) -> Tuple[List[Dict[str, Point]], Dict[str, str]]:
    """Per run, the arrow end of each measured ceiling and drawn kernel by name; and each name's
    units text for the hover."""
    out: List[Dict[str, Point]] = []
    units: Dict[str, str] = {}
    for run in c.runs:
        ends: Dict[str, Point] = {}
        for ceiling in run.ceilings:
            if ceiling.source != "measured":
                continue
            end = ceiling_anchor(ceiling, run.ceilings, x_bw)
            if end is not None:
                ends[ceiling.name] = end
                units[ceiling.name] = ceiling.unit
        for _i, m in drawn_measurements(run.measurements):
            name = f"{m.label} ({m.flops:,} FLOP, {m.bytes:,} B)"
            if name not in ends or m.gflops > ends[name][1]:  # the best of repeats
                ends[name] = (m.intensity, m.gflops)
                units[name] = "GFLOP/s"
        out.append(ends)
    return out, units


def _arrow_text(tag: str, base: str, name: str, unit: str, tail: Point, head: Point) -> str:
    def value(p: Point) -> float:  # a bandwidth's value is its slope, GFLOP/s over FLOP/byte
        return p[1] / p[0] if unit == "GB/s" else p[1]

    ratio = value(head) / value(tail)
    return html.escape(
        f"{tag} vs {base}: {name}\n{sig_figs(value(tail))} → {sig_figs(value(head))} {unit} "
        f"({ratio:.2f}×), at {sig_figs(tail[0])} → {sig_figs(head[0])} FLOP/B"
    ).replace("\n", "<br>")


def _arrow_traces(c: Comparison, x_bw: float) -> List[Dict[str, Any]]:
    """Per run but the baseline, a trace of its ceilings' arrows and one of its kernels'."""
    ends, units = _anchors(c, x_bw)
    ceiling_names = {x.name for run in c.runs for x in run.ceilings}
    traces = []
    for r, (tag, run_ends) in enumerate(zip(c.tags, ends)):
        if c.baseline != BASELINE_MEDIAN and r == int(c.baseline):
            continue
        for what in ("ceilings", "kernels"):
            xs: List[Optional[float]] = []
            ys: List[Optional[float]] = []
            texts: List[str] = []
            sizes: List[float] = []
            arrows = []
            for name, head in run_ends.items():
                if (units[name] == "GFLOP/s" and name not in ceiling_names) != (what == "kernels"):
                    continue
                if c.baseline == BASELINE_MEDIAN:
                    have = [e[name] for e in ends if name in e]
                    tail: Optional[Point] = _median_point(have) if len(have) > 1 else None
                else:
                    tail = ends[int(c.baseline)].get(name)
                if tail is None or not _moved(tail, head):
                    continue
                text = _arrow_text(tag, c.baseline_name, name, units[name], tail, head)
                xs += [tail[0], head[0], None]
                ys += [tail[1], head[1], None]
                texts += [text, text, ""]
                sizes += [0.0, 12.0, 0.0]
                arrows.append({"what": name, "tail": list(tail), "head": list(head)})
            if not arrows:
                continue
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "x": xs,
                    "y": ys,
                    "name": f"{tag} vs {c.baseline_name}: {what} ({len(arrows)})",
                    "legendgroup": "arrows",
                    "legendgrouptitle": {"text": "Moves from the baseline"},
                    "connectgaps": False,
                    "line": {"color": "#222222" if what == "ceilings" else "#888888", "width": 1.4},
                    "marker": {
                        "symbol": "arrow",
                        "angleref": "previous",
                        "size": sizes,
                        "color": "#222222" if what == "ceilings" else "#888888",
                    },
                    "hovertext": texts,
                    "hoverinfo": "text",
                    "meta": {"role": "arrows", "run": tag, "what": what, "baseline": c.baseline_name, "arrows": arrows},
                }
            )
    return traces


@dataclass(frozen=True)
class _Frame:
    """The figure's extent and colours: its x range (FLOP/byte) and y range (GFLOP/s), the drawn
    unit, and each ceiling's colour (:func:`~.plot.ceiling_classes`)."""

    xlo: float
    xhi: float
    ylo: float
    yhi: float
    scale: Scale
    color: Dict[str, str]


def compare_figure(c: Comparison, *, theoretical: bool = False) -> Optional[Dict[str, Any]]:
    """The interactive comparison (module docstring) as a Plotly figure dict: the measured ceilings of
    every run (and the theoretical ones, dashed thinner, with ``theoretical``), the runs' kernels, the
    arrows; None where a run has no roofline (no bandwidth or no compute ceiling)."""
    models = [model_of(r) for r in c.runs]
    if any(m is None for m in models):
        return None
    shown = [tuple(x for x in select_ceilings(m) if theoretical or x.source == "measured") for m in models if m]
    pub = shown_published(c.published, theoretical)
    drawn = [drawn_measurements(r.measurements) for r in c.runs]
    frame = _frame(c, shown, pub, drawn)
    traces: List[Dict[str, Any]] = []
    for i, (tag, name, run, s) in enumerate(zip(c.tags, c.names(), c.runs, shown)):
        traces += _run_traces(frame, i, tag, name, run, s, drawn[i])
    traces += _published_traces(pub, c.reference, frame.color, frame.scale, (frame.xlo, frame.xhi))
    x_bw = frame.xlo * (frame.xhi / frame.xlo) ** ARROW_X_FRACTION
    arrows = _arrow_traces(c, x_bw)
    for t in arrows:
        t["y"] = [None if y is None else frame.scale.y(y) for y in t["y"]]
    traces += arrows
    layout = axes_layout(frame.scale, (frame.xlo, frame.xhi), (frame.ylo, frame.yhi), height=680, top=30)
    return {"data": traces, "layout": layout}


def _frame(
    c: Comparison,
    shown: Sequence[Tuple[Ceiling, ...]],
    pub: Sequence[PublishedLine],
    drawn: Sequence[Sequence[Tuple[int, Measurement]]],
) -> _Frame:
    """The extent of every run's shown ceilings, ridge points and drawn kernels and of the published
    lines (:func:`~.axes.limits`), in the unit of the highest compute ceiling, and the ceilings' colours."""
    every = [x for s in shown for x in s] + published_ceilings(pub)
    ridges = [
        e[0]
        for run, s in zip(c.runs, shown)
        for x in s
        if x.kind == "compute"
        for e in [ceiling_anchor(x, run.ceilings, 1.0)]
        if e is not None
    ]
    xlo, xhi, ylo, yhi = limits(
        [m.intensity for d in drawn for _i, m in d],
        [m.gflops for d in drawn for _i, m in d],
        ridges,
        [x.value for x in every if x.kind == "compute"],
        [x.value for x in every if x.kind == "bandwidth"],
    )
    scale = scale_for(max([x.value for x in every if x.kind == "compute"] + [1.0]))
    bws, comps = ceiling_classes(every)
    return _Frame(xlo, xhi, ylo, yhi, scale, {cls.name: cls.color for cls in bws + comps})


def _run_traces(
    frame: _Frame,
    i: int,
    tag: str,
    name: str,
    run: Run,
    shown: Sequence[Ceiling],
    drawn: Sequence[Tuple[int, Measurement]],
) -> List[Dict[str, Any]]:
    """The ``i``-th run's legend group (``tag``: ``name``): a trace per shown ceiling in its line style
    (measured ones first, bandwidths before compute, highest first), then one of its drawn kernels."""
    dash = plotly_dash(RUN_DASHES[i % len(RUN_DASHES)])
    group = {"legendgroup": f"run-{tag}", "legendgrouptitle": {"text": html.escape(f"{tag}: {name}")}}
    traces = [
        _ceiling_trace(frame, x, shown, (tag, name), group, dash)
        for x in sorted(shown, key=lambda x: (x.source != "measured", x.kind != "bandwidth", -x.value))
    ]
    if drawn:
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": f"{tag}: kernels ({len(drawn)})",
                **group,
                "x": [m.intensity for _j, m in drawn],
                "y": [frame.scale.y(m.gflops) for _j, m in drawn],
                "marker": {
                    "size": 7,
                    "symbol": ("circle", "diamond", "square", "triangle-up")[i % 4],
                    "color": [frame.color.get(m.ceiling_class or "", "#7f7f7f") for _j, m in drawn],
                    "line": {"width": 0.6, "color": "white"},
                },
                "hovertext": [
                    html.escape(f"{tag}: {name}\n" + "\n".join(measurement_hover(m, run))).replace("\n", "<br>")
                    for _j, m in drawn
                ],
                "hoverinfo": "text",
                "meta": {"role": "points", "run": tag},
            }
        )
    return traces


def _ceiling_trace(
    frame: _Frame,
    x: Ceiling,
    shown: Sequence[Ceiling],
    run: Tuple[str, str],
    group: Dict[str, Any],
    dash: str,
) -> Dict[str, Any]:
    """One ceiling of the run ``run`` (its tag and name) as a line of :data:`LINE_SAMPLES` points over
    its segment (:func:`~.interactive.ceiling_segment` against the run's ``shown`` ceilings), in the
    run's legend ``group`` and Plotly ``dash``."""
    tag, name = run
    a, b = ceiling_segment(x, shown, frame.xlo, frame.xhi)
    xs = [a * (b / a) ** (k / (LINE_SAMPLES - 1)) for k in range(LINE_SAMPLES)]
    hover = html.escape(f"{tag}: {name}\n" + "\n".join(ceiling_hover(x))).replace("\n", "<br>")
    return {
        "type": "scatter",
        "mode": "lines",
        "x": xs,
        "y": [frame.scale.y(x.value * v if x.kind == "bandwidth" else x.value) for v in xs],
        "name": f"{tag}: {x.name}" + (" (theoretical)" if x.source != "measured" else noise_mark(x)),
        **group,
        "line": {"color": frame.color[x.name], "dash": dash, "width": 2.2 if x.source == "measured" else 1.2},
        "opacity": 1.0 if x.source == "measured" else 0.55,
        "hovertext": [hover] * len(xs),
        "hoverinfo": "text",
        "meta": {
            "role": "ceiling",
            "run": tag,
            "source": x.source,
            "kind": x.kind,
            "name": x.name,
            "value": x.value,
            "noisy": x.noisy,
        },
    }


def _published_traces(
    pub: Sequence[PublishedLine], reference: str, color: Dict[str, str], scale: Any, xs: Tuple[float, float]
) -> List[Dict[str, Any]]:
    """One trace per published line (:func:`~.compare_plot.shown_published`), a legend group of
    their own: a bandwidth up to the highest published compute figure of its source, a compute figure
    from its ridge point against the highest published bandwidth of its source."""
    as_ceilings = published_ceilings(pub)
    group = {
        "legendgroup": "published",
        "legendgrouptitle": {"text": html.escape(f"published: {reference or 'reference'}, not measured by this tool")},
    }
    traces = []
    for p, x in zip(pub, as_ceilings):
        a, b = ceiling_segment(x, [q for q in as_ceilings if q.source == x.source], *xs)
        points = [a * (b / a) ** (k / (LINE_SAMPLES - 1)) for k in range(LINE_SAMPLES)]
        hover = html.escape(f"{p.label}: {sig_figs(p.value)} {p.unit}\n{p.note}").replace("\n", "<br>")
        traces.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": points,
                "y": [scale.y(p.value * v if p.kind == "bandwidth" else p.value) for v in points],
                "name": p.label + (" (theoretical)" if p.source != "measured" else ""),
                **group,
                "line": {"color": color[p.name], "dash": plotly_dash(PUBLISHED_DASH), "width": 1.4},
                "opacity": 1.0 if p.source == "measured" else 0.55,
                "hovertext": [hover] * len(points),
                "hoverinfo": "text",
                "meta": {
                    "role": "published",
                    "source": p.source,
                    "kind": p.kind,
                    "name": p.name,
                    "value": p.value,
                    "where": p.where,
                },
            }
        )
    return traces
