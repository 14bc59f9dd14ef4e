"""The interactive rooflines (issue 34): the binding ceiling, the Plotly figures of report.html and
compare.html, the pages (one plotly.js, the data link, the static fallback) and, in a real headless
Chromium driven over the DevTools protocol (tests/unit/browser_cdp.py), what a reader does with them:
hide and show a ceiling, switch the ceilings' view, zoom to the ridge and reset, hover a point, follow
an arrow, with no network request."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("plotly")

from apple_roofline.roofline.compare import compare_html as compare_page
from apple_roofline.roofline.compare.compare import BASELINE_MEDIAN, Comparison
from apple_roofline.roofline.compare.compare_interactive import ceiling_anchor, compare_figure
from apple_roofline.roofline.model.binding import binding
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views import interactive
from apple_roofline.roofline.views.html import to_html
from apple_roofline.roofline.views.interactive import drawn_measurements, roofline_figure, view_buttons
from apple_roofline.roofline.views.plotly_embed import PLOTLY_MISSING, PlotlyFigures
from apple_roofline.roofline.views.tables import model_of
from browser_cdp import Browser, find_browser

DATA = Path(__file__).parent / "data"
BUNDLE = re.compile(r"plotly\.js v\d+\.\d+\.\d+")  # the banner at the head of plotly.js


def saved(name: str) -> Run:
    return Run.load(DATA / name)


def ceiling(run: Run, name: str, source: str = "measured") -> Any:
    return next(c for c in run.ceilings if c.name == name and c.source == source)


# -- which ceiling binds a measurement ------------------------------------------------------------


def test_binding_is_the_lower_of_the_slope_and_the_kernels_own_roof() -> None:
    run = saved("run_h100.json")
    dram, gemm = ceiling(run, "DRAM bandwidth"), ceiling(run, "GEMM FP32")
    big = next(m for m in run.measurements if m.kernel == "sgemm" and m.params.get("m") == 8192)
    b = binding(big, run.ceilings, "measured")
    assert b is not None and b.ceiling == gemm and b.bandwidth == dram  # compute-bound under its own class
    assert b.attainable == pytest.approx(gemm.value) and b.fraction == pytest.approx(big.gflops / gemm.value)
    low = min(
        (m for m in run.measurements if m.suite == "sweep" and m.dtype == "fp32" and m.flops > 0),
        key=lambda m: m.intensity,
    )
    b = binding(low, run.ceilings, "measured")
    assert b is not None and b.ceiling == dram  # memory-bound: the slope binds
    # a sweep sets no ceiling: it is judged against the FMA pipe its chains run on, vector or scalar
    assert b.compute.name == ("FP32 vector" if low.kernel.startswith("vec") else "FP32 scalar ILP")
    assert b.attainable == pytest.approx(dram.value * low.intensity)
    t = binding(low, run.ceilings, "theoretical")
    assert t is not None and t.bandwidth == ceiling(run, "DRAM bandwidth", "theoretical")
    assert b.text.startswith("bound by DRAM bandwidth (measured): ") and "; reaches " in b.text
    with pytest.raises(ValueError, match="source must be 'measured' or 'theoretical', not 'vendor'"):
        binding(low, run.ceilings, "vendor")


def test_a_source_without_its_own_bandwidth_uses_the_measured_one() -> None:
    run = saved("run_epyc_2vcpu.json")  # theoretical compute ceilings, no theoretical bandwidth
    m = next(m for m in run.measurements if m.kernel.startswith("sgemm") or m.suite == "gemm")
    b = binding(m, run.ceilings, "theoretical")
    assert b is not None and b.bandwidth == ceiling(run, "DRAM bandwidth") and b.compute.source == "theoretical"


# -- the report's figure --------------------------------------------------------------------------


def _roles(fig: Dict[str, Any], role: str) -> List[Dict[str, Any]]:
    return [t for t in fig["data"] if t["meta"]["role"] == role]


def test_report_figure_has_a_trace_per_ceiling_and_suite_and_the_view_buttons() -> None:
    run = saved("run_epyc_quick.json")  # cache levels, theoretical compute ceilings
    model = model_of(run)
    assert model is not None
    fig = roofline_figure(run, model)
    ceilings = _roles(fig, "ceiling")
    assert {(t["meta"]["source"], t["meta"]["name"]) for t in ceilings if t["meta"]["level"]} == {
        ("measured", "L1d bandwidth"),
        ("measured", "L2 bandwidth"),
        ("measured", "L3 bandwidth"),
    }
    assert all(t["legendgroup"] == "levels" for t in ceilings if t["meta"]["level"])
    points = _roles(fig, "points")
    drawn = drawn_measurements(run.measurements)
    assert {t["meta"]["suite"] for t in points} == {m.suite for _i, m in drawn}
    assert sum(len(t["x"]) for t in points) == len(drawn)
    assert fig["layout"]["xaxis"]["type"] == fig["layout"]["yaxis"]["type"] == "log"
    assert fig["layout"]["legend"]["groupclick"] == "toggleitem"
    (menu,) = fig["layout"]["updatemenus"]
    labels = [b["label"] for b in menu["buttons"]]
    assert labels == [
        "Measured ceilings, DRAM roofline",
        "Measured ceilings, cache-aware",
        "Theoretical ceilings, DRAM roofline",
        "Theoretical ceilings, cache-aware",
    ]
    assert menu["active"] == 1 and [t["visible"] for t in fig["data"]] == menu["buttons"][1]["args"][0]["visible"]
    theo_dram = dict(zip((id(t) for t in fig["data"]), menu["buttons"][2]["args"][0]["visible"]))
    for t in fig["data"]:
        meta, shown = t["meta"], theo_dram[id(t)]
        if meta["role"] == "points":
            assert shown  # a view never hides a measurement
        elif meta["level"]:
            assert not shown
        elif meta["kind"] == "compute":
            assert shown == (meta["source"] == "theoretical")
        else:  # no theoretical bandwidth: the measured DRAM roof stays
            assert shown
    for t in points:
        for text in t["hovertext"]:
            assert "provenance: " in text and "clock: " in text, text
            # one verdict: the roof that binds it, or why it lies above every roof
            assert text.count("bound by ") + text.count("above every roof") == 1, text


def test_view_buttons_without_levels_switch_the_source_only() -> None:
    run = saved("run_h100.json")
    model = model_of(run)
    assert model is not None
    buttons, first = view_buttons(roofline_figure(run, model)["data"])
    assert [b["label"] for b in buttons] == ["Measured ceilings", "Theoretical ceilings"] and first == 0


def test_report_page_inlines_plotly_once_with_the_data_and_the_static_figure() -> None:
    run = saved("run_h100.json")
    page = to_html(run)
    assert len(BUNDLE.findall(page)) == 1
    assert not re.search(r"<script[^>]*\ssrc=", page)  # nothing loaded from elsewhere
    assert page.count('<div class="static-figure"><figure><svg') == 1  # the static figure for print / no script
    blob = re.search(r'download="roofline-data.json" href="data:application/json;base64,([^"]+)"', page)
    assert blob is not None
    data = json.loads(base64.b64decode(blob.group(1)))
    assert data["device"] == run.device_name
    drawn = drawn_measurements(run.measurements)
    assert len(data["marks"]) == len(drawn)
    assert sorted(m["gflops"] for m in data["marks"]) == pytest.approx(sorted(m.gflops for _i, m in drawn))
    assert {c["name"] for c in data["ceilings"]} >= {"DRAM bandwidth", "GEMM FP32"}
    assert all(m["text"] and "provenance: " in m["text"] for m in data["marks"])


def test_later_figures_refer_to_the_first_ones_plotly() -> None:
    run = saved("run_epyc_2vcpu.json")
    model = model_of(run)
    assert model is not None
    fig = roofline_figure(run, model)
    figures = PlotlyFigures()
    first, second = figures.div(fig, "a"), figures.div(fig, "b")
    assert len(BUNDLE.findall(first)) == 1 and BUNDLE.findall(second) == []
    assert len(second) * 50 < len(first)


def test_pages_without_plotly_say_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (interactive, compare_page):
        monkeypatch.setattr(module, "plotly_available", lambda: False)
    run = saved("run_h100.json")
    for page in (to_html(run), compare_page.compare_html(Comparison((run, saved("run_h100_power.json"))))):
        assert "<script" not in page and "pip install &#x27;plotly&gt;=5.11&#x27;" in page
        assert page.count(PLOTLY_MISSING.split(":")[0]) == 1 and "<svg" in page
        assert page.count('href="data:application/json;base64,') == 1  # the data stays downloadable


# -- the comparison's figure ----------------------------------------------------------------------


def test_compare_arrows_go_from_the_baseline_to_each_run() -> None:
    a, b = saved("run_h100.json"), saved("run_h100_power.json")
    fig = compare_figure(Comparison((a, b)))
    assert fig is not None
    arrows = {(t["meta"]["run"], t["meta"]["what"]): t["meta"]["arrows"] for t in _roles(fig, "arrows")}
    assert set(arrows) == {("B", "ceilings"), ("B", "kernels")}
    by_name = {x["what"]: x for x in arrows[("B", "ceilings")]}
    assert "FP32 vector" not in by_name  # 64.41 -> 64.45 TFLOP/s: a move under MIN_MOVE draws no arrow
    for name in ("GEMM INT8", "GEMM BF16", "GEMM FP64"):
        ca, cb = ceiling(a, name), ceiling(b, name)
        assert by_name[name]["tail"] == pytest.approx(list(ceiling_anchor(ca, a.ceilings, 1.0) or ()))
        assert by_name[name]["head"] == pytest.approx(list(ceiling_anchor(cb, b.ceilings, 1.0) or ()))
    assert "DRAM bandwidth" not in by_name  # 3052.1 -> 3052.6 GB/s
    slower = a.with_ceilings([dataclasses.replace(c, value=c.value * 0.9) for c in a.ceilings])
    moved = compare_figure(Comparison((a, slower)))
    assert moved is not None
    (dram,) = [x for t in _roles(moved, "arrows") for x in t["meta"]["arrows"] if x["what"] == "DRAM bandwidth"]
    assert dram["tail"][0] == dram["head"][0]  # a bandwidth's arrow is vertical, at one intensity
    assert dram["head"][1] / dram["tail"][1] == pytest.approx(0.9)
    kernels = arrows[("B", "kernels")]
    assert kernels and all(k["tail"] != k["head"] for k in kernels)
    # every ceiling: a trace per run, in the same colour in both runs, a dash per run
    lines = _roles(fig, "ceiling")
    for name in ("DRAM bandwidth", "FP32 vector"):
        (la,) = [t for t in lines if t["meta"]["run"] == "A" and t["meta"]["name"] == name]
        (lb,) = [t for t in lines if t["meta"]["run"] == "B" and t["meta"]["name"] == name]
        assert la["line"]["color"] == lb["line"]["color"] and la["line"]["dash"] == "solid" != lb["line"]["dash"]


def test_compare_arrows_against_the_median_start_at_the_median() -> None:
    runs = tuple(saved(n) for n in ("run_h100.json", "run_h100_power.json", "run_h100.json"))
    fig = compare_figure(Comparison(runs, baseline=BASELINE_MEDIAN))
    assert fig is not None
    values = sorted(ceiling(r, "GEMM INT8").value for r in runs)
    for t in _roles(fig, "arrows"):
        for arrow in t["meta"]["arrows"]:
            if arrow["what"] == "GEMM INT8":
                assert arrow["tail"][1] == pytest.approx(values[1])


# -- in a real browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = find_browser()
    if binary is None:
        pytest.skip("no headless Chromium (Debian: apt-get install chromium-headless-shell; .ci/run installs it)")
    b = Browser(binary, tmp_path_factory.mktemp("chromium"))
    try:
        yield b
    finally:
        b.close()


PIXEL = """window.__px = (id, x, y) => {
  const gd = document.getElementById(id), fl = gd._fullLayout, r = gd.getBoundingClientRect();
  return [r.left + fl.xaxis._offset + fl.xaxis.l2p(Math.log10(x)),
          r.top + fl.yaxis._offset + fl.yaxis.l2p(Math.log10(y / gd.layout.meta.gflops_per_y))];
}; true"""


def _open(browser: Browser, page: Path, div: str) -> None:
    browser.events.clear()
    browser.open(page.as_uri())
    browser.wait_for(f"document.querySelector('#{div} .main-svg') !== null")
    browser.eval(f"document.getElementById('{div}').scrollIntoView(); true")
    browser.eval(PIXEL)


def _no_network(browser: Browser, page: Path) -> None:
    browser.eval("1")  # collect the events so far
    assert browser.requests() == [page.as_uri()]  # the page itself, nothing else
    assert browser.eval("performance.getEntriesByType('resource').length") == 0


def _hover(browser: Browser, div: str, x: float, y: float, offset: int = 0) -> str:
    """The hover label at data point (x, y) of figure ``div``, ``offset`` pixels right and down of it
    (on a marker, off a line through the same point). The mouse first leaves the figure and
    the label it showed is gone, so the label read is the final position's, never one still showing
    from an earlier position (Plotly handles mouse moves after they arrive: on a busy machine the last
    label can lag the last move)."""
    px, py = browser.eval(f"__px('{div}', {x!r}, {y!r})")
    browser.mouse("mouseMoved", 1, 1)
    browser.eval(f"Plotly.Fx.unhover(document.getElementById('{div}'))")
    browser.wait_for(f"!document.querySelector('#{div} .hoverlayer .hovertext')")
    browser.mouse("mouseMoved", px + offset, py + offset)
    text: str = browser.wait_for(f"(document.querySelector('#{div} .hoverlayer .hovertext') || {{}}).textContent")
    return text


def _click_text(browser: Browser, selector: str, text: str) -> None:
    rect = browser.eval(f"""(() => {{ const el = [...document.querySelectorAll({json.dumps(selector)})]
        .find(e => e.textContent.startsWith({json.dumps(text)})); if (!el) return null;
        const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
    assert rect is not None, (selector, text)
    browser.click(*rect)


def _range(browser: Browser, div: str) -> List[List[float]]:
    out: List[List[float]] = browser.eval(
        f"(() => {{ const l = document.getElementById('{div}')._fullLayout; "
        "return [l.xaxis.range.slice(), l.yaxis.range.slice()]; })()"
    )
    return out


def test_report_in_a_headless_browser(browser: Browser, tmp_path: Path) -> None:
    run = saved("run_epyc_quick.json")
    page = tmp_path / "report.html"
    page.write_text(to_html(run), encoding="utf-8")
    _open(browser, page, "roofline")
    assert browser.eval("typeof Plotly") == "object"
    buttons = browser.eval("[...document.querySelectorAll('#roofline .modebar-btn')].map(a => a.dataset.title)")
    assert "Reset axes" in buttons and not any("Share" in b or "Cloud" in b for b in buttons), buttons  # no upload
    traces = browser.eval("document.getElementById('roofline').data.map(t => [t.name, t.meta, t.visible])")
    index = {(t[1]["role"], t[1].get("source"), t[1].get("name")): i for i, t in enumerate(traces)}
    fp64 = index[("ceiling", "measured", "FP64")]

    # hide a ceiling from the legend, then show it again (real clicks on its legend entry)
    visible = f"document.getElementById('roofline').data[{fp64}].visible"
    _click_text(browser, "#roofline .legend .traces .legendtext", "FP64 ")
    browser.wait_for(f"{visible} === 'legendonly'")
    _click_text(browser, "#roofline .legend .traces .legendtext", "FP64 ")
    browser.wait_for(f"{visible} === true")

    # the theoretical DRAM roofline: the theoretical FP64 shows, the measured one and the levels hide
    theo = index[("ceiling", "theoretical", "FP64")]
    l1 = index[("ceiling", "measured", "L1d bandwidth")]
    _click_text(browser, "#roofline .updatemenu-button", "Theoretical ceilings, DRAM roofline")
    browser.wait_for(
        f"(() => {{ const d = document.getElementById('roofline').data; return d[{theo}].visible === true "
        f"&& d[{fp64}].visible === false && d[{l1}].visible === false; }})()"
    )
    _click_text(browser, "#roofline .updatemenu-button", "Measured ceilings, cache-aware")
    browser.wait_for(f"document.getElementById('roofline').data[{l1}].visible === true")

    per_y = browser.eval("document.getElementById('roofline').layout.meta.gflops_per_y")
    # zoom to the ridge point of FP32 vector by dragging a box around it, then reset from the modebar
    fp32 = traces[index[("ceiling", "measured", "FP32 vector")]][1]
    ridge, top = fp32["ridge"], fp32["value"]
    home = _range(browser, "roofline")
    x0, y0 = browser.eval(f"__px('roofline', {ridge / 3!r}, {top / 3!r})")
    x1, y1 = browser.eval(f"__px('roofline', {ridge * 3!r}, {top * 3!r})")
    browser.drag(x0, y0, x1, y1)
    browser.wait_for(f"document.getElementById('roofline')._fullLayout.xaxis.range[0] !== {home[0][0]!r}")
    (xa, xb), (ya, yb) = _range(browser, "roofline")
    assert xa < math.log10(ridge) < xb and ya < math.log10(top / per_y) < yb
    assert xb - xa < (home[0][1] - home[0][0]) / 2 and yb - ya < (home[1][1] - home[1][0]) / 2
    rect = browser.eval(
        "(() => { const r = document.querySelector('#roofline .modebar-btn[data-title=\"Reset axes\"]')"
        ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()"
    )
    browser.mouse("mouseMoved", rect[0] - 30, rect[1] + 60)  # over the figure: the modebar shows
    browser.click(*rect)
    browser.wait_for(f"document.getElementById('roofline')._fullLayout.xaxis.range[0] === {home[0][0]!r}")
    assert sum(_range(browser, "roofline"), []) == pytest.approx(sum(home, []))  # both axes back

    # hover a GEMM dot: its provenance and the ceiling that binds it, as computed here
    drawn = drawn_measurements(run.measurements)
    m = max((m for _i, m in drawn if m.suite == "gemm"), key=lambda m: m.gflops)
    text = _hover(browser, "roofline", m.intensity, m.gflops)
    b = binding(m, run.ceilings, "measured")
    assert b is not None
    assert text.startswith(m.label) and b.text in text and "provenance: gemm suite" in text, text

    _no_network(browser, page)


def test_static_figure_for_print_and_without_scripts(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(to_html(saved("run_epyc_2vcpu.json")), encoding="utf-8")
    shown = (
        "[...document.querySelectorAll('.static-figure, .interactive-figure')]"
        ".map(e => [e.className, getComputedStyle(e).display !== 'none'])"
    )
    _open(browser, page, "roofline")
    assert browser.eval(shown) == [["interactive-figure", True], ["static-figure", False]]  # on screen
    browser.send("Emulation.setEmulatedMedia", {"media": "print"}, session=True)
    assert browser.eval(shown) == [["interactive-figure", False], ["static-figure", True]]  # in print
    browser.send("Emulation.setEmulatedMedia", {"media": ""}, session=True)
    browser.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=True)
    try:
        browser.events.clear()
        browser.open(page.as_uri())
        assert browser.eval(shown) == [["interactive-figure", False], ["static-figure", True]]  # no scripts
    finally:
        browser.send("Emulation.setScriptExecutionDisabled", {"value": False}, session=True)


def test_compare_in_a_headless_browser(browser: Browser, tmp_path: Path) -> None:
    a, b = saved("run_h100.json"), saved("run_h100_power.json")
    page = tmp_path / "compare.html"
    page.write_text(compare_page.compare_html(Comparison((a, b), ("a.json", "b.json"))), encoding="utf-8")
    _open(browser, page, "compare")
    assert len(BUNDLE.findall(page.read_text(encoding="utf-8"))) == 1
    traces = browser.eval("document.getElementById('compare').data.map(t => [t.name, t.meta, t.x, t.y])")
    (arrows,) = [t for t in traces if t[1]["role"] == "arrows" and t[1]["what"] == "ceilings"]
    start = {t[1]["name"]: (t[2][0], t[3][0]) for t in traces if t[1]["role"] == "ceiling" and t[1]["run"] == "A"}
    end = {t[1]["name"]: (t[2][0], t[3][0]) for t in traces if t[1]["role"] == "ceiling" and t[1]["run"] == "B"}
    # follow the GEMM INT8 arrow: it leaves A's ridge point and lands on B's, as drawn
    k = next(i for i, arrow in enumerate(arrows[1]["arrows"]) if arrow["what"] == "GEMM INT8")
    tail, head = (arrows[2][3 * k], arrows[3][3 * k]), (arrows[2][3 * k + 1], arrows[3][3 * k + 1])
    assert tail == pytest.approx(start["GEMM INT8"]) and head == pytest.approx(end["GEMM INT8"])
    ratio = ceiling(b, "GEMM INT8").value / ceiling(a, "GEMM INT8").value
    per_y = browser.eval("document.getElementById('compare').layout.meta.gflops_per_y")
    assert per_y == 1000.0  # an H100: TFLOP/s
    # the head lies on B's ceiling line too: 3 px off the point the arrowhead marker is closer than the line
    text = _hover(browser, "compare", head[0], head[1] * per_y, offset=3)
    assert text.startswith("B vs A: GEMM INT8") and f"({ratio:.2f}×)" in text and "→" in text, text
    # hide the arrows and show them again from the legend
    i = next(j for j, t in enumerate(traces) if t[1]["role"] == "arrows" and t[1]["what"] == "ceilings")
    _click_text(browser, "#compare .legend .traces .legendtext", "B vs A: ceilings")
    browser.wait_for(f"document.getElementById('compare').data[{i}].visible === 'legendonly'")
    _click_text(browser, "#compare .legend .traces .legendtext", "B vs A: ceilings")
    browser.wait_for(f"document.getElementById('compare').data[{i}].visible === true")
    _no_network(browser, page)
