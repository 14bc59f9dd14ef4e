"""What every study's figures share: matplotlib imported lazily, figures on the Agg canvas, one
colour palette, atomic saving in PNG, SVG or PDF.

Figures are built with :class:`matplotlib.figure.Figure` and the Agg canvas, never pyplot, so
nothing touches matplotlib's global state; matplotlib is imported on first use, never when a
module of the package is imported.
"""

from __future__ import annotations

import importlib
import io
import math
import os
import textwrap
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

from .study.files import write_bytes_atomic

__all__ = [
    "DPI",
    "FORMATS",
    "PALETTE",
    "Figure",
    "Axes",
    "mpl",
    "new_figure",
    "check_suffix",
    "figure_bytes",
    "legend",
    "save_figure",
    "text_color",
    "plain_number",
    "log_ticks",
    "MEASURED",
    "THEORETICAL",
    "AT_CLOCK",
    "add_note",
    "NOTE_GID",
]

# matplotlib types, as Any: matplotlib is imported lazily, so that importing a module of the
# package (and type-checking it against any installed matplotlib) never loads it.
Figure = Any  # matplotlib.figure.Figure
Axes = Any  # matplotlib.axes.Axes

#: Resolution of saved raster images, dots per inch.
DPI: int = 150
#: File suffixes a figure can be saved as, and matplotlib's format names.
FORMATS: Dict[str, str] = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
#: Distinct colours, colour-blind-safe where the set allows: Okabe & Ito (yellow left out: too
#: light on white), then Paul Tol's muted scheme and darker tones, ordered so that neighbours in the
#: list differ clearly in hue or lightness (no two purples, blues or greens in a row). A figure takes
#: its series' colours from this list, so no two series of one figure share a colour; the roofline's
#: ceiling classes have their own fixed choice of these (:data:`apple_roofline.roofline.views.plot.CLASS_COLORS`).
PALETTE: Tuple[str, ...] = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#882255",
    "#332288",
    "#999933",
    "#AA4499",
    "#661100",
    "#44AA99",
    "#DDCC77",
    "#117733",
    "#6699CC",
    "#888888",
)


#: The line-style convention of every figure (docs/design/model.md, "The roofline model and its views"): a
#: measured value solid, a theoretical or published one (a vendor's peak, a documented cache size)
#: dashed, the theoretical value at the effective clock a kernel ran at dotted.
MEASURED = "-"
THEORETICAL = "--"
AT_CLOCK = ":"


def mpl(module: str) -> Any:
    """Import a matplotlib module on first use (``mpl("matplotlib.ticker")``)."""
    return importlib.import_module(module)


def new_figure(figsize: Tuple[float, float], dpi: int = 100) -> Figure:
    """A new :class:`matplotlib.figure.Figure` of ``figsize`` inches on the Agg canvas."""
    fig = mpl("matplotlib.figure").Figure(figsize=figsize, dpi=dpi)
    mpl("matplotlib.backends.backend_agg").FigureCanvasAgg(fig)
    return fig


def legend(ax: Axes, **kwargs: Any) -> None:
    """Draw ``ax``'s legend (``kwargs`` as :meth:`matplotlib.axes.Axes.legend`'s) where it has
    labelled artists; an axes whose series all had nothing to draw (every point of a study's
    extreme, non-positive rates left out) gets none, instead of matplotlib's warning."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kwargs)


def check_suffix(path: Union[str, "os.PathLike[str]"]) -> str:
    """The matplotlib format of ``path``'s suffix.

    Raises:
        ValueError: the suffix is not one of :data:`FORMATS` (the message lists them).
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"{os.fspath(path)}: cannot save a figure as {suffix or 'a file without suffix'!r}; "
            f"use one of {', '.join(sorted(FORMATS))}"
        )
    return FORMATS[suffix]


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """``fig`` rendered in ``fmt`` (``"png"`` at :data:`DPI`, ``"svg"``, ``"pdf"``), tightly cropped;
    SVG carries no date, so the same figure gives the same bytes."""
    buf = io.BytesIO()
    metadata: Dict[str, Any] = {"Date": None} if fmt == "svg" else {}
    fig.savefig(buf, format=fmt, dpi=DPI, bbox_inches="tight", pad_inches=0.15, metadata=metadata)
    return buf.getvalue()


