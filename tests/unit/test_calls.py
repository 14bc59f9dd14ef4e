"""The per-call cost study without a device: the fit and crossovers, the shapes and paths, the
model's JSON, the runner over a fake backend, the report, the plot and the CLI."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.calls import (
    CallFit,
    CallMeasurement,
    CallPathInfo,
    CallsStudy,
    PathSkipped,
    check_batches,
    check_paths,
    check_sizes,
    crossover,
    crossovers,
    fit_call_cost,
    format_calls,
    grid,
    plot_calls,
    run_calls,
    write_calls,
)
from apple_roofline.calls import runner as calls_runner
from apple_roofline.cli import app
from apple_roofline.errors import CannotMeasure, OptionError
from apple_roofline.results import load_results
from apple_roofline.study import ResultsError, ToolInfo
from fill32 import WriteFill32  # tests/, on the path (conftest)

# --- the fit -------------------------------------------------------------------------------------


def _times(t0: float, rate: float, flops: Sequence[float], noise: Sequence[float] = ()) -> List[float]:
    e = list(noise) or [0.0] * len(flops)
    return [(t0 + f / rate) * (1.0 + x) for f, x in zip(flops, e)]


FLOPS = [2 * b * n * n for b in (1, 4, 16, 64, 256) for n in (64, 256, 1024)]


def test_the_fit_recovers_overhead_and_rate_exactly() -> None:
    fit = fit_call_cost("p", FLOPS, _times(20e-6, 5e12, FLOPS))
    assert fit.t0_s == pytest.approx(20e-6, rel=1e-9)
    assert fit.rate == pytest.approx(5e12, rel=1e-9)
    assert fit.rms_rel < 1e-9 and fit.points == len(FLOPS)
    assert fit.flops_range == (min(FLOPS), max(FLOPS))


def test_the_fit_recovers_them_from_noisy_times() -> None:
    noise = np.random.default_rng(3).uniform(-0.03, 0.03, len(FLOPS))
    fit = fit_call_cost("p", FLOPS, _times(8e-6, 2e11, FLOPS, noise))
    assert fit.t0_s == pytest.approx(8e-6, rel=0.05)
    assert fit.rate == pytest.approx(2e11, rel=0.05)
    assert 0.0 < fit.rms_rel < 0.03 and fit.max_rel <= 0.07


def test_the_fit_keeps_both_parameters_non_negative() -> None:
    flat = fit_call_cost("flat", FLOPS, [5e-6] * len(FLOPS))  # no growth: no rate
    assert flat.rate is None and flat.inv_rate == 0.0 and flat.t0_s == pytest.approx(5e-6)
    pure = fit_call_cost("pure", FLOPS, [f / 1e10 * (1.3 if i == 0 else 1.0) for i, f in enumerate(FLOPS)])
    assert pure.t0_s >= 0.0 and pure.rate is not None and pure.rate == pytest.approx(1e10, rel=0.1)


@pytest.mark.parametrize(
    "flops, seconds",
    [
        ([1.0], [1.0]),
        ([1.0, 2.0], [1.0]),
        ([1.0, 2.0], [1.0, -1.0]),
        ([0.0, 2.0], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, float("nan")]),
    ],
)
def test_the_fit_rejects_bad_points(flops: List[float], seconds: List[float]) -> None:
    with pytest.raises(ValueError, match="path p"):
        fit_call_cost("p", flops, seconds)


def _fit(path: str, t0: float, rate: Optional[float]) -> CallFit:
    return CallFit(path, t0, 0.0 if rate is None else 1.0 / rate, 0.0, 0.0, 2, (1.0, 1e12))


def test_a_crossover_is_where_the_fitted_times_meet() -> None:
    gpu, cpu = _fit("gpu", 20e-6, 1e13), _fit("cpu", 1e-6, 1e11)
    c = crossover(cpu, gpu)
    assert c.flops is not None and c.seconds is not None and not c.never
    assert cpu.time(c.flops) == pytest.approx(gpu.time(c.flops))
    assert c.flops == pytest.approx(19e-6 / (1e-11 - 1e-13))
    assert (c.below, c.above) == ("cpu", "gpu")
    assert (crossover(gpu, cpu).below, crossover(gpu, cpu).above) == ("cpu", "gpu")


def test_a_path_that_wins_everywhere_never_crosses() -> None:
    fast, slow = _fit("fast", 1e-6, 1e12), _fit("slow", 5e-6, 1e11)
    for c in (crossover(fast, slow), crossover(slow, fast)):
        assert c.never and c.flops is None and c.below == c.above == "fast"
    assert crossover(_fit("flat", 3e-6, None), slow).never  # less overhead and no rate: wins everywhere
    flat = _fit("flat", 8e-6, None)  # more overhead, no rate: loses only small calls
    c = crossover(flat, slow)
    assert c.flops == pytest.approx(3e-6 * 1e11) and (c.below, c.above) == ("slow", "flat")
    assert len(crossovers([fast, slow, flat])) == 3


# --- shapes and paths ----------------------------------------------------------------------------


def test_the_grid_is_the_issues_and_sorted_by_flops() -> None:
    full = grid()
    assert len(full) == 30 and full[0] == (1, 64) and full[-1] == (256, 2048)
    assert [2 * b * n * n for b, n in full] == sorted(2 * b * n * n for b, n in full)
    assert len(grid(quick=True)) == 9
    assert grid(batches=[4, 1, 4], sizes=[32]) == [(1, 32), (4, 32)]


def test_bad_shapes_and_paths_name_the_valid_values() -> None:
    with pytest.raises(OptionError, match=r"batches 0 is out of range \(valid: 1 to 256\)"):
        check_batches([0])
    with pytest.raises(OptionError, match=r"batches 512 is out of range"):
        check_batches([1, 512])
    with pytest.raises(OptionError, match=r"sizes 4096 is out of range \(valid: multiples of 16 from 16 to 2048\)"):
        check_sizes([4096])
    with pytest.raises(OptionError, match="sizes 100 is not a multiple of 16"):
        check_sizes([100])
    with pytest.raises(OptionError, match=r"paths 'gpu' is not a path \(valid: blas, cublas, mps, kernel, coreml_all"):
        check_paths(["gpu"])
    assert check_paths(["kernel", "blas"]) == ("blas", "kernel")


# --- the runner over a fake backend ---------------------------------------------------------------


class FakeUnsupported(RuntimeError):
    pass


class FakeBuffer(WriteFill32):
    def __init__(self, nbytes: int) -> None:
        self.data = np.zeros(nbytes, dtype=np.uint8)

    def write(self, array: Any, offset: int = 0) -> None:
        raw = np.ascontiguousarray(array).view(np.uint8).ravel()
        self.data[offset : offset + raw.size] = raw

    def read(self, dtype: str, count: int = -1, offset: int = 0) -> Any:
        return self.data[offset:].view(dtype)[:count].copy()

    def view(self, dtype: str) -> Any:
        return self.data.view(dtype)


class FakeGemm:
    """Backend.gemm's kernel: C = A·W (optionally wrong), m×k times k×n."""

    def __init__(self, m: int, n: int, k: int, wrong: bool) -> None:
        self.m, self.n, self.k, self.wrong = m, n, k, wrong

    def run(self, args: Sequence[Any]) -> None:
        a = args[0].view("float32")[: self.m * self.k].reshape(self.m, self.k)
        w = args[1].view("float32")[: self.k * self.n].reshape(self.k, self.n)
        c = (a @ w).astype(np.float32)
        if self.wrong:
            c[0, 0] += 1.0
        args[2].view("float32")[: self.m * self.n] = c.ravel()


