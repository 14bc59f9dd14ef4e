from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

from apple_roofline.roofline.model.run import SCHEMA_VERSION, Run
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.files import ResultsError, write_bytes_atomic, write_text_atomic
from apple_roofline.study.records import CONVENTIONS, Ceiling, Measurement
from apple_roofline.text import sig_figs

TOP_KEYS = {
    "kind",
    "schema_version",
    "tool",
    "created",
    "host",
    "device",
    "command",
    "conventions",
    "measurements",
    "ceilings",
    "skipped",
    "warnings",
    "complete",
    "status",
}


def _m(**kw: Any) -> Measurement:
    base: Dict[str, Any] = dict(
        suite="stream",
        kernel="triad",
        dtype="fp32",
        params={"n": 1000},
        flops=2000,
        bytes=12000,
        samples_s=(1e-6, 2e-6, 3e-6),
        valid=True,
    )
    base.update(kw)
    return Measurement(**base)


# --- Measurement ------------------------------------------------------------


def test_measurement_derived_values() -> None:
    m = _m()
    assert m.label == "stream/triad/fp32"
    assert m.intensity == pytest.approx(2000 / 12000)
    assert m.median_s == 2e-6
    assert m.min_s == 1e-6 and m.max_s == 3e-6
    assert m.iqr_s == pytest.approx(1e-6)
    assert m.gflops == pytest.approx(2000 / 2e-6 / 1e9)  # 1.0 GFLOP/s
    assert m.gbps == pytest.approx(6.0)
    assert m.best_gflops == pytest.approx(2.0)
    assert m.best_gbps == pytest.approx(12.0)
    assert m.cv == pytest.approx(0.5)  # stdev 1e-6 / mean 2e-6


