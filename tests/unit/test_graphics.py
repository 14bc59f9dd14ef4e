"""The graphics study without a GPU: the suites' references, the checks, the runner against a fake
device, the results file, the report, the figures and the command line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.errors import CannotMeasure, OptionError
from apple_roofline.graphics import grid as G
from apple_roofline.graphics import kernels as K
from apple_roofline.graphics import options as O
from apple_roofline.graphics import passes as P
from apple_roofline.graphics import runner as R
from apple_roofline.graphics.model import GraphicsStudy, cliffs, drawn_rate, shaded_rate, texel_rate
from apple_roofline.graphics.options import GraphicsOptions
from apple_roofline.graphics.outputs import GRAPHICS_FILES, write_graphics
from apple_roofline.graphics.pacing import PassRun
from apple_roofline.graphics.plot import plot_fill, plot_texture
from apple_roofline.graphics.report import fill_ceilings, format_graphics, tilemem_ratios
from apple_roofline.results import load_results
from apple_roofline.suites.fma import FMA_KERNELS

W, H = 32, 16


# -- the references ------------------------------------------------------------------------


def test_pixel_inputs_are_exact_and_bounded() -> None:
    x = K.pixel_inputs(W, H)
    assert x.shape == (H, W, 4) and x.dtype == np.float32
    assert float(x.min()) == -0.25 and float(x.max()) == 31 / 64 - 0.25
    assert x[3, 5, 2] == np.float32(((7 * 5 + 13 * 3 + 10) % 32) / 64 - 0.25)
    assert np.all((x * 64) == np.rint(x * 64))  # multiples of 1/64: exact in fp32


@pytest.mark.parametrize("F", [0, 1, 7, 64])
def test_fill_reference_is_the_vec4_chain_of_each_pixel(F: int) -> None:
    x = K.pixel_inputs(W, H)
    chain = FMA_KERNELS["vec4_cross4"].reference(x.reshape(-1), F, "fp32").reshape(H, W, 4)
    total = (chain[..., 0] + chain[..., 1]) + (chain[..., 2] + chain[..., 3])
    colour = (chain / np.float32(32) + (total / np.float32(128) + np.float32(0.5))[..., None]).astype(np.float32)
    f32 = K.fill_reference(W, H, F, "rgba32float")
    assert np.array_equal(f32, colour)
    assert 0.1 <= float(f32.min()) and float(f32.max()) <= 0.9
    u8 = K.fill_reference(W, H, F, "rgba8unorm")
    assert u8.dtype == np.uint8 and np.array_equal(u8, np.rint(colour.astype(np.float64) * 255).astype(np.uint8))
    r8 = K.fill_reference(W, H, F, "r8unorm")
    assert r8.shape == (H, W, 1) and np.array_equal(r8[..., 0], u8[..., 0])
    assert np.array_equal(K.fill_reference(W, H, F, "rgba16float"), colour.astype(np.float16))


def test_every_channel_depends_on_every_lane() -> None:
    """A one-channel target must still need all four chains (no lane is dead code for r8unorm)."""
    lanes = FMA_KERNELS["vec4_cross4"].reference(K.pixel_inputs(W, H).reshape(-1), 9, "fp32").reshape(H, W, 4)
    red = K.fill_reference(W, H, 9, "rgba32float")[..., 0]
    total = (lanes[..., 0] + lanes[..., 1]) + (lanes[..., 2] + lanes[..., 3])
    assert np.array_equal(
        red, (lanes[..., 0] / np.float32(32) + (total / np.float32(128) + np.float32(0.5))).astype(np.float32)
    )
    assert abs(np.corrcoef(red.reshape(-1), lanes[..., 3].reshape(-1))[0, 1]) > 0.1  # lane w moves the red channel


def test_fill_reference_depends_on_F() -> None:
    a, b = K.fill_reference(W, H, 64, "rgba32float"), K.fill_reference(W, H, 63, "rgba32float")
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="F 513 is out of range"):
        K.fill_reference(W, H, 513, "rgba8unorm")
    with pytest.raises(ValueError, match="not a render-target format"):
        K.fill_reference(W, H, 0, "bgra8unorm")


def _lowbias32(v: int) -> int:
    v ^= v >> 16
    v = (v * 0x7FEB352D) & 0xFFFFFFFF
    v ^= v >> 15
    v = (v * 0x846CA68B) & 0xFFFFFFFF
    return v ^ (v >> 16)


def test_hash_and_texel_indices() -> None:
    values = np.array([0, 1, 12345, 0xFFFFFFFF], dtype=np.uint32)
    assert [int(h) for h in K.hash32(values)] == [_lowbias32(int(v)) for v in values]
    coherent = K.texel_indices(W, H, 8, 3, "coherent")
    assert coherent[1, 2] == (1 * W + 2 + 3 * W * H) % 64
    random = K.texel_indices(W, H, 8, 3, "random")
    assert random[1, 2] == _lowbias32(16 * (W + 2) + 3) % 64
    with pytest.raises(ValueError, match="not a power of two"):
        K.texel_indices(W, H, 12, 0, "coherent")
    with pytest.raises(ValueError, match="not a texture pattern"):
        K.texel_indices(W, H, 8, 0, "zigzag")


@pytest.mark.parametrize("pattern", K.PATTERNS)
@pytest.mark.parametrize("filter_", K.FILTERS)
def test_texture_reference_reads_the_texels_it_names(pattern: str, filter_: str) -> None:
    tex = K.texture_noise(8)
    got = K.texture_reference(W, H, tex, 3, pattern, filter_)
    px, py = 5, 2
    want = np.zeros(4)
    for k in range(3):
        idx = int(K.texel_indices(W, H, 8, k, pattern)[py, px])
        tx, ty = idx % 8, idx // 8
        t = tex.astype(np.float64) / 255
        if filter_ == "nearest":
            want += t[ty, tx]
        else:
            want += (t[ty, tx] + t[ty, (tx + 1) % 8] + t[(ty + 1) % 8, tx] + t[(ty + 1) % 8, (tx + 1) % 8]) / 4
    assert got[py, px] == pytest.approx(want, rel=1e-6)
    sums = K.texture_sums(tex, W, H, pattern, filter_, (1, 3))
    assert np.array_equal(sums[3], got) and set(sums) == {1, 3}


def test_check_target_bounds() -> None:
    want = K.fill_reference(W, H, 7, "rgba8unorm")
    assert K.check_target(want.copy(), want, "unorm8")[0]
    off = want.copy()
    off[4, 9, 2] = (int(off[4, 9, 2]) + 1) % 256
    assert K.check_target(off, want, "unorm8")[0]  # one unit: a device's float-to-unorm rounding
    off[4, 9, 2] = (int(off[4, 9, 2]) + 2) % 256
    ok, why = K.check_target(off, want, "unorm8")
    assert not ok and "first at pixel (9, 4)" in why
    assert not K.check_target(want[:4], want, "unorm8")[0]
    f32 = K.fill_reference(W, H, 7, "rgba32float")
    bumped = f32.copy()
    bumped[0, 0, 0] += np.float32(0.01)
    assert not K.check_target(bumped, f32, "f32")[0]
    tex = K.texture_reference(W, H, K.texture_noise(8), 4, "random", "bilinear")
    assert K.check_target(tex + np.float32(3.5 / 255), tex, "f32", fetches=4, bilinear=True)[0]
    assert not K.check_target(tex + np.float32(0.3), tex, "f32", fetches=4, bilinear=True)[0]


# -- the runner, against a fake device ---------------------------------------------------------


class FakePass:
    def __init__(self, image: np.ndarray, seconds: float, invocations: Optional[int]) -> None:
        self.image, self.seconds, self.invocations, self.timer = image, seconds, invocations, ""

    def time(self, args: Sequence[Any], work_items: int, batch: int, reps: int) -> List[float]:
        return self.run(batch, reps, 0).samples_s

    def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> PassRun:
        self.timer = "fake GPU timestamps"
        return PassRun([self.seconds * batch] * reps, self.invocations if count else None, self.image if read else None)

    def read(self) -> np.ndarray:
        return self.image

    def fragment_invocations(self) -> Optional[int]:
        return self.invocations


class FakeDevice:
    """Renders the references themselves (or, for ``broken`` formats, zeros); a pass takes
    ``per_layer`` seconds per layer."""

    def __init__(
        self, *, invocations: bool = False, max_texture: int = 256, per_layer: float = 1e-6, broken: Sequence[str] = ()
    ) -> None:
        self.name, self.info, self.max_texture = "Fake GPU", {"backend": "wgpu", "index": 0}, max_texture
        self.invocations, self.per_layer, self.broken = invocations, per_layer, set(broken)
        self.statistics = invocations
        self.calls: List[dict] = []

    def fill_pass(
        self, *, width: int, height: int, fmt: str, F: int, layers: int, blended: bool, store: bool
    ) -> FakePass:
        self.calls.append({"fmt": fmt, "F": F, "layers": layers, "blended": blended, "store": store})
        image = K.fill_reference(width, height, F, fmt)
        if fmt in self.broken:
            image = np.zeros_like(image)
        inv = width * height * (1 if not blended else layers) if self.invocations else None
        return FakePass(image, self.per_layer * layers * (1 + F), inv)

    def texture_pass(
        self,
        *,
        width: int,
        height: int,
        texture: np.ndarray,
        fetches: int,
        random: bool,
        bilinear: bool,
        layers: int = 1,
    ) -> FakePass:
        self.calls.append({"size": texture.shape[0], "fetches": fetches, "layers": layers})
        image = K.texture_reference(
            width, height, texture, fetches, "random" if random else "coherent", "bilinear" if bilinear else "nearest"
        )
        inv = width * height * layers if self.invocations else None
        return FakePass(image, 1e-5 * layers * fetches * (4 if texture.shape[0] >= 128 else 1), inv)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDevice:
    device = FakeDevice()
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    return device


def test_a_device_that_runs_none_of_the_passes_is_nothing_measured(fake: FakeDevice, tmp_path: Path) -> None:
    """Every texture size above the device's largest texture: no study of skipped passes, but the
    machine's reason (exit 1 from the command, and no graphics.json)."""
    fake.max_texture = 64
    with pytest.raises(
        CannotMeasure,
        match=r"^nothing measured: Fake GPU ran none of the passes: size 128x128 "
        r"exceeds the device's largest 2D texture",
    ):
        R.run_graphics(
            GraphicsOptions(device="wgpu:0", suites=["texture"], width=W, height=H, sizes=[128, 256], reps=2)
        )
    result = CliRunner().invoke(
        app, ["graphics", "--suite", "texture", "--sizes", "128", "--reps", "2", "-o", str(tmp_path / "o")]
    )
    errors = [ln for ln in result.stderr.splitlines() if ln.startswith("error")]
    assert result.exit_code == 1 and len(errors) == 1 and "ran none of the passes" in errors[0], result.output
    assert not list((tmp_path / "o").glob("graphics*"))


