"""The roofline figure, the comparison figure and the sweep figure (views of a model)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Tuple

import pytest

pytest.importorskip("matplotlib")

import apple_roofline as ar
from apple_roofline.errors import OptionError
from apple_roofline.figures import PALETTE, save_figure
from apple_roofline.roofline import Point, RooflineModel
from apple_roofline.roofline.compare.compare_plot import plot_compare
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.model.selection import default_names, parse_ceilings_option, select_ceilings
from apple_roofline.roofline.views.axes import FIGSIZE, X_LABEL
from apple_roofline.roofline.views.labels import rotated_boxes
from apple_roofline.roofline.views.plot import (
    CLASS_COLORS,
    CLASS_ORDER,
    NEUTRAL,
    class_colors,
    equal_heights,
    measurement_gid,
    plot_roofline,
)
from apple_roofline.study.records import Ceiling
from apple_roofline.suites.sweep.plot import COMPUTE_Y_LABEL, plot_sweep

DATA = Path(__file__).parent / "data"


def _model(run: Run) -> RooflineModel:
    m: RooflineModel = RooflineModel.from_run(run)
    return m


def _lines(fig: Any, prefix: str) -> List[Any]:
    return [ln for ax in fig.axes for ln in ax.lines if (ln.get_gid() or "").startswith(prefix)]


def _texts(fig: Any) -> List[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _ann(fig: Any, gid_prefix: str) -> List[Any]:
    return [t for ax in fig.axes for t in ax.texts if (t.get_gid() or "").startswith(gid_prefix)]


def _hex(color: Any) -> str:
    from matplotlib.colors import to_hex

    return str(to_hex(color))


@pytest.fixture
def fig(m5_run: Run) -> Any:
    return plot_roofline(_model(m5_run), points=[Point("my kernel", 4e12, 2e11, 8.0)])


def test_import_does_not_load_matplotlib() -> None:
    code = (
        "import sys, apple_roofline, apple_roofline.roofline, apple_roofline.figures; "
        "print('matplotlib' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_axes(fig: Any) -> None:
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == X_LABEL == "Arithmetic intensity (FLOP/byte)"
    assert ax.get_ylabel() == "Performance (GFLOP/s)"  # the M5 run stays below 10,000 GFLOP/s
    assert ax.get_title() == "Apple M5 (metal) — 2026-11-20"
    w, h = fig.get_size_inches()
    assert (w, h) == pytest.approx(FIGSIZE) and FIGSIZE == (11.0, 7.0)


def test_custom_title(m5_run: Run) -> None:
    assert plot_roofline(_model(m5_run), title="Figure 3").axes[0].get_title() == "Figure 3"


def test_the_public_entry_draws_a_run_s_roofline(m5_run: Run) -> None:
    f = ar.plot_roofline(m5_run.roofline(), points=[Point("mine", 1e9, 1e8, 0.01)])
    assert _lines(f, "point:mine") and _lines(f, "ceiling:measured:bandwidth:DRAM bandwidth")


def test_ceiling_lines(fig: Any) -> None:
    measured = _lines(fig, "ceiling:measured:")
    theoretical = _lines(fig, "ceiling:theoretical:")
    assert len(measured) == 1 + 4  # DRAM bandwidth + 4 compute classes (the lower FP16 class left out)
    assert len(theoretical) == 1 + 2
    ilp = _lines(fig, "ceiling:measured:compute:FP32 scalar ILP")[0]
    xs, ys = ilp.get_xdata(), ilp.get_ydata()
    assert xs[0] == pytest.approx(3849 / 122) and list(ys) == pytest.approx([3849.0, 3849.0])
    bw = _lines(fig, "ceiling:measured:bandwidth:")[0]
    xs, ys = bw.get_xdata(), bw.get_ydata()
    assert ys[0] / xs[0] == pytest.approx(122.0)
    assert xs[-1] == pytest.approx(6004 / 122)  # up to the highest measured compute ceiling
    assert len(_lines(fig, "ridge:measured:")) == 4 and len(_lines(fig, "ridge:theoretical:")) == 2


def test_colours_never_repeat_and_theoretical_takes_the_measured_colour(fig: Any) -> None:
    measured = {ln.get_gid().split(":", 3)[3]: _hex(ln.get_color()) for ln in _lines(fig, "ceiling:measured:compute:")}
    assert len(set(measured.values())) == len(measured) == 4
    assert "#000000" not in measured.values()
    for ln in _lines(fig, "ceiling:theoretical:compute:"):
        name = ln.get_gid().split(":", 3)[3]
        assert _hex(ln.get_color()) == measured[name]
        assert ln.get_linestyle() == "--"
    assert all(ln.get_linestyle() == "-" for ln in _lines(fig, "ceiling:measured:"))
    bws = _lines(fig, "ceiling:") and [ln for ln in _lines(fig, "ceiling:") if ":bandwidth:" in ln.get_gid()]
    assert {_hex(ln.get_color()) for ln in bws} == {"#000000"}


def test_class_colours_are_fixed_per_class_and_distinct() -> None:
    a = class_colors(["GEMM FP16", "FP32 vector"])
    b = class_colors(["FP32 vector", "something new", "GEMM FP16"])
    assert a["GEMM FP16"] == b["GEMM FP16"] == CLASS_COLORS["GEMM FP16"]
    assert set(CLASS_COLORS.values()) <= set(PALETTE) and len(set(CLASS_COLORS.values())) == len(CLASS_COLORS)
    assert len(set(b.values())) == 3
    many = class_colors(list(CLASS_ORDER) + ["x", "y"])
    assert len(set(many.values())) == len(many)


def test_one_label_per_class_with_value_ridge_and_theoretical(fig: Any) -> None:
    labels = {t.get_gid(): t.get_text() for t in _ann(fig, "label:")}
    assert set(labels) == {
        "label:bandwidth:DRAM bandwidth",
        "label:compute:FP32 vector",
        "label:compute:FP32 scalar ILP",
        "label:compute:FP16 scalar ILP",
        "label:compute:GEMM FP32",
    }
    assert labels["label:bandwidth:DRAM bandwidth"] == "DRAM bandwidth 122 GB/s (theoretical 154 GB/s)"
    assert (
        labels["label:compute:FP32 scalar ILP"]
        == "FP32 scalar ILP: 3,849 GFLOP/s\nridge 31.5 FLOP/B, theoretical 4,096 (94%)"
    )
    assert labels["label:compute:FP32 vector"] == "FP32 vector: 815 GFLOP/s\nridge 6.7 FLOP/B"


def test_measurements_one_marker_each(fig: Any, m5_run: Run) -> None:
    markers = _lines(fig, "m-")
    drawn = {ln.get_gid() for ln in markers}
    want = {
        measurement_gid(i) for i, m in enumerate(m5_run.measurements) if m.valid and m.flops > 0 and m.suite != "stream"
    }
    assert drawn == want
    invalid = [i for i, m in enumerate(m5_run.measurements) if not m.valid]
    assert invalid and not drawn & {measurement_gid(i) for i in invalid}  # never drawn
    sweeps = _lines(fig, "sweep:")
    assert sorted(ln.get_gid() for ln in sweeps) == ["sweep:scalar8 (fp32)", "sweep:vec4 (fp32)"]
    for ln in sweeps:
        xs = list(ln.get_xdata())
        assert len(xs) == 11 and xs == sorted(xs)
    pt = _lines(fig, "point:my kernel")[0]
    assert pt.get_xdata()[0] == pytest.approx(20.0) and pt.get_ydata()[0] == pytest.approx(500.0)


def test_gemm_and_peak_markers_take_their_class_colour(fig: Any, m5_run: Run) -> None:
    colours = {ln.get_gid().split(":", 3)[3]: _hex(ln.get_color()) for ln in _lines(fig, "ceiling:measured:compute:")}
    for i, m in enumerate(m5_run.measurements):
        if m.valid and m.suite in ("gemm", "peak") and m.ceiling_class in colours:
            ln = _lines(fig, measurement_gid(i))[0]
            assert _hex(ln.get_markerfacecolor()) == colours[m.ceiling_class or ""].lower(), m.label


def test_limits(fig: Any) -> None:
    ax = fig.axes[0]
    xlo, xhi = ax.get_xlim()
    assert xlo == pytest.approx(0.25 / 16)  # smallest intensity: scalar8 F=1
    assert xhi == pytest.approx(4096 * 4)  # largest intensity: peak kernels
    ylo, yhi = ax.get_ylim()
    assert ylo < 122 * xlo and yhi > 8192


def _label_boxes(fig: Any) -> List[Tuple[str, List[Any]]]:
    """(text, boxes) of every label; a rotated (bandwidth) label is covered by small boxes along its
    diagonal, not its mostly empty axis-aligned extent."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        for t in ax.texts:
            t.update_positions(r)
            b = Text.get_window_extent(t, r)  # the text, without its leader line
            rot = t.get_rotation() % 180
            boxes = rotated_boxes(b, t.get_rotation(), Bbox) if 1 < rot < 179 and abs(rot - 90) > 1 else [b]
            out.append((t.get_text(), boxes))
    return out