def save_figure(fig: Figure, path: Union[str, "os.PathLike[str]"]) -> None:
    """Save ``fig`` to ``path`` atomically; the format comes from the suffix.

    ``.png`` (raster, 150 dpi), ``.svg`` or ``.pdf`` (vector); the image is rendered to memory, then
    written to a temporary file in the same directory and renamed over ``path``. The figure is not
    closed.

    Raises:
        ValueError: for any other suffix (nothing is written).
        OSError: if the file cannot be written.
    """
    write_bytes_atomic(path, figure_bytes(fig, check_suffix(path)))


#: The SVG id of the note :func:`add_note` draws (so that a test or a page can find it).
NOTE_GID = "figure-note"


def add_note(fig: Figure, note: Optional[str]) -> Figure:
    """Write ``note`` under everything ``fig`` holds (its axes, labels and a legend below them), in
    dark red and wrapped to the figure's width: what the figure lacks (a partial study's cases that
    were not measured). ``None`` or "" leaves ``fig`` as it is. Returns ``fig``."""
    if note:
        width = max(40, int(fig.get_figwidth() * 14))  # characters of 8-point text per line
        # a figure legend is anchored to the figure's edge, which the tight crop of figure_bytes moves
        # to the note's: pin it to where it is drawn now, so that the note stays below it
        for figure_legend in fig.legends:
            figure_legend.set_bbox_to_anchor((0, 0, 1, 1), transform=fig.transFigure)
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, from the figure's lower left
        fig.text(
            max(0.0, drawn.x0 / fig.get_figwidth()),
            drawn.y0 / fig.get_figheight() - 0.01,
            textwrap.fill(note, width),
            ha="left",
            va="top",
            fontsize=8,
            color="#A00000",
            gid=NOTE_GID,
        )
    return fig


def text_color(color: str) -> str:
    """``color`` darkened for text on white when it is light (sky blue, orange, sand)."""
    h = color.lstrip("#")
    if len(h) != 6:
        return color
    r, g, b = (int(h[i : i + 2], 16) / 255.0 for i in (0, 2, 4))
    if 0.2126 * r + 0.7152 * g + 0.0722 * b <= 0.45:
        return color
    return "#" + "".join(f"{int(round(255 * v * 0.68)):02x}" for v in (r, g, b))


def plain_number(v: float) -> str:
    """A tick label a person reads at a glance: ``"400"``, ``"1k"``, ``"2.5k"``, ``"10k"``, ``"3M"``,
    ``"0.05"`` (no powers of ten, no trailing zeros)."""
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:g}G"
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def log_ticks(axis: Any, lo: float, hi: float) -> None:
    """Readable ticks on a log10 ``axis`` (``ax.yaxis``) spanning ``lo``..``hi`` (> 0): each
    decade's 1, 2 and 5 labelled where the span is a few decades (every digit below about one
    decade, only the powers of ten above four), as :func:`plain_number`; minor ticks unlabelled.

    Raises:
        ValueError: ``lo`` or ``hi`` not positive.
    """
    if not (lo > 0 and hi > 0):
        raise ValueError(f"log axis limits must be positive, not {lo!r}..{hi!r}")
    ticker = mpl("matplotlib.ticker")
    decades = abs(math.log10(hi / lo))
    subs = (1.0,) if decades > 4.0 else (1.0, 2.0, 5.0) if decades > 1.0 else tuple(float(d) for d in range(1, 10))
    axis.set_major_locator(ticker.LogLocator(base=10.0, subs=subs, numticks=99))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: plain_number(v)))
    axis.set_minor_locator(ticker.LogLocator(base=10.0, subs=tuple(float(d) for d in range(1, 10)), numticks=99))
    axis.set_minor_formatter(ticker.NullFormatter())
