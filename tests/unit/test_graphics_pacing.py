"""The graphics study's timing frame without a GPU: the batching arithmetic, one submission per
measurement, shared calibration, the re-timing of a pass whose clock came out low, the steady-clock
marking, the grids and their time budgets, and a suite cut short by its budget in the report and on
the command line."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.errors import OptionError
from apple_roofline.graphics import grid as G
from apple_roofline.graphics import kernels as K
from apple_roofline.graphics import options as O
from apple_roofline.graphics import pacing as P
from apple_roofline.graphics import passes as M
from apple_roofline.graphics import runner as R
from apple_roofline.graphics.options import GraphicsOptions
from apple_roofline.graphics.report import format_graphics, steady_note, summary_lines
from apple_roofline.study.records import Measurement
from apple_roofline.telemetry import NullSampler, Sampler
from apple_roofline.timing import clocks as S

W, H = 32, 16


# -- the arithmetic -------------------------------------------------------------------------------


def test_batch_lead_and_passes_arithmetic() -> None:
    assert P.batch_for(1e-3, 0.01) == 10 and P.batch_for(3e-3, 0.01) == 4  # ceil(10 / 3)
    assert P.batch_for(0.05, 0.01) == 1 and P.batch_for(1e-9, 0.01, max_batch=64) == 64
    assert P.passes_for(0.25, 0.02) == 13 and P.passes_for(0.0, 0.02) == 0 and P.passes_for(1.0, 1e-9, 100) == 100
    assert P.lead_seconds(None, 0.25) == 0.25  # nothing submitted yet: a full spin-up
    assert P.lead_seconds(0.1, 0.25) == 0.25  # idle for a third of it or more
    assert P.lead_seconds(0.03, 0.25) == pytest.approx(0.06)  # twice the gap
    assert P.lead_seconds(0.001, 0.25) == P.MIN_LEAD_S
    assert M.fill_layers(128, 1e-4, 0.05) == 128 and M.fill_layers(128, 1e-3, 0.05) == 32
    assert M.fill_layers(128, 0.03, 0.02) == M.MIN_LAYERS == 1 and M.fill_layers(4, 3e-3, 0.01) == 2
    assert (
        M.texture_layers(1e-4) == 8 and M.texture_layers(3e-3) == 1 and M.texture_layers(1e-7) == M.MAX_TEXTURE_LAYERS
    )


class Pass:
    """A pass whose submissions are recorded; every pass takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.runs, self.times = seconds, [], []  # type: ignore[var-annotated]

    def time(self, args: Any, work_items: int, batch: int, reps: int) -> List[float]:
        self.times.append((batch, reps))
        return [self.seconds * batch] * reps

    def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> P.PassRun:
        self.runs.append((batch, reps, lead, count, read))
        return P.PassRun([self.seconds * batch] * reps, 7 if count else None, np.zeros(1) if read else None)


class Clocks(Sampler):
    """A sampler whose readings are set by the test."""

    name = "clocks"

    def __init__(self) -> None:
        super().__init__(period_s=3600.0)
        self.values: Dict[str, Any] = {"sm_clock_mhz": 1980.0}

    def open(self) -> str:
        return ""

    def read(self) -> Mapping[str, float]:
        return dict(self.values)


def test_one_submission_per_measurement_divided_by_its_batch() -> None:
    pacer = P.Pacer(NullSampler("none"), reps=5, min_sample_s=0.01, spin_up_s=0.25)
    p = Pass(2e-3)
    timing, run = pacer.measure(p, "shape", count=True)
    assert p.times == [(1, 2)]  # one probe: two lone passes
    assert p.runs == [(5, 5, 125, True, True)]  # batch ceil(10/2), lead 0.25 s / 2 ms, one submission
    assert timing.batch == 5 and timing.samples_s == (2e-3,) * 5 and timing.lead_s == 0.25
    assert pacer.per_pass["shape"] == timing.per_pass_s == 2e-3  # the shape's calibration: its middle sample
    assert run.invocations == 7 and run.image is not None
    again, _ = pacer.measure(Pass(2e-3), "shape")
    assert pacer.probes == 1 and again.lead_s == P.MIN_LEAD_S  # the shape's calibration is shared, no new spin-up


