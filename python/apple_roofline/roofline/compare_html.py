"""A comparison of runs as one self-contained HTML page (``apple-roofline compare -o compare.html``),
like ``report.html`` (:mod:`.html`): no server, no CDN, no script.

The page holds the runs (tag, colour, device, file), the overlaid rooflines (:mod:`.compare_plot`)
as inline SVG with hover text on every ceiling line and ridge point (the run, the ceiling's value
and where it came from, its ratio to the baseline), then :func:`~.compare.compare_tables`.
"""

from __future__ import annotations

import html
from typing import Dict, List

from ..figures import add_note, figure_bytes
from ..study.markdown import status_text
from .compare import Comparison, baseline_value, ceiling_key, ceiling_values, compare_tables, partial_note, ratio_text
from .compare_plot import RUN_COLORS, plot_compare
from .html import PAGE_STYLE, ceiling_tooltip, svg_with_tooltips, table_html
from .tables import model_of

__all__ = ["compare_tooltips", "compare_html"]


def compare_tooltips(c: Comparison) -> Dict[str, str]:
    """Hover text by gid (:mod:`.compare_plot`'s ``<tag>:ceiling:<source>:<kind>:<name>`` and
    ``<tag>:ridge:<source>:<name>``): the run, the ceiling (:func:`~.html.ceiling_tooltip`) and its
    ratio to the baseline."""
    _keys, values, _units = ceiling_values(c.runs)
    out: Dict[str, str] = {}
    for tag, name, run, vals in zip(c.tags, c.names(), c.runs, values):
        for ceiling in run.ceilings:
            key = ceiling_key(ceiling.source, ceiling.kind, ceiling.name)
            ratio = ratio_text(vals[key], baseline_value(values, key, c.baseline))
            text = f"{tag}: {name}\n{ceiling_tooltip(ceiling)}\n{ratio} of {c.baseline_name}"
            out[f"{tag.lower()}:ceiling:{ceiling.source}:{ceiling.kind}:{ceiling.name}"] = text
            out[f"{tag.lower()}:ridge:{ceiling.source}:{ceiling.name}"] = text
    return out


def compare_html(c: Comparison, *, theoretical: bool = False) -> str:
    """The comparison as one self-contained HTML page (str): the title, the runs with their
    colours, the overlaid rooflines (measured ceilings, and the theoretical ones with
    ``theoretical``) with hover text (:func:`compare_tooltips`), and the comparison's tables. A run
    without a roofline (no bandwidth or no compute ceiling) is named where the figure would be.

    Raises:
        ValueError: from :func:`~.compare_plot.plot_compare`.
    """
    names = c.names()
    devices = ", ".join(dict.fromkeys(r.device_name for r in c.runs))
    title = f"Roofline comparison: {len(c.runs)} runs of {devices}"
    parts: List[str] = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}"
        ".run { font-weight: 600; } ul.runs { list-style: none; padding-left: 0; columns: 2; }</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="sub">Baseline: {html.escape(c.baseline_name)}. Hover a ceiling or a ridge point for its '
        "numbers.</p>",
        '<ul class="runs">',
    ]
    for i, (tag, name, label, run) in enumerate(zip(c.tags, c.titles(), c.labels, c.runs)):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        status = f" — {status_text(run)}" if run.partial else ""
        parts.append(f'<li id="run-{tag}"><span class="run" style="color:{color}">{tag}</span> '
                     f"{html.escape(name)}{' — ' + html.escape(label) if label else ''}{html.escape(status)}</li>")
    parts.append("</ul>")
    models = [model_of(r) for r in c.runs]
    missing = [f"{tag} ({label or run.device_name})" for tag, label, run, m in zip(c.tags, c.labels, c.runs, models)
               if m is None]
    drawn = [(m, n) for m, n in zip(models, names) if m is not None]
    if missing:
        parts.append(f"<p>No roofline for {html.escape(', '.join(missing))}: a run needs a bandwidth and a compute "
                     "ceiling.</p>")
    if len(drawn) == len(models):
        fig = add_note(plot_compare([m for m, _n in drawn], [n for _m, n in drawn], theoretical=theoretical),
                       partial_note(c))
        svg = figure_bytes(fig, "svg").decode("utf-8")
        parts.append(f"<figure>{svg_with_tooltips(svg, compare_tooltips(c))}<figcaption>The rooflines overlaid, one "
                     "colour per run: measured ceilings solid"
                     + (", theoretical dashed" if theoretical else "") + "; ridge points as circles.</figcaption></figure>")
    for heading, table in compare_tables(c):
        parts += [f"<h2>{html.escape(heading)}</h2>", table_html(table, "")]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