def _marker_boxes(fig: Any) -> List[Tuple[str, Any]]:
    from matplotlib.transforms import Bbox

    out = []
    for ax in fig.axes:
        for ln in ax.lines:
            gid = ln.get_gid() or ""
            if not gid.startswith(("m-", "point:", "ridge:")):
                continue
            r = 0.5 * ln.get_markersize() * fig.dpi / 72.0
            for x, y in zip(ln.get_xdata(), ln.get_ydata()):
                cx, cy = ax.transData.transform((x, y))
                out.append((f"{gid} at {x:g}", Bbox.from_extents(cx - r, cy - r, cx + r, cy + r)))
    return out


def _assert_clean_layout(fig: Any) -> None:
    labels = _label_boxes(fig)
    for (ta, a), (tb, b) in itertools.combinations(labels, 2):
        assert not any(x.overlaps(y) for x in a for y in b), f"{ta!r} overlaps {tb!r}"
    for t, boxes in labels:
        for name, m in _marker_boxes(fig):
            assert not any(b.overlaps(m) for b in boxes), f"{t!r} covers the marker {name}"
    r = fig.canvas.get_renderer()
    frame = fig.axes[0].get_window_extent(r)
    for t, boxes in labels:
        for b in boxes:
            assert frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, t
    for t, boxes in labels:
        assert all(fig.bbox.x0 <= b.x0 and b.x1 <= fig.bbox.x1 for b in boxes), f"{t!r} leaves the figure"