def test_run_measures_and_validates_every_pass(fake: FakeDevice) -> None:
    study = R.run_graphics(GraphicsOptions(device="wgpu:0", width=W, height=H, overdraw=16, quick=True, reps=3))
    assert study.valid and study.complete
    fill = study.suite("fillrate")
    assert len(fill) == len(G.QUICK_F) * 2 + 2  # both modes stored, and discarded at F = 0
    assert {(m.params["F"], m.params["store"]) for m in fill} == {
        (0, "store"),
        (0, "discard"),
        (64, "store"),
        (512, "store"),
    }
    m = next(m for m in fill if m.params["F"] == 64 and m.params["mode"] == "blended")
    assert m.params["pixels_drawn"] == W * H * 16 == m.params["pixels_shaded"] and m.params["shaded_by"] == "blended"
    assert m.flops == W * H * 16 * 32 * 64 and m.bytes == W * H * 16 * 8  # blending reads and writes 4 B
    assert m.params["timer"] == "fake GPU timestamps"
    opaque = next(m for m in fill if m.params["F"] == 64 and m.params["mode"] == "opaque")
    assert opaque.params["shaded_by"] == "one layer at least" and opaque.flops == W * H * 32 * 64
    assert drawn_rate(opaque) == pytest.approx(16 * shaded_rate(opaque))
    tile = study.suite("tilemem")
    assert {m.dtype for m in tile} == set(K.FORMATS) and all(m.params["mode"] == "opaque" for m in tile)
    tex = study.suite("texture")
    assert {m.params["size"] for m in tex} == {64, 256}  # 1024 and 4096 exceed the fake's 256
    assert {c["size"] for c in fake.calls if "size" in c} == {64, 256}  # and no pass is built for them
    assert len(tex) == 2 * 2 * 2 and {m.params["fetches"] for m in tex} == {16}
    assert [s.reason for s in study.skipped if "1024" in s.reason][
        0
    ] == "size 1024x1024 exceeds the device's largest 2D texture (256)"
    t = tex[0]
    assert t.flops == 0 and t.params["texels"] == W * H * t.params["fetches"] and t.params["layers"] == 1
    assert texel_rate(t) == pytest.approx(t.params["texels"] / t.median_s / 1e9)


