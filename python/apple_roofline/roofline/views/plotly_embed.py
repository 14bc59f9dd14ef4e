"""Plotly figures inside the self-contained HTML pages (``report.html``, ``compare.html``).

A figure is a plain dict (Plotly's JSON figure: ``data``, ``layout``) built by :mod:`.interactive`
or :mod:`.compare_interactive`; :class:`PlotlyFigures` writes each as a ``<div>`` with its script.
The first figure of a page carries the one inlined copy of plotly.js, every later one refers to it,
so a page works offline (no CDN, no network request) however many figures it holds. Plotly is a
dependency of the package; where an installation lacks it all the same, the page says so in one line
(:data:`PLOTLY_MISSING`) and shows the static SVG figures alone.

The static SVG stays on the page for print and for a browser with scripts off: :data:`SWITCH_STYLE`
hides it on screen once a script has marked the page (:data:`SWITCH_SCRIPT`), and hides the
interactive figure in print. Each page embeds the data behind its figures as a JSON file a reader
downloads from a ``data:`` link (:func:`data_link`).
"""

from __future__ import annotations

import base64
import html
import importlib.util
import json
from typing import Any, Dict, Mapping

__all__ = [
    "PLOTLY_MISSING",
    "SWITCH_STYLE",
    "SWITCH_SCRIPT",
    "STATIC_CLASS",
    "INTERACTIVE_CLASS",
    "CONFIG",
    "plotly_available",
    "PlotlyFigures",
    "data_link",
    "static_block",
]

#: The line a page shows where the interactive figure would be, when Plotly (a dependency) is missing.
PLOTLY_MISSING = (
    "The interactive figure needs Plotly, a dependency of apple_roofline missing from this installation: "
    "pip install 'plotly>=5.11' (the static figure below shows the same ceilings and measurements)."
)
#: The class of the block holding a static SVG figure that has an interactive twin.
STATIC_CLASS = "static-figure"
#: The class of the block holding an interactive figure.
INTERACTIVE_CLASS = "interactive-figure"
#: Marks the page as scripted (``<html class="js">``), so that :data:`SWITCH_STYLE` shows the
#: interactive figure on screen and the static one in print.
SWITCH_SCRIPT = "<script>document.documentElement.classList.add('js');</script>"
#: On screen with scripts: the interactive figure; in print or without scripts: the static one.
SWITCH_STYLE = (
    f"html.js .{STATIC_CLASS} {{ display: none; }} html:not(.js) .{INTERACTIVE_CLASS} {{ display: none; }}"
    f" @media print {{ html.js .{STATIC_CLASS} {{ display: block; }} .{INTERACTIVE_CLASS} "
    "{ display: none; } }"
    f" .{INTERACTIVE_CLASS} {{ margin: 1em 0; }} a.data {{ font-size: 0.9em; }}"
)
#: Plotly's configuration: the modebar always shown (zoom, pan, reset axes, save as PNG), no logo,
#: no "share" button (it would upload to Plotly's site), no selection tools, scroll-wheel zoom.
CONFIG: Dict[str, Any] = {
    "displayModeBar": True,
    "displaylogo": False,
    "scrollZoom": True,
    "modeBarButtonsToRemove": ["sendChartToCloud", "sendDataToCloud", "select2d", "lasso2d"],
    "responsive": True,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def plotly_available() -> bool:
    """Whether Plotly can be imported (the optional ``interactive`` extra)."""
    return importlib.util.find_spec("plotly") is not None


class PlotlyFigures:
    """The Plotly figures of one page, written in order: the first carries plotly.js inline, the
    others refer to it (module docstring)."""

    def __init__(self) -> None:
        self.count = 0

    def div(self, figure: Mapping[str, Any], div_id: str) -> str:
        """``figure`` (a Plotly figure dict) as an HTML ``<div id=div_id>`` and its script.

        Raises:
            ModuleNotFoundError: Plotly is not installed (check :func:`plotly_available` first).
            ValueError: Plotly rejects the figure (an unknown property).
        """
        import plotly.io as pio

        first = self.count == 0
        self.count += 1
        out: str = pio.to_html(
            dict(figure),
            include_plotlyjs=first,
            full_html=False,
            div_id=div_id,
            config=CONFIG,
            validate=True,
            include_mathjax=False,
        )
        return out


def data_link(payload: Mapping[str, Any], filename: str, text: str) -> str:
    """An ``<a download>`` whose ``data:`` URL holds ``payload`` as JSON (the data behind a figure,
    downloadable from the page without a server)."""
    blob = base64.b64encode(json.dumps(payload, indent=1, ensure_ascii=False).encode("utf-8")).decode("ascii")
    return (
        f'<a class="data" download="{html.escape(filename)}" '
        f'href="data:application/json;base64,{blob}">{html.escape(text)}</a>'
    )


def static_block(figure_html: str) -> str:
    """A static figure that has an interactive twin, wrapped so that :data:`SWITCH_STYLE` shows it in
    print and without scripts only."""
    return f'<div class="{STATIC_CLASS}">{figure_html}</div>'