class FakeBackend:
    def __init__(self, name: str = "cpu", wrong: bool = False) -> None:
        self.name, self.wrong = name, wrong

    def info(self) -> Dict[str, Any]:
        return {"backend": self.name, "name": f"Fake {self.name}", "index": 0, "blas": "OpenBLAS (fake)"}

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(nbytes)

    def gemm(self, dtype: str, m: int, n: int, k: int) -> FakeGemm:
        assert dtype == "fp32"
        if self.name == "cuda":
            raise FakeUnsupported("cuBLAS is not installed (fake)")
        return FakeGemm(m, n, k, self.wrong)


class FakeCore:
    UnsupportedError = FakeUnsupported

    def __init__(self, host: FakeBackend) -> None:
        self.host = host
        self.calls: List[Tuple[int, int]] = []

    def Backend(self, name: str, index: int) -> FakeBackend:  # noqa: N802 (the extension's name)
        assert (name, index) == ("cpu", 0)
        return self.host

    def launch_round_trip(
        self, backend: Any, kernel: FakeGemm, args: Sequence[Any], work_items: int, reps: int
    ) -> List[float]:
        assert work_items == 1
        self.calls.append((kernel.m, reps))
        kernel.run(args)
        flops = 2 * kernel.m * kernel.n * kernel.k
        return [2e-6 + flops / 1e11] * reps


