"""The engines study (Core ML) without a Mac: the kernel table's accounting, the sweep, model
building with coremltools and its cache, the output check, the Linux skip path, the results file,
the report and figure from a synthetic study (marked as test data), and the command line."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.engines import kernels as K
from apple_roofline.engines import models as M
from apple_roofline.engines import runner as R
from apple_roofline.engines.model import EnginePoint, EnginesStudy, PathTiming, planned_devices
from apple_roofline.engines.outputs import ENGINES_FILES, write_engines
from apple_roofline.engines.plot import plot_engines
from apple_roofline.engines.predict import MACOS_ONLY, check_output, predictions_unavailable
from apple_roofline.engines.report import format_engines, gflops_table
from apple_roofline.errors import CannotMeasure, OptionError
from apple_roofline.results import load_results
from apple_roofline.study import ResultsError, ToolInfo

cli = CliRunner()
needs_coremltools = pytest.mark.skipif(
    importlib.util.find_spec("coremltools") is None,
    reason="coremltools is not installed (pip install 'apple_roofline[coreml]')",
)
off_macos = pytest.mark.skipif(sys.platform == "darwin", reason="the skip path is the one off macOS")


# -- the kernel table ------------------------------------------------------------------------


def test_accounting_follows_the_conventions() -> None:
    assert K.matmul_flops(64, 2048, 2048) == 2 * 64 * 2048 * 2048
    assert K.weight_bytes(2048, 8192, "fp16") == 2 * 2048 * 8192
    assert K.weight_bytes(2048, 8192, "w8a16") == 2048 * 8192 + 3 * 8192
    assert K.matmul_bytes(4, 256, 512, "fp16") == 2 * 256 * 512 + 2 * 4 * 256 + 2 * 4 * 512
    p = K.Point("ALL", "w8a16", K.Shape(2048, 8192), 128)
    assert p.flops == 2 * 128 * 2048 * 8192
    assert p.bytes == 2048 * 8192 + 3 * 8192 + 2 * 128 * 2048 + 2 * 128 * 8192
    with pytest.raises(KeyError):
        K.weight_bytes(4, 4, "int4")


def test_sizes_batches_units_and_precisions_parse() -> None:
    assert K.parse_shape("2048") == K.Shape(2048, 2048)
    assert K.parse_shape("ffn") == K.Shape(*K.FFN_SHAPE) == K.parse_shape("2048x8192")
    assert K.parse_shapes("1024, 256,1024") == (K.Shape(256, 256), K.Shape(1024, 1024))
    assert K.check_batches([64, 1, 64]) == (1, 64)
    assert K.parse_units("all,cpu_only") == ("CPU_ONLY", "ALL")
    assert K.parse_precisions(["W8A16"]) == ("w8a16",)
    for bad, call in (
        ("0", K.parse_shape),
        ("20000", K.parse_shape),
        ("2x", K.parse_shape),
        ("CPU", K.parse_units),
        ("int4", K.parse_precisions),
    ):
        with pytest.raises(OptionError):
            call(bad)
    with pytest.raises(OptionError, match=r"batches 5000 is out of range \(valid: 1 to 4096\)"):
        K.check_batches([5000])


def test_the_plan_covers_every_point_model_by_model() -> None:
    pts = K.plan_points(K.UNITS, K.PRECISIONS, K.DEFAULT_SIZES, K.DEFAULT_BATCHES)
    assert len(pts) == 4 * 2 * 6 * 5 == len(set(pts))
    assert [p.units for p in pts[:4]] == list(K.UNITS)  # one model under every setting in turn
    assert K.Shape(*K.FFN_SHAPE) in K.DEFAULT_SIZES
    assert (K.phase(1), K.phase(16), K.phase(64)) == ("decode", "", "prefill")


# -- models and the cache ---------------------------------------------------------------------


def test_cache_keys_change_with_every_parameter() -> None:
    base = M.model_key(K.Shape(256, 256), 4, "fp16", "9.0")
    others = [
        M.model_key(K.Shape(256, 512), 4, "fp16", "9.0"),
        M.model_key(K.Shape(256, 256), 8, "fp16", "9.0"),
        M.model_key(K.Shape(256, 256), 4, "w8a16", "9.0"),
        M.model_key(K.Shape(256, 256), 4, "fp16", "8.3"),
    ]
    assert base == M.model_key(K.Shape(256, 256), 4, "fp16", "9.0")
    assert len({base, *others}) == 5
    assert base.startswith("fp16-256x256-b4-")


def test_missing_coremltools_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "coremltools", None)
    with pytest.raises(M.CoremltoolsMissing, match=r"pip install 'apple_roofline\[coreml\]'") as info:
        M.import_coremltools()
    assert "\n" not in str(info.value)


@needs_coremltools
@pytest.mark.parametrize("precision", ["fp16", "w8a16"])
def test_models_are_built_once_and_hold_what_is_counted(tmp_path: Path, precision: str) -> None:
    shape = K.Shape(64, 96)
    with R.quiet_coremltools():
        m = M.build_model(shape, 4, precision, tmp_path)
    assert not m.cached and m.package.is_dir() and m.accounting_ok
    assert m.weight_bytes_in_model == K.weight_bytes(64, 96, precision)
    w, ref = M.fp16_weights(shape), m.reference()
    assert ref.shape == (64, 96) and ref.dtype == np.float16
    if precision == "fp16":
        assert np.array_equal(ref, w)
    else:  # dequantized INT8: within half a quantization step, but not the FP16 weights themselves
        step = np.abs(w).max(axis=0).astype(np.float64) / 127
        assert np.all(np.abs(ref.astype(np.float64) - w) <= step / 2 * 1.01 + 1e-3)
        assert not np.array_equal(ref, w)
    with R.quiet_coremltools():
        again = M.build_model(shape, 4, precision, tmp_path)
    assert again.cached and again.key == m.key


@needs_coremltools
def test_an_incomplete_cache_folder_is_rebuilt(tmp_path: Path) -> None:
    with R.quiet_coremltools():
        m = M.build_model(K.Shape(32, 32), 1, "fp16", tmp_path)
    (m.folder / "model.json").unlink()
    assert M.load_built(m.folder) is None
    with R.quiet_coremltools():
        assert not M.build_model(K.Shape(32, 32), 1, "fp16", tmp_path).cached


def test_a_hostile_cache_entry_is_not_read(tmp_path: Path) -> None:
    """model.json past META_CAP, a FIFO or a folder in its place: not a complete entry (None), read
    without hanging or holding more than the cap."""
    meta = {"k": 32, "m": 32, "batch": 1, "precision": "fp16", "weight_bytes_in_model": 2048, "coremltools": "9"}
    big = tmp_path / "big"
    big.mkdir()
    (big / "model.json").write_text(json.dumps({**meta, "pad": "x" * M.META_CAP}))
    assert M.load_built(big) is None
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "model.json")
    assert M.load_built(fifo) is None
    folder = tmp_path / "folder"
    (folder / "model.json").mkdir(parents=True)
    assert M.load_built(folder) is None


# -- validation --------------------------------------------------------------------------------


def test_check_output_accepts_the_product_and_rejects_wrong_ones() -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (8, 64)).astype(np.float16)
    w = rng.uniform(-1, 1, (64, 32)).astype(np.float16)
    y = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float16)
    assert check_output(x, w, y)[0]
    assert not check_output(x, w, np.zeros_like(y))[0]
    assert not check_output(x, w, (x.astype(np.float64) @ w[:, ::-1]).astype(np.float16))[0]
    ok, why = check_output(x, w, y[:, :16])
    assert not ok and "shape" in why


# -- the Linux path ----------------------------------------------------------------------------


@off_macos
def test_off_macos_predictions_are_unavailable_without_the_extension() -> None:
    assert predictions_unavailable() == MACOS_ONLY


@off_macos
def test_run_off_macos_refuses_before_building_anything(tmp_path: Path) -> None:
    """Nothing can be measured off macOS: no study that holds no measurement, and no model built."""
    with pytest.raises(CannotMeasure, match=f"^nothing measured: {MACOS_ONLY}: the engines study times Core ML"):
        R.run_engines(
            R.EnginesOptions(["ALL", "cpu_only"], "32,16x48", [1, 2], quick=True, cache_dir=tmp_path / "cache")
        )
    assert not (tmp_path / "cache").exists()


def test_a_study_of_skipped_points_says_nothing_is_a_measurement(tmp_path: Path) -> None:
    """Files written before the study refused off macOS hold only skipped points: their report says
    so at its top, and there is no figure."""
    study = synthetic_study()
    points = tuple(
        EnginePoint(
            units=p.units,
            precision=p.precision,
            k=p.k,
            m=p.m,
            batch=p.batch,
            flops=p.flops,
            bytes=p.bytes,
            model=p.model,
            status="skipped",
            reason=MACOS_ONLY,
            plan={"known": False, "reason": MACOS_ONLY, "ops": []},
        )
        for p in study.points
    )
    study = dataclasses.replace(study, points=points, params={**study.params, "predictions": MACOS_ONLY})
    text = format_engines(study)
    assert f"No predictions were made: {MACOS_ONLY}. Nothing in this report is a measurement" in text
    assert "GFLOP/s" not in text.split("## Per-prediction times")[1].split("## Not measured")[0]
    with pytest.raises(ValueError, match="need macOS"):
        plot_engines(study)
    study.save(tmp_path / "engines.json")
    assert load_results(tmp_path / "engines.json") == study


# -- results file, report, figure (synthetic, marked as test data) -------------------------------


def _timing(path: str, median: float, valid: bool = True) -> PathTiming:
    return PathTiming(
        path,
        tuple(median * f for f in (0.9, 1.0, 1.0, 1.1, 1.3)),
        valid,
        "synthetic test data" if valid else "synthetic failure",
        "test clock",
        3,
        0.1,
    )


def _synthetic_plan(units: str) -> Dict[str, Any]:
    """A made-up compute plan: one matmul, preferred on the Neural Engine where ``units`` allows it."""
    return {
        "known": True,
        "reason": "",
        "ops": [
            {
                "op": "matmul",
                "preferred": "neural_engine" if units == "CPU_AND_NE" else "cpu",
                "supported": ["cpu"],
                "cost": 1.0,
            }
        ],
    }


def _synthetic_points() -> List[EnginePoint]:
    """Made-up measured points (two unit sets x two precisions x two batches) and one failed point."""
    points = []
    for units, scale in (("CPU_ONLY", 1.0), ("CPU_AND_NE", 0.5)):
        for precision in ("fp16", "w8a16"):
            for b in (1, 64):
                p = K.Point(units, precision, K.Shape(256, 256), b)
                med = 25e-6 + p.flops / (100e9 if precision == "fp16" else 120e9) * scale
                points.append(
                    EnginePoint(
                        units=units,
                        precision=precision,
                        k=256,
                        m=256,
                        batch=b,
                        flops=p.flops,
                        bytes=p.bytes,
                        model=f"{precision}-test",
                        status="measured",
                        plan=_synthetic_plan(units),
                        native=_timing("native", med),
                        python=_timing("python", med + 40e-6),
                    )
                )
    points.append(
        EnginePoint(
            units="ALL",
            precision="fp16",
            k=256,
            m=256,
            batch=1,
            flops=1,
            bytes=1,
            model="x",
            status="failed",
            reason="Core ML: synthetic refusal",
        )
    )
    return points


def synthetic_study() -> EnginesStudy:
    """A made-up study: TEST DATA, not a measurement of any machine."""
    return EnginesStudy(
        tool=ToolInfo("apple_roofline", "0.0-test", None),
        created="2026-01-01T00:00:00+00:00",
        host={"hostname": "TEST DATA"},
        device={"backend": "coreml", "name": "TEST DATA (synthetic)"},
        command=("synthetic",),
        params={"predictions": "", "test_data": "synthetic, not a measurement"},
        models=(
            {
                "key": "fp16-test",
                "k": 256,
                "m": 256,
                "batch": 1,
                "precision": "fp16",
                "weight_bytes_counted": 131072,
                "weight_bytes_in_model": 131072,
                "accounting_ok": True,
                "build_s": 0.0,
                "cached": True,
            },
        ),
        points=tuple(_synthetic_points()),
    )


def test_the_results_file_round_trips_and_reads_strictly(tmp_path: Path) -> None:
    study = synthetic_study()
    study.save(tmp_path / "e.json")
    assert load_results(tmp_path / "e.json") == study
    d = json.loads(study.to_json())
    d["points"][0]["native"]["samples_s"] = [0.0]
    with pytest.raises(ResultsError, match=r"points\[0\]\.native"):
        EnginesStudy.from_dict(d)
    d = json.loads(study.to_json())
    d["points"][0]["status"] = "skipped"  # a skipped point may hold no timing
    with pytest.raises(ResultsError, match="holds no timing"):
        EnginesStudy.from_dict(d)


def test_report_has_the_articles_tables_and_the_tails() -> None:
    study = synthetic_study()
    head, rows = gflops_table(study, "fp16", batch=1)
    assert head == ["N", "CPU_ONLY", "CPU_AND_NE", "ALL"] and rows[0][0] == "256" and rows[0][3] == "—"
    p = study.points[0]
    text = format_engines(study)
    for section in (
        "### Decode (batch 1), fp16",
        "### Batch scaling, w8a16, 256",
        "## W8A16 against FP16",
        "Native µs (median)",
        "p99",
        "neural_engine",
        "Core ML: synthetic refusal",
    ):
        assert section in text
    assert "No predictions were made" not in text
    assert f"{p.flops / p.native.median_s / 1e9:.4g}"[:4] in text  # type: ignore[union-attr]
    csv_text = format_engines(study, "csv")
    assert csv_text.count("\n") == len(study.points) + 1
    with pytest.raises(OptionError):
        format_engines(study, "html")


def test_invalid_timings_are_never_rates_and_plans_say_what_is_unknown() -> None:
    p = EnginePoint(
        units="ALL",
        precision="fp16",
        k=4,
        m=4,
        batch=1,
        flops=32,
        bytes=48,
        model="m",
        status="measured",
        native=_timing("native", 1e-5, valid=False),
    )
    assert p.gflops("native") is None and not p.valid
    assert planned_devices({"known": False, "reason": "MLComputePlan needs macOS 14.4"}).startswith("unknown: ")
    assert planned_devices({"known": True, "ops": [{"preferred": "none"}, {"preferred": "gpu"}]}) == "gpu"


def test_figure_and_files_of_a_measured_study(tmp_path: Path) -> None:
    fig = plot_engines(synthetic_study())
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 4
    written, problems = write_engines(synthetic_study(), tmp_path)
    assert [p.name for p in written] == list(ENGINES_FILES) and not problems


# -- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["--units", "GPU"], "--units 'GPU' is not a choice (valid: CPU_ONLY, CPU_AND_GPU, CPU_AND_NE, ALL)"),
        (["--sizes", "0"], "--sizes '0' is out of range"),
        (["--batches", "1,x"], "--batches 'x' is not an integer"),
        (["--precisions", "int4"], "--precisions 'int4' is not a choice"),
        (["--reps", "0"], "--reps 0 is out of range (valid: 1 to 100000)"),
    ],
)
def test_cli_rejects_bad_options_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = cli.invoke(app, ["engines", *args, "-o", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert message in result.output and result.output.count("error:") == 1


def test_cli_without_coremltools_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without the extra cannot measure: exit 1 naming it (where predictions could run)."""
    monkeypatch.setattr(R, "predictions_unavailable", lambda: "")
    monkeypatch.setitem(sys.modules, "coremltools", None)
    result = cli.invoke(app, ["engines", "--quick", "--cache-dir", str(tmp_path / "c"), "-o", str(tmp_path)])
    assert result.exit_code == 1 and "pip install 'apple_roofline[coreml]'" in result.output


