"""What the interactive rooflines mark (issue 45): noisy ceilings, the sweep's two kernels, disturbed and
over-limit points, and ticks between decades smaller than the decade labels, read from the figures' JSON
and checked against Plotly's own schema."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List

import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("plotly")

import plotly.graph_objects as go

from apple_roofline.roofline.compare.compare import Comparison
from apple_roofline.roofline.compare.compare_interactive import compare_figure
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.interactive import drawn_measurements, figure_data, roofline_figure
from apple_roofline.roofline.views.plot import DISTURBED, OVER_LIMIT_COLOR, ceiling_classes
from apple_roofline.roofline.views.tables import model_of
from apple_roofline.study.records import OverLimit
from apple_roofline.suites.gemm.ladder import disturbed_gemms

DATA = Path(__file__).parent / "data"


def _figure(run: Run) -> Dict[str, Any]:
    model = model_of(run)
    assert model is not None
    fig = roofline_figure(run, model)
    go.Figure(fig)  # every key and value is one Plotly knows (raises ValueError otherwise)
    return fig


def _points(fig: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [t for t in fig["data"] if t["meta"]["role"] == "points"]


def _busy_run() -> Run:
    """A 2-vCPU guest's quick run: GEMM FP32 and FP64 set by noisy samples (CV 90 % and 87 %), a GEMM
    size the ladder check flags as disturbed, the sweep's vec4 and scalar8."""
    return Run.load(DATA / "run_epyc_quick.json")


def test_noisy_ceilings_are_marked_in_the_report_figure() -> None:
    run = _busy_run()
    noisy = {c.name: c.noise for c in run.ceilings if c.noisy}
    assert set(noisy) == {"GEMM FP32", "GEMM FP64"}
    lines = [t for t in _figure(run)["data"] if t["meta"]["role"] == "ceiling"]
    for t in lines:
        meta = t["meta"]
        marked = meta["source"] == "measured" and meta["name"] in noisy
        assert meta["noisy"] == marked and ("noisy samples" in t["name"]) == marked, t["name"]
        assert t["line"]["dash"] == ("dashdot" if marked else "solid" if meta["source"] == "measured" else "dash")
    (fp32,) = [t for t in lines if t["meta"]["name"] == "GEMM FP32" and t["meta"]["source"] == "measured"]
    assert fp32["name"] == "GEMM FP32 113 GFLOP/s (noisy samples, CV 90%)"


def test_noisy_ceilings_are_marked_in_the_comparison_figure() -> None:
    busy, other = _busy_run(), Run.load(DATA / "run_epyc_2vcpu.json")
    fig = compare_figure(Comparison((busy, other)))
    assert fig is not None
    go.Figure(fig)
    names = {(t["meta"]["run"], t["meta"]["name"]): t for t in fig["data"] if t["meta"]["role"] == "ceiling"}
    assert names[("A", "GEMM FP32")]["name"] == "A: GEMM FP32 (noisy samples, CV 90%)"
    assert names[("A", "GEMM FP64")]["name"] == "A: GEMM FP64 (noisy samples, CV 87%)"
    assert names[("B", "GEMM FP32")]["meta"]["noisy"] and not names[("B", "GEMM FP64")]["meta"]["noisy"]
    assert names[("A", "FP32 vector")]["name"] == "A: FP32 vector"


def test_the_sweeps_two_kernels_are_two_lines() -> None:
    run = _busy_run()
    fig = _figure(run)
    sweeps = [t for t in _points(fig) if t["meta"]["suite"] == "sweep"]
    assert [(t["meta"]["kernel"], t["meta"]["dtype"]) for t in sweeps] == [("vec4", "fp32"), ("scalar8", "fp32")]
    for t in sweeps:
        ms = [
            m
            for _i, m in drawn_measurements(run.measurements)
            if m.suite == "sweep" and m.kernel == t["meta"]["kernel"]
        ]
        assert t["mode"] == "lines+markers" and t["name"] == f"sweep {t['meta']['kernel']} (fp32, {len(ms)})"
        assert t["x"] == sorted(m.intensity for m in ms)  # joined in order of intensity
        assert sorted(run.measurements[i].kernel for i in t["customdata"]) == [t["meta"]["kernel"]] * len(ms)
        assert t["line"]["color"] == t["marker"]["color"][0]
    model = model_of(run)
    assert model is not None
    bws, comps = ceiling_classes(list(model.ceilings))
    taken = {c.color for c in bws + comps}
    a, b = (t["line"]["color"] for t in sweeps)
    assert a != b and not {a, b} & taken  # told apart from each other and from every ceiling
    assert {t["marker"]["symbol"][0] for t in sweeps} == {"circle", "diamond"}


