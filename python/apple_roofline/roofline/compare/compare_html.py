"""A comparison of runs as one self-contained HTML page (``apple-roofline compare -o compare.html``),
like ``report.html`` (:mod:`.html`): no server, no CDN, nothing fetched.

The page holds the runs (tag, line style, device, file), the interactive figure with the moves from
the baseline as arrows (:mod:`.compare_interactive`, where Plotly is installed, with a link to its
data), the overlaid rooflines (:mod:`.compare_plot`) as inline SVG with hover text on every ceiling
line and ridge point (the run, the ceiling's value and where it came from, its ratio to the
baseline) — shown in print and without scripts where the interactive figure is — then
:func:`~.compare.compare_tables`.
"""

from __future__ import annotations

import html
from typing import Dict, List

from ...figures import add_note, figure_bytes
from ...study.markdown import status_text
from ...text import sig_figs
from ..views.html import PAGE_STYLE, ceiling_tooltip, svg_with_tooltips, table_html
from ..views.interactive import figure_data
from ..views.plotly_embed import (
    INTERACTIVE_CLASS,
    PLOTLY_MISSING,
    SWITCH_SCRIPT,
    SWITCH_STYLE,
    PlotlyFigures,
    data_link,
    plotly_available,
    static_block,
)
from ..views.tables import model_of
from .compare import Comparison, baseline_value, ceiling_key, ceiling_values, compare_tables, partial_note, ratio_text
from .compare_interactive import compare_figure
from .compare_plot import PUBLISHED_DASH, RUN_DASHES, plot_compare, svg_dash

__all__ = ["compare_tooltips", "compare_html"]


def compare_tooltips(c: Comparison) -> Dict[str, str]:
    """Hover text by gid (:mod:`.compare_plot`'s ``<tag>:ceiling:<source>:<kind>:<name>`` and
    ``<tag>:ridge:<source>:<name>``): the run, the ceiling (:func:`~.html.ceiling_tooltip`) and its
    ratio to the baseline; a published line's (``published:ceiling:<source>:<kind>:<name>``) names the
    figure, its basis and its source."""
    _keys, values, _units = ceiling_values(c.runs)
    out: Dict[str, str] = {}
    for tag, name, run, vals in zip(c.tags, c.names(), c.runs, values):
        for ceiling in run.ceilings:
            key = ceiling_key(ceiling.source, ceiling.kind, ceiling.name)
            ratio = ratio_text(vals[key], baseline_value(values, key, c.baseline))
            text = f"{tag}: {name}\n{ceiling_tooltip(ceiling)}\n{ratio} of {c.baseline_name}"
            out[f"{tag.lower()}:ceiling:{ceiling.source}:{ceiling.kind}:{ceiling.name}"] = text
            out[f"{tag.lower()}:ridge:{ceiling.source}:{ceiling.name}"] = text
    for p in c.published:
        out[f"published:ceiling:{p.source}:{p.kind}:{p.name}"] = f"{p.label}: {sig_figs(p.value)} {p.unit}\n{p.note}"
    return out


def compare_html(c: Comparison, *, theoretical: bool = False) -> str:
    """The comparison as one self-contained HTML page (str): the title, the runs with their
    colours, the overlaid rooflines (measured ceilings, and the theoretical ones with
    ``theoretical``) with hover text (:func:`compare_tooltips`), and the comparison's tables. A run
    without a roofline (no bandwidth or no compute ceiling) is named where the figure would be.

    Raises:
        ValueError: from :func:`~.compare_plot.plot_compare`.
    """
    devices = ", ".join(dict.fromkeys(r.device_name for r in c.runs))
    runs = f"{len(c.runs)} run{'s' if len(c.runs) != 1 else ''}"
    title = f"Roofline comparison: {runs} of {devices}" + (
        f" beside the published figures of {c.reference}" if c.published else ""
    )
    parts: List[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}{SWITCH_STYLE}"
        ".run { font-weight: 600; } ul.runs { list-style: none; padding-left: 0; columns: 2; }</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="sub">Baseline: {html.escape(c.baseline_name)}. Hover a ceiling or a ridge point for its '
        "numbers.</p>",
        *_run_list(c),
        *_figures(c, theoretical),
    ]
    for heading, table in compare_tables(c):
        parts += [f"<h2>{html.escape(heading)}</h2>", table_html(table, "")]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _run_list(c: Comparison) -> List[str]:
    """The list of the runs, each with its line style's key, name, file and status where partial; the
    published reference's line last, where the comparison has one."""
    parts = ['<ul class="runs">']
    for i, (tag, name, label, run) in enumerate(zip(c.tags, c.titles(), c.labels, c.runs)):
        dash = svg_dash(RUN_DASHES[i % len(RUN_DASHES)])
        status = f" — {status_text(run)}" if run.partial else ""
        parts.append(
            f'<li id="run-{tag}"><svg width="36" height="8" aria-hidden="true"><line x1="0" y1="4" x2="36" '
            f'y2="4" stroke="#333" stroke-width="2" stroke-dasharray="{dash}"/></svg> <span class="run">{tag}'
            "</span> "
            f"{html.escape(name)}{' — ' + html.escape(label) if label else ''}{html.escape(status)}</li>"
        )
    if c.published:
        where = ", ".join(dict.fromkeys(p.where for p in c.published))
        parts.append(
            f'<li id="published"><svg width="36" height="8" aria-hidden="true"><line x1="0" y1="4" x2="36" '
            f'y2="4" stroke="#333" stroke-width="2" stroke-dasharray="{svg_dash(PUBLISHED_DASH)}"/></svg> '
            f'<span class="run">published</span> {html.escape(f"{c.reference} ({where}), not measured by this tool")}'
            "</li>"
        )
    parts.append("</ul>")
    return parts