def test_labels_do_not_overlap_and_fit(fig: Any) -> None:
    assert len(_texts(fig)) == 1 + 4 + 1  # the bandwidth, 4 compute classes, 1 user point
    _assert_clean_layout(fig)


def test_layout_checker_catches_an_overlap(m5_run: Run) -> None:
    f = plot_roofline(_model(m5_run))
    a, b = _ann(f, "label:compute:")[:2]
    b.xyann = a.xyann
    b.xy = a.xy
    with pytest.raises(AssertionError, match="overlaps"):
        _assert_clean_layout(f)


def _gpu_like_run(m5_run: Run) -> Run:
    """An H200-like roofline: TFLOP/s scale, six GEMM precisions and coincident theoretical lines
    (the figures of an H200 run)."""

    def c(name: str, kind: str, v: float, src: str) -> Ceiling:
        return Ceiling(name, kind, v, "GB/s" if kind == "bandwidth" else "GFLOP/s", src, "test")

    measured = [
        c("DRAM bandwidth", "bandwidth", 4342, "measured"),
        c("GEMM INT8", "compute", 1.52e6, "measured"),
        c("GEMM BF16", "compute", 801917, "measured"),
        c("GEMM FP16", "compute", 766779, "measured"),
        c("GEMM TF32", "compute", 415706, "measured"),
        c("FP16 vector", "compute", 123693, "measured"),
        c("FP16 scalar ILP", "compute", 102683, "measured"),
        c("FP32 vector", "compute", 64415, "measured"),
        c("GEMM FP64", "compute", 61075, "measured"),
        c("FP32 scalar ILP", "compute", 58719, "measured"),
        c("GEMM FP32", "compute", 51415, "measured"),
        c("FP64", "compute", 32685, "measured"),
    ]
    theoretical = [
        c("DRAM bandwidth", "bandwidth", 4814, "theoretical"),
        c("GEMM INT8", "compute", 2.14e6, "theoretical"),
        c("GEMM FP16", "compute", 1.07e6, "theoretical"),
        c("GEMM BF16", "compute", 1.07e6, "theoretical"),
        c("GEMM TF32", "compute", 535265, "theoretical"),
        c("FP16 vector", "compute", 133816, "theoretical"),
        c("FP16 scalar ILP", "compute", 133816, "theoretical"),
        c("FP32 vector", "compute", 66908, "theoretical"),
        c("FP32 scalar ILP", "compute", 66908, "theoretical"),
        c("GEMM FP32", "compute", 66908, "theoretical"),
        c("GEMM FP64", "compute", 66908, "theoretical"),
        c("FP64", "compute", 33454, "theoretical"),
    ]
    sweeps = tuple(m for m in m5_run.measurements if m.suite == "sweep")
    return dataclasses.replace(
        m5_run, device={"backend": "cuda", "name": "GPU"}, measurements=sweeps, ceilings=tuple(measured + theoretical)
    )


def test_a_gpu_roofline_is_legible(m5_run: Run) -> None:
    f = plot_roofline(_model(_gpu_like_run(m5_run)), ceilings="all")
    ax = f.axes[0]
    assert ax.get_ylabel() == "Performance (TFLOP/s)"
    assert _lines(f, "ceiling:measured:compute:GEMM INT8")[0].get_ydata()[0] == pytest.approx(1520.0)
    labels = {t.get_gid(): t.get_text() for t in _ann(f, "label:")}
    assert len(labels) == 12  # one per class: bandwidth + 11 compute
    assert labels["label:bandwidth:DRAM bandwidth"] == "DRAM bandwidth 4.34 TB/s (theoretical 4.81 TB/s)"
    assert labels["label:compute:GEMM FP16"].startswith("GEMM FP16: 767 TFLOP/s\n")
    colours = [_hex(ln.get_color()) for ln in _lines(f, "ceiling:measured:compute:")]
    assert len(set(colours)) == len(colours) == 11
    # four theoretical lines at 66.9 TFLOP/s: one grey dashed line, one label naming all four
    at = [ln for ln in _lines(f, "ceiling:theoretical:compute:") if ln.get_ydata()[0] == pytest.approx(66.908)]
    assert len(at) == 4
    assert {(_hex(ln.get_color()), ln.get_linestyle()) for ln in at} == {(NEUTRAL, "--")}
    shared = [t for t in _ann(f, "shared:theoretical:") if "66.9 TFLOP/s" in t.get_text()]
    assert len(shared) == 1
    assert (
        shared[0].get_text().replace("\n", " ")
        == "theoretical 66.9 TFLOP/s: FP32 vector, GEMM FP64, FP32 scalar ILP, GEMM FP32"
    )
    _assert_clean_layout(f)


