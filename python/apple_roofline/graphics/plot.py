"""The figures of a graphics study.

* :func:`plot_fill`: (a) the fill-rate roofline in pixels, GPixel/s shaded against F, (b) the same
  passes in fragment GFLOP/s, one solid line per mode and store action (opaque filled markers, blended
  hollow; store and discard in two colours), with the study's two measured ceilings as thin solid grey
  lines (the line styles of every figure: dashed is for theoretical values); (c) tile memory: shaded GPixel/s
  per render-target format at each F (opaque; store solid, discard hatched).
* :func:`plot_texture`: for each pattern, a heatmap of GTexel/s (texture size against fetches per
  pixel, nearest filtering) and a line plot of GTexel/s against the working set (one line per fetch
  count, nearest filled markers and bilinear hollow), with the cliffs as thin grey lines.

F = 0 sits left of F = 1 on the log-2 axis (at the position of F = 1/2) and is labelled 0. Invalid
passes are never drawn. Built on :mod:`apple_roofline.figures` (Agg canvas, lazy matplotlib).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Tuple

import numpy as np

from ..figures import MEASURED, PALETTE, Figure, add_note, legend, mpl, new_figure
from ..study.markdown import figure_status
from ..study.records import Measurement
from ..text import date_of, sig_figs
from .kernels import FORMATS
from .model import GraphicsStudy, cliffs, layers_text, shaded_rate, texel_rate
from .report import fill_ceilings

__all__ = ["plot_fill", "plot_texture", "FILL_FIGSIZE", "TEXTURE_FIGSIZE"]

FILL_FIGSIZE: Tuple[float, float] = (15.0, 5.0)
TEXTURE_FIGSIZE: Tuple[float, float] = (14.0, 9.0)
_STORE_COLORS = {"store": PALETTE[0], "discard": PALETTE[1]}
# every line here is measured, so solid (docs/design/model.md, "The roofline model and its views": the line
# styles of every figure); the second series of a pair takes hollow markers instead of a dashed line
_MODE_HOLLOW = {"opaque": False, "blended": True}


def _x(F: int) -> float:
    """The position of F on the log-2 axis (F = 0 at 1/2)."""
    return float(F) if F > 0 else 0.5


def _f_axis(ax: Any, fs: List[int]) -> None:
    ticker = mpl("matplotlib.ticker")
    ax.set_xscale("log", base=2)
    ax.set_xticks([_x(f) for f in fs])
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: "0" if v < 1 else f"{v:g}"))
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.set_xlabel("F: FMA iterations per pixel (32 FLOPs each)")
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.5)


def _title(study: GraphicsStudy, what: str) -> str:
    return f"{what}: {study.device_name} ({study.params.get('api', study.backend)}) — {date_of(study.created)}"


def plot_fill(study: GraphicsStudy) -> Figure:
    """Panels (a) to (c) of the module docstring, titled with the layers the passes drew
    (:func:`~.model.layers_text`: the overdraw asked for where a pass drew fewer).

    Raises:
        ValueError: the study has no valid fillrate or tilemem pass.
    """
    fill = [m for m in study.suite("fillrate") if m.valid]
    tile = [m for m in study.suite("tilemem") if m.valid]
    if not fill and not tile:
        raise ValueError(f"graphics study of {study.device_name} has no valid fill-rate or tile-memory pass")
    fig = new_figure(FILL_FIGSIZE)
    fig.subplots_adjust(left=0.05, right=0.99, top=0.84, bottom=0.2, wspace=0.28)
    axes = [fig.add_subplot(1, 3, i + 1) for i in range(3)]
    lines: Dict[Tuple[str, str], List[Measurement]] = {}
    for m in fill:
        lines.setdefault((str(m.params["mode"]), str(m.params["store"])), []).append(m)
    ceilings = fill_ceilings(study)
    for ax, value, unit, ceiling, short in (
        (axes[0], shaded_rate, "GPixel/s shaded", "fill rate", "GPixel/s"),
        (axes[1], lambda m: m.gflops, "fragment GFLOP/s", "fragment ALU", "GFLOP/s"),
    ):
        for (mode, store), ms in lines.items():
            ms = sorted(ms, key=lambda m: int(m.params["F"]))
            pts = [(_x(int(m.params["F"])), value(m)) for m in ms if value(m) > 0]
            if pts:
                color = _STORE_COLORS.get(store, PALETTE[2])
                ax.plot(
                    *zip(*pts),
                    linestyle=MEASURED,
                    marker="o",
                    markersize=4.5,
                    color=color,
                    markerfacecolor="white" if _MODE_HOLLOW.get(mode, False) else color,
                    label=f"{mode}, {store}",
                    gid=f"fill:{mode}:{store}:{unit}",
                )
        if ceiling in ceilings:
            v, _m = ceilings[ceiling]
            ax.axhline(v, color="#555555", linestyle=MEASURED, linewidth=0.8)
            ax.annotate(
                f"{ceiling} {sig_figs(v)} {short}",
                xy=(0.01, v),
                xycoords=("axes fraction", "data"),
                xytext=(0, 3),
                textcoords="offset points",
                fontsize=7.5,
                color="#333333",
            )
        if fill:
            _f_axis(ax, sorted({int(m.params["F"]) for m in fill}))
            _log_y(ax, [value(m) for m in fill if value(m) > 0])
            legend(ax, fontsize=7.5, loc="best")
        ax.set_ylabel(unit)
    axes[0].set_title("(a) fill-rate roofline: pixels", fontsize=10, loc="left")
    axes[1].set_title("(b) fill-rate roofline: ALU", fontsize=10, loc="left")
    _tile_panel(axes[2], tile)
    requested = study.params.get("overdraw")
    layers = layers_text(fill + tile, int(requested) if requested is not None else None)
    fig.suptitle(
        _title(study, "Fill rate and tile memory")
        + f" — {study.params.get('width')} x {study.params.get('height')}"
        + (f", {layers}" if layers else ""),
        fontsize=11,
    )
    return add_note(fig, figure_status(study, ("fillrate", "tilemem")))  # what a partial study lacks


def _log_y(ax: Any, values: List[float]) -> None:
    """A log y axis labelled in plain numbers: at 1, 2 and 5 per decade where the data spans under two
    decades (else one label a decade would leave a panel with one or two), at each power of ten otherwise."""
    ticker = mpl("matplotlib.ticker")
    ax.set_yscale("log")
    positive = [v for v in values if v > 0]
    narrow = bool(positive) and max(positive) / min(positive) < 100.0
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10.0, subs=(1.0, 2.0, 5.0) if narrow else (1.0,)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: sig_figs(v)))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def _tile_panel(ax: Any, tile: List[Measurement]) -> None:
    ax.set_title("(c) tile memory: render-target format (opaque)", fontsize=10, loc="left")
    if not tile:
        ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center", color="#808080")
        return
    fs = sorted({int(m.params["F"]) for m in tile})
    formats = [f for f in FORMATS if any(m.dtype == f for m in tile)]
    width = 0.8 / (2 * len(formats))
    for i, fmt in enumerate(formats):
        for j, store in enumerate(("store", "discard")):
            xs, ys = [], []
            for k, F in enumerate(fs):
                hit = [m for m in tile if m.dtype == fmt and m.params["F"] == F and m.params["store"] == store]
                if hit:
                    xs.append(k - 0.4 + (2 * i + j + 0.5) * width)
                    ys.append(shaded_rate(hit[0]))
            ax.bar(
                xs,
                ys,
                width=width,
                color=PALETTE[i + 2],
                hatch="//" if store == "discard" else None,
                edgecolor="white",
                label=f"{fmt} ({FORMATS[fmt].bytes_per_pixel} B)" if j == 0 else None,
                gid=f"tilemem:{fmt}:{store}",
            )
    ax.set_xticks(range(len(fs)))
    ax.set_xticklabels([f"F = {f}" for f in fs])
    _log_y(ax, [shaded_rate(m) for m in tile])
    ax.set_ylabel("GPixel/s shaded (hatched: discard)")
    legend(ax, fontsize=7.5, loc="best")
    ax.grid(True, axis="y", color="#d0d0d0", linewidth=0.5)


def plot_texture(study: GraphicsStudy) -> Figure:
    """A heatmap and a line plot per pattern (module docstring).

    Raises:
        ValueError: the study has no valid texture pass.
    """
    tex = [m for m in study.suite("texture") if m.valid]
    if not tex:
        raise ValueError(f"graphics study of {study.device_name} has no valid texture pass")
    patterns = sorted({str(m.params["pattern"]) for m in tex})
    fig = new_figure(TEXTURE_FIGSIZE)
    fig.subplots_adjust(left=0.07, right=0.97, top=0.9, bottom=0.08, hspace=0.35, wspace=0.22)
    found = cliffs(study.measurements)
    for row, pattern in enumerate(patterns):
        mine = [m for m in tex if m.params["pattern"] == pattern]
        fetches = sorted({int(m.params["fetches"]) for m in mine})
        _texture_heatmap(fig, fig.add_subplot(len(patterns), 2, 2 * row + 1), row, pattern, mine)
        ax = fig.add_subplot(len(patterns), 2, 2 * row + 2)
        _texture_lines(ax, pattern, mine, fetches)
        for c in found:
            if c.pattern == pattern:
                ax.axvline(c.working_set_bytes, color="#999999", linestyle=MEASURED, linewidth=0.8)
        _working_set_axes(ax, row, pattern)
    fig.suptitle(_title(study, "Texture cache"), fontsize=11)
    return add_note(fig, figure_status(study, ("texture",)))  # what a partial study lacks


def _texture_heatmap(fig: Figure, ax: Any, row: int, pattern: str, mine: List[Measurement]) -> None:
    """Panel (a) or (c): ``pattern``'s nearest-filtered GTexel/s, texture size against fetches per
    pixel, each cell labelled with its rate (white on the darker cells), with a colour bar."""
    sizes = sorted({int(m.params["size"]) for m in mine})
    fetches = sorted({int(m.params["fetches"]) for m in mine})
    heat = np.full((len(fetches), len(sizes)), np.nan)
    for m in mine:
        if m.params["filter"] == "nearest":
            heat[fetches.index(int(m.params["fetches"])), sizes.index(int(m.params["size"]))] = texel_rate(m)
    image = ax.imshow(heat, aspect="auto", cmap="viridis", origin="lower", gid=f"heatmap:{pattern}")
    for (i, j), v in np.ndenumerate(heat):
        if math.isfinite(v):
            ax.text(
                j,
                i,
                sig_figs(v),
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v < np.nanmax(heat) * 0.6 else "black",
            )
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"{s}²" for s in sizes], fontsize=8)
    ax.set_yticks(range(len(fetches)))
    ax.set_yticklabels([str(f) for f in fetches])
    ax.set_xlabel("texture size (RGBA8)")
    ax.set_ylabel("fetches per pixel")
    ax.set_title(f"({'ac'[row]}) {pattern}, nearest: GTexel/s", fontsize=10, loc="left")
    fig.colorbar(image, ax=ax, label="GTexel/s")


def _texture_lines(ax: Any, pattern: str, mine: List[Measurement], fetches: List[int]) -> None:
    """``pattern``'s GTexel/s against the working set: one line per fetch count and filter, a colour
    per fetch count, nearest filled markers and bilinear hollow."""
    for k, n in enumerate(fetches):
        for filter_, hollow in (("nearest", False), ("bilinear", True)):
            ms = sorted(
                (m for m in mine if m.params["filter"] == filter_ and m.params["fetches"] == n),
                key=lambda m: int(m.params["size"]),
            )
            if ms:
                ax.plot(
                    [int(m.params["working_set_bytes"]) for m in ms],
                    [texel_rate(m) for m in ms],
                    linestyle=MEASURED,
                    marker="o",
                    markersize=4.0,
                    color=PALETTE[k % len(PALETTE)],
                    markerfacecolor="white" if hollow else PALETTE[k % len(PALETTE)],
                    label=f"x{n} {filter_}",
                    gid=f"texture:{pattern}:{filter_}:{n}",
                )


def _working_set_axes(ax: Any, row: int, pattern: str) -> None:
    """Panel (b) or (d)'s axes: log-2 working set in bytes, log GTexel/s, title, grid and legend."""
    ticker = mpl("matplotlib.ticker")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: _bytes_label(v)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: sig_figs(v)))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("working set (texture bytes; grey lines: cliffs)")
    ax.set_ylabel("GTexel/s")
    ax.set_title(f"({'bd'[row]}) {pattern}: GTexel/s against the working set", fontsize=10, loc="left")
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.5)
    legend(ax, fontsize=7, ncol=2, loc="best")


def _bytes_label(v: float) -> str:
    for scale, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if v >= scale:
            return f"{v / scale:g} {unit}"
    return f"{v:g} B"