class Recorder:
    def __init__(self) -> None:
        self.events: List[str] = []

    def start(self, stage: str, total: int) -> None:
        self.events.append(f"start {stage} {total}")

    def advance(self, description: str) -> None:
        self.events.append(description)

    def finish(self, stage: str) -> None:
        self.events.append(f"finish {stage}")


def _run(backend: FakeBackend, progress: Any = None, **kw: Any) -> CallsStudy:
    core = FakeCore(FakeBackend("cpu", backend.wrong))
    return run_calls(
        backend.name,
        calls_runner.CallsOptions(batches=[1, 4], sizes=[16, 32], max_reps=10, budget_s=1e-3, **kw),
        open_backend=lambda _d: backend,
        core=core,
        progress=progress,
    )


def test_the_runner_times_validates_and_fits_every_shape() -> None:
    rec = Recorder()
    st = _run(FakeBackend("cpu"), progress=rec)
    assert [p.name for p in st.paths] == ["blas"] and st.complete and st.valid
    assert [(m.batch, m.n) for m in st.measurements] == [(1, 16), (4, 16), (1, 32), (4, 32)]
    m = st.measurements[-1]
    assert m.flops == 2 * 4 * 32 * 32 and m.bytes == (4 * 32 + 32 * 32 + 4 * 32) * 4 and m.rows == 4
    assert len(m.samples_s) == 10 and "within" in m.validation
    (fit,) = st.fits()
    assert fit.t0_s == pytest.approx(2e-6) and fit.rate == pytest.approx(1e11)
    assert rec.events[0] == "start calls 4" and rec.events[-1] == "finish calls" and len(rec.events) == 6
    assert st.params["batches"] == [1, 4] and st.params["sizes"] == [16, 32]


def test_a_wrong_product_is_kept_invalid_and_warned() -> None:
    st = _run(FakeBackend("cpu", wrong=True))
    assert not st.valid and all(not m.valid for m in st.measurements)
    assert "exceed the bound" in st.measurements[0].validation
    assert st.fits() == [] and any("failed validation" in w for w in st.warnings)


def test_paths_a_device_lacks_are_skipped_with_the_reason() -> None:
    st = _run(FakeBackend("cuda"), paths=["cublas", "blas", "mps"])
    assert [p.name for p in st.paths] == ["blas"]  # BLAS of the host CPU beside the GPU
    assert st.path_info("blas") is not None and st.path_info("blas").device == "cpu"  # type: ignore[union-attr]
    reasons = {s.path: s.reason for s in st.skipped}
    assert reasons["cublas"] == "cuBLAS is not installed (fake)"
    assert reasons["mps"] == "runs on metal; this device is cuda"


def test_a_study_that_would_measure_nothing_refuses() -> None:
    """No empty study (docs/design/files.md, "Exit codes"): paths that all run on another backend are the
    arguments' fault (OptionError, exit 2); paths of this backend that cannot run here are the
    machine's (CannotMeasure, exit 1), with the reason."""
    with pytest.raises(OptionError) as e:
        _run(FakeBackend("cpu"), paths=["cublas", "kernel"])
    assert str(e.value) == (
        "paths cublas,kernel cannot run on this device: cpu (Fake cpu) is a cpu device "
        "(valid: paths of a cpu device: blas)"
    )
    with pytest.raises(
        CannotMeasure,
        match=r"^nothing measured: every path of the per-call study was skipped on "
        r"metal:0: \[coreml\] Core ML predictions need macOS$",
    ):
        _run(FakeBackend("metal"), paths=["coreml_cpu_and_ne"])
    with pytest.raises(CannotMeasure, match="cuBLAS is not installed"):  # cuBLAS missing, nothing else asked
        _run(FakeBackend("cuda"), paths=["cublas"])