def test_the_predicted_seconds_are_those_of_the_submission() -> None:
    pacer = P.Pacer(NullSampler("none"), reps=5, min_sample_s=0.01, spin_up_s=0.25)
    # idle GPU: a 0.25 s lead of 125 passes, 5 samples of 5 passes, the stored and the counting pass
    assert pacer.predict_s(2e-3, count=True) == pytest.approx((125 + 25 + 2) * 2e-3)
    assert pacer.predict_s(2e-3, 3) == pytest.approx((125 + 15 + 1) * 2e-3)
    assert pacer.predict_s(0.5, 3) == pytest.approx((1 + 3 + 1) * 0.5)  # a sample of one pass, a lead of one
    p = Pass(2e-3)
    pacer.measure(p, "shape", count=True)
    (batch, reps, lead, _count, _read) = p.runs[0]
    assert pacer.gap() is not None and (lead + batch * reps + 2) * 2e-3 == pytest.approx((125 + 25 + 2) * 2e-3)
    assert pacer.predict_s(2e-3) < (125 + 25 + 1) * 2e-3  # right after a submission: a short lead


def test_a_pass_below_the_highest_clock_is_timed_again_after_a_spin_up() -> None:
    sampler = Clocks().start()
    try:
        pacer = P.Pacer(sampler, reps=3, min_sample_s=0.01, spin_up_s=0.25)
        first, _ = pacer.measure(Pass(1e-3), "a", 1e-3)
        assert first.summary["sm_clock_mhz"] == 1980.0 and not first.retried and pacer.highest_clock == 1980.0
        sampler.values = {"sm_clock_mhz": 1200.0, "throttle_bits": 0}
        p = Pass(1e-3)
        low, _ = pacer.measure(p, "b", 1e-3)
        assert low.retried and pacer.retries == 1 and [r[2] for r in p.runs][-1] == 250  # full spin-up: 0.25 s / 1 ms
        assert P.limited({"throttle": "sw_power_cap"}) and not P.limited({"throttle": "gpu_idle"})
        capped = {"sm_clock_mhz": 1500.0, "throttle": "sw_power_cap"}
        assert not pacer._low(capped)  # held down by its power limit: kept, not re-timed
        assert pacer._low({"sm_clock_mhz": 1500.0, "throttle": "gpu_idle"})
    finally:
        sampler.stop()


# -- steady clock ------------------------------------------------------------------------------------


def _m(clock: Optional[float], **params: Any) -> Measurement:
    p: Dict[str, Any] = {"F": 0, "mode": "opaque", "store": "store", **params}
    if clock is not None:
        p["sm_clock_mhz"] = clock
    return Measurement("fillrate", "fill", "rgba8unorm", p, 0, 100, (1e-3,), True)


def test_steady_clock_is_the_median_and_marks_passes_below_it() -> None:
    ms = [_m(1980.0), _m(1965.0), _m(1500.0, throttle="gpu_idle"), _m(1980.0), _m(None)]
    marked, steady = S.mark_steady(ms)
    assert steady == pytest.approx(1972.5)  # median of 1500, 1965, 1980, 1980
    assert [m.params.get(S.CLOCK_PARAM) for m in marked] == ["steady", "steady", "below steady", "steady", None]
    assert S.below_steady(marked) == [marked[2]]
    assert S.mark_steady([_m(None)]) == ((_m(None),), None)
    assert S.pass_clock({"gpu_clock_mhz": 1400.0}) == 1400.0 and S.pass_clock({"sm_clock_mhz": True}) is None
    marked, _ = S.mark_steady([_m(1972.5)] * 3 + [_m(1880.0), _m(1870.0)])  # 5 % under 1972.5: the line is 1873.9
    assert [m.params[S.CLOCK_PARAM] for m in marked][3:] == ["steady", "below steady"]


# -- grids and budgets -------------------------------------------------------------------------------


