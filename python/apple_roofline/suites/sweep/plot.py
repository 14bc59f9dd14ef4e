"""The sweep figure: the M5 GPU roofline analysis's own view of the float4 versus scalar finding.

Two panels against F, the FMA iterations per work item (log 2 axis), one line per sweep kernel
(``vec4``: four cross-dependent 4-wide chains; ``scalar8``: eight independent scalar chains):

* left, compute: GFLOP/s of all lanes together, each lane's FLOPs counted (docs/design/measurement.md, "Counting
  FLOPs and bytes"), with the measured peak ceilings of the kernels' classes as thin solid lines
  (the line styles of every figure: :data:`~apple_roofline.figures.MEASURED`; "FP32 vector",
  "FP32 scalar ILP"; equal ones one grey line, :func:`.plot.equal_heights`; one set by noisy samples
  dash-dotted, :data:`.plot.NOISY_LINE`, its label saying so, :func:`.plot.noise_mark`) and
  the ratio of the two kernels at the largest F both reached, the number the article's "float4 is
  4x slower" is about;
* right, memory: effective GB/s (compulsory bytes / time), with the measured bandwidth ceiling: where
  each kernel leaves the bandwidth roof, it has turned compute-bound.

Each kernel takes the colour of its ceiling class in the roofline figure (:func:`.plot.class_colors`),
so ``vec4`` is drawn as the FP32 vector ceiling is. Both y axes have plain-number log ticks
(:func:`~apple_roofline.figures.log_ticks`). Each marker carries the gid of its measurement
(:func:`.plot.measurement_gid`); invalid measurements are never drawn.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ...figures import MEASURED, Figure, log_ticks, mpl, new_figure, text_color
from ...roofline.model.run import Run
from ...roofline.views.labels import Labels
from ...roofline.views.plot import NEUTRAL, NOISY_LINE, class_colors, equal_heights, measurement_gid, noise_mark
from ...roofline.views.tables import model_of
from ...study.records import Ceiling, Measurement
from ...text import sig_figs
from .suite import sweep_compute_class

__all__ = ["plot_sweep", "sweep_figure", "sweep_series", "SWEEP_FIGSIZE", "COMPUTE_Y_LABEL"]

#: Figure size in inches (width, height).
SWEEP_FIGSIZE: Tuple[float, float] = (11.0, 4.8)
_MARKERS = ("o", "s", "^", "v")
#: The compute panel's y label: a rate of the whole kernel, each lane's FLOPs counted.
COMPUTE_Y_LABEL = "GFLOP/s (FLOPs counted per lane)"


def sweep_series(measurements: Sequence[Measurement]) -> Dict[str, List[Tuple[int, Measurement]]]:
    """Valid sweep measurements by ``"<kernel> (<dtype>)"``, each as ``(index, measurement)``
    sorted by F; indices are positions in ``measurements``."""
    out: Dict[str, List[Tuple[int, Measurement]]] = {}
    for i, m in enumerate(measurements):
        if m.suite == "sweep" and m.valid and isinstance(m.params.get("F"), int):
            out.setdefault(f"{m.kernel} ({m.dtype})", []).append((i, m))
    for ms in out.values():
        ms.sort(key=lambda im: int(im[1].params["F"]))
    return out


def _ratio_note(series: Dict[str, List[Tuple[int, Measurement]]]) -> Optional[str]:
    """``"scalar8 / vec4 at F = 1024: 1.50x"``: the scalar kernel over the vector one at the largest
    F both were measured at (None without both)."""
    vec = next((ms for name, ms in series.items() if name.startswith("vec")), None)
    sca = next((ms for name, ms in series.items() if name.startswith("scalar")), None)
    if not vec or not sca:
        return None
    fv = {int(m.params["F"]): m for _i, m in vec}
    common = [(int(m.params["F"]), m) for _i, m in sca if int(m.params["F"]) in fv]
    if not common:
        return None
    f, s = common[-1]
    v = fv[f]
    return (
        f"at F = {f}: {s.kernel} {sig_figs(s.gflops)} GFLOP/s, {v.kernel} {sig_figs(v.gflops)} GFLOP/s, "
        f"ratio {s.gflops / v.gflops:.2f}x (FLOPs counted per lane)"
    )


def plot_sweep(
    measurements: Sequence[Measurement], *, ceilings: Sequence[Ceiling] = (), title: Optional[str] = None
) -> Figure:
    """Draw the sweep measurements of a run (module docstring).

    Args:
        measurements: a run's measurements (the valid ``sweep`` ones are drawn).
        ceilings: the run's ceilings; the measured ones of the kernels' classes and the highest
            measured bandwidth that is not a cache level's are drawn as references.
        title: what the figure is of (``"<device> (<backend>) — <date>"``).

    Returns:
        A new :class:`matplotlib.figure.Figure` on the Agg canvas.

    Raises:
        ValueError: there is no valid sweep measurement.
    """
    series = sweep_series(measurements)
    if not series:
        raise ValueError("no valid sweep measurements to draw")
    fig = new_figure(SWEEP_FIGSIZE)
    fig.subplots_adjust(left=0.07, right=0.98, top=0.86, bottom=0.19, wspace=0.22)
    compute_ax, memory_ax = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    classes = {name: sweep_compute_class(ms[0][1].kernel, ms[0][1].dtype) for name, ms in series.items()}
    colors = class_colors(list(dict.fromkeys(classes.values())))
    labels = Labels(fig)
    for k, (name, ms) in enumerate(series.items()):
        style = (colors[classes[name]], _MARKERS[k % len(_MARKERS)])
        _draw_kernel(compute_ax, name, ms, style, labels, memory=False)
        _draw_kernel(memory_ax, name, ms, style, labels, memory=True)
    _draw_references((compute_ax, memory_ax), ceilings, list(classes.values()), colors, labels)
    fs = sorted({int(m.params["F"]) for ms in series.values() for _i, m in ms})
    _finish_axes(compute_ax, fs, COMPUTE_Y_LABEL, "Compute: GFLOP/s against F")
    _finish_axes(memory_ax, fs, "Effective GB/s (compulsory bytes / time)", "Memory: effective GB/s against F")
    handles, names = compute_ax.get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=8.5, frameon=False)
    fig.suptitle(f"Arithmetic-intensity sweep: {title}" if title else "Arithmetic-intensity sweep", fontsize=12)
    note = _ratio_note(series)
    if note:
        _draw_note(compute_ax, note)
    for ax in (compute_ax, memory_ax):
        ax.get_xlim()  # settle the autoscaled limits before measuring where labels go
    labels.layout()
    return fig


def _draw_kernel(
    ax: Any, name: str, ms: Sequence[Tuple[int, Measurement]], style: Tuple[str, str], labels: Labels, *, memory: bool
) -> None:
    """Sweep kernel ``name``'s points ``ms`` (``(index, measurement)`` by F) against F in ``ax``: its
    GB/s where ``memory``, else its GFLOP/s, as a line with a marker per point in ``style`` (colour,
    marker); each marker carries its measurement's gid (with ``-gbps`` in the memory panel)."""
    color, marker = style
    f = [int(m.params["F"]) for _i, m in ms]
    values = [m.gbps if memory else m.gflops for _i, m in ms]
    ax.plot(f, values, color=color, linestyle=MEASURED, linewidth=1.5, zorder=3, label=f"{name}", gid=f"sweep:{name}")
    for (i, _m), x, y in zip(ms, f, values):
        ax.plot(
            [x],
            [y],
            linestyle="none",
            marker=marker,
            markersize=5,
            color=color,
            markeredgecolor="white",
            markeredgewidth=0.5,
            zorder=4,
            gid=measurement_gid(i) + ("-gbps" if memory else ""),
        )
    labels.add_markers(ax, f, values, 5.0)