def test_measurement_copies_params_and_is_hashable() -> None:
    p = {"n": 1}
    m = _m(params=p, samples_s=[1.0, 2.0])
    p["n"] = 2
    assert m.params == {"n": 1}
    assert isinstance(m.samples_s, tuple)
    assert hash(m) == hash(_m(params={"n": 99}, samples_s=(1.0, 2.0)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.flops = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "kw, fragment",
    [
        (dict(flops=-1), "flops"),
        (dict(flops=1.5), "flops"),
        (dict(bytes=0), "bytes"),
        (dict(samples_s=()), "empty"),
        (dict(samples_s=(1.0, -1.0)), "positive seconds"),
        (dict(samples_s=(float("nan"),)), "finite"),
        (dict(batch=0), "batch"),
        (dict(ceiling_class="DRAM bandwidth"), "together"),
        (dict(ceiling_class="X", ceiling_kind="memory"), "ceiling_kind"),
        (dict(params={"x": [1]}), "params"),
    ],
)
def test_measurement_rejects(kw: Dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        _m(**kw)


def test_measurement_dict_round_trip_checks_derived() -> None:
    m = _m(ceiling_class="DRAM bandwidth", ceiling_kind="bandwidth", batch=4, validation="ok")
    d = m.to_dict()
    assert d["gflops"] == pytest.approx(1.0) and d["intensity"] == pytest.approx(1 / 6)
    assert Measurement.from_dict(d) == m
    # derived fields are optional, and recomputed from the samples ...
    m2 = Measurement.from_dict({k: v for k, v in d.items() if k not in ("gflops", "median_s", "cv")})
    assert m2 == m and m2.gflops == pytest.approx(1.0)
    # ... but one that is there must be the samples' own: a file cannot say what its samples do not
    with pytest.raises(ResultsError, match=r"gflops 1e\+99 is not flops / median_s / 1e9 \(valid: 1\.0"):
        Measurement.from_dict({**d, "gflops": 1e99})
    with pytest.raises(ResultsError, match=r"median_s 2\.1e-06 is not the median of samples_s \(valid: 2e-06"):
        Measurement.from_dict({**d, "median_s": 2.1e-6})
    Measurement.from_dict({**d, "median_s": 2e-6 * (1 + 1e-7)})  # a writer's rounding, within REL_TOL


# --- Ceiling ----------------------------------------------------------------


def test_ceiling_pairs_kind_and_unit() -> None:
    Ceiling("DRAM bandwidth", "bandwidth", 122.0, "GB/s", "measured", "stream/triad/fp32")
    with pytest.raises(ValueError, match="GB/s"):
        Ceiling("DRAM bandwidth", "bandwidth", 122.0, "GFLOP/s", "measured", "x")
    with pytest.raises(ValueError, match="GFLOP/s"):
        Ceiling("FP32", "compute", 815.0, "GB/s", "measured", "x")
    with pytest.raises(ValueError, match="kind"):
        Ceiling("FP32", "latency", 815.0, "GFLOP/s", "measured", "x")
    with pytest.raises(ValueError, match="source"):
        Ceiling("FP32", "compute", 815.0, "GFLOP/s", "guessed", "x")
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="positive finite"):
            Ceiling("FP32", "compute", bad, "GFLOP/s", "measured", "x")


def test_ceiling_json_key_is_from() -> None:
    c = Ceiling("FP32 vector", "compute", 815.0, "GFLOP/s", "measured", "peak/vec4_cross4/fp32")
    d = c.to_dict()
    assert set(d) == {"name", "kind", "value", "unit", "source", "from"}
    assert d["from"] == "peak/vec4_cross4/fp32"
    assert Ceiling.from_dict(d) == c
    assert c.label == "FP32 vector 815 GFLOP/s"


def testsig_figs() -> None:
    assert sig_figs(3849.2) == "3,849"
    assert sig_figs(122.0) == "122"
    assert sig_figs(6.4683) == "6.47"
    assert sig_figs(0.5) == "0.500"
    assert sig_figs(99.96) == "100"
    assert sig_figs(2.5e7) == "2.5e+07"


# --- Run --------------------------------------------------------------------


def test_run_json_has_exact_top_level_keys(m5_run: Run) -> None:
    d = json.loads(m5_run.to_json())
    assert set(d) == TOP_KEYS
    assert d["schema_version"] == SCHEMA_VERSION == 1
    assert set(d["tool"]) == {"name", "version", "git_revision"}
    assert d["conventions"] == CONVENTIONS
    assert set(d["conventions"]) == {"flops", "bytes", "units"}
    assert d["device"]["backend"] == "metal"
    assert all(set(c) == {"name", "kind", "value", "unit", "source", "from"} for c in d["ceilings"])
    assert d["skipped"][0] == {
        "suite": "peak",
        "kernel": "scalar_indep8",
        "dtype": "fp64",
        "reason": "no FP64 arithmetic on this GPU",
    }
    assert d["complete"] is True and d["status"] == "complete"


def test_run_round_trip(m5_run: Run, tmp_path: Path) -> None:
    assert Run.from_json(m5_run.to_json()) == m5_run
    p = tmp_path / "run.json"
    m5_run.save(p)
    assert Run.load(p) == m5_run
    assert Run.load(str(p)).to_json() == m5_run.to_json()
    # nothing left behind in the directory but the file itself
    assert os.listdir(tmp_path) == ["run.json"]


def test_run_helpers(m5_run: Run) -> None:
    assert all(m.valid for m in m5_run.valid_measurements)
    assert len(m5_run.valid_measurements) == len(m5_run.measurements) - 1
    r2 = m5_run.with_ceilings([])
    assert r2.ceilings == () and r2.measurements == m5_run.measurements
    assert m5_run.device_name == "Apple M5" and m5_run.backend == "metal"


def test_run_requires_device_backend_and_name() -> None:
    with pytest.raises(ValueError, match="backend"):
        Run(ToolInfo("t", "1", None), "2026-01-01", {}, {"name": "x"}, (), (), ())
    with pytest.raises(ValueError, match="name"):
        Run(ToolInfo("t", "1", None), "2026-01-01", {}, {"backend": "cpu"}, (), (), ())


def test_to_json_rejects_non_finite(m5_run: Run, tmp_path: Path) -> None:
    bad = dataclasses.replace(m5_run, host={"temp": float("nan")})
    with pytest.raises(ResultsError, match="host.temp"):
        bad.to_json()
    p = tmp_path / "run.json"
    with pytest.raises(ResultsError):
        bad.save(p)
    assert not p.exists() and os.listdir(tmp_path) == []


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "run.json"
    p.write_text(text)
    return p


def _mutated(run: Run, fn: Callable[[Dict[str, Any]], None]) -> str:
    d = run.to_dict()
    fn(d)
    return json.dumps(d)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=r"run\.json: no such file"):
        Run.load(tmp_path / "run.json")


def test_load_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="empty"):
        Run.load(_write(tmp_path, ""))