def test_grids() -> None:
    d = G.build_grid("default")
    blended = [c[1] for c in d.fillrate if c[2] == "blended" and c[3] == "store"]
    opaque = [c[1] for c in d.fillrate if c[2] == "opaque" and c[3] == "store"]
    assert blended == list(K.FILL_F)  # every power of two: the knee within a factor of two
    assert opaque == [0, 2, 8, 32, 128, 512] == list(G.OPAQUE_F)  # every other one
    assert [c for c in d.fillrate if c[3] == "discard"] == [
        ("rgba8unorm", 0, "blended", "discard"),
        ("rgba8unorm", 0, "opaque", "discard"),
    ]
    assert [c[2] for c in d.fillrate if c[1] == 512] == ["blended", "opaque"]  # a budget cut takes opaque first
    assert len(d.fillrate) == 11 + 6 + 2 and len(set(d.fillrate)) == len(d.fillrate)
    assert len(d.tilemem) == 4 * 3 and {c[1] for c in d.tilemem} == {0, 128}
    sixteen = [c for c in d.texture if c[3] == 16]
    floor = [c for c in d.texture if c[3] == 1]
    assert len(sixteen) == len(K.TEXTURE_SIZES) * 2 * 2 and sorted({c[0] for c in sixteen}) == list(K.TEXTURE_SIZES)
    assert sorted({c[0] for c in floor}) == [64, 256, 1024, 4096] and len(floor) == 4 * 2 * 2
    assert len(d.texture) == 32 + 16
    # an axis given is measured whole: both modes at every F, every fetch count at every size
    f = G.build_grid("default", f_values=(0, 4))
    both = [(c[1], c[2]) for c in f.fillrate if c[3] == "store"]
    assert both == [(0, "blended"), (0, "opaque"), (4, "blended"), (4, "opaque")]
    assert len(G.build_grid("default", sizes=(64, 128)).texture) == 2 * 2 * 2 * 2
    assert len(G.build_grid("default", fetches=(1, 16)).texture) == len(K.TEXTURE_SIZES) * 2 * 2 * 2
    full = G.build_grid("full")
    assert len(full.fillrate) == len(K.FILL_F) * 4 and len(full.tilemem) == 32 and len(full.texture) == 160
    q = G.build_grid("quick", sizes=(64,), fetches=(1, 4), patterns=("random",))
    assert q.texture == (
        (64, "random", "nearest", 1),
        (64, "random", "nearest", 4),
        (64, "random", "bilinear", 1),
        (64, "random", "bilinear", 4),
    )
    with pytest.raises(ValueError, match="not a graphics grid"):
        G.build_grid("huge")


def test_ceiling_passes_take_every_sample() -> None:
    d, q, full = G.build_grid("default"), G.build_grid("quick"), G.build_grid("full")
    for case in d.fillrate:  # F = 0 (the fill rate) and blended at 256 and 512 (the fragment ALU rate)
        ceiling = case[1] == 0 or (case[2] == "blended" and case[1] in (256, 512))
        assert d.ceiling("fillrate", case) is ceiling
        assert d.samples("fillrate", case, 10) == (10 if ceiling else 5)
    assert [c for c in d.tilemem if d.ceiling("tilemem", c)] == [c for c in d.tilemem if c[1] == 0]
    assert not any(d.ceiling("texture", c) for c in d.texture) and d.samples("texture", d.texture[0], 10) == 5
    assert q.ceiling("fillrate", ("rgba8unorm", 64, "blended", "store"))  # quick's two largest F: 64 and 512
    assert not q.ceiling("fillrate", ("rgba8unorm", 64, "opaque", "store"))
    assert full.samples("texture", full.texture[0], 10) == 10 and full.samples("fillrate", full.fillrate[5], 7) == 7
    assert [G.curve_samples("default", n) for n in (1, 2, 3, 10)] == [1, 1, 2, 5] and G.curve_samples("full", 3) == 3


