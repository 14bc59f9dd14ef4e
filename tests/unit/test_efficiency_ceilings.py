"""Energy efficiency at the ceilings (docs/design/power.md, "Clocks and power"): the measurement that sets
each measured ceiling, its GFLOP/s or GB/s per watt on the roofline figure's labels, and both runs'
efficiency side by side in ``compare``. Synthetic runs; watts are made up for the test."""

from __future__ import annotations

import dataclasses
from typing import Dict

import pytest

from apple_roofline.roofline import Run
from apple_roofline.roofline.compare.compare import Comparison, compare_markdown
from apple_roofline.roofline.model.efficiency import ceiling_efficiency, ceiling_measurements, per_watt_text
from apple_roofline.roofline.model.model import RooflineModel
from apple_roofline.roofline.views.plot import plot_roofline
from apple_roofline.text import sig_figs
from conftest import MakeMeasurement


def with_power(run: Run, watts: float, only: str = "") -> Run:
    ms = tuple(
        dataclasses.replace(m, params={**m.params, "power_w": watts})
        if m.ceiling_class and (not only or m.ceiling_class == only)
        else m
        for m in run.measurements
    )
    return dataclasses.replace(run, measurements=ms)


def test_the_ceiling_measurement_is_the_best_valid_one(make_m: MakeMeasurement) -> None:
    a = make_m(
        "peak",
        "fma",
        "fp32",
        flops=10**9,
        bytes=1,
        gflops=100.0,
        ceiling_class="X",
        ceiling_kind="compute",
        params={"power_w": 50.0},
    )
    b = make_m(
        "peak",
        "fma",
        "fp32",
        flops=10**9,
        bytes=1,
        gflops=300.0,
        ceiling_class="X",
        ceiling_kind="compute",
        params={"power_w": 100.0},
    )
    bad = make_m(
        "peak",
        "fma",
        "fp32",
        flops=10**9,
        bytes=1,
        gflops=900.0,
        ceiling_class="X",
        ceiling_kind="compute",
        valid=False,
        params={"power_w": 1.0},
    )
    assert ceiling_measurements([a, b, bad])["X"] is b
    (e,) = ceiling_efficiency([a, b, bad])
    assert (e.name, e.kind, e.unit, e.watts) == ("X", "compute", "GFLOP/s", 100.0)
    assert e.per_watt == pytest.approx(3.0)
    assert per_watt_text(e) == "3.00 GFLOP/s per W at 100 W"
    # the best measurement without power gives no efficiency, even if a slower one had power
    c = dataclasses.replace(b, params={})
    assert ceiling_efficiency([a, c]) == []


def _label_texts(run: Run) -> Dict[str, str]:
    import matplotlib.pyplot as plt

    fig = plot_roofline(RooflineModel.from_run(run))
    try:
        return {
            str(t.get_gid()): t.get_text()
            for t in fig.findobj(lambda o: str(getattr(o, "get_gid", lambda: "")() or "").startswith("label:"))
        }
    finally:
        plt.close(fig)


def test_plot_labels_carry_per_watt_only_where_power_was_measured(m5_run: Run) -> None:
    plain = _label_texts(m5_run)
    assert plain and not any("per W" in t for t in plain.values())
    texts = _label_texts(with_power(m5_run, 20.0))
    bw = texts["label:bandwidth:DRAM bandwidth"]
    e = {x.name: x for x in ceiling_efficiency(with_power(m5_run, 20.0).measurements)}
    assert bw.endswith(f", {sig_figs(e['DRAM bandwidth'].per_watt)} GB/s per W")
    compute = [t for g, t in texts.items() if g.startswith("label:compute:") and "per W" in t]
    assert compute and all("GFLOP/s per W" in t for t in compute)


def test_compare_shows_both_runs_efficiency(m5_run: Run, m5_run_b: Run) -> None:
    assert "Energy efficiency" not in compare_markdown(Comparison((m5_run, m5_run_b)))  # no power: no section
    a = with_power(m5_run, 20.0)
    b = with_power(m5_run_b, 10.0, only="DRAM bandwidth")
    text = compare_markdown(Comparison((a, b)))
    assert "## Energy efficiency (measured ceilings with power)" in text
    values, ratios = text.split("## Energy efficiency (measured ceilings with power)")[1].split(
        "## Energy efficiency: ratios"
    )
    ea = {e.name: e for e in ceiling_efficiency(a.measurements)}["DRAM bandwidth"]
    eb = {e.name: e for e in ceiling_efficiency(b.measurements)}["DRAM bandwidth"]
    row = [
        c.strip()
        for c in next(ln for ln in values.splitlines() if ln.startswith("| DRAM bandwidth ")).strip("|").split("|")
    ]
    assert row == ["DRAM bandwidth", "GB/s per W", sig_figs(ea.per_watt), sig_figs(eb.per_watt)]
    row = [
        c.strip()
        for c in next(ln for ln in ratios.splitlines() if ln.startswith("| DRAM bandwidth ")).strip("|").split("|")
    ]
    assert row[2:] == ["1.00×", f"{eb.per_watt / ea.per_watt:.2f}×"]
    gemm = next(ln for ln in values.splitlines() if ln.startswith("| GEMM FP32 "))
    assert gemm.rstrip().endswith("| — |")  # B has no power at that ceiling