@pytest.mark.parametrize("name", ["run_epyc_2vcpu.json", "run_xeon_16vcpu.json", "run_h100.json"])
def test_real_runs_legible(name: str) -> None:
    run = Run.load(DATA / name)
    f = plot_roofline(_model(run))
    drawn = {ln.get_gid().split(":", 3)[3] for ln in _lines(f, "ceiling:")}
    labelled = {t.get_gid().split(":", 2)[2] for t in _ann(f, "label:")}
    assert drawn == labelled  # every class drawn is labelled, once
    _assert_clean_layout(f)


@pytest.mark.parametrize("name", ["run_epyc_2vcpu.json", "run_xeon_16vcpu.json", "run_h100.json"])
def test_real_runs_compare_legible(name: str) -> None:
    run = Run.load(DATA / name)
    _assert_clean_layout(plot_compare([_model(run), _model(run)]))


def test_the_h100_run_by_default(m5_run: Run) -> None:
    """A real H100 run: the core classes, the best FP16 class, GEMM FP32/FP64, the best half-precision
    GEMM and the top tensor precision, one colour each (fewer than ``"all"``); the tiny GEMM sizes
    counted below the axis instead of stretching it."""
    run = Run.load(DATA / "run_h100.json")
    f = plot_roofline(_model(run))
    names = {ln.get_gid().split(":", 3)[3] for ln in _lines(f, "ceiling:measured:compute:")}
    assert names == {
        "GEMM INT8",
        "GEMM BF16",
        "GEMM FP64",
        "GEMM FP32",
        "FP16 vector",
        "FP32 vector",
        "FP32 scalar ILP",
        "FP64",
    }
    colours = [_hex(ln.get_color()) for ln in _lines(f, "ceiling:measured:compute:")]
    assert len(set(colours)) == len(colours)
    ylo, yhi = f.axes[0].get_ylim()
    assert yhi / ylo <= 10**5.5 * 1.001
    below = [t.get_text() for t in f.axes[0].get_legend().get_texts() if "below the axis" in t.get_text()]
    assert below and int(below[0].split()[0]) == sum(
        1 for m in run.measurements if m.valid and m.flops and m.suite != "stream" and m.gflops / 1e3 < ylo
    )


def test_theoretical_compute_without_theoretical_bandwidth(m5_run: Run) -> None:
    ceilings = [c for c in m5_run.ceilings if not (c.source == "theoretical" and c.kind == "bandwidth")]
    f = plot_roofline(_model(m5_run.with_ceilings(ceilings)))
    xlo, xhi = f.axes[0].get_xlim()
    for ln in _lines(f, "ceiling:theoretical:compute:"):
        xs = ln.get_xdata()
        assert xs[0] == pytest.approx(xlo) and xs[-1] == pytest.approx(xhi)
        assert ln.get_linestyle() == "--"
    assert _lines(f, "ceiling:theoretical:bandwidth") == []


def test_draws_into_given_axes(m5_run: Run) -> None:
    from matplotlib.figure import Figure

    mine = Figure()
    ax = mine.add_subplot(1, 2, 2)
    out = plot_roofline(_model(m5_run), ax=ax)
    assert out is mine
    assert ax.get_xscale() == "log" and len(_lines(mine, "ceiling:")) == 8


# -- which ceilings ----------------------------------------------------------------


def test_default_selection_keeps_the_methodologys_classes(m5_run: Run) -> None:
    extra = [
        Ceiling("Cache bandwidth", "bandwidth", 900.0, "GB/s", "measured", "x"),
        Ceiling("FP8 something", "compute", 20000.0, "GFLOP/s", "measured", "x"),
        Ceiling("GEMM INT8", "compute", 9000.0, "GFLOP/s", "theoretical", "x"),
    ]
    model = _model(m5_run.with_ceilings(m5_run.ceilings + tuple(extra)))
    names = default_names(model)
    assert names[0] == "Cache bandwidth"  # the highest measured bandwidth
    assert "DRAM bandwidth" not in names and "FP8 something" not in names
    assert "GEMM INT8" not in names  # theoretical only: not measured
    assert {"FP32 vector", "FP32 scalar ILP", "FP16 scalar ILP", "GEMM FP32"} <= set(names)
    assert "FP16 vector" not in names  # the lower FP16 class
    assert len(select_ceilings(model, "all")) == len(model.ceilings)
    chosen = select_ceilings(model, ["FP32 vector", "DRAM bandwidth"])
    assert {c.name for c in chosen} == {"FP32 vector", "DRAM bandwidth"} and len(chosen) == 3


def test_default_selection_without_measured_compute(m5_run: Run) -> None:
    only_bw = [c for c in m5_run.ceilings if c.source == "theoretical" or c.kind == "bandwidth"]
    names = default_names(_model(m5_run.with_ceilings(only_bw)))
    assert names == ["DRAM bandwidth", "FP16 scalar ILP", "FP32 scalar ILP"]


