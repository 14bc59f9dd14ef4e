from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

pytest.importorskip("matplotlib")

from apple_roofline.plot import FIGSIZE, X_LABEL, Y_LABEL, plot_compare, plot_roofline, save_figure  # noqa: E402
from apple_roofline.results import Ceiling, Run  # noqa: E402
from apple_roofline.roofline import Point  # noqa: E402


def _lines(fig: Any, prefix: str) -> List[Any]:
    return [ln for ax in fig.axes for ln in ax.lines if (ln.get_gid() or "").startswith(prefix)]


def _texts(fig: Any) -> List[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _ann(fig: Any, gid_prefix: str) -> List[Any]:
    return [t for ax in fig.axes for t in ax.texts if (t.get_gid() or "").startswith(gid_prefix)]


@pytest.fixture
def fig(m5_run: Run) -> Any:
    return plot_roofline(m5_run, points=[Point("my kernel", 4e12, 2e11, 8.0)])


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys; import apple_roofline.plot; print('matplotlib' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_axes(fig: Any) -> None:
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == X_LABEL == "Arithmetic intensity (FLOP/byte)"
    assert ax.get_ylabel() == Y_LABEL == "Performance (GFLOP/s)"
    assert ax.get_title() == "Apple M5 (metal) — 2026-11-20"
    w, h = fig.get_size_inches()
    assert (w, h) == pytest.approx(FIGSIZE)
    assert FIGSIZE == (11.0, 7.0)


def test_custom_title(m5_run: Run) -> None:
    assert plot_roofline(m5_run, title="Figure 3").axes[0].get_title() == "Figure 3"


def test_ceiling_lines(fig: Any, m5_run: Run) -> None:
    measured = _lines(fig, "ceiling:measured:")
    theoretical = _lines(fig, "ceiling:theoretical:")
    assert len(measured) == 1 + 5  # DRAM bandwidth + 5 compute classes
    assert len(theoretical) == 1 + 2
    assert all(ln.get_linestyle() == "-" for ln in measured)
    assert all(ln.get_linestyle() == "--" for ln in theoretical)
    # compute roof starts at its ridge point and is horizontal
    (ilp,) = _lines(fig, "ceiling:measured:compute:FP32 scalar ILP")
    xs, ys = ilp.get_data()
    assert xs[0] == pytest.approx(3849 / 122)
    assert list(ys) == pytest.approx([3849.0, 3849.0])
    # bandwidth roof: y = 122 x, ending at the highest compute ceiling's ridge
    (bw,) = _lines(fig, "ceiling:measured:bandwidth:")
    xs, ys = bw.get_data()
    assert ys[0] / xs[0] == pytest.approx(122.0)
    assert xs[-1] == pytest.approx(6004 / 122)
    assert len(_lines(fig, "ridge:measured:")) == 5


def test_ceiling_colours(fig: Any) -> None:
    """Each measured compute class its own colour; the theoretical line of a
    class dashed in the same colour; bandwidth black."""
    from matplotlib.colors import to_hex

    measured = _lines(fig, "ceiling:measured:compute:")
    colours = [to_hex(ln.get_color()) for ln in measured]
    assert len(set(colours)) == len(colours) == 5
    assert "#000000" not in colours
    by_class = {ln.get_gid().split(":", 3)[3]: to_hex(ln.get_color()) for ln in measured}
    for ln in _lines(fig, "ceiling:theoretical:compute:"):
        name = ln.get_gid().split(":", 3)[3]
        assert to_hex(ln.get_color()) == by_class[name]
        assert ln.get_linestyle() == "--"
    for ln in _lines(fig, "ceiling:measured:bandwidth") + _lines(fig, "ceiling:theoretical:bandwidth"):
        assert to_hex(ln.get_color()) == "#000000"
    # data of a class share its colour: the GEMM dots and the GEMM FP32 roof
    (gemm,) = _lines(fig, "gemm:fp32")
    assert to_hex(gemm.get_color()) == by_class["GEMM FP32"]


def test_labels_contain_values(fig: Any) -> None:
    texts = _texts(fig)
    for want in (
        "FP32 scalar ILP: 3,849 GFLOP/s",
        "FP32 vector: 815 GFLOP/s",
        "DRAM bandwidth: 122 GB/s",
        "DRAM bandwidth: 154 GB/s (theoretical)",
        "FP32 scalar ILP: 4,096 GFLOP/s (theoretical)",
        "31.5 FLOP/B",
        "6.7 FLOP/B",
        "my kernel",
    ):
        assert want in texts, want


def _cpu_like(m5_run: Run) -> Run:
    """m5_run with CPU-style theoretical ceilings: several classes share one
    value (within 0.5 %), and no theoretical bandwidth."""
    theo = [
        Ceiling("FP32 vector", "compute", 4096.0, "GFLOP/s", "theoretical", "x"),
        Ceiling("FP32 scalar ILP", "compute", 4096.0, "GFLOP/s", "theoretical", "x"),
        Ceiling("GEMM FP32", "compute", 4080.0, "GFLOP/s", "theoretical", "x"),  # 0.4 % lower
        Ceiling("FP16 scalar ILP", "compute", 8192.0, "GFLOP/s", "theoretical", "x"),
    ]
    return m5_run.with_ceilings([c for c in m5_run.ceilings if c.source == "measured"] + theo)


def test_equal_ceilings_merge_into_one_line(m5_run: Run) -> None:
    f = plot_roofline(_cpu_like(m5_run))
    theo = _lines(f, "ceiling:theoretical:")
    assert len(theo) == 2  # 4,096 (three classes) and 8,192
    texts = _texts(f)
    # members in measured order (FP32 scalar ILP 3,849 > GEMM FP32 1,790 > FP32 vector 815)
    merged = "FP32 scalar ILP = GEMM FP32 = FP32 vector: 4,096 / 4,080 GFLOP/s (theoretical)"
    merged_eq = merged.replace(" = ", " ≈ ")
    flat = [t.replace("\n", " ") for t in texts]
    assert merged_eq in flat, flat
    assert sum("(theoretical)" in t for t in flat) == 2
    # one label per line, and the merged line in the colour of its first member
    from matplotlib.colors import to_hex

    (line,) = [ln for ln in theo if "GEMM FP32" in ln.get_gid()]
    (ilp,) = _lines(f, "ceiling:measured:compute:FP32 scalar ILP")
    assert to_hex(line.get_color()) == to_hex(ilp.get_color())
    # no theoretical bandwidth: the theoretical lines span the plot
    xlo, xhi = f.axes[0].get_xlim()
    for ln in theo:
        assert ln.get_xdata()[0] == pytest.approx(xlo) and ln.get_xdata()[-1] == pytest.approx(xhi)


def test_equal_measured_ceilings_merge(m5_run: Run) -> None:
    ceilings = list(m5_run.ceilings) + [Ceiling("FP32 copy", "compute", 3849.0 * 1.003, "GFLOP/s", "measured", "x")]
    f = plot_roofline(m5_run.with_ceilings(ceilings))
    names = [ln.get_gid() for ln in _lines(f, "ceiling:measured:compute:")]
    assert "ceiling:measured:compute:FP32 copy = FP32 scalar ILP" in names and len(names) == 5
    flat = [t.replace("\n", " ") for t in _texts(f)]
    assert "FP32 copy ≈ FP32 scalar ILP: 3,861 / 3,849 GFLOP/s" in flat
    assert sum("FP32 scalar ILP" in t and "theoretical" not in t for t in flat) == 1  # labelled once
    assert len(_lines(f, "ridge:measured:")) == 5


def test_data_series(fig: Any) -> None:
    sweeps = _lines(fig, "sweep:")
    assert sorted(ln.get_gid() for ln in sweeps) == ["sweep:scalar8 (fp32)", "sweep:vec4 (fp32)"]
    for ln in sweeps:
        xs, ys = ln.get_data()
        assert len(xs) == 11 and list(xs) == sorted(xs)
        assert ln.get_marker() not in (None, "None", "") and ln.get_linestyle() == "-"
    assert sweeps[0].get_marker() != sweeps[1].get_marker()
    (gemm,) = _lines(fig, "gemm:")
    assert gemm.get_linestyle() == "None" and len(gemm.get_xdata()) == 3
    peak = {ln.get_gid(): ln for ln in _lines(fig, "peak:")}
    assert set(peak) == {"peak:FP32 vector", "peak:FP32 scalar ILP", "peak:FP16 vector", "peak:FP16 scalar ILP"}
    # the invalid 9,999 GFLOP/s peak measurement is never drawn
    assert len(peak["peak:FP32 vector"].get_ydata()) == 1
    assert len(peak["peak:FP32 scalar ILP"].get_ydata()) == 2
    assert all(y < 9000 for ln in fig.axes[0].lines for y in ln.get_ydata())
    (pt,) = _lines(fig, "point:")
    assert pt.get_xdata()[0] == pytest.approx(20.0) and pt.get_ydata()[0] == pytest.approx(500.0)


def test_limits(fig: Any) -> None:
    ax = fig.axes[0]
    xlo, xhi = ax.get_xlim()
    assert xlo == pytest.approx(0.25 / 16)  # smallest intensity: scalar8 F=1
    assert xhi == pytest.approx(4096 * 4)  # largest intensity: peak kernels
    ylo, yhi = ax.get_ylim()
    assert ylo < 122 * xlo and yhi > 8192


def _label_boxes(fig: Any) -> List[Any]:
    """(text, boxes) of every label; a rotated (bandwidth) label is covered by
    small boxes along its diagonal, not its mostly empty axis-aligned extent."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    from apple_roofline.plot import _along

    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        for t in ax.texts:
            t.update_positions(r)
            b = Text.get_window_extent(t, r)  # the text, without its leader line
            rot = t.get_rotation() % 180
            boxes = _along(b, t.get_rotation(), Bbox) if 1 < rot < 179 and abs(rot - 90) > 1 else [b]
            out.append((t.get_text(), boxes))
    return out


def _marker_boxes(fig: Any, prefixes: tuple) -> List[Any]:
    from matplotlib.transforms import Bbox

    out = []
    for ax in fig.axes:
        for ln in ax.lines:
            if not (ln.get_gid() or "").startswith(prefixes):
                continue
            r = 0.5 * ln.get_markersize() * fig.dpi / 72.0
            for x, y in zip(ln.get_xdata(), ln.get_ydata()):
                cx, cy = ax.transData.transform((x, y))
                out.append((f"{ln.get_gid()} at {x:g}", Bbox.from_extents(cx - r, cy - r, cx + r, cy + r)))
    return out


def _assert_clean_layout(fig: Any) -> None:
    labels = _label_boxes(fig)
    for (ta, a), (tb, b) in itertools.combinations(labels, 2):
        assert not any(x.overlaps(y) for x in a for y in b), f"{ta!r} overlaps {tb!r}"
    markers = _marker_boxes(fig, ("sweep:", "gemm:", "peak:", "point:"))
    for t, boxes in labels:
        for name, m in markers:
            assert not any(b.overlaps(m) for b in boxes), f"{t!r} covers the marker {name}"
    r = fig.canvas.get_renderer()
    frame = fig.axes[0].get_window_extent(r)
    for t, boxes in labels:
        for b in boxes:
            assert frame.y0 - 1 <= b.y0 and b.y1 <= frame.y1 + 1, t
    figbox = fig.bbox
    for t, boxes in labels:
        assert all(figbox.x0 <= b.x0 and b.x1 <= figbox.x1 for b in boxes), f"{t!r} leaves the figure"


def test_labels_do_not_overlap_and_fit(fig: Any) -> None:
    texts = _texts(fig)
    assert len(texts) == 2 + 5 + 2 + 5 + 1  # 2 diagonal, 7 horizontal, 5 ridge, 1 user point
    _assert_clean_layout(fig)


DATA = Path(__file__).parent / "data"
REAL_RUNS = {
    # 2-vCPU AMD EPYC: theoretical FP32 vector = FP32 scalar ILP = GEMM FP32, FP64 = GEMM FP64
    "run_epyc_2vcpu.json": (
        2, ["FP32 vector = FP32 scalar ILP = GEMM FP32: 461 GFLOP/s (theoretical)",
            "FP64 = GEMM FP64: 230 GFLOP/s (theoretical)"],
    ),
    # 16-vCPU Xeon with FP16: measured FP32 scalar ILP 1,151 and FP32 vector 1,148 merge too
    "run_xeon_16vcpu.json": (
        3, ["FP16 scalar ILP = FP16 vector: 10,748 GFLOP/s (theoretical)",
            "FP32 scalar ILP = FP32 vector = GEMM FP32: 5,374 GFLOP/s (theoretical)",
            "FP64 = GEMM FP64: 2,687 GFLOP/s (theoretical)",
            "FP32 scalar ILP ≈ FP32 vector: 1,151 / 1,148 GFLOP/s"],
    ),
}


@pytest.mark.parametrize("name", sorted(REAL_RUNS))
def test_real_runs_merged_and_legible(name: str) -> None:
    run = Run.load(DATA / name)
    n_theoretical, merged = REAL_RUNS[name]
    f = plot_roofline(run)
    assert len(_lines(f, "ceiling:theoretical:compute:")) == n_theoretical
    flat = [t.replace("\n", " ") for t in _texts(f)]
    for want in merged:
        assert want in flat, (want, flat)
    # every drawn ceiling labelled exactly once
    ceilings = _lines(f, "ceiling:")
    label_gids = [t.get_gid() for t in _ann(f, "label:")]
    assert sorted(label_gids) == sorted("label:" + ln.get_gid()[len("ceiling:"):] for ln in ceilings)
    _assert_clean_layout(f)


@pytest.mark.parametrize("name", sorted(REAL_RUNS))
def test_real_runs_compare_legible(name: str) -> None:
    run = Run.load(DATA / name)
    f = plot_compare(run, run)
    _assert_clean_layout(f)


def test_theoretical_compute_without_theoretical_bandwidth(m5_run: Run) -> None:
    ceilings = [c for c in m5_run.ceilings if not (c.source == "theoretical" and c.kind == "bandwidth")]
    f = plot_roofline(m5_run.with_ceilings(ceilings))
    xlo, xhi = f.axes[0].get_xlim()
    for ln in _lines(f, "ceiling:theoretical:compute:"):
        xs = ln.get_xdata()
        assert xs[0] == pytest.approx(xlo) and xs[-1] == pytest.approx(xhi)
        assert ln.get_linestyle() == "--"
    assert _lines(f, "ceiling:theoretical:bandwidth") == []


def test_run_without_ceilings_or_data(m5_run: Run) -> None:
    empty = Run(m5_run.tool, m5_run.created, {}, {"backend": "cpu", "name": "x"}, (), (), ())
    f = plot_roofline(empty)
    assert f.axes[0].get_xscale() == "log"
    assert _lines(f, "ceiling:") == []


def test_draws_into_given_axes(m5_run: Run) -> None:
    from matplotlib.figure import Figure

    mine = Figure()
    ax = mine.add_subplot(1, 2, 2)
    out = plot_roofline(m5_run, ax=ax)
    assert out is mine
    assert ax.get_xscale() == "log" and len(_lines(mine, "ceiling:")) == 9


def _legend_texts(fig: Any) -> List[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_compare(m5_run: Run, m5_run_b: Run) -> None:
    f = plot_compare(m5_run, m5_run_b)
    assert f.axes[0].get_title() == "A: Apple M5 (2026-11-20) vs B: Apple M4 (2026-11-20)"
    assert len(_lines(f, "a:ceiling:measured:")) == 6
    assert len(_lines(f, "b:ceiling:measured:")) == 6
    assert len(_lines(f, "a:ceiling:theoretical:")) == 3
    assert _lines(f, "b:ceiling:theoretical:") == []
    ca = _lines(f, "a:ceiling:measured:")[0].get_color()
    cb = _lines(f, "b:ceiling:measured:")[0].get_color()
    assert ca != cb
    # only each run's bandwidth and peak are labelled on the plot ...
    assert sorted(_texts(f)) == sorted([
        "A: DRAM bandwidth: 122 GB/s", "A: FP16 scalar ILP: 6,004 GFLOP/s",
        "B: DRAM bandwidth: 97.6 GB/s", "B: FP16 scalar ILP: 4,803 GFLOP/s",
    ])
    # ... every other ceiling is in the legend, under its run
    legend = _legend_texts(f)
    assert "A: Apple M5 (metal, 2026-11-20)" in legend and "B: Apple M4 (metal, 2026-11-20)" in legend
    assert "A: FP32 scalar ILP: 3,849 GFLOP/s" in legend
    assert "B: FP32 scalar ILP: 3,079 GFLOP/s" in legend
    assert "A: DRAM bandwidth: 154 GB/s (theoretical)" in legend
    assert "A: FP16 scalar ILP: 6,004 GFLOP/s" not in legend
    _assert_clean_layout(f)


def test_compare_same_device_is_distinguishable(m5_run: Run) -> None:
    import dataclasses

    later = dataclasses.replace(m5_run, created="2026-11-27T09:00:00+00:00")
    f = plot_compare(m5_run, later)
    assert f.axes[0].get_title() == "A: Apple M5 (2026-11-20) vs B: Apple M5 (2026-11-27)"
    assert "B: FP16 scalar ILP: 6,004 GFLOP/s" in _texts(f)
    assert "B: FP32 vector: 815 GFLOP/s" in _legend_texts(f)
    _assert_clean_layout(f)


@pytest.mark.parametrize(
    "name, magic",
    [("roof.png", b"\x89PNG\r\n\x1a\n"), ("roof.svg", b"<?xml"), ("roof.pdf", b"%PDF"), ("ROOF.PNG", b"\x89PNG")],
)
def test_save(fig: Any, tmp_path: Path, name: str, magic: bytes) -> None:
    p = tmp_path / name
    save_figure(fig, p)
    data = p.read_bytes()
    assert data.startswith(magic)
    assert len(data) > 5000
    if name.endswith(".svg"):
        assert b"<svg" in data[:2000]
    assert os.listdir(tmp_path) == [name]  # no temporary file left behind


def test_save_png_is_150_dpi_sized(fig: Any, tmp_path: Path) -> None:
    import struct

    p = tmp_path / "roof.png"
    save_figure(fig, p)
    width, height = struct.unpack(">II", p.read_bytes()[16:24])
    assert 1300 < width < 1800 and 850 < height < 1200  # ~11 x 7 in at 150 dpi, tight bbox


@pytest.mark.parametrize("name", ["roof.jpg", "roof", "roof.png.txt"])
def test_save_rejects_other_suffixes(fig: Any, tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match=r"\.png"):
        save_figure(fig, tmp_path / name)
    assert os.listdir(tmp_path) == []