def test_counted_shaded_pixels(monkeypatch: pytest.MonkeyPatch) -> None:
    device = FakeDevice(invocations=True)
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=16, f_values=[4], reps=2)
    )
    opaque = [m for m in study.measurements if m.params["mode"] == "opaque"]
    assert all(m.params["shaded_by"] == "counter" and m.params["pixels_shaded"] == W * H for m in opaque)
    assert all(m.params["fragment_invocations"] == W * H for m in opaque)


def test_a_wrong_image_is_invalid_and_a_long_pass_draws_fewer_layers(monkeypatch: pytest.MonkeyPatch) -> None:
    device = FakeDevice(broken=["rgba16float"], per_layer=1e-4)
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0", suites=["tilemem"], width=W, height=H, overdraw=128, quick=True, reps=2, max_pass_s=0.05
        )
    )
    bad = [m for m in study.measurements if not m.valid]
    assert bad and {m.dtype for m in bad} == {"rgba16float"}
    assert any("rgba16float" in w and "failed validation" in w for w in study.warnings)
    f128 = [m for m in study.measurements if m.params["F"] == 128]
    # 129 iterations x 1e-4 s per layer: 2 layers (25.8 ms) fit 0.05 s, a power of two
    assert all(m.params["layers"] == 2 and m.params["overdraw_requested"] == 128 for m in f128)
    assert any("2 layers instead of 128" in w for w in study.warnings)