def test_the_runner_rejects_bad_options_before_opening_the_device() -> None:
    def never(_d: str) -> Any:
        raise AssertionError("opened")

    for kw, needle in (
        ({"paths": ["tpu"]}, "paths 'tpu'"),
        ({"batches": [300]}, "batches 300"),
        ({"sizes": [8]}, "sizes 8"),
        ({"max_reps": 5}, "max_reps 5"),
        ({"budget_s": 0.0}, "budget_s"),
    ):
        with pytest.raises(OptionError, match=needle):
            run_calls("cpu", calls_runner.CallsOptions(**kw), open_backend=never, core=object())


def test_an_interrupt_keeps_the_partial_study() -> None:
    core = FakeCore(FakeBackend("cpu"))

    def interrupted(*_a: Any) -> List[float]:
        if len(core.calls) > 3:
            raise KeyboardInterrupt
        core.calls.append((0, 0))
        return [1e-6]

    core.launch_round_trip = interrupted  # type: ignore[method-assign]
    with pytest.raises(calls_runner.CallsInterrupted) as exc:
        run_calls(
            "cpu",
            calls_runner.CallsOptions(batches=[1], sizes=[16, 32], max_reps=10, budget_s=1e-3),
            open_backend=lambda _d: FakeBackend("cpu"),
            core=core,
        )
    assert exc.value.partial.complete is False


# --- the model's file, the report, the plot ---------------------------------------------------------


def _study(paths: Dict[str, Tuple[float, float]], valid: bool = True) -> CallsStudy:
    ms = []
    for name, (t0, rate) in paths.items():
        for b, n in grid(quick=True):
            f = 2 * b * n * n
            t = t0 + f / rate
            ms.append(
                CallMeasurement(
                    name, b, n, f, (2 * b * n + n * n) * 4, (t * 0.98, t, t * 1.05), valid=valid, validation="ok"
                )
            )
    return CallsStudy(
        tool=ToolInfo("apple_roofline", "0.0", None),
        created="2026-01-01T00:00:00+00:00",
        host={"os": "test"},
        device={"backend": "cuda", "name": "Fake GPU"},
        command=("calls",),
        params={"quick": True},
        paths=tuple(CallPathInfo(n, f"{n} lib", "launch + wait", "cuda:0") for n in paths),
        measurements=tuple(ms),
        skipped=(PathSkipped("mps", "runs on metal"),),
    )


def test_the_study_round_trips_through_its_results_file(tmp_path: Path) -> None:
    st = _study({"cublas": (12e-6, 4e13), "blas": (1e-6, 5e11)})
    path = tmp_path / "calls.json"
    st.save(path)
    back = load_results(path)
    assert isinstance(back, CallsStudy) and back == st
    data = json.loads(path.read_text())
    assert data["kind"] == "calls" and data["fits"][0]["path"] == "cublas"
    assert data["fits"][0]["rate_gflops"] == pytest.approx(4e4, rel=1e-3)
    data["measurements"][0]["samples_s"][0] = -1.0
    with pytest.raises(
        ResultsError, match=r"x.json: measurements\[0\]\.samples_s\[0\] must be a positive number of seconds, not -1.0"
    ):
        CallsStudy.from_dict(data, source="x.json")
    del data["paths"]
    with pytest.raises(ResultsError, match="x.json: paths is missing"):
        CallsStudy.from_dict(data, source="x.json")