@pytest.fixture
def failing_build(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise M.ModelBuildError("coremltools cannot build the fp16 32 B=1 model: ValueError: synthetic")

    monkeypatch.setattr(R, "build_model", boom)
    yield


@needs_coremltools
def test_cli_surfaces_coremltools_build_errors(
    tmp_path: Path, failing_build: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(R, "predictions_unavailable", lambda: "")  # the build comes first
    result = cli.invoke(
        app, ["engines", "--sizes", "32", "--batches", "1", "--cache-dir", str(tmp_path / "c"), "-o", str(tmp_path)]
    )
    assert result.exit_code == 1 and "ValueError: synthetic" in result.output


@off_macos
def test_cli_off_macos_refuses_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """Core ML needs macOS: the machine, not the arguments, so exit 1 (docs/design/files.md, "Exit codes"),
    one line saying why, and no study file that holds nothing measured."""
    out = tmp_path / "out"
    result = cli.invoke(
        app,
        [
            "engines",
            "--sizes",
            "32",
            "--batches",
            "1,8",
            "--units",
            "ALL",
            "--cache-dir",
            str(tmp_path / "c"),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.output == (
        f"error: nothing measured: {MACOS_ONLY}: the engines study times Core ML predictions, "
        "and none can run on this machine\n"
    )
    assert not list(out.glob("engines*")) and not (tmp_path / "c").exists()


@needs_coremltools
def test_resume_keeps_the_points_its_journal_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, resume_check: Any
) -> None:
    """Core ML predictions faked (they need macOS): each point's measurement is counted, and a
    resumed study measures only the points its journal does not hold."""
    calls: List[int] = []

    def measured(label: str, base: Dict[str, Any], *a: Any) -> EnginePoint:
        calls.append(1)
        return EnginePoint(
            **base,
            status="measured",
            plan={"known": False, "reason": "faked", "ops": []},
            native=_timing("native", 1e-4),
        )

    monkeypatch.setattr(R, "predictions_unavailable", lambda: "")
    monkeypatch.setattr(R, "_measure", measured)
    resume_check(
        "engines",
        EnginesStudy,
        lambda j: R.run_engines(
            R.EnginesOptions(["ALL", "cpu_only"], "32", [1, 2], quick=True, cache_dir=tmp_path / "cache"), journal=j
        ),
        lambda s: s.points,
        lambda: len(calls),
    )