def test_interrupt_keeps_the_partial_study(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = fake.fill_pass

    def flaky(**kw: Any) -> FakePass:  # a probe pass for each new shape, then the measured one
        calls["n"] += 1
        if calls["n"] > 5:  # F=0: opaque probe, store, discard (the shape's layers shared), blended probe, store
            raise KeyboardInterrupt
        return real(**kw)

    monkeypatch.setattr(fake, "fill_pass", flaky)
    with pytest.raises(R.GraphicsInterrupted) as exc:
        R.run_graphics(GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, reps=2))
    assert exc.value.partial.complete is False and len(exc.value.partial.measurements) == 3


def test_a_pass_the_device_cannot_build_is_skipped(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fake.fill_pass

    def picky(**kw: Any) -> FakePass:
        if kw["fmt"] == "rgba32float":
            raise RuntimeError("format not renderable")
        return real(**kw)

    monkeypatch.setattr(fake, "fill_pass", picky)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["tilemem"], width=W, height=H, overdraw=4, quick=True, reps=2)
    )
    assert study.valid and {s.dtype for s in study.skipped} == {"rgba32float"}
    assert "RuntimeError: format not renderable" in study.skipped[0].reason


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: O.parse_graphics_device("cuda:0"), "device 'cuda:0' is not a graphics device"),
        (lambda: O.parse_resolution("1920*1080"), "is not a resolution (valid: WIDTHxHEIGHT"),
        (lambda: O.check_f_values([1, -1]), "f -1 is out of range (valid: 0 to 512)"),
        (lambda: O.check_f_values([]), "names no value"),
        (lambda: O.parse_choices("fillrate,x", "suites", K.SUITES, "graphics suite"), "'x' is not a graphics suite"),
        (
            lambda: R.run_graphics(GraphicsOptions(device="wgpu:0", overdraw=0)),
            "overdraw 0 is out of range (valid: 1 to 4096)",
        ),
    ],
)
def test_bad_options(call: Any, message: str) -> None:
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        call()
    assert O.parse_graphics_device("WGPU") == ("wgpu", 0) and O.parse_resolution("64x32") == (64, 32)


# -- the study, its report and its figures --------------------------------------------------------


@pytest.fixture
def study(fake: FakeDevice) -> GraphicsStudy:
    return R.run_graphics(
        GraphicsOptions(
            device="wgpu:0", width=W, height=H, overdraw=16, quick=True, reps=3, command=("apple-roofline",)
        )
    )


def test_study_round_trips(study: GraphicsStudy, tmp_path: Path) -> None:
    study.save(tmp_path / "g.json")
    assert GraphicsStudy.load(tmp_path / "g.json") == study
    assert load_results(tmp_path / "g.json") == study
    assert json.loads(study.to_json())["kind"] == "graphics"


def test_cliffs() -> None:
    def texture(size: int, rate: float) -> Any:
        from apple_roofline.study.records import Measurement

        return Measurement(
            "texture",
            "texture",
            "rgba32float",
            {"size": size, "pattern": "random", "filter": "nearest", "fetches": 4, "texels": 1000},
            0,
            4000,
            (1000 / rate / 1e9,),
            True,
        )

    found = cliffs((texture(64, 10.0), texture(128, 9.0), texture(256, 4.0), texture(512, 3.9)))
    assert [(c.size, c.working_set_bytes) for c in found] == [(256, 256 * 256 * 4)]
    assert found[0].before == pytest.approx(9.0) and found[0].after == pytest.approx(4.0)


def test_report(study: GraphicsStudy) -> None:
    md = format_graphics(study, "md")
    assert md.startswith("# Graphics: Fake GPU (wgpu)")
    for heading in ("## Fill-rate roofline", "## Tile memory", "## Texture cache", "### Cliffs", "## Skipped"):
        assert heading in md
    assert "A tile-based deferred renderer" in md and "blend operation max" in md
    ceilings = fill_ceilings(study)
    assert set(ceilings) == {"fill rate", "fragment ALU"} and ceilings["fragment ALU"][1].params["mode"] == "blended"
    ratios = tilemem_ratios(study)
    assert ratios[("r8unorm", 128, "store")] == pytest.approx(1.0)
    assert format_graphics(study, "csv").splitlines()[0].startswith("suite,format,params,median_s")
    with pytest.raises(OptionError, match="format 'xml' is not a report format"):
        format_graphics(study, "xml")


def test_figures_and_files(study: GraphicsStudy, tmp_path: Path) -> None:
    fig = plot_fill(study)
    assert len(fig.axes) == 3 and fig.axes[0].get_xscale() == "log"
    assert {ln.get_gid() for ln in fig.axes[0].lines if ln.get_gid()} >= {"fill:opaque:store:GPixel/s shaded"}
    tex = plot_texture(study)
    assert len([a for a in tex.axes if a.get_title(loc="left")]) == 4  # a heatmap and a line plot per pattern
    written, problems = write_graphics(study, tmp_path)
    assert [p.name for p in written] == list(GRAPHICS_FILES) and problems == []
    only_fill = dataclasses.replace(study, measurements=study.suite("fillrate"))
    written, problems = write_graphics(only_fill, tmp_path)
    assert problems == ["no graphics-texture.png: graphics study of Fake GPU has no valid texture pass"]


