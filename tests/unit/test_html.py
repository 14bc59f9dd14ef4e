"""report.html: self-contained, the figures as SVG, hover text on every measurement and ceiling; and
the ridge table every view reads."""

from __future__ import annotations

import dataclasses
import html
import re
from html.parser import HTMLParser
from typing import Dict, List

import pytest

pytest.importorskip("matplotlib")

from apple_roofline.roofline import RooflineModel
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views import interactive
from apple_roofline.roofline.views.html import measurement_tooltip, svg_with_tooltips, table_html, to_html, tooltips
from apple_roofline.roofline.views.plot import measurement_gid
from apple_roofline.roofline.views.plotly_embed import PLOTLY_MISSING
from apple_roofline.study.records import Ceiling
from apple_roofline.study.table import Table
from apple_roofline.text import percent, sig_figs


class _Page(HTMLParser):
    """The tags, external references and tooltips (text of <title> inside a <g id=...>) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[str] = []
        self.external: List[str] = []
        self.tips: Dict[str, str] = {}
        self._group: List[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: List[tuple]) -> None:  # type: ignore[type-arg]
        a = dict(attrs)
        self.tags.append(tag)
        for key in ("src", "href", "xlink:href"):
            v = a.get(key) or ""
            if v and not v.startswith("#"):
                self.external.append(v)
        if tag == "g":
            self._group.append(a.get("id") or "")
        self._in_title = tag == "title" and bool(self._group) and bool(self._group[-1])

    def handle_endtag(self, tag: str) -> None:
        if tag == "g" and self._group:
            self._group.pop()
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.tips[self._group[-1]] = self.tips.get(self._group[-1], "") + data


def _page(text: str) -> _Page:
    p = _Page()
    p.feed(text)
    return p


def test_html_is_self_contained_with_both_figures(m5_run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Plotly: no script at all, the static figures, and one line on how to get the
    interactive one (tests/unit/test_interactive.py covers the page with Plotly)."""
    monkeypatch.setattr(interactive, "plotly_available", lambda: False)
    text = to_html(m5_run)
    page = _page(text)
    assert text.startswith("<!DOCTYPE html>") and page.tags.count("svg") == 2
    # no fetch: no CDN, no font, no image; the one link is the figure's data, inside the page
    assert len(page.external) == 1 and page.external[0].startswith("data:application/json;base64,")
    assert "script" not in page.tags
    assert text.count(html.escape(PLOTLY_MISSING)) == 1
    assert "<title>Roofline: Apple M5 (metal) — 2026-11-20</title>" in text
    for heading in ("Ceilings", "Ridge points", "Suite: stream", "Suite: gemm", "Skipped", "Warnings"):
        assert f"<h2>{heading}</h2>" in text, heading


def test_every_drawn_measurement_has_its_hover_text(m5_run: Run) -> None:
    page = _page(to_html(m5_run))
    drawn = [i for i, m in enumerate(m5_run.measurements) if m.valid and m.flops > 0 and m.suite != "stream"]
    for i in drawn:
        m = m5_run.measurements[i]
        tip = page.tips[measurement_gid(i)]
        assert tip.startswith(m.label) and "GFLOP/s" in tip and "GB/s" in tip and "CV" in tip, tip
        assert "validation:" in tip
    invalid = [i for i, m in enumerate(m5_run.measurements) if not m.valid]
    assert invalid and all(measurement_gid(i) not in page.tips for i in invalid)
    sweep = [i for i, m in enumerate(m5_run.measurements) if m.suite == "sweep"]
    assert all(measurement_gid(i) + "-gbps" in page.tips for i in sweep)  # the sweep's memory panel too
    assert page.tips["ceiling:measured:compute:FP32 scalar ILP"].startswith("FP32 scalar ILP (measured): 3,849 GFLOP/s")


def test_tooltip_text(m5_run: Run) -> None:
    m = next(m for m in m5_run.measurements if m.suite == "sweep")
    tip = measurement_tooltip(m)
    assert tip.splitlines()[0] == "sweep/vec4/fp32 (F=1)"
    assert f"of {m.summary.n} samples, CV {percent(m.cv)}" in tip and f"{sig_figs(m.gflops)} GFLOP/s" in tip
    assert tip.splitlines()[-1] == f"validation: {m.validation}"
    assert set(tooltips(m5_run)) >= {measurement_gid(0), "ceiling:theoretical:bandwidth:DRAM bandwidth"}