def _draw_references(
    axes: Tuple[Any, Any],
    ceilings: Sequence[Ceiling],
    kernel_classes: Sequence[str],
    colors: Mapping[str, str],
    labels: Labels,
) -> None:
    """The reference lines: in the compute panel the measured ceilings of the kernels' classes, in the
    memory panel the highest measured bandwidth that is not a cache level's (DRAM's); labelled where
    the curves are not, at the left of the compute panel (the curves rise to the right), at the right
    of the memory panel (they fall to the right)."""
    compute_ax, memory_ax = axes
    measured = {c.name: c for c in ceilings if c.source == "measured"}
    refs = [measured[cls] for cls in dict.fromkeys(kernel_classes) if cls in measured]
    _references(compute_ax, [(c, colors[c.name]) for c in refs], "GFLOP/s", labels, right=False)
    bandwidth = max(
        (c for c in ceilings if c.kind == "bandwidth" and c.source == "measured" and not c.is_level),
        key=lambda c: c.value,
        default=None,
    )
    if bandwidth is not None:
        _references(memory_ax, [(bandwidth, "#000000")], "GB/s", labels, right=True)


def _finish_axes(ax: Any, fs: Sequence[int], ylabel: str, heading: str) -> None:
    """A panel's axes: F on a log 2 axis ticked at each F measured, ``ylabel`` on a log axis with
    plain-number ticks and room above the reference lines for their labels, ``heading``, a grid."""
    ticker = mpl("matplotlib.ticker")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(fs)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("F: FMA iterations per work item")
    ax.set_ylabel(ylabel)
    ax.set_title(heading, fontsize=10, loc="left")
    ax.grid(True, which="major", color="#c8c8c8", linewidth=0.5)
    ax.set_axisbelow(True)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 1.8)  # room above the reference lines for their labels
    log_ticks(ax.yaxis, lo, hi * 1.8)