def test_cli(fake: FakeDevice, tmp_path: Path) -> None:
    cli = CliRunner()
    out = tmp_path / "g"
    r = cli.invoke(
        app, ["graphics", "--resolution", f"{W}x{H}", "--overdraw", "8", "--quick", "--reps", "2", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert all((out / n).exists() for n in GRAPHICS_FILES)
    phases = json.loads((out / "graphics.json").read_text())["phase_times"]
    assert [p["phase"] for p in phases] == ["start-up", "between suites", "end"] and "; wall " in r.stdout
    assert cli.invoke(app, ["report", str(out / "graphics.json")]).stdout.startswith("# Graphics: Fake GPU")
    r = cli.invoke(app, ["plot", str(out / "graphics.json"), "-o", str(tmp_path / "f.png")])
    assert r.exit_code == 0 and (tmp_path / "f.png").exists()
    for args, message in (
        (["--overdraw", "0"], "--overdraw 0 is out of range"),
        (["--f", "0,-4"], "--f -4 is out of range (valid: 0 to 512)"),
        (["--pattern", "zigzag"], "--pattern 'zigzag' is not a texture pattern"),
        (["--suite", "fillrate,blur"], "--suite 'blur' is not a graphics suite"),
        (["--resolution", "0x0"], "--resolution '0x0' is not a resolution"),
    ):
        r = cli.invoke(app, ["graphics", *args, "--out", str(tmp_path / "x")])
        assert r.exit_code == 2 and message in r.stderr, (args, r.stderr)
        assert not (tmp_path / "x").exists()


# -- the H100 study kept as data (bench/README.md, docs/report-graphics-h100.md) -----------

H100 = Path(__file__).parent / "data" / "graphics_h100.json"
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_kept_h100_study_reads_strictly_and_is_whole() -> None:
    study = load_results(H100)
    assert isinstance(study, GraphicsStudy) and study.complete and study.valid
    assert {m.suite for m in study.measurements} == set(K.SUITES)
    assert study.device["wgpu_backend"] == "Vulkan" and "H100" in study.device["name"]
    assert study.params["spin_up_s"] > 0  # measured with the clock spin-up (pacing.SPIN_UP_S)


def test_a_study_cut_by_its_budget_is_partial_and_its_figure_says_so() -> None:
    from apple_roofline.figures import NOTE_GID
    from apple_roofline.study.timing import SuiteTime

    kept = load_results(H100)
    assert isinstance(kept, GraphicsStudy) and kept.status == "complete"
    cut = SuiteTime("texture", 5.0, 4.0, 2, True, 6, "texture 64x64 random nearest x4")
    study = dataclasses.replace(kept, suite_times=(*kept.suite_times, cut))
    assert study.status == "cut by budget" and json.loads(study.to_json())["complete"] is False
    assert GraphicsStudy.from_json(study.to_json()).status == "cut by budget"
    assert "PARTIAL — cut by budget: texture cut by its 4 s budget" in format_graphics(study, "md").splitlines()[2]
    notes = [" ".join(t.get_text().split()) for t in plot_texture(study).texts if t.get_gid() == NOTE_GID]
    assert notes == [
        "PARTIAL, not every case drawn: texture cut by its 4 s budget (2 of 6 planned cases measured; "
        "not measured from texture 64x64 random nearest x4 on)."
    ]
    assert not [t for t in plot_fill(study).texts if t.get_gid() == NOTE_GID]  # the fill figure lacks nothing


def test_the_docs_report_is_the_kept_study_rendered(tmp_path: Path) -> None:
    """docs/report-graphics-h100.md is what `apple-roofline report` prints for the kept study; the
    figures it names render from it."""
    study = load_results(H100)
    assert isinstance(study, GraphicsStudy)
    assert format_graphics(study, "md") == (DOCS / "report-graphics-h100.md").read_text(encoding="utf-8")
    for draw in (plot_fill, plot_texture):
        fig = draw(study)
        assert len(fig.axes) >= 3  # every panel drawn from the kept data


def test_the_kept_h100_tile_memory_shows_no_dead_lanes() -> None:
    """With every channel depending on every lane, r8unorm and rgba8unorm shade at the same rate once
    the ALUs bound the pass (F >= 16): the format then changes nothing but the bytes written."""
    study = load_results(H100)
    assert isinstance(study, GraphicsStudy)
    ratios = tilemem_ratios(study)
    assert all(0.9 <= ratios[("rgba8unorm", F, "store")] <= 1.1 for F in (16, 128, 512))


def test_plot_writes_every_figure_of_a_graphics_study(tmp_path: Path) -> None:
    saved = tmp_path / "graphics.json"
    saved.write_bytes(H100.read_bytes())
    result = CliRunner().invoke(app, ["plot", str(saved)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "graphics-fill.png").stat().st_size > 10_000
    assert (tmp_path / "graphics-texture.png").stat().st_size > 10_000
    one = tmp_path / "only.svg"
    result = CliRunner().invoke(app, ["plot", str(saved), "-o", str(one)])
    assert result.exit_code == 0 and one.exists() and "graphics-fill" not in result.output


def test_passes_carry_clocks_and_power(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    """As in the roofline runner (docs/design/power.md, "Clocks and power"): each pass gets the sampler's
    summary of its timed window, the study records the sampler, and the report shows the watts."""
    from apple_roofline.graphics.report import format_graphics
    from apple_roofline.telemetry import Sampler

    class Watts(Sampler):
        name = "watts"

        def __init__(self) -> None:
            super().__init__(period_s=3600.0)
            self.windows: List[Any] = []

        def open(self) -> str:
            return ""

        def read(self) -> Dict[str, float]:
            return {"power_w": 50.0, "gpu_clock_mhz": 1400.0}

    s = Watts()
    seen: List[Any] = []
    monkeypatch.setattr(R, "graphics_sampler", lambda api, info: seen.append((api, info["name"])) or s)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, f_values=[4], reps=2)
    )
    assert seen == [("wgpu", "Fake GPU")]
    m = study.measurements[0]
    assert m.params["gpu_clock_mhz"] == 1400.0 and m.power_w == 50.0 and m.gflops_per_watt is not None
    assert study.device["telemetry"]["sampler"] == "watts"
    assert not s.active  # stopped
    text = format_graphics(study, "md")
    assert "## Clocks and power" in text and "GFLOP/s per W" in text
    off = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, f_values=[4], reps=2, telemetry=False
        )
    )
    assert off.device["telemetry"]["reason"] == "telemetry turned off" and "power_w" not in off.measurements[0].params


