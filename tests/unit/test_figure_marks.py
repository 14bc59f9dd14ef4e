"""What a reader of the figures needs to read them (issue 32): every mark in the legend, one line per
ceiling height, disturbed points hollow, one line-style convention, labels beside their points,
plain log ticks.

``run_epyc_quick.json`` is a real ``run --quick --device cpu`` of a 2-vCPU AMD EPYC: three cache
levels within 2x of each other, coincident theoretical ceilings, a GEMM size flagged as disturbed.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, List, Tuple

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from apple_roofline.figures import log_ticks, new_figure, plain_number
from apple_roofline.roofline import Point, RooflineModel
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.labels import (
    DIAG_SPACING_PT,
    extents,
    overlap_count,
    point_label_offsets,
    rotated_boxes,
)
from apple_roofline.roofline.views.plot import NEUTRAL, measurement_gid, plot_roofline
from apple_roofline.suites.gemm.ladder import DISTURBED_SERIES, disturbed_gemms
from apple_roofline.suites.hierarchy.plot import plot_hierarchy
from apple_roofline.suites.sweep.plot import plot_sweep

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def quick() -> Run:
    return Run.load(DATA / "run_epyc_quick.json")


def _hex(color: Any) -> str:
    from matplotlib.colors import to_hex

    return str(to_hex(color))


def _lines(fig: Any, prefix: str) -> List[Any]:
    return [ln for ax in fig.axes for ln in ax.lines if (ln.get_gid() or "").startswith(prefix)]


def _texts(fig: Any, prefix: str) -> List[Any]:
    return [t for ax in fig.axes for t in ax.texts if (t.get_gid() or "").startswith(prefix)]


def _legend(fig: Any) -> List[Tuple[str, Any]]:
    leg = fig.axes[0].get_legend()
    return list(zip([t.get_text() for t in leg.get_texts()], leg.legend_handles))


def _hollow(line: Any) -> bool:
    return _hex(line.get_markerfacecolor()) == "#ffffff"


# -- the legend ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, ceilings",
    [
        ("run_epyc_quick.json", "default"),
        ("run_xeon_16vcpu.json", "default"),
        ("run_h100.json", "default"),
        ("run_epyc_quick.json", ["FP64"]),
    ],
)
def test_every_kind_of_marker_is_in_the_legend(name: str, ceilings: Any) -> None:
    f = plot_roofline(RooflineModel.from_run(Run.load(DATA / name)), ceilings=ceilings)
    entries = _legend(f)
    kinds = {
        (h.get_marker(), _hollow(h), _hex(h.get_markerfacecolor() if not _hollow(h) else h.get_markeredgecolor()))
        for _t, h in entries
        if h.get_marker() not in (None, "None", "none", "")
    }
    drawn = _lines(f, "m-") + _lines(f, "ridge:")
    assert drawn
    for ln in drawn:
        # a class-coloured marker is keyed by its shape and fill (the legend shows it in grey);
        # a grey one (its class not drawn, or disturbed) and a sweep's by its colour too
        shape, hollow = ln.get_marker(), _hollow(ln)
        color = _hex(ln.get_markeredgecolor() if hollow else ln.get_markerfacecolor())
        assert any(
            k[0] == shape
            and k[1] == hollow
            and (k[2] == color or k[2] == NEUTRAL and color not in ("#b3b3b3", "#7a7a7a"))
            for k in kinds
        ), (ln.get_gid(), shape, hollow, color, sorted(kinds))


def test_grey_markers_are_explained(quick: Run) -> None:
    """Peak kernels and GEMMs of a class the figure does not draw are grey, and said so."""
    f = plot_roofline(RooflineModel.from_run(quick), ceilings=["FP64", "DRAM bandwidth"])
    grey = [ln for ln in _lines(f, "m-") if _hex(ln.get_markerfacecolor()) == "#b3b3b3"]
    assert {ln.get_marker() for ln in grey} == {"d", "o"}
    names = dict(_legend(f))
    assert _hex(names["peak kernel of a ceiling not drawn"].get_markerfacecolor()) == "#b3b3b3"
    assert _hex(names["vendor GEMM of a ceiling not drawn"].get_markerfacecolor()) == "#b3b3b3"


def test_ridge_points_and_line_styles_in_the_legend(m5_run: Run) -> None:
    f = plot_roofline(RooflineModel.from_run(m5_run))
    names = dict(_legend(f))
    assert not _hollow(names["ridge point (measured)"]) and _hollow(names["ridge point (theoretical)"])
    assert names["measured ceiling"].get_linestyle() == "-" and names["theoretical ceiling"].get_linestyle() == "--"


# -- one line per height -------------------------------------------------------------


def test_one_line_per_height_with_all_its_names(quick: Run) -> None:
    f = plot_roofline(RooflineModel.from_run(quick))
    theoretical = _lines(f, "ceiling:theoretical:compute:")
    by_height: dict = {}
    for ln in theoretical:
        by_height.setdefault(round(float(ln.get_ydata()[0]), 6), []).append(ln)
    assert any(len(g) > 1 for g in by_height.values())  # the run has coincident theoretical ceilings
    shared = {t.get_gid(): t.get_text() for t in _texts(f, "shared:theoretical:")}
    for y, group in by_height.items():
        styles = {(_hex(ln.get_color()), ln.get_linestyle()) for ln in group}
        assert len(styles) == 1  # drawn as one line: no interleaved dashes of several colours
        names = [ln.get_gid().split(":", 3)[3] for ln in group]
        if len(group) == 1:
            assert not any(names[0] in gid.split(":", 2)[2].split(", ") for gid in shared)
            continue
        assert styles == {(NEUTRAL, "--")}
        (text,) = [t for gid, t in shared.items() if set(gid.split(":", 2)[2].split(", ")) == set(names)]
        text = text.replace("\n", " ")
        assert text.startswith(f"theoretical {y:.3g} GFLOP/s: ") and all(n in text for n in names)
    assert "grey: classes of equal height" in dict(_legend(f))


def test_sweeps_have_colours_of_their_own(quick: Run) -> None:
    f = plot_roofline(RooflineModel.from_run(quick))
    sweeps = {_hex(ln.get_color()) for ln in _lines(f, "sweep:")}
    others = {_hex(ln.get_color()) for ln in _lines(f, "ceiling:")}
    assert len(sweeps) == 2 and not sweeps & (others | {"#000000", NEUTRAL, "#b3b3b3"})


# -- disturbed points ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["run_epyc_quick.json", "run_xeon_16vcpu.json"])
def test_a_disturbed_measurement_is_drawn_hollow_and_said(name: str) -> None:
    run = Run.load(DATA / name)
    flagged = disturbed_gemms(run.measurements)
    assert flagged
    f = plot_roofline(RooflineModel.from_run(run))
    for i in flagged:
        (marker,) = _lines(f, measurement_gid(i))
        assert _hollow(marker) and _hex(marker.get_markeredgecolor()) == "#7a7a7a"
    vendor = [
        i
        for i, m in enumerate(run.measurements)
        if m.suite == "gemm" and m.valid and m.ceiling_class and i not in flagged
    ]
    assert vendor and not any(_hollow(_lines(f, measurement_gid(i))[0]) for i in vendor)
    assert _hollow(dict(_legend(f))[DISTURBED_SERIES])


# -- one line-style convention ---------------------------------------------------------


def test_measured_solid_theoretical_dashed_in_every_figure(quick: Run) -> None:
    roof = plot_roofline(RooflineModel.from_run(quick))
    # levels included; a ceiling set by noisy samples (the quick run's GEMM FP32 and FP64) dash-dotted
    noisy = {c.name for c in quick.ceilings if c.noisy}
    styles = {(ln.get_linestyle(), ln.get_gid().split(":", 3)[3] in noisy) for ln in _lines(roof, "ceiling:measured:")}
    assert styles == {("-", False), ("-.", True)}
    assert {ln.get_linestyle() for ln in _lines(roof, "ceiling:theoretical:")} == {"--"}
    assert {ln.get_linestyle() for ln in _lines(roof, "sweep:")} == {"-"}
    sweep = plot_sweep(quick.measurements, ceilings=quick.ceilings)
    refs = _lines(sweep, "reference:")  # measured ceilings
    assert refs and {ln.get_linestyle() for ln in refs} == {"-"}
    hier = plot_hierarchy(quick.measurements, ceilings=quick.ceilings)
    sizes = _lines(hier, "level:")  # the documented (published) cache sizes
    assert sizes and {ln.get_linestyle() for ln in sizes} == {"--"}


# -- labels beside their points ----------------------------------------------------------


def _gap_pt(fig: Any, ann: Any) -> float:
    """Distance, points, from an annotation's anchor to the nearest point of its text box."""
    from matplotlib.text import Text

    r = fig.canvas.get_renderer()
    ann.update_positions(r)
    b = Text.get_window_extent(ann, r)
    x, y = ann.axes.transData.transform(ann.xy)
    dx = max(b.x0 - x, 0.0, x - b.x1)
    dy = max(b.y0 - y, 0.0, y - b.y1)
    return math.hypot(dx, dy) * 72.0 / fig.dpi