def test_ladder_predicts_a_layer_from_the_f_below() -> None:
    assert M.ladder_layer_s({}, 8) is None and M.ladder_layer_s({0: 1e-4}, 8) is None  # probed
    assert M.ladder_layer_s({0: 1e-4, 16: 1e-3}, 8) is None  # one point below: probed
    a, b = 1.5e-4, 6.6e-5  # an H100's fill layer: a + b F seconds
    line = {F: a + b * F for F in (0, 1, 2, 4)}
    assert M.ladder_layer_s(line, 64) == pytest.approx(a + b * 64)  # exact on a line
    assert M.ladder_layer_s({**line, 128: 1.0}, 8) == pytest.approx(a + b * 8)  # from the two largest below
    assert M.ladder_layer_s({0: 2e-4, 1: 1e-4}, 2) == 1e-4  # never below the last measured
    h100 = {0: 0.148, 1: 0.228, 2: 0.295, 4: 0.429, 8: 0.687, 16: 1.217, 32: 2.270, 64: 4.374, 128: 8.558}
    h100.update({256: 16.93, 512: 33.69})  # ms per blended layer, tests/unit/data/graphics_h100.json
    for F in list(h100)[2:]:  # from F = 2 on: within 5 %
        got = M.ladder_layer_s({f: v for f, v in h100.items() if f < F}, F)
        assert got == pytest.approx(h100[F], rel=0.05), F


def test_graphics_budgets() -> None:
    assert G.graphics_budgets(["fillrate", "texture"]) == {"fillrate": 20.0, "texture": 45.0}
    assert G.graphics_budgets(["texture"], "quick") == {"texture": 12.0}
    assert G.graphics_budgets(["texture"], "full") == {"texture": 0.0}
    assert G.graphics_budgets(["texture", "tilemem"], "default", "texture=60") == {"texture": 60.0, "tilemem": 15.0}
    assert G.graphics_budgets(["texture"], "default", "none") == {"texture": 0.0}
    for bad, message in (
        ("gemm=3", "'gemm' is not a suite of this run"),
        ("texture=0", "is out of range"),
        ("texture", "is not SUITE=SECONDS"),
    ):
        with pytest.raises(OptionError, match=message):
            G.graphics_budgets(["texture"], "default", bad)
    assert sum(G.SUITE_BUDGET_S.values()) <= 90 and sum(G.QUICK_BUDGET_S.values()) <= 30


def test_sizes_and_fetches_options() -> None:
    assert O.check_sizes([256, 64, 64]) == (64, 256) and O.check_fetches([16, 1]) == (1, 16)
    with pytest.raises(OptionError, match="sizes 48 is not a power of two"):
        O.check_sizes([48])
    with pytest.raises(OptionError, match="fetches 65 is out of range"):
        O.check_fetches([65])


# -- the runner: budgets cut, clocks marked ---------------------------------------------------------


class FakePass:
    def __init__(self, image: np.ndarray, seconds: float, invocations: Optional[int]) -> None:
        self.image, self.seconds, self.invocations, self.timer = image, seconds, invocations, "fake"

    def time(self, args: Any, work_items: int, batch: int, reps: int) -> List[float]:
        return [self.seconds * batch] * reps

    def run(self, batch: int, reps: int, lead: int = 0, *, count: bool = False, read: bool = False) -> P.PassRun:
        return P.PassRun([self.seconds * batch] * reps, self.invocations if count else None, self.image)


class FakeDevice:
    name, info, max_texture, statistics = "Fake GPU", {"backend": "wgpu", "index": 0}, 256, True

    def fill_pass(
        self, *, width: int, height: int, fmt: str, F: int, layers: int, blended: bool, store: bool
    ) -> FakePass:
        return FakePass(K.fill_reference(width, height, F, fmt), 1e-5 * layers, width * height * layers)

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
        image = K.texture_reference(
            width, height, texture, fetches, "random" if random else "coherent", "bilinear" if bilinear else "nearest"
        )
        return FakePass(image, 1e-5 * layers, width * height * layers)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDevice:
    device = FakeDevice()
    monkeypatch.setattr(R, "open_graphics_device", lambda api, index: device)
    return device


