"""The interactive report of a run: one self-contained HTML file (no server, no CDN, nothing fetched).

``report.html`` opens on the interactive roofline (:mod:`.interactive`, where Plotly is installed; the static
one below it then shows in print and without scripts), then holds the roofline figure (:mod:`.plot`), each
suite's own figure (the sweep's, :mod:`apple_roofline.suites.sweep.plot`) and the figures of the suites' sections
(:mod:`apple_roofline.suites.registry`) as inline SVG, and the report's tables (:mod:`.tables`). Hovering a
measurement's marker shows its kernel, parameters, GFLOP/s, GB/s, arithmetic intensity, CV and validation;
hovering a ceiling shows its value and where it came from — the tooltips are SVG ``<title>`` elements hung on
the artists' gids, which every browser shows without a script, the way Nsight Compute and Intel Advisor users
inspect a roofline. Text in the figures is drawn as paths, so no font is fetched.
"""

from __future__ import annotations

import html
import re
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Union

from ...figures import Figure, figure_bytes
from ...study.markdown import resumed_line, status_text, tool_line
from ...study.records import Ceiling, Measurement, format_params
from ...study.table import Table
from ...suites import registry
from ...text import DASH, date_of, key_value_pairs, percent, sig_figs
from ...user_kernels.model import KernelSet
from ...user_kernels.place import place
from ...user_kernels.tables import kernel_tooltips
from ..model.limits import OVER_MARK
from ..model.model import RooflineModel
from ..model.run import Run
from .clock_table import clock_table
from .interactive import interactive_roofline
from .plot import measurement_gid
from .plotly_embed import SWITCH_STYLE, static_block
from .report import kernels_section
from .run_figures import roofline_figure, suite_figure
from .tables import (
    ceilings_table,
    efficiency_table,
    model_of,
    report_warnings,
    ridge_table,
    skipped_sections,
    suite_tables,
    suite_time_table,
    telemetry_note,
    theoretical_table,
)

__all__ = [
    "to_html",
    "tooltips",
    "svg_with_tooltips",
    "measurement_tooltip",
    "ceiling_tooltip",
    "table_html",
    "PAGE_STYLE",
]

PAGE_STYLE = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1180px;
       color: #1a1a1a; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.sub { color: #555; margin-top: 0; }