def test_point_labels_stay_beside_their_markers(quick: Run) -> None:
    # crowded: six points around the ridge, as examples/numpy_matmul.py draws them
    points = [
        Point(f"matmul N={n}", 2 * n**3, 12 * n * n, 2 * n**3 / g / 1e9)
        for n, g in ((64, 60e9), (128, 95e9), (256, 110e9), (512, 112e9), (1024, 50e9), (2048, 5e9))
    ]
    f = plot_roofline(RooflineModel.from_run(quick), points=points)
    f.canvas.draw()
    labels = _texts(f, "pointlabel:")
    assert len(labels) == len(points)
    farthest = max(abs(c) for (dx, dy), _ha, _va in point_label_offsets(7.0) for c in (dx, dy))
    for ann in labels:
        assert _gap_pt(f, ann) <= farthest + 1.0, ann.get_text()


def test_hierarchy_labels_beside_their_plateaus(quick: Run) -> None:
    f = plot_hierarchy(quick.measurements, ceilings=quick.ceilings)
    f.canvas.draw()
    labels = _texts(f, "plateaulabel:")
    # read: L1d, L2, L3; rmw: L2, L3. This quick run's DRAM points lie short of where DRAM's working
    # sets start (docs/design/hierarchy.md, "The memory hierarchy") and rmw's L1d points do not agree: no
    # level is told apart there, so no label (the note under the axes names them).
    assert sorted(a.get_text().split()[0] for a in labels) == ["L1d", "L2", "L2", "L3", "L3"]
    assert "could not be told apart" in " ".join(t.get_text() for t in f.axes[0].texts)
    for ann in labels:
        assert _gap_pt(f, ann) <= 2.5 * 5.0 + 1.0, ann.get_text()
    r = f.canvas.get_renderer()
    boxes = [ann.get_window_extent(r) for ann in labels]
    frame = f.axes[0].get_window_extent(r)
    for a, b in itertools.combinations(boxes, 2):
        assert not a.overlaps(b)
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 for b in boxes)  # none cut by the axes' edge