def test_a_suite_cut_short_by_its_budget_says_so(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["tilemem"], width=W, height=H, overdraw=4, reps=2, budget="none")
    )
    assert whole.suite_times[0].cut is False and whole.suite_times[0].measured == 12

    class TwoCases(R.SuiteClock):  # the budget runs out after two passes, whatever the host's speed
        def spent(self) -> bool:
            return self.measured >= 2

    monkeypatch.setattr(R, "SuiteClock", TwoCases)
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0",
            suites=["fillrate", "texture"],
            width=W,
            height=H,
            overdraw=4,
            reps=2,
            sizes=[64],
            budget="fillrate=5,texture=5",
        )
    )
    assert [(t.suite, t.measured, t.cut) for t in study.suite_times] == [("fillrate", 2, True), ("texture", 2, True)]
    assert len(study.suite("fillrate")) == 2 and study.params["budgets_s"] == {"fillrate": 5.0, "texture": 5.0}
    assert any(
        w.startswith("suite texture was cut short by its 5 s time budget: 2 of ")
        and "planned cases measured; not measured from texture 64x64 " in w
        for w in study.warnings
    )
    assert study.status == "cut by budget" and study.suite_times[0].stopped_before.startswith("fillrate ")
    assert study.suite_times[0].planned > 2
    md = format_graphics(study, "md")
    assert "## Time per suite" in md and "| fillrate | 2 |" in md and "cut short by its budget" in md
    assert "Cut short by its time budget: fillrate, texture" in md
    assert any("cut short by its 5 s budget after 2 passes" in line for line in summary_lines(study))


def test_texture_layers_are_counted(fake: FakeDevice) -> None:
    study = R.run_graphics(
        GraphicsOptions(
            device="wgpu:0",
            suites=["texture"],
            width=W,
            height=H,
            reps=2,
            sizes=[64, 128],
            patterns=["random"],
            filters=["nearest"],
            fetches=[16],
        )
    )
    a, b = study.measurements
    assert a.params["layers"] == M.MAX_TEXTURE_LAYERS  # 10 µs per layer: capped
    assert a.params["texels"] == a.params["pixels_shaded"] * 16 == W * H * a.params["layers"] * 16
    assert a.params["shaded_by"] == "counter" and study.params["probes"] == 1  # the second size reuses the line's
    assert b.params["layers"] == a.params["layers"] and study.valid


def test_passes_marked_at_or_below_the_steady_clock(fake: FakeDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    sampler = Clocks()
    clocks = iter([1980.0] * 3 + [1400.0] * 2 + [1980.0] * 40)

    def read() -> Mapping[str, float]:
        return {"sm_clock_mhz": next(clocks, 1980.0), "throttle_bits": 0}

    monkeypatch.setattr(sampler, "read", read)
    monkeypatch.setattr(R, "graphics_sampler", lambda api, info: sampler)
    study = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, reps=2, f_values=[0, 4])
    )
    clocks_seen = sorted(float(m.params["sm_clock_mhz"]) for m in study.measurements)
    steady = study.params["steady_clock_mhz"]
    assert steady == pytest.approx(float(np.median(clocks_seen)), abs=0.05)
    assert study.params["retries"] >= 1  # the 1400 MHz readings made a pass run again after a spin-up
    for m in study.measurements:  # every pass has a verdict, and it is the one its clock says
        below = float(m.params["sm_clock_mhz"]) < 0.95 * steady
        assert m.params["clock"] == ("below steady" if below else "steady")
    md = format_graphics(study, "md")
    assert f"Steady clock: {steady:.0f} MHz, the median of the {len(clocks_seen)} passes' clocks" in md
    marked = S.below_steady(study.measurements)
    assert ("ran below steady" in md) == bool(marked) and ("Every pass ran at the steady clock." in md) != bool(marked)
    assert all(f"**{float(m.params['sm_clock_mhz']):.0f}** below" in md for m in marked)
    assert any(line.startswith(f"steady clock {steady:.0f} MHz") for line in summary_lines(study))


def test_steady_note_names_the_passes_below() -> None:
    from apple_roofline.graphics.model import GraphicsStudy
    from apple_roofline.study.document import ToolInfo

    ms, steady = S.mark_steady([_m(1980.0), _m(1980.0), _m(1200.0, throttle="gpu_idle", F=64)])
    study = GraphicsStudy(
        tool=ToolInfo.current(),
        created="2026-01-01T00:00:00Z",
        host={},
        device={"name": "X", "backend": "wgpu"},
        command=("apple-roofline", "graphics"),
        params={"steady_clock_mhz": steady, "clock_tolerance": 0.05},
        measurements=ms,
    )
    note = steady_note(study)
    assert (
        "1 of 3 passes ran below steady: fillrate rgba8unorm F=64 mode=opaque store=store at 1200 MHz (gpu_idle)"
        in note
    )