.banner { background: #fde8e8; color: #8a1c1c; padding: 0.5em 1em; font-weight: 600; }
figure { margin: 1em 0; } figure svg { width: 100%; height: auto; } figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #d6d6d6; padding: 0.25em 0.55em; vertical-align: top; }
th { background: #f3f3f3; text-align: left; } td.r { text-align: right; font-variant-numeric: tabular-nums; }
td:not(:last-child) { white-space: nowrap; }
td.bad { color: #b00020; font-weight: 600; }
code { font: 0.92em ui-monospace, Menlo, Consolas, monospace; } details { margin: 0.6em 0; }
summary { cursor: pointer; color: #333; }
svg g[id^="m-"] { cursor: crosshair; } svg g[id^="m-"]:hover { filter: drop-shadow(0 0 2px #000); }
svg g[id^="ceiling:"]:hover path { stroke-width: 3.5; }
"""


def measurement_tooltip(m: Measurement) -> str:
    """The hover text of a measurement: kernel and parameters, rates, intensity, CV, validation, the
    physical limit its figure lies above where it does (docs/design/limits.md, "Physical limits"), and
    power with GFLOP/s and GB/s per watt where the run measured power."""
    params = format_params(m.params)
    lines = [
        f"{m.label}" + (f" ({params})" if params else ""),
        f"{sig_figs(m.gflops)} GFLOP/s, {sig_figs(m.gbps)} GB/s, {sig_figs(m.intensity)} FLOP/B",
        f"median {sig_figs(m.median_s * 1e6)} µs per launch of {m.summary.n} samples, CV {percent(m.cv)}",
        f"validation: {m.validation or ('passed' if m.valid else 'failed')}",
    ]
    if m.over_limit is not None:
        lines.append(f"{OVER_MARK} {m.over_limit.text}; no ceiling, no level")
    if m.power_w is not None and m.gflops_per_watt is not None and m.gbps_per_watt is not None:
        lines.append(
            f"{sig_figs(m.power_w)} W: {sig_figs(m.gflops_per_watt)} GFLOP/s per W, "
            f"{sig_figs(m.gbps_per_watt)} GB/s per W"
        )
    return "\n".join(lines)


def ceiling_tooltip(c: Ceiling) -> str:
    """The hover text of a ceiling: name, source, value, and where the value came from."""
    return f"{c.name} ({c.source}): {sig_figs(c.value)} {c.unit}\nfrom {c.from_}"


def tooltips(run: Run) -> Dict[str, str]:
    """Hover text by gid: every measurement's marker (:func:`.plot.measurement_gid`, and its
    ``-gbps`` twin in the sweep figure's memory panel) and every ceiling line."""
    out: Dict[str, str] = {}
    for i, m in enumerate(run.measurements):
        out[measurement_gid(i)] = out[measurement_gid(i) + "-gbps"] = measurement_tooltip(m)
        if m.over_limit is not None:
            out[f"over-limit:{measurement_gid(i)}"] = out[measurement_gid(i)]
    for c in run.ceilings:
        out[f"ceiling:{c.source}:{c.kind}:{c.name}"] = ceiling_tooltip(c)
    return out


_G_OPEN = re.compile(r'<g id="([^"]+)">')


def svg_with_tooltips(svg: str, tips: Mapping[str, str]) -> str:
    """matplotlib SVG text with a ``<title>`` (the hover text) as the first child of every group whose
    id is in ``tips``, the XML prolog removed and the size left to the page (``viewBox`` kept)."""

    def add(match: "re.Match[str]") -> str:
        tip = tips.get(html.unescape(match.group(1)))
        return match.group(0) + (f"<title>{html.escape(tip)}</title>" if tip is not None else "")

    body = svg[svg.index("<svg") :]
    body = re.sub(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"', r"\1", body, count=1)
    return _G_OPEN.sub(add, body)


def table_html(table: Table, empty: str = "None.") -> str:
    """``table`` as HTML: its notes as paragraphs, then the table (``**NO**`` cells in red); the
    ``empty`` sentence instead of a table without rows (nothing when ``empty`` is "")."""
    notes = "".join(f"<p>{_inline(n)}</p>" for n in table.notes)
    if not table.rows:
        return notes + (f"<p>{html.escape(empty)}</p>" if empty else "")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.header)
    body = []
    for row in table.rows:
        cells = []
        for cell, a in zip(row, table.align):
            cls = "bad" if cell == "**NO**" else ("r" if a == "r" else "")
            text = "NO" if cell == "**NO**" else cell
            cells.append(f'<td class="{cls}">{_inline(text)}</td>' if cls else f"<td>{_inline(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return notes + f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _inline(text: str) -> str:
    """Escape ``text``, rendering the Markdown the report's sentences use: ``**bold**`` and
    `` `code` `` spans (a command such as `` `--suite hierarchy` ``)."""
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _svg_of(stem: str, svgs: Mapping[str, str], draw: Callable[[], Optional[Figure]]) -> Optional[str]:
    """The SVG text of the figure ``stem``: ``svgs[stem]`` where given (drawn for its file), else
    ``draw()`` rendered; None where ``draw()`` has no figure."""
    if stem in svgs:
        return svgs[stem]
    fig = draw()
    return figure_bytes(fig, "svg").decode("utf-8") if fig is not None else None


def _section_html(
    run: Run, suite: str, section: registry.Section, tips: Mapping[str, str], svgs: Mapping[str, str]
) -> List[str]:
    """A section of ``suite`` (:class:`~apple_roofline.suites.registry.Section`): its heading and its
    tables; in a section with a figure, its first table's notes, the figure where the run has one
    (:func:`~.run_figures.suite_figure`; its SVG text from ``svgs`` where there), then the tables.
    Nothing when it has no table."""
    tables = section.tables(run)
    if not tables:
        return []
    parts = [f"<h2>{html.escape(section.title)}</h2>"]
    figure, first = section.figure, tables[0]
    if figure is not None:
        parts += [f"<p>{_inline(n)}</p>" for n in first.notes]
        svg = _svg_of(figure.stem, svgs, lambda: suite_figure(run, suite, figure))
        if svg is not None:
            parts.append(_figure(svg_with_tooltips(svg, tips), figure.caption))
        first = Table(first.header, first.rows, first.align)
    return parts + [table_html(t) for t in (first, *tables[1:])]


def _kv_table(rows: Sequence[Sequence[object]]) -> str:
    return table_html(Table(("Field", "Value"), tuple((str(k), str(v)) for k, v in rows), "ll"))


def to_html(
    run: Run,
    *,
    ceilings: Union[str, Sequence[str]] = "default",
    kernels: Optional[KernelSet] = None,
    svgs: Optional[Mapping[str, str]] = None,
) -> str:
    """The run as one self-contained HTML page (str).

    Holds: the title and, for a partial run (interrupted, or a suite cut by its budget), a banner
    with its status; the roofline figure (the ``ceilings``
    chosen, :func:`~.selection.select_ceilings`) and the sweep figure as inline SVG with hover text
    on every measurement and ceiling (:func:`tooltips`); the ceilings and ridge points; one table per
    suite; skipped kernels; warnings; then, folded, the provenance, conventions and theoretical
    peaks. A run without a roofline or without sweep measurements says so where the figure would be.
    With ``kernels``, their dots are on the roofline figure (hover: the ceiling that binds each and
    the speedup left) and a section "Your kernels" follows the ridge points.

    ``svgs``: the SVG text of figures already drawn for their files, by file stem (``"roofline"``,
    ``"sweep"``, a suite figure's stem), the same ``ceilings`` and ``kernels``; those missing are
    drawn here.

    Raises:
        ValueError: an unknown ceiling name in ``ceilings``.
    """
    tips = tooltips(run)
    svgs = svgs or {}
    model = model_of(run)
    parts = _head_html(run)
    parts += _roofline_html(run, model, ceilings, kernels, tips, svgs)
    parts += _own_figures_html(run, tips, svgs)
    parts += _model_tables_html(run, model, kernels)
    for spec, section in registry.sections():
        parts += _section_html(run, spec.name, section, tips, svgs)
    parts += _run_tables_html(run)
    parts += _provenance_html(run)
    return "\n".join(parts) + "\n"


def _head_html(run: Run) -> List[str]:
    """The page's head, its title and the line under it; a banner with a partial run's status."""
    title = f"Roofline: {run.device_name} ({run.backend}) — {date_of(run.created)}"
    parts: List[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}{SWITCH_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="sub">{html.escape(tool_line(run))}; {len(run.measurements)} measurements, '
        f"{len(run.valid_measurements)} valid. Hover a point or a ceiling for its numbers.</p>",
    ]
    if run.partial:
        parts.append(f'<p class="banner">{html.escape(status_text(run))}.</p>')
    return parts


def _roofline_html(
    run: Run,
    model: Optional[RooflineModel],
    ceilings: Union[str, Sequence[str]],
    kernels: Optional[KernelSet],
    tips: Dict[str, str],
    svgs: Mapping[str, str],
) -> List[str]:
    """The interactive roofline and the static one below it (its SVG from ``svgs`` where drawn), with
    ``kernels``' dots and their hover text; a line saying why where the run has no roofline."""
    if model is None:
        return ["<p>No roofline: the run needs a bandwidth and a compute ceiling.</p>"]
    placed = place(model, kernels) if kernels is not None else []
    parts = [interactive_roofline(run, model, ceilings)]
    svg = _svg_of("roofline", svgs, lambda: roofline_figure(run, model, ceilings=ceilings, kernels=placed))
    assert svg is not None  # a model always has its roofline figure
    parts.append(
        static_block(
            _figure(
                svg_with_tooltips(svg, {**tips, **kernel_tooltips(placed)}),
                "The roofline: measured ceilings solid, theoretical dashed in the same colour, one grey "
                "line for classes of equal height; ridge points as circles; sweeps as lines; vendor "
                "GEMMs and peak kernels as dots, disturbed GEMM sizes hollow.",
            )
        )
    )
    return parts


def _own_figures_html(run: Run, tips: Dict[str, str], svgs: Mapping[str, str]) -> List[str]:
    """Each suite's own figure beside the roofline (the sweep's), with its caption, where the run has one."""
    parts: List[str] = []
    for spec, own in registry.own_figures():
        svg = _svg_of(own.stem, svgs, lambda: suite_figure(run, spec.name, own))
        if svg is not None:
            parts.append(_figure(svg_with_tooltips(svg, tips), own.caption))
    return parts


def _model_tables_html(run: Run, model: Optional[RooflineModel], kernels: Optional[KernelSet]) -> List[str]:
    """The ceilings, the ridge points, your ``kernels``, the ceilings at the clock and each suite's table."""
    parts = ["<h2>Ceilings</h2>", table_html(ceilings_table(run.ceilings), "No ceilings.")]
    parts += ["<h2>Ridge points</h2>", table_html(ridge_table(model), "")]
    if kernels is not None:
        parts.append("<h2>Your kernels</h2>")
        for sentence, table in kernels_section(run, kernels):
            parts += [f"<p>{_inline(sentence)}</p>"] + ([table_html(table)] if table is not None else [])
    clocked = clock_table(run)
    if clocked is not None:
        parts += ["<h2>Ceilings at the clock</h2>", table_html(clocked, "")]
    for st in suite_tables(run.measurements):
        parts += [f"<h2>Suite: {html.escape(st.suite)}</h2>", table_html(st.table)]
        parts += [f"<p>{_inline(t)}</p>" for t in st.timers]
    return parts


def _run_tables_html(run: Run) -> List[str]:
    """Clocks and power, the time per suite, the skipped kernels and the warnings."""
    parts: List[str] = []
    note, efficiency = telemetry_note(run.device), efficiency_table(run.measurements)
    if note is not None or efficiency is not None:
        parts.append("<h2>Clocks and power</h2>")
        parts += [f"<p>{_inline(note)}</p>"] if note else []
        parts += [table_html(efficiency)] if efficiency is not None else []
    times = suite_time_table(run)
    if times is not None:
        parts += ["<h2>Time per suite</h2>", table_html(times)]
    parts += [p for title, t in skipped_sections(run) for p in (f"<h2>{html.escape(title)}</h2>", table_html(t))]
    warnings = report_warnings(run)
    parts += [
        "<h2>Warnings</h2>",
        ("<ul>" + "".join(f"<li>{_inline(w)}</li>" for w in warnings) + "</ul>") if warnings else "<p>None.</p>",
    ]
    return parts


def _provenance_html(run: Run) -> List[str]:
    """Folded: the provenance, the conventions and the theoretical peaks; the page's end."""
    parts = ["<details><summary>Provenance, conventions and theoretical peaks</summary>"]
    parts.append(
        _kv_table(
            [
                ("Tool", tool_line(run)),
                ("Created", run.created),
                ("Finished", run.finished or DASH),
                ("Host", key_value_pairs(run.host)),
                ("Device", key_value_pairs(run.device)),
                ("Command", " ".join(run.command) or DASH),
                ("Status", status_text(run)),
                *([("Resumed", resumed_line(run.resumed))] if run.resumed is not None else []),
                ("Schema version", run.schema_version),
            ]
        )
    )
    parts.append(
        "<ul>"
        + "".join(f"<li><b>{html.escape(k)}</b>: {_inline(v)}</li>" for k, v in run.conventions.items())
        + "</ul>"
    )
    theoretical = theoretical_table(run.device)
    if theoretical is not None:
        parts.append(table_html(Table(theoretical.header, theoretical.rows, theoretical.align)))
        parts.append("<ul>" + "".join(f"<li>{_inline(n)}</li>" for n in theoretical.notes) + "</ul>")
    parts.append("</details></body></html>")
    return parts