def test_disturbed_points_are_apart_from_valid_ones() -> None:
    run = _busy_run()
    fig = _figure(run)
    drawn = dict(drawn_measurements(run.measurements))
    disturbed = sorted(i for i in disturbed_gemms(run.measurements) if i in drawn)
    assert disturbed  # the fixture has one
    (flagged,) = [t for t in _points(fig) if t["meta"].get("flag") == "disturbed"]
    assert sorted(flagged["customdata"]) == disturbed and flagged["name"].startswith("disturbed: > 5x below")
    assert set(flagged["marker"]["symbol"]) == {"circle-open"} and set(flagged["marker"]["color"]) == {DISTURBED}
    (gemm,) = [t for t in _points(fig) if t["meta"] == {"role": "points", "suite": "gemm"}]
    assert not set(gemm["customdata"]) & set(disturbed) and "circle-open" not in gemm["marker"]["symbol"]
    assert DISTURBED not in gemm["marker"]["color"]
    # every drawn measurement is in exactly one trace, and the data download keeps each
    assert sorted(i for t in _points(fig) for i in t["customdata"]) == sorted(drawn)
    assert len(figure_data(fig)["marks"]) == len(drawn)


def test_a_point_above_its_limit_is_an_open_cross_on_its_line() -> None:
    run = _busy_run()
    i, m = next((i, m) for i, m in enumerate(run.measurements) if m.suite == "sweep" and m.kernel == "vec4")
    over = OverLimit(m.gflops, m.gflops / 2, "GFLOP/s", "test roof", "cache-resident working set")
    measurements = list(run.measurements)
    measurements[i] = dataclasses.replace(m, over_limit=over)
    fig = _figure(dataclasses.replace(run, measurements=tuple(measurements)))
    (vec4,) = [t for t in _points(fig) if t["meta"].get("kernel") == "vec4"]
    k = vec4["customdata"].index(i)
    assert vec4["marker"]["symbol"][k] == "x-open" and vec4["marker"]["color"][k] == OVER_LIMIT_COLOR
    others = [j for j in range(len(vec4["customdata"])) if j != k]
    assert {vec4["marker"]["symbol"][j] for j in others} == {"circle"}
    assert OVER_LIMIT_COLOR not in {vec4["marker"]["color"][j] for j in others}


@pytest.mark.parametrize("which", ["report", "compare"])
def test_minor_ticks_are_smaller_than_the_decade_labels(which: str) -> None:
    run = _busy_run()
    fig = _figure(run) if which == "report" else compare_figure(Comparison((run, Run.load(DATA / "run_h100.json"))))
    assert fig is not None
    for axis in ("xaxis", "yaxis"):
        ax = fig["layout"][axis]
        assert ax["type"] == "log" and ax["ticks"] == "outside" and ax["showgrid"]
        minor = ax["minor"]
        assert minor["dtick"] == "D1" and minor["ticks"] == "outside"  # a tick at every digit of a decade
        assert 0 < minor["ticklen"] < ax["ticklen"]  # shorter than the decade ticks
        assert ax["minorloglabels"] == "small digits"  # Plotly's 2 and 5 at three quarters of the labels' size
        assert minor["gridcolor"] != ax["gridcolor"]
    laid = go.Figure(fig).layout  # Plotly takes the settings as given
    assert laid.xaxis.minor.ticklen == 3 and laid.yaxis.minorloglabels == "small digits"