@pytest.mark.parametrize("pattern", K.PATTERNS)
def test_bilinear_table_gives_the_fetch_by_fetch_sums(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The filtered-texel table (textures up to K.TABLE_TEXELS) is the same arithmetic in the same
    order as filtering each fetch: bit for bit the same sums."""
    tex = K.texture_noise(16, seed=3)
    table = K.texture_sums(tex, W, H, pattern, "bilinear", (1, 7))
    monkeypatch.setattr(K, "TABLE_TEXELS", 0)
    fetched = K.texture_sums(tex, W, H, pattern, "bilinear", (1, 7))
    assert all(np.array_equal(table[n], fetched[n]) for n in (1, 7))
    assert not np.array_equal(table[7], K.texture_sums(tex, W, H, pattern, "nearest", (7,))[7])


def test_resume_measures_only_the_passes_its_journal_lacks(
    fake: FakeDevice, monkeypatch: pytest.MonkeyPatch, resume_check: Any
) -> None:
    from apple_roofline.graphics.passes import PassMeasurer

    calls: List[int] = []
    record = PassMeasurer._record

    def counted(self: PassMeasurer, *a: Any, **kw: Any) -> Any:
        calls.append(1)
        return record(self, *a, **kw)

    monkeypatch.setattr(PassMeasurer, "_record", counted)
    study = resume_check(
        "graphics",
        GraphicsStudy,
        lambda j: R.GraphicsRunner(
            GraphicsOptions(device="wgpu:0", width=W, height=H, overdraw=16, quick=True, reps=2), journal=j
        ).run(),
        lambda s: s.measurements,
        lambda: len(calls),
    )
    assert study.valid and {m.suite for m in study.measurements} == {"fillrate", "tilemem", "texture"}


def test_closing_the_checks_drops_references_nobody_waits_for() -> None:
    """A reference asked for ahead of a pass that never ran (a suite cut by its budget) is not
    built at the end; one a check waits for is, and the check gets it."""
    import threading

    from apple_roofline.graphics.checks import Checks

    gate, built = threading.Event(), []
    checks = Checks(workers=1)
    checks.ahead("busy", lambda: gate.wait(10))  # holds the only worker
    checks.ahead("used", lambda: built.append("used") or 1)
    checks.ahead("unused", lambda: built.append("unused") or 2)
    verdict = checks.check(np.zeros(1), checks.future("used"), lambda got, want: (want == 1, ""))
    gate.set()
    checks.close()
    assert built == ["used"]
    assert verdict.result() == (True, "")


def test_the_time_outside_the_suites_is_recorded_and_shown(study: GraphicsStudy, tmp_path: Path) -> None:
    """The runner records the start-up and the time between suites; the timed writer adds the end
    (its parts: assembling, each file), graphics.json holds it whole, the report up to its drawing,
    and the time line and table end with the wall total of them all."""
    import time

    from apple_roofline.graphics.outputs import write_timed_graphics
    from apple_roofline.graphics.report import summary_lines
    from apple_roofline.study.timing import wall_seconds

    assert [p.phase for p in study.phase_times] == ["start-up", "between suites"]
    startup = study.phase_times[0]
    assert startup.since == "the runner's start" and [k for k, _ in startup.parts] == ["imports", "device"]
    origin = time.perf_counter() - wall_seconds(study.suite_times, study.phase_times)  # the suites just ended
    final, written, problems = write_timed_graphics(study, tmp_path, origin)
    assert [p.name for p in written] == list(GRAPHICS_FILES) and problems == []
    end = final.phase_times[-1]
    assert end.phase == "end" and not end.until
    assert [k for k, _ in end.parts] == ["assemble", *GRAPHICS_FILES]
    assert GraphicsStudy.load(tmp_path / "graphics.json") == final  # rewritten with the whole end
    md = (tmp_path / "graphics.md").read_text()
    assert "| end (until this report) |" in md and "| start-up (from the runner's start) |" in md
    assert "The end phase is shown until this report was drawn" in md
    line = summary_lines(final)[0]
    assert line.endswith(f"; end {end.seconds:.1f} s; wall {wall_seconds(final.suite_times, final.phase_times):.1f} s")
    assert write_graphics(study, tmp_path)[0] == written  # untimed: the same files, no end phase
    assert GraphicsStudy.load(tmp_path / "graphics.json") == study


def test_a_pool_draws_the_graphics_figures_as_in_process(study: GraphicsStudy, tmp_path: Path) -> None:
    from apple_roofline.graphics.outputs import FIGURE_JOBS, GRAPHICS_PRELOAD
    from apple_roofline.roofline.views.draw import figure_pool

    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    serial.mkdir()
    pooled.mkdir()
    one = write_graphics(study, serial)
    with figure_pool(len(FIGURE_JOBS), GRAPHICS_PRELOAD, cores=4) as pool:
        assert pool.executor is not None  # Linux and macOS have a fork server
        two = write_graphics(study, pooled, pool)
    assert [p.name for p in one[0]] == [p.name for p in two[0]] and one[1] == two[1]
    for p in one[0]:
        assert p.read_bytes() == (pooled / p.name).read_bytes(), p.name
    with figure_pool(len(FIGURE_JOBS), GRAPHICS_PRELOAD, cores=2) as small:  # too few cores: in-process
        assert small.executor is None


def test_the_first_pass_waits_for_a_sampler_opening_on_its_thread(
    fake: FakeDevice, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GPU's sampler opens on a thread while the first suite prepares; the first pass is timed
    only once it samples, so it carries the clocks as every later pass does."""
    import time

    from apple_roofline.telemetry import Sampler

    class Slow(Sampler):
        name = "slow"

        def __init__(self) -> None:
            super().__init__(period_s=3600.0)

        def open(self) -> str:
            time.sleep(0.3)  # NVML's initialisation, say
            return ""

        def read(self) -> Dict[str, float]:
            return {"gpu_clock_mhz": 1400.0}

    s = Slow()
    monkeypatch.setattr(R, "graphics_sampler", lambda api, info: s)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, f_values=[0, 4], reps=2)
    )
    assert all(m.params["gpu_clock_mhz"] == 1400.0 for m in study.measurements)
    assert not s.active  # stopped