def _draw_note(ax: Any, note: str) -> None:
    """The ratio of the two kernels (:func:`_ratio_note`) in the compute panel's lower right corner."""
    ax.text(
        0.98,
        0.03,
        note.replace(", ratio", ",\nratio"),
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        color="#333333",
        gid="sweep-ratio",
        bbox=dict(boxstyle="round,pad=0.3", facecolor="white", edgecolor="#cccccc"),
    )


#: Measured ceilings closer than this (relative) share one label in the sweep figure.
LABEL_RTOL = 0.10


def _references(ax: Any, refs: List[Tuple[Ceiling, str]], unit: str, labels: Labels, *, right: bool) -> None:
    """Thin solid horizontal lines of measured ceilings (ceiling, colour; dash-dotted and marked in the
    label where set by noisy samples, :func:`.plot.noise_mark`), labelled from their
    right or left end, above or below alternately, slid along the line until clear of the markers
    and of each other (``labels``); lines within 1 % of each other are one grey line with one label
    naming them all (:func:`.plot.equal_heights`), and lines within :data:`LABEL_RTOL` of each other
    keep their colours but share one label that gives each value (two labels a few points apart
    cannot both find room beside the curves)."""
    for k, group in enumerate(equal_heights(refs, lambda r: r[0].value, LABEL_RTOL)):
        name, value, color = group[0][0].name, group[0][0].value, group[0][1]
        same = group[-1][0].value >= value * (1.0 - 0.01)
        color = color if len(group) == 1 else NEUTRAL
        for c, own in group:
            line = color if same else own
            style = NOISY_LINE if c.noisy else MEASURED
            ax.axhline(c.value, color=line, linestyle=style, linewidth=1.0, zorder=2, gid=f"reference:{c.name}")
        if same:
            names = " = ".join(c.name + noise_mark(c) for c, _own in group)
            text = f"{names} ceiling (measured) {sig_figs(value)} {unit}"
        else:
            values = ", ".join(f"{c.name} {sig_figs(c.value)}{noise_mark(c)}" for c, _own in group)
            text = f"{values} {unit}: ceilings (measured)"
        above = k % 2 == 0  # alternate sides, so labels of close lines do not meet
        ann = ax.annotate(
            text,
            xy=(1.0 if right else 0.0, value),
            xycoords=("axes fraction", "data"),
            xytext=(-4.0 if right else 4.0, 3.0 if above else -3.0),
            textcoords="offset points",
            ha="right" if right else "left",
            va="bottom" if above else "top",
            fontsize=7.5,
            color=text_color(color),
            bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85),
            zorder=5,
            gid=f"referencelabel:{name}",
        )
        sides = ((3.0, "bottom"), (-3.0, "top")) if above else ((-3.0, "top"), (3.0, "bottom"))
        ha, step = ("right", -1.0) if right else ("left", 1.0)
        labels.add_free(
            ann, [((step * (4.0 + 20.0 * j), dy), ha, va) for j in range(14) for dy, va in sides], order=(0.0, -value)
        )


def sweep_figure(run: Run) -> Optional[Figure]:
    """The sweep figure of ``run`` (:func:`plot_sweep`, titled as its roofline is), or None without
    valid sweep points: the suite's own figure (its :attr:`~apple_roofline.suites.registry.SuiteSpec.figure`)."""
    if not sweep_series(run.measurements):
        return None
    model = model_of(run)
    title = model.title if model is not None and model.title else run.device_name
    return plot_sweep(run.measurements, ceilings=run.ceilings, title=title)