def _figures(c: Comparison, theoretical: bool) -> List[str]:
    """Where every run has a roofline: the interactive figure (:func:`_interactive`) and the overlaid
    rooflines as inline SVG with hover text; else a line naming the runs without one."""
    models = [model_of(r) for r in c.runs]
    missing = [
        f"{tag} ({label or run.device_name})"
        for tag, label, run, m in zip(c.tags, c.labels, c.runs, models)
        if m is None
    ]
    drawn = [(m, n) for m, n in zip(models, c.names()) if m is not None]
    parts: List[str] = []
    if missing:
        parts.append(
            f"<p>No roofline for {html.escape(', '.join(missing))}: a run needs a bandwidth and a compute ceiling.</p>"
        )
    if len(drawn) == len(models):
        parts.append(_interactive(c, theoretical))
        fig = add_note(
            plot_compare(
                [m for m, _n in drawn],
                [n for _m, n in drawn],
                theoretical=theoretical,
                published=c.published,
                reference=c.reference,
            ),
            partial_note(c),
        )
        svg = figure_bytes(fig, "svg").decode("utf-8")
        parts.append(
            static_block(
                f"<figure>{svg_with_tooltips(svg, compare_tooltips(c))}<figcaption>The rooflines "
                "overlaid: a colour per ceiling, a line style per run"
                + ("; theoretical ceilings faint" if theoretical else "")
                + ("; published figures dash-dotted, labelled published" if c.published else "")
                + "; ridge points as circles.</figcaption></figure>"
            )
        )
    return parts


def _interactive(c: Comparison, theoretical: bool) -> str:
    """The interactive figure's block (:func:`~.compare_interactive.compare_figure`) with a line on
    its use and its data as a JSON link; without Plotly, the one line on how to get it, and the link."""
    figure = compare_figure(c, theoretical=theoretical)
    if figure is None:
        return ""
    payload = {
        "runs": [{"tag": t, "name": n, "file": lab} for t, n, lab in zip(c.tags, c.names(), c.labels)],
        "baseline": c.baseline_name,
        **figure_data({**figure, "data": [t for t in figure["data"] if t["meta"]["role"] != "published"]}),
        "published": [t["meta"] for t in figure["data"] if t["meta"]["role"] == "published"],
        "arrows": [
            dict(a, run=t["meta"]["run"])
            for t in figure["data"]
            if t["meta"]["role"] == "arrows"
            for a in t["meta"]["arrows"]
        ],
    }
    link = data_link(payload, "compare-data.json", "Download the figure's data (JSON)")
    if not plotly_available():
        return f'<p class="{INTERACTIVE_CLASS}-missing">{html.escape(PLOTLY_MISSING)} {link}</p>'
    return (
        f'{SWITCH_SCRIPT}<div class="{INTERACTIVE_CLASS}">{PlotlyFigures().div(figure, "compare")}'
        + (
            f'<p class="sub">Arrows: each measured ceiling (at its ridge point; a bandwidth at one intensity) and '
            f"each kernel both runs measured, from {html.escape(c.baseline_name)} to every other run; hover an "
            "arrow for both ends. "
            if len(c.runs) > 1
            else '<p class="sub">'
        )
        + ("Published figures: dash-dotted, labelled published; hover one for its source. " if c.published else "")
        + "Click a legend entry to hide or show it; drag to zoom, double-click to reset. "
        + link
        + "</p></div>"
    )
