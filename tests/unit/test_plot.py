from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

pytest.importorskip("matplotlib")

from apple_roofline.plot import X_LABEL, Y_LABEL, plot_compare, plot_roofline, save_figure  # noqa: E402
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
    assert (w, h) == pytest.approx((10.0, 6.5))


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


def test_labels_contain_values(fig: Any) -> None:
    texts = _texts(fig)
    for want in (
        "FP32 scalar ILP 3,849 GFLOP/s",
        "FP32 vector 815 GFLOP/s",
        "DRAM bandwidth 122 GB/s",
        "DRAM bandwidth 154 GB/s (theoretical)",
        "FP32 scalar ILP 4,096 GFLOP/s (theoretical)",
        "31.5 FLOP/B",
        "6.7 FLOP/B",
        "my kernel",
    ):
        assert want in texts, want


def test_data_series(fig: Any) -> None:
    sweeps = _lines(fig, "sweep:")
    assert sorted(ln.get_gid() for ln in sweeps) == ["sweep:scalar8 (fp32)", "sweep:vec4 (fp32)"]
    for ln in sweeps:
        xs, ys = ln.get_data()
        assert len(xs) == 11 and list(xs) == sorted(xs)
        assert ln.get_marker() not in (None, "None", "") and ln.get_linestyle() == "-"
    (gemm,) = _lines(fig, "gemm:")
    assert gemm.get_linestyle() == "None" and len(gemm.get_xdata()) == 3
    peak = {ln.get_gid(): ln for ln in _lines(fig, "peak:")}
    assert set(peak) == {"peak:fp32", "peak:fp16"}
    # the invalid 9,999 GFLOP/s peak measurement is never drawn
    assert len(peak["peak:fp32"].get_ydata()) == 3
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


def test_labels_do_not_overlap_and_fit(fig: Any) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    anns = _ann(fig, "label:") + _ann(fig, "ridgelabel:") + _ann(fig, "pointlabel:")
    boxes = [(a.get_text(), a.get_window_extent(renderer)) for a in anns
             if not (a.get_gid() or "").startswith("label:measured:bandwidth")
             and not (a.get_gid() or "").startswith("label:theoretical:bandwidth")]
    assert len(boxes) == 5 + 2 + 5 + 1
    for (ta, a), (tb, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), f"{ta!r} overlaps {tb!r}"
    for t, b in boxes:
        assert frame.y0 <= b.y0 and b.y1 <= frame.y1 + 1, t


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


def test_compare(m5_run: Run, m5_run_b: Run) -> None:
    f = plot_compare(m5_run, m5_run_b)
    assert f.axes[0].get_title() == "Apple M5 vs Apple M4"
    assert len(_lines(f, "a:ceiling:measured:")) == 6
    assert len(_lines(f, "b:ceiling:measured:")) == 6
    assert len(_lines(f, "a:ceiling:theoretical:")) == 3
    assert _lines(f, "b:ceiling:theoretical:") == []
    ca = _lines(f, "a:ceiling:measured:")[0].get_color()
    cb = _lines(f, "b:ceiling:measured:")[0].get_color()
    assert ca != cb
    texts = _texts(f)
    assert "Apple M5: FP32 scalar ILP 3,849 GFLOP/s" in texts
    assert "Apple M4: FP32 scalar ILP 3,079 GFLOP/s" in texts
    assert "Apple M4: DRAM bandwidth 97.6 GB/s" in texts
    # eleven horizontal labels crowded into one decade still do not overlap
    f.canvas.draw()
    r = f.canvas.get_renderer()
    boxes = [t.get_window_extent(r) for t in _ann(f, "a:label:") + _ann(f, "b:label:") if ":compute:" in t.get_gid()]
    assert len(boxes) == 5 + 2 + 5
    assert not any(x.overlaps(y) for x, y in itertools.combinations(boxes, 2))


def test_compare_same_device_prefixes(m5_run: Run) -> None:
    f = plot_compare(m5_run, m5_run)
    assert f.axes[0].get_title() == "A: Apple M5 vs B: Apple M5"
    assert "B: Apple M5: FP32 vector 815 GFLOP/s" in _texts(f)


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
    assert 1200 < width < 1800 and 800 < height < 1150  # ~10 x 6.5 in at 150 dpi, tight bbox


@pytest.mark.parametrize("name", ["roof.jpg", "roof", "roof.png.txt"])
def test_save_rejects_other_suffixes(fig: Any, tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match=r"\.png"):
        save_figure(fig, tmp_path / name)
    assert os.listdir(tmp_path) == []