def test_selection_errors(m5_run: Run) -> None:
    with pytest.raises(ValueError, match="no ceiling named 'nope'.*valid: DRAM bandwidth"):
        select_ceilings(_model(m5_run), ["nope"])
    with pytest.raises(ValueError, match="not a choice"):
        select_ceilings(_model(m5_run), "most")
    valid = ["FP64", "GEMM FP32", "DRAM bandwidth"]
    assert parse_ceilings_option(" ALL ", valid) == "all"
    assert parse_ceilings_option("FP64, GEMM FP32", valid) == ["FP64", "GEMM FP32"]
    with pytest.raises(OptionError, match="names no ceiling") as info:
        parse_ceilings_option(" , ", valid)
    assert info.value.option == "ceilings"
    with pytest.raises(
        OptionError,
        match=r"'FP99', 'nosuch' are not ceiling names \(valid: default, all, or names "
        r"separated by commas of: FP64, GEMM FP32, DRAM bandwidth\)",
    ):
        parse_ceilings_option("FP64,FP99,nosuch", valid)


def test_every_ceiling_a_run_can_hold_is_known_before_it_is_measured(m5_run: Run) -> None:
    """``run --ceilings`` is checked against :func:`known_ceiling_names` before measuring: it must hold
    every name a run can have: the theoretical tables' of a CUDA GPU, an Apple GPU and a CPU, the
    suites' classes and the cache levels."""
    from apple_roofline.roofline.model.ceiling_names import known_ceiling_names
    from apple_roofline.suites.matrix.kernels import APIS, PRECISIONS
    from apple_roofline.theoretical import apple, cuda

    known = set(known_ceiling_names())
    assert len(known) == len(known_ceiling_names())  # each once
    produced = {c.name for c in m5_run.ceilings} | set(cuda.COMPUTE_CLASSES) | set(cuda.GEMM_CLASSES)
    produced |= set(apple.COMPUTE_CLASSES) | set(apple.GEMM_CLASSES)
    produced |= {
        "FP32 vector",
        "FP32 scalar ILP",
        "FP16 vector",
        "FP16 scalar ILP",
        "FP64",
        "GEMM FP32",
        "GEMM FP64",
    }  # CPU
    produced |= {
        "L1d bandwidth",
        "L2 bandwidth",
        "L3 bandwidth",
        "SLC bandwidth",
        "Shared memory bandwidth",
        "CPU GEMM FP32",
        "Cache bandwidth",
        "Matrix FP16→FP32 (wgmma)",
        "Matrix INT8→INT32 (mma.sync)",
    }
    assert produced <= known, produced - known
    assert {api.ceiling_class(p) for api in APIS for p in PRECISIONS if p.suffix not in api.missing} <= known
    assert "Matrix E4M3→FP32 (mma.sync)" not in known and "CPU GEMM INT8" not in known  # no such kernel
    assert "FP99" not in known and "nosuch" not in known


def test_plot_draws_only_the_chosen_ceilings(m5_run: Run) -> None:
    f = plot_roofline(_model(m5_run), ceilings=["FP32 vector", "DRAM bandwidth"])
    assert {ln.get_gid() for ln in _lines(f, "ceiling:")} == {
        "ceiling:measured:compute:FP32 vector",
        "ceiling:measured:bandwidth:DRAM bandwidth",
        "ceiling:theoretical:bandwidth:DRAM bandwidth",
    }
    # peak kernels of a class not shown are drawn, in grey
    grey = [i for i, m in enumerate(m5_run.measurements) if m.valid and m.ceiling_class == "FP16 scalar ILP"]
    assert _hex(_lines(f, measurement_gid(grey[0]))[0].get_markerfacecolor()) == "#b3b3b3"


# -- compare ------------------------------------------------------------------------