def test_texture_pipelines_are_built_before_the_first_texture_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the fill suites' pipelines are: one per pattern, filter and fetch count, all before the
    first pass, so that no compile leaves the GPU idle between two passes."""

    class Preparing(FakeDevice):
        def prepare_texture(self, *, fetches: int, random: bool, bilinear: bool) -> None:
            self.calls.append({"prepare": (fetches, random, bilinear)})

    device = Preparing()
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    study = R.run_graphics(GraphicsOptions(device="wgpu:0", suites=["texture"], width=W, height=H, quick=True, reps=2))
    assert study.valid and study.suite("texture")
    prepared = [i for i, c in enumerate(device.calls) if "prepare" in c]
    first_pass = next(i for i, c in enumerate(device.calls) if "size" in c)
    lines = {
        (m.params["fetches"], m.params["pattern"] == "random", m.params["filter"] == "bilinear")
        for m in study.measurements
    }
    assert {device.calls[i]["prepare"] for i in prepared} == lines
    assert len(prepared) == len(lines) == 4 and max(prepared) < first_pass


def test_the_bilinear_lines_of_one_size_share_one_table(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both patterns' bilinear lines of a size gather from one table of filtered texels, built once,
    and every pass is still checked against it (a wrong table fails the passes it serves)."""
    built: List[int] = []

    def counted(texture: np.ndarray) -> np.ndarray:
        built.append(texture.shape[0])
        return K.bilinear_texels(texture)

    monkeypatch.setattr(P, "bilinear_texels", counted)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["texture"], width=W, height=H, sizes=[8, 16], fetches=[1, 3], reps=2)
    )
    assert study.valid and len(study.suite("texture")) == 2 * 2 * 2 * 2
    assert sorted(built) == [8, 16]  # one per size, for both patterns
    monkeypatch.setattr(P, "bilinear_texels", lambda texture: K.bilinear_texels(texture) + np.float32(0.5))
    wrong = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["texture"], width=W, height=H, sizes=[8], fetches=[3], reps=2)
    )
    assert {m.params["filter"] for m in wrong.measurements if not m.valid} == {"bilinear"}
    assert all(m.valid for m in wrong.measurements if m.params["filter"] == "nearest")