def test_cli_budget_and_grid_errors(fake: FakeDevice, tmp_path: Any) -> None:
    cli = CliRunner()
    for args, message in (
        (["--budget", "blur=3"], "--budget 'blur' is not a suite of this run"),
        (["--budget", "texture=-1"], "is out of range"),
        (["--sizes", "100"], "--sizes 100 is not a power of two"),
        (["--fetches", "0"], "--fetches 0 is out of range"),
        (["--filter", "cubic"], "--filter 'cubic' is not a texture filter"),
        (["--quick", "--full"], "--quick and --full ask for two grids"),
    ):
        r = cli.invoke(app, ["graphics", *args, "--out", str(tmp_path / "x")])
        assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
        assert not (tmp_path / "x").exists()
    r = cli.invoke(
        app,
        [
            "graphics",
            "--resolution",
            f"{W}x{H}",
            "--overdraw",
            "4",
            "--suite",
            "tilemem",
            "--reps",
            "2",
            "--out",
            str(tmp_path / "ok"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "time per suite: tilemem" in r.stdout and "of 15;" in r.stdout


def test_default_fill_ladder_probes_once_per_ladder_and_thins_curve_samples(
    fake: FakeDevice, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: List[Any] = []
    monkeypatch.setattr(fake, "prepare_fill", lambda **kw: built.append(kw), raising=False)
    study = R.run_graphics(GraphicsOptions(device="wgpu:0", suites=["fillrate"], width=W, height=H, overdraw=4, reps=4))
    grid = G.build_grid("default")
    shapes = list(dict.fromkeys((c[0], c[1], c[2]) for c in grid.fillrate))
    assert built == [{"fmt": f, "F": F, "blended": m == "blended"} for f, F, m in shapes]  # every pipeline ahead
    # probed: the first two F of each mode; every later F is predicted from the two below it
    assert study.params["probes"] == 4 and study.valid
    for m in study.measurements:
        case = ("rgba8unorm", m.params["F"], m.params["mode"], m.params["store"])
        assert len(m.samples_s) == (4 if grid.ceiling("fillrate", case) else 2)
    assert study.params["curve_reps"] == 2 and study.params["reps"] == 4
    gpu = study.params["gpu_seconds"]
    assert set(gpu) == {"samples", "lead", "probes"} and gpu["samples"] > 0 and gpu["probes"] > 0
    assert gpu["samples"] == pytest.approx(sum(sum(m.samples_s) * m.batch for m in study.measurements), rel=1e-3)
    assert any(line.startswith("of which on the GPU: samples ") for line in summary_lines(study))
    assert "Of which on the GPU: samples " in format_graphics(study, "md")


def test_tile_memory_keeps_the_fill_rate_suites_passes(fake: FakeDevice) -> None:
    """rgba8unorm at F = 0 (stored, discarded) and F = 128 (stored) are fillrate passes of the default
    grid too: measured once, kept in both suites."""
    alone = R.run_graphics(GraphicsOptions(device="wgpu:0", suites=["tilemem"], width=W, height=H, overdraw=4, reps=2))
    both = R.run_graphics(
        GraphicsOptions(device="wgpu:0", suites=["fillrate", "tilemem"], width=W, height=H, overdraw=4, reps=2)
    )
    tile = both.suite("tilemem")
    shared = [m for m in tile if "measured_in" in m.params]
    assert sorted((m.dtype, m.params["F"], m.params["store"]) for m in shared) == [
        ("rgba8unorm", 0, "discard"),
        ("rgba8unorm", 0, "store"),
        ("rgba8unorm", 128, "store"),
    ]
    for m in shared:
        twin = next(
            f
            for f in both.suite("fillrate")
            if (f.params["F"], f.params["mode"], f.params["store"]) == (m.params["F"], "opaque", m.params["store"])
        )
        assert m.params["measured_in"] == "fillrate" and m.samples_s == twin.samples_s and m.valid == twin.valid
    assert (
        len(tile) == 12
        and both.suite_times[1].measured == 12
        and not any("measured_in" in m.params for m in alone.measurements)
    )
    assert all(m.valid for m in tile) and len(alone.measurements) == 12