def _legend_texts(fig: Any) -> List[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_compare(m5_run: Run, m5_run_b: Run) -> None:
    f = plot_compare([_model(m5_run), _model(m5_run_b)], theoretical=True)
    assert f.axes[0].get_title() == "A: Apple M5 (metal) — 2026-11-20 vs B: Apple M4 (metal) — 2026-11-20"
    assert len(_lines(f, "a:ceiling:measured:")) == 5 and len(_lines(f, "b:ceiling:measured:")) == 5
    assert len(_lines(f, "a:ceiling:theoretical:")) == 3 and _lines(f, "b:ceiling:theoretical:") == []
    # a colour per ceiling, the same in both runs; a line style per run
    for name in ("DRAM bandwidth", "FP32 scalar ILP"):
        (a,) = [ln for ln in _lines(f, "a:ceiling:measured:") if ln.get_gid().endswith(":" + name)]
        (b,) = [ln for ln in _lines(f, "b:ceiling:measured:") if ln.get_gid().endswith(":" + name)]
        assert a.get_color() == b.get_color() and a.get_linestyle() == "-" and b.get_linestyle() == "--"
    assert sorted(_texts(f)) == sorted(
        [  # one label per ceiling, each run's value and the theoretical where drawn
            "DRAM bandwidth: A 122 GB/s, B 97.6 GB/s (theoretical A 154 GB/s)",
            "FP16 scalar ILP: A 6,004 GFLOP/s, B 4,803 GFLOP/s (theoretical A 8,192 GFLOP/s)",
            "FP32 vector: A 815 GFLOP/s, B 652 GFLOP/s",
            "FP32 scalar ILP: A 3,849 GFLOP/s, B 3,079 GFLOP/s (theoretical A 4,096 GFLOP/s)",
            "GEMM FP32: A 1,790 GFLOP/s, B 1,432 GFLOP/s",
        ]
    )
    assert _legend_texts(f) == [
        "A: Apple M5 (metal) — 2026-11-20",
        "B: Apple M4 (metal) — 2026-11-20",
        "theoretical ceilings (faint)",
    ]  # short: one entry per run
    _assert_clean_layout(f)


# -- the sweep figure -------------------------------------------------------------


def test_sweep_figure(m5_run: Run) -> None:
    f = plot_sweep(m5_run.measurements, ceilings=m5_run.ceilings, title="T")
    compute, memory = f.axes
    assert (
        compute.get_xscale() == "log" and compute.get_ylabel() == COMPUTE_Y_LABEL == "GFLOP/s (FLOPs counted per lane)"
    )
    assert memory.get_ylabel().startswith("Effective GB/s")
    vec = [ln for ln in compute.lines if ln.get_gid() == "sweep:vec4 (fp32)"][0]
    assert list(vec.get_xdata()) == [2**i for i in range(11)]
    vec4 = [m for m in m5_run.measurements if m.kernel == "vec4"]
    assert list(vec.get_ydata()) == pytest.approx([m.gflops for m in vec4])
    mem = [ln for ln in memory.lines if ln.get_gid() == "sweep:vec4 (fp32)"][0]
    assert list(mem.get_ydata()) == pytest.approx([m.gbps for m in vec4])
    # the two kernels in the colours of their classes in the roofline figure
    colours = class_colors(["FP32 vector", "FP32 scalar ILP"])
    assert _hex(vec.get_color()) == colours["FP32 vector"].lower()
    refs = [ln.get_gid() for ln in compute.lines if (ln.get_gid() or "").startswith("reference:")]
    assert refs == ["reference:FP32 scalar ILP", "reference:FP32 vector"]
    ratio = [t.get_text() for t in compute.texts if t.get_gid() == "sweep-ratio"][0]
    s8 = [m for m in m5_run.measurements if m.kernel == "scalar8"][-1]
    assert f"ratio {s8.gflops / vec4[-1].gflops:.2f}x" in ratio and "F = 1024" in ratio


def test_sweep_figure_needs_sweeps(m5_run: Run) -> None:
    with pytest.raises(ValueError, match="no valid sweep"):
        plot_sweep([m for m in m5_run.measurements if m.suite != "sweep"])


# -- saving ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, magic", [("r.png", b"\x89PNG"), ("r.svg", b"<?xml"), ("r.pdf", b"%PDF")])
def test_save(fig: Any, tmp_path: Path, name: str, magic: bytes) -> None:
    save_figure(fig, tmp_path / name)
    data = (tmp_path / name).read_bytes()
    assert data.startswith(magic) and len(data) > 5000
    if name.endswith(".svg"):
        assert b"<svg" in data[:2000]
    assert os.listdir(tmp_path) == [name]  # no temporary file left behind


def test_save_png_is_150_dpi_sized(fig: Any, tmp_path: Path) -> None:
    save_figure(fig, tmp_path / "r.png")
    from matplotlib.image import imread

    height, width = imread(str(tmp_path / "r.png")).shape[:2]
    assert 1300 < width < 1800 and 850 < height < 1200  # ~11 x 7 in at 150 dpi, tight bbox


@pytest.mark.parametrize("name", ["r.gif", "r", "r.jpeg"])
def test_save_rejects_other_suffixes(fig: Any, tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="cannot save a figure"):
        save_figure(fig, tmp_path / name)
    assert os.listdir(tmp_path) == []


# -- ridge points come from the model ------------------------------------------------


def _with_cache_bandwidth(m5_run: Run) -> RooflineModel:
    cache = Ceiling("Cache bandwidth", "bandwidth", 900.0, "GB/s", "measured", "x")
    return _model(m5_run.with_ceilings(m5_run.ceilings + (cache,)))


def test_ridge_markers_are_the_models_even_when_the_top_bandwidth_is_hidden(m5_run: Run) -> None:
    model = _with_cache_bandwidth(m5_run)
    table = model.ridge_table()
    assert table.measured_bandwidth is not None and table.measured_bandwidth.name == "Cache bandwidth"
    f = plot_roofline(model, ceilings=["FP32 scalar ILP", "DRAM bandwidth"])
    want = {row.name: row for row in table.rows}["FP32 scalar ILP"]
    assert want.measured_ridge == pytest.approx(3849.0 / 900.0)
    assert want.theoretical_ridge == pytest.approx(4096 / 153.6)
    (measured,) = _lines(f, "ridge:measured:FP32 scalar ILP")
    (theoretical,) = _lines(f, "ridge:theoretical:FP32 scalar ILP")
    assert measured.get_xdata()[0] == pytest.approx(want.measured_ridge)
    assert theoretical.get_xdata()[0] == pytest.approx(want.theoretical_ridge)
    label = {t.get_gid(): t.get_text() for t in _ann(f, "label:")}["label:compute:FP32 scalar ILP"]
    assert "ridge 4.3 FLOP/B" in label


def test_compare_ridge_markers_are_the_models(m5_run: Run, m5_run_b: Run) -> None:
    a = _with_cache_bandwidth(m5_run)
    f = plot_compare([a, _model(m5_run_b)], theoretical=True)
    want = {row.name: row.measured_ridge for row in a.ridge_table().rows}
    for ln in _lines(f, "a:ridge:measured:"):
        assert ln.get_xdata()[0] == pytest.approx(want[ln.get_gid().split(":", 3)[3]])
    assert _lines(f, "a:ridge:measured:")
    # the default shows Cache bandwidth, which has no theoretical ceiling; the theoretical compute
    # ceilings still start at their ridge against the theoretical DRAM bandwidth, as in the report
    (line,) = _lines(f, "a:ceiling:theoretical:compute:FP32 scalar ILP")
    assert line.get_xdata()[0] == pytest.approx(4096.0 / 153.6)


# -- legibility on real runs --------------------------------------------------------


def _lab(color: str) -> Tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour ``"#rrggbb"``."""
    rgb = [int(color[i : i + 2], 16) / 255.0 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    m = ((0.4124, 0.3576, 0.1805), (0.2126, 0.7152, 0.0722), (0.0193, 0.1192, 0.9505))
    xyz = [sum(a * b for a, b in zip(row, lin)) / w for row, w in zip(m, (0.95047, 1.0, 1.08883))]
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in xyz]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def _distance(a: str, b: str) -> float:
    return float(sum((x - y) ** 2 for x, y in zip(_lab(a), _lab(b))) ** 0.5)


def test_colour_distance() -> None:
    assert _distance("#0072B2", "#56B4E9") < 30 and _distance("#0072B2", "#D55E00") > 100


@pytest.mark.parametrize("which", ["default", "all"])
@pytest.mark.parametrize("name", ["run_epyc_2vcpu.json", "run_xeon_16vcpu.json", "run_h100.json"])
def test_neighbouring_ceilings_differ_in_colour(name: str, which: str) -> None:
    f = plot_roofline(_model(Run.load(DATA / name)), ceilings=which)
    lines = sorted(_lines(f, "ceiling:measured:compute:"), key=lambda ln: ln.get_ydata()[0])
    heights = equal_heights(lines, lambda ln: float(ln.get_ydata()[0]))  # one line each, grey when shared
    for group in heights:
        assert len({_hex(ln.get_color()) for ln in group}) == 1
        assert len(group) == 1 or _hex(group[0].get_color()) == NEUTRAL
    for a, b in zip(heights, heights[1:]):
        assert _distance(_hex(a[0].get_color()), _hex(b[0].get_color())) >= 45, (a[0].get_gid(), b[0].get_gid())


def _leader_points(ann: Any) -> List[Tuple[float, float]]:
    """Points along an annotation's leader, display coordinates."""
    patch = ann.arrow_patch
    vs = patch.get_transform().transform(patch.get_path().vertices)
    out = []
    for (x0, y0), (x1, y1) in zip(vs, vs[1:]):
        out += [(x0 + (x1 - x0) * t / 40, y0 + (y1 - y0) * t / 40) for t in range(41)]
    return out


@pytest.mark.parametrize("which", ["default", "all"])
@pytest.mark.parametrize("name", ["run_epyc_2vcpu.json", "run_xeon_16vcpu.json", "run_h100.json"])
def test_leaders_never_cross_other_labels(name: str, which: str) -> None:
    from matplotlib.text import Text

    f = plot_roofline(_model(Run.load(DATA / name)), ceilings=which)
    f.canvas.draw()
    r = f.canvas.get_renderer()
    labels = _ann(f, "label:compute:")
    assert labels
    for ann in labels:
        points = _leader_points(ann)
        assert len(points) > 1
        for other in labels:
            if other is ann:
                continue
            box = Text.get_window_extent(other, r)
            hits = [p for p in points if box.contains(*p)]
            assert not hits, f"the leader of {ann.get_gid()} crosses {other.get_gid()}"


# -- noisy ceilings (issue 45) ------------------------------------------------------------------


def _noisy(c: Ceiling, cv: str) -> Ceiling:
    """``c`` as derive_ceilings writes a ceiling whose measurement stayed noisy when measured twice."""
    return dataclasses.replace(c, from_=c.from_.rstrip(")") + f"; noisy samples, CV {cv})")


def _busy_run() -> Run:
    """The quick run of a 2-vCPU guest whose GEMM FP32 and FP64 ceilings were set by samples of CV
    90 % and 87 % (their From text says so, as the measurements' samples do)."""
    return Run.load(DATA / "run_epyc_quick.json")


def test_a_ceiling_knows_it_was_set_by_noisy_samples() -> None:
    run = _busy_run()
    noisy = {c.name: c.noise for c in run.ceilings if c.noisy}
    assert noisy == {"GEMM FP32": "noisy samples, CV 90%", "GEMM FP64": "noisy samples, CV 87%"}
    assert all(c.noise is None for c in run.ceilings if c.source == "theoretical")
    saved = Run.from_dict(run.to_dict())  # run.json's save and load: derived again, the same marks
    assert {c.name: c.noise for c in saved.ceilings if c.noisy} == noisy


def test_noisy_ceilings_are_marked_in_the_roofline_figure() -> None:
    run = _busy_run()
    noisy = {c.name: c for c in run.ceilings if c.noisy}
    f = plot_roofline(_model(run))
    labels = {t.get_gid()[len("label:compute:") :]: t.get_text() for t in _ann(f, "label:compute:")}
    assert {"GEMM FP32", "GEMM FP64", "FP32 vector"} <= set(labels)
    for name, text in labels.items():
        head = text.splitlines()[0]
        assert ("noisy samples" in head) == (name in noisy), text
    assert labels["GEMM FP32"].startswith("GEMM FP32: 113 GFLOP/s (noisy samples, CV 90%)")
    assert labels["GEMM FP64"].startswith("GEMM FP64: 97.2 GFLOP/s (noisy samples, CV 87%)")
    for ln in _lines(f, "ceiling:measured:"):
        name = ln.get_gid().split(":", 3)[3]
        assert ln.get_linestyle() == ("-." if name in noisy else "-"), ln.get_gid()
    assert all(ln.get_linestyle() == "--" for ln in _lines(f, "ceiling:theoretical:compute:"))
    assert "measured, noisy samples (CV in its label)" in _legend_texts(f)
    quiet = plot_roofline(_model(Run.load(DATA / "run_h100.json")))  # no noisy ceiling: no such entry
    assert not [t for t in _texts(quiet) if "noisy" in t]
    assert "-." not in {ln.get_linestyle() for ln in quiet.axes[0].lines}
    assert "measured, noisy samples (CV in its label)" not in _legend_texts(quiet)
    _assert_clean_layout(f)


def test_a_noisy_bandwidth_and_the_sweep_figures_references_are_marked(m5_run: Run) -> None:
    # the CVs of the busy machine, on the ceilings the sweep figure draws
    marked = {"FP32 vector": "189%", "DRAM bandwidth": "202%"}
    ceilings = [
        _noisy(c, marked[c.name]) if c.source == "measured" and c.name in marked else c for c in m5_run.ceilings
    ]
    f = plot_sweep(m5_run.measurements, ceilings=ceilings, title="T")
    compute, memory = f.axes
    refs = {ln.get_gid(): ln.get_linestyle() for ax in f.axes for ln in ax.lines if "reference:" in ln.get_gid()}
    assert refs == {"reference:FP32 vector": "-.", "reference:FP32 scalar ILP": "-", "reference:DRAM bandwidth": "-."}
    texts = [t.get_text() for ax in f.axes for t in ax.texts if (t.get_gid() or "").startswith("referencelabel:")]
    assert any("FP32 vector" in t and "(noisy samples, CV 189%)" in t for t in texts), texts
    assert any("DRAM bandwidth (noisy samples, CV 202%)" in t for t in texts), texts
    assert not any("FP32 scalar ILP" in t and "noisy" in t.split("FP32 scalar ILP")[1][:12] for t in texts), texts
    roof = plot_roofline(_model(m5_run.with_ceilings(ceilings)))
    (dram,) = [t.get_text() for t in _ann(roof, "label:bandwidth:DRAM bandwidth")]
    assert dram.startswith("DRAM bandwidth 122 GB/s (noisy samples, CV 202%)"), dram
    (line,) = _lines(roof, "ceiling:measured:bandwidth:DRAM bandwidth")
    assert line.get_linestyle() == "-."


def test_noisy_ceilings_are_marked_in_the_comparison() -> None:
    busy, other = _busy_run(), Run.load(DATA / "run_epyc_2vcpu.json")  # GEMM FP32 noisy in both, FP64 in A
    f = plot_compare([_model(busy), _model(other)])
    labels = {t.get_gid(): t.get_text() for t in _ann(f, "label:compute:")}
    fp32 = labels["label:compute:GEMM FP32"]
    assert fp32.startswith("GEMM FP32: A 113 GFLOP/s (noisy samples, CV 90%), B ") and fp32.endswith(
        "(noisy samples, CV 87%)"
    ), fp32
    assert "noisy" not in labels["label:compute:FP32 vector"]
    three = plot_compare([_model(busy), _model(other), _model(Run.load(DATA / "run_xeon_16vcpu.json"))])
    names = {t.get_gid(): t.get_text() for t in _ann(three, "label:compute:")}
    assert names["label:compute:GEMM FP32"] == "GEMM FP32 (noisy samples in A, B)"
    assert names["label:compute:GEMM FP64"] == "GEMM FP64 (noisy samples in A)"
    assert names["label:compute:FP32 vector"] == "FP32 vector"