# -- titles that say what ran, budgets that hold (issue 45) ------------------------------------


def test_the_fill_figure_is_titled_with_the_layers_its_passes_drew(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.graphics.model import layers_text

    # a software adapter: one layer already takes longer than a pass may, so every pass draws one
    device = FakeDevice(per_layer=1e-2)
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    slow = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=128, quick=True, reps=2, budget="none"
        )
    )
    assert {m.params["layers"] for m in slow.measurements} == {1} and slow.params["overdraw"] == 128
    title = plot_fill(slow)._suptitle.get_text()
    assert title.endswith(f"— {W} x {H}, 1 layer a pass (128 requested)") and "128 layers" not in title, title
    kept = load_results(H100)  # an H100: 128 layers at small F, fewer above
    assert isinstance(kept, GraphicsStudy)
    fill = [m for m in kept.measurements if m.suite in ("fillrate", "tilemem") and m.valid]
    ran = sorted({int(m.params["layers"]) for m in fill})
    assert ran[0] < ran[-1] == 128
    assert plot_fill(kept)._suptitle.get_text().endswith(f", {ran[0]} to 128 layers a pass (128 requested)")
    whole = [m for m in fill if m.params["layers"] == 128]
    assert layers_text(whole, 128) == "128 layers" and layers_text(whole[:1]) == "128 layers"
    assert layers_text([], 128) == ""


def test_a_pass_predicted_past_the_budget_is_not_started(monkeypatch: pytest.MonkeyPatch) -> None:
    # F = 0 passes take 0.25 s (as the fake says; it does not wait), F = 64 ones 16 s: F = 64's lead,
    # samples and stored passes would take over a minute, past the suite's 30 s
    device = FakeDevice(per_layer=0.25)
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0",
            suites=["fillrate"],
            width=W,
            height=H,
            overdraw=1,
            quick=True,
            reps=3,
            budget="fillrate=30",
        )
    )
    assert {m.params["F"] for m in study.measurements} == {0} and len(study.measurements) == 4
    (t,) = study.suite_times
    assert t.cut and t.stopped_before == "fillrate rgba8unorm F=64 blended store" and t.seconds < 30
    (why,) = [w for w in study.warnings if "not started" in w]
    assert why.startswith("fillrate rgba8unorm F=64 blended store: not started: its passes would take about ")
    assert why.endswith("s of the suite's 30 s budget were left") and not any("over its" in w for w in study.warnings)


def test_a_suite_that_ran_over_its_budget_says_by_how_much(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from apple_roofline.study.timing import SuiteTime

    assert R.over_budget(SuiteTime("fillrate", 15.1, 6.0, 6, True, 8, "")) == (
        "suite fillrate ran 9.1 s over its 6 s budget (15.1 s): a pass is never interrupted, one can take "
        "longer than predicted, and the suite waits for its passes' checks"
    )
    assert R.over_budget(SuiteTime("fillrate", 6.02, 6.0, 6, False, 8, "")) is None  # within the clock's grain
    assert R.over_budget(SuiteTime("fillrate", 99.0, 0.0, 6, False, 8, "")) is None  # no budget
    # a pass that says it takes a microsecond and takes half a second: predicted to fit, run over
    device = FakeDevice()
    real = device.fill_pass

    def slow(**kw: Any) -> FakePass:
        p = real(**kw)
        run = p.run

        def run_slowly(batch: int, reps: int, lead: int = 0, **more: Any) -> PassRun:
            time.sleep(0.5)
            return run(batch, reps, lead, **more)

        p.time = lambda args, work_items, batch, reps: run(batch, reps, 0).samples_s  # type: ignore[method-assign]
        p.run = run_slowly  # type: ignore[method-assign]  # the probe quick, the measurement slow
        return p

    monkeypatch.setattr(device, "fill_pass", slow)
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0",
            suites=["fillrate"],
            width=W,
            height=H,
            overdraw=1,
            f_values=[0],
            reps=2,
            budget="fillrate=0.2",
        )
    )
    (t,) = study.suite_times
    assert t.seconds >= 0.5 and t.measured == 1 and t.cut
    (over,) = [w for w in study.warnings if "over its" in w]
    assert over.startswith(f"suite fillrate ran {t.seconds - 0.2:.1f} s over its 0.2 s budget ({t.seconds:.1f} s)")