def test_cache_level_labels_stagger(quick: Run) -> None:
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    f = plot_roofline(RooflineModel.from_run(quick))
    f.canvas.draw()
    r = f.canvas.get_renderer()
    diag = _texts(f, "label:bandwidth:")
    assert len(diag) == 4  # DRAM, L1d, L2, L3
    pad = (DIAG_SPACING_PT - 1.0) * f.dpi / 72.0
    boxes = [rotated_boxes(Text.get_window_extent(t, r), t.get_rotation(), Bbox) for t in diag]
    for a, b in itertools.combinations(boxes, 2):
        assert not any(x.padded(pad).overlaps(y) for x in a for y in b)


# -- readable log ticks ------------------------------------------------------------------


def test_plain_numbers() -> None:
    assert [plain_number(v) for v in (0.05, 1, 20, 400, 1000, 2500, 10000, 3e6, 2e9)] == [
        "0.05",
        "1",
        "20",
        "400",
        "1k",
        "2.5k",
        "10k",
        "3M",
        "2G",
    ]
    with pytest.raises(ValueError, match="positive"):
        log_ticks(new_figure((2, 2)).add_subplot(1, 1, 1).yaxis, 0.0, 10.0)


def _tick_labels(fig: Any, axis: Any) -> List[str]:
    fig.canvas.draw()
    lo, hi = sorted(axis.get_view_interval())
    return [t.get_text() for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs()) if t.get_text() and lo <= v <= hi]