def test_svg_with_tooltips_escapes_and_strips_the_prolog() -> None:
    svg = (
        '<?xml version="1.0"?>\n<!DOCTYPE svg>\n'
        '<svg width="10pt" height="5pt" viewBox="0 0 10 5"><g id="a&amp;b"></g><g id="c"></g></svg>'
    )
    out = svg_with_tooltips(svg, {"a&b": "x < y & z"})
    assert out.startswith("<svg") and 'width="10pt"' not in out and 'viewBox="0 0 10 5"' in out
    assert '<g id="a&amp;b"><title>x &lt; y &amp; z</title></g><g id="c"></g>' in out


def test_interrupted_and_empty_runs(m5_run: Run) -> None:
    text = to_html(dataclasses.replace(m5_run, complete=False))
    assert 'class="banner">INTERRUPTED — partial results.' in text
    bare = dataclasses.replace(m5_run, measurements=(), ceilings=())
    text = to_html(bare)
    assert "No roofline: the run needs a bandwidth and a compute ceiling." in text and "<svg" not in text


def test_markdown_code_spans_are_rendered_in_every_sentence(m5_run: Run) -> None:
    """Issue 32: the report's sentences carry Markdown `code` (the hierarchy note's "`--suite
    hierarchy`"); the HTML renders it as <code>, in notes, cells and warnings, never as backticks."""
    table = Table(
        ("Kernel", "Note"),
        (("copy", "run `--suite stream` & see"),),
        "ll",
        ("A note: (`--suite hierarchy` sweeps them all) **bold** <x>.",),
    )
    out = table_html(table)
    assert "(<code>--suite hierarchy</code> sweeps them all) <b>bold</b> &lt;x&gt;." in out
    assert "<td>run <code>--suite stream</code> &amp; see</td>" in out
    run = dataclasses.replace(m5_run, warnings=(*m5_run.warnings, "re-run with `--reps 50` for a steadier `CV`"))
    page = to_html(run)
    assert "<li>re-run with <code>--reps 50</code> for a steadier <code>CV</code></li>" in page
    body = re.sub(r"<svg.*?</svg>|<script.*?</script>", "", page, flags=re.S)  # plotly.js has backticks
    assert "`" not in body  # no Markdown left unrendered anywhere on the page


def test_html_shows_the_chosen_ceilings(m5_run: Run) -> None:
    page = _page(to_html(m5_run, ceilings=["FP32 vector", "DRAM bandwidth"]))
    drawn = {k for k in page.tips if k.startswith("ceiling:")}
    assert drawn == {
        "ceiling:measured:compute:FP32 vector",
        "ceiling:measured:bandwidth:DRAM bandwidth",
        "ceiling:theoretical:bandwidth:DRAM bandwidth",
    }
    with pytest.raises(ValueError, match="no ceiling named 'x'"):
        to_html(m5_run, ceilings=["x"])


def test_ridge_table_is_every_ridge_point(m5_run: Run) -> None:
    table = RooflineModel.from_run(m5_run).ridge_table()
    assert table.measured_bandwidth is not None and table.measured_bandwidth.value == pytest.approx(122.0)
    assert table.theoretical_bandwidth is not None and table.theoretical_bandwidth.value == pytest.approx(153.6)
    rows = {r.name: r for r in table.rows}
    ilp = rows["FP32 scalar ILP"]
    assert ilp.measured_ridge == pytest.approx(3849 / 122) and ilp.theoretical_ridge == pytest.approx(4096 / 153.6)
    assert ilp.fraction_of_theoretical == pytest.approx(3849 / 4096)
    assert rows["FP32 vector"].theoretical is None and rows["FP32 vector"].theoretical_ridge is None
    assert [r.name for r in table.rows][:2] == ["FP16 scalar ILP", "FP32 scalar ILP"]  # highest measured first
    assert [c.name for c, _r in table.default][
        0
    ] == "FP16 scalar ILP" and table.default_bandwidth is table.measured_bandwidth
    c = Ceiling("X", "compute", 244.0, "GFLOP/s", "theoretical", "t")
    assert table.ridge(c) == pytest.approx(244.0 / 153.6)
    # the model's own answers come from the same numbers
    model = RooflineModel.from_run(m5_run)
    assert model.ridge_points()["FP32 scalar ILP"] == ilp.measured_ridge
    assert model.ridge_point("FP32 scalar ILP") == ilp.measured_ridge


def test_ridge_table_defaults_fall_back_per_kind(m5_run: Run) -> None:
    only_bw = [c for c in m5_run.ceilings if c.source == "theoretical" or c.kind == "bandwidth"]
    table = RooflineModel(only_bw).ridge_table()
    assert table.default_bandwidth is not None and table.default_bandwidth.source == "measured"
    assert {c.source for c, _r in table.default} == {"theoretical"}
    assert dict((c.name, r) for c, r in table.default)["FP32 scalar ILP"] == pytest.approx(4096 / 122)