def test_the_report_has_the_three_tables() -> None:
    st = _study({"cublas": (12e-6, 4e13), "blas": (1e-6, 5e11)})
    md = format_calls(st, "md")
    for heading in ("## Time per call", "## Fixed overhead and rate", "## Crossovers", "## Skipped"):
        assert heading in md
    assert "| cublas | 12.0 | 40,000 |" in md
    c = st.crossovers()[0]
    assert c.below == "blas" and c.above == "cublas" and c.flops is not None
    assert f"{c.flops:.3g}" in md and "| mps | runs on metal |" in md
    csv_lines = format_calls(st, "csv").splitlines()
    assert csv_lines[0].startswith("path,batch,n,rows") and len(csv_lines) == 1 + 18
    with pytest.raises(OptionError, match="fmt 'html' is not a report format"):
        format_calls(st, "html")


def test_the_plot_draws_each_path_and_refuses_nothing_valid(tmp_path: Path) -> None:
    st = _study({"cublas": (12e-6, 4e13), "blas": (1e-6, 5e11)})
    fig = plot_calls(st, tmp_path / "c.png")
    ax = fig.axes[0]
    assert (tmp_path / "c.png").stat().st_size > 0 and ax.get_xscale() == "log"
    assert [t.get_text().split(":")[0] for t in ax.get_legend().get_texts()] == ["cublas", "blas"]
    assert any(t.get_text() == "cublas/blas" for t in ax.texts)  # the crossover's marker
    with pytest.raises(ValueError, match="no valid measurement"):
        plot_calls(_study({"blas": (1e-6, 5e11)}, valid=False))
    written, problems = write_calls(_study({"blas": (1e-6, 5e11)}, valid=False), tmp_path)
    assert [p.name for p in written] == ["calls.json", "calls.md"] and "no plot" in problems[0]


# --- the command line --------------------------------------------------------------------------------