def test_hierarchy_y_ticks_are_plain_and_several(quick: Run) -> None:
    f = plot_hierarchy(quick.measurements, ceilings=quick.ceilings)
    texts = _tick_labels(f, f.axes[0].yaxis)
    assert len(texts) >= 3, texts
    assert all(t.replace(".", "").replace("k", "").isdigit() for t in texts), texts  # no "4×10^2"
    assert texts == ["50", "100", "200", "500"]


@pytest.mark.parametrize(
    "lo, hi, want",
    [
        (300.0, 420.0, ["300", "400"]),
        (40.0, 900.0, ["50", "100", "200", "500"]),
        (0.04, 60.0, ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"]),
        (1.0, 1e6, ["1", "10", "100", "1k", "10k", "100k", "1M"]),
    ],
)
def test_log_ticks_for_any_span(lo: float, hi: float, want: List[str]) -> None:
    fig = new_figure((4.0, 6.0))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    log_ticks(ax.yaxis, lo, hi)
    assert _tick_labels(fig, ax.yaxis) == want


def test_sweep_ticks_are_plain(quick: Run) -> None:
    f = plot_sweep(quick.measurements, ceilings=quick.ceilings)
    for ax in f.axes:
        texts = _tick_labels(f, ax.yaxis)
        assert len(texts) >= 3 and not any("$" in t or "10^" in t for t in texts), texts


def test_sweep_ceilings_a_few_percent_apart_share_one_label(quick: Run) -> None:
    """Two measured ceilings 3 % apart (a loaded 2-vCPU run: FP32 scalar ILP 84.9, FP32 vector 82.6
    GFLOP/s) keep their coloured lines but share one label giving both values: two labels a few
    points apart found no room beside the curves and were drawn over each other."""
    from dataclasses import replace

    vec = next(c for c in quick.ceilings if c.name == "FP32 vector" and c.source == "measured")
    ilp = next(c for c in quick.ceilings if c.name == "FP32 scalar ILP" and c.source == "measured")
    close = [replace(vec, value=82.6), replace(ilp, value=84.9)]
    f = plot_sweep(quick.measurements, ceilings=close)
    labels = [t.get_text() for t in _texts(f, "referencelabel:") if "GFLOP/s" in t.get_text()]
    assert labels == ["FP32 scalar ILP 84.9, FP32 vector 82.6 GFLOP/s: ceilings (measured)"]
    assert len({_hex(ln.get_color()) for ln in _lines(f, "reference:FP32")}) == 2
    far = [replace(vec, value=40.0), replace(ilp, value=84.9)]
    f = plot_sweep(quick.measurements, ceilings=far)
    assert len([t for t in _texts(f, "referencelabel:") if "GFLOP/s" in t.get_text()]) == 2


def test_overlap_count_counts_as_matplotlibs_bbox_overlaps() -> None:
    from matplotlib.transforms import Bbox

    rng = np.random.default_rng(7)
    # reversed corners, touching edges (integer grid) and a NaN box among them
    placed = [Bbox.from_extents(*rng.integers(0, 10, 4).astype(float)) for _ in range(40)]
    placed.append(Bbox.from_extents(float("nan"), 0.0, 1.0, 1.0))
    for _ in range(50):
        boxes = [Bbox.from_extents(*rng.integers(0, 10, 4).astype(float)) for _ in range(int(rng.integers(1, 4)))]
        want = sum(1 for p in placed if any(b.overlaps(p) for b in boxes))
        assert overlap_count(extents(placed), extents(boxes)) == want
    assert overlap_count(extents([]), extents(placed)) == 0