def test_load_truncated_file(m5_run: Run, tmp_path: Path) -> None:
    text = m5_run.to_json()
    with pytest.raises(ResultsError, match=r"run\.json: truncated or not JSON \(line \d+ column \d+\)") as e:
        Run.load(_write(tmp_path, text[: len(text) // 2]))
    assert "\n" not in str(e.value)


def test_load_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "run.json"
    p.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ResultsError, match="UTF-8"):
        Run.load(p)


def test_load_top_level_not_object(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="top level must be a JSON object"):
        Run.load(_write(tmp_path, "[1, 2]"))


def test_load_nan_literal_rejected(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="NaN"):
        Run.load(_write(tmp_path, '{"schema_version": NaN}'))


def test_load_wrong_schema_version(m5_run: Run, tmp_path: Path) -> None:
    text = _mutated(m5_run, lambda d: d.update(schema_version=7))
    with pytest.raises(ResultsError) as e:
        Run.load(_write(tmp_path, text))
    assert str(e.value) == f"{tmp_path / 'run.json'}: schema_version 7 is not supported (this tool reads 1)"


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda d: d.pop("schema_version"), "schema_version is missing"),
        (lambda d: d.pop("measurements"), "measurements is missing"),
        (lambda d: d.pop("complete"), "complete is missing"),
        (lambda d: d["device"].pop("backend"), "device.backend is missing"),
        (lambda d: d.update(created=5), "created must be a string"),
        (lambda d: d.update(command="run"), "command must be an array"),
        (lambda d: d.update(complete="yes"), "complete must be true or false"),
        (lambda d: d["tool"].update(version=1), "tool.version must be a string"),
        (lambda d: d["measurements"][2].update(flops=-1), r"measurements\[2\]\.flops must be a non-negative integer"),
        (lambda d: d["measurements"][2].update(flops=1.5), r"measurements\[2\]\.flops must be a non-negative integer"),
        (lambda d: d["measurements"][0].update(bytes=0), r"measurements\[0\]\.bytes must be a positive integer"),
        (lambda d: d["measurements"][1].update(samples_s=[]), r"measurements\[1\]\.samples_s must hold"),
        (lambda d: d["measurements"][1].update(samples_s=[1.0, 0]), r"measurements\[1\]\.samples_s\[1\]"),
        (lambda d: d["measurements"][1].pop("kernel"), r"measurements\[1\]\.kernel is missing"),
        (lambda d: d["measurements"][1]["params"].update(x=None), r"measurements\[1\]\.params\.x"),
        (lambda d: d["measurements"][1].update(valid=1), r"measurements\[1\]\.valid must be true or false"),
        (lambda d: d["ceilings"][0].update(unit="GFLOP/s"), r"ceilings\[0\]"),
        (
            lambda d: d["ceilings"][0].update(value="fast"),
            r"ceilings\[0\]\.value must be a positive number of GB/s, not .fast.",
        ),
        (lambda d: d["ceilings"][0].pop("from"), r"ceilings\[0\]\.from is missing"),
        (lambda d: d["skipped"][0].pop("reason"), r"skipped\[0\]\.reason is missing"),
        (lambda d: d.update(warnings=[1]), r"warnings\[0\] must be a string"),
    ],
)
def test_load_rejects_malformed(
    m5_run: Run, tmp_path: Path, mutate: Callable[[Dict[str, Any]], None], fragment: str
) -> None:
    p = _write(tmp_path, _mutated(m5_run, mutate))
    with pytest.raises(ResultsError, match=fragment) as e:
        Run.load(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: ") and "\n" not in msg


def test_optional_keys_default(m5_run: Run) -> None:
    d = m5_run.to_dict()
    del d["skipped"], d["warnings"]
    for m in d["measurements"]:
        del m["batch"], m["validation"], m["ceiling_class"], m["ceiling_kind"]
    r = Run.from_dict(d)
    assert r.skipped == () and r.warnings == ()
    assert r.measurements[0].batch == 1 and r.measurements[0].ceiling_class is None


def test_results_error_is_value_error() -> None:
    assert issubclass(ResultsError, ValueError)


def test_interrupted_run_round_trips(m5_run: Run) -> None:
    r = dataclasses.replace(m5_run, complete=False)
    assert json.loads(r.to_json())["complete"] is False
    assert Run.from_json(r.to_json()).complete is False


# --- atomic writes ------------------------------------------------------------


def test_write_atomic_replaces_and_keeps_mode(tmp_path: Path) -> None:
    p = tmp_path / "out.txt"
    write_text_atomic(p, "one")
    assert p.read_text() == "one"
    os.chmod(p, 0o600)
    write_text_atomic(p, "two ✓")
    assert p.read_text(encoding="utf-8") == "two ✓"
    assert (os.stat(p).st_mode & 0o777) == 0o600
    write_bytes_atomic(str(p), b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_atomic_failure_leaves_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "run.json"
    p.write_text("old")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(p, "new")
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["run.json"]


def test_write_atomic_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        write_text_atomic(tmp_path / "nope" / "x.json", "x")