def _cli(args: Sequence[str]) -> Any:
    return CliRunner().invoke(app, ["calls", *args])


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--path", "gpu"], "error: --path 'gpu' is not a path (valid: blas, cublas, mps, kernel"),
        (["--batches", "0"], "error: --batches 0 is out of range (valid: 1 to 256)"),
        (["--sizes", "100"], "error: --sizes 100 is not a multiple of 16 (valid: multiples of 16 from 16 to 2048)"),
        (["--sizes", "x"], "error: --sizes 'x' is not an integer"),
        (["--max-reps", "3"], "error: --max-reps 3 is out of range (valid: 10 to 10000)"),
    ],
)
def test_the_cli_rejects_bad_options_in_one_line(args: List[str], needle: str, tmp_path: Path) -> None:
    result = _cli([*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(needle), lines


def test_the_cli_writes_the_files_and_prints_the_fits(
    tmp_path: Path, fake_registry: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: Dict[str, Any] = {}

    class FakeRunner:
        def __init__(self, device: str, options: calls_runner.CallsOptions, **kw: Any) -> None:
            seen.update(device=device, quick=options.quick, paths=options.names, batches=tuple(options.batches or ()))

        def run(self) -> CallsStudy:
            return _study({"cublas": (12e-6, 4e13), "blas": (1e-6, 5e11)})

    monkeypatch.setattr(calls_runner, "CallsRunner", FakeRunner)
    out = tmp_path / "o"
    result = _cli(["--device", "cpu", "--quick", "--path", "blas", "--batches", "1,4", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert seen["device"] == "cpu" and seen["quick"] and seen["paths"] == ("blas",) and seen["batches"] == (1, 4)
    assert sorted(p.name for p in out.iterdir()) == ["calls.json", "calls.md", "calls.png"]
    assert "cublas / blas: cross at" in result.stdout and "(blas below, cublas above)" in result.stdout
    assert "skipped mps: runs on metal" in result.stderr


@pytest.mark.parametrize(
    "device, path, code, line",
    [
        (
            "cpu",
            "cublas",
            2,
            "error: --path cublas cannot run on this device: cpu (Fake cpu) is a cpu device "
            "(valid: paths of a cpu device: blas)",
        ),
        (
            "cuda",
            "cublas",
            1,
            "error: nothing measured: every path of the per-call study was skipped on cuda:0: "
            "cuBLAS is not installed (fake)",
        ),
    ],
)
def test_the_cli_refuses_a_study_that_measures_nothing(
    tmp_path: Path, fake_registry: None, monkeypatch: pytest.MonkeyPatch, device: str, path: str, code: int, line: str
) -> None:
    """``calls --device cpu --path cublas`` exited 0 with files that held nothing measured: now one
    line, 2 (the arguments) or 1 (the machine), and no study file."""
    real = calls_runner.CallsRunner
    monkeypatch.setattr(
        calls_runner,
        "CallsRunner",
        lambda dev, options, **kw: real(
            dev,
            dataclasses.replace(options, budget_s=1e-3),
            open_backend=lambda _d: FakeBackend(device),
            core=FakeCore(FakeBackend("cpu")),
            **kw,
        ),
    )
    out = tmp_path / "o"
    result = _cli(["--device", "cpu", "--path", path, "--out", str(out)])  # opens the fake ``device``
    assert result.exit_code == code, result.output
    assert [ln for ln in result.stderr.splitlines() if ln.startswith("error")] == [line]
    assert not list(out.glob("calls*"))


def test_plot_and_report_read_a_saved_study(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    _study({"cublas": (12e-6, 4e13), "blas": (1e-6, 5e11)}).save(path)
    result = CliRunner().invoke(app, ["report", str(path), "--format", "csv"])
    assert result.exit_code == 0 and result.stdout.startswith("path,batch,n,rows"), result.output
    result = CliRunner().invoke(app, ["plot", str(path)])
    assert result.exit_code == 0 and (tmp_path / "calls.png").stat().st_size > 0, result.output


def test_the_core_ml_path_times_natively_and_reports_the_engines_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """On macOS the coreml_<units> paths wrap the engines study's native timing: the model is built
    once per shape (FP16, N×N weights, batch B), every run times that many predictions with the
    path's compute units, and check() is the validation of the last run (here a failing one)."""
    from apple_roofline.calls.paths import PATHS, PathContext
    from apple_roofline.engines import models as engine_models
    from apple_roofline.engines import predict
    from apple_roofline.engines.model import PathTiming

    built: List[Tuple[int, int, int, str]] = []
    runs: List[Tuple[str, int]] = []
    monkeypatch.setattr(predict, "predictions_unavailable", lambda: "")
    monkeypatch.setattr(
        engine_models,
        "build_model",
        lambda shape, batch, precision, cache: built.append((shape.k, shape.m, batch, precision)) or "model",
    )

    def timing(model: Any, units: str, reps: int) -> PathTiming:
        runs.append((units, reps))
        return PathTiming("native", tuple(1e-4 for _ in range(reps)), False, "element 3 off by 2 ulp", "host clock")

    monkeypatch.setattr(predict, "native_timing", timing)
    path = PATHS["coreml_cpu_and_ne"]
    assert path.prepare is not None and path.dtype == "fp16"
    prep = path.prepare(
        PathContext(core=None, backend=FakeBackend("metal"), backend_name="metal", device="metal:0"), 4, 128
    )
    assert prep.check() == (False, "no prediction was made")
    assert prep.run(7) == [1e-4] * 7
    assert built == [(128, 128, 4, "fp16")] and runs == [("CPU_AND_NE", 7)]
    assert prep.check() == (False, "element 3 off by 2 ulp") and prep.rows == 4


def test_the_core_ml_path_is_not_warmed_up_call_by_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Core ML run loads the model and warms up natively, so the runner runs it once to size
    the samples and once to time them, not once per warm-up call (measure.warm_up would step one
    call at a time here: the times never agree)."""
    from apple_roofline.engines import models as engine_models
    from apple_roofline.engines import predict
    from apple_roofline.engines.model import PathTiming

    runs: List[int] = []
    monkeypatch.setattr(predict, "predictions_unavailable", lambda: "")
    monkeypatch.setattr(engine_models, "build_model", lambda shape, batch, precision, cache: "model")

    def timing(model: Any, units: str, reps: int) -> PathTiming:
        runs.append(reps)
        return PathTiming("native", tuple((1 + i % 2) * 1e-4 for i in range(reps)), True, "ok", "host clock")

    monkeypatch.setattr(predict, "native_timing", timing)
    st = _run(FakeBackend("metal"), paths=["coreml_all"])
    assert len(st.measurements) == 4 and st.valid
    assert runs == [3, 10] * 4
