"""The threadgroup-size tuning study over a faked GPU backend: candidates, bad sizes, rejected sizes
as invalid points, validation of every point, the best size, the results file, the report, the
figure, the CLI, and ``run --tune`` measuring at the sizes found."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.devices import DeviceSpec
from apple_roofline.errors import OptionError
from apple_roofline.roofline import runner as roofline_runner
from apple_roofline.studies import load_results
from apple_roofline.suites.stream import Q
from apple_roofline.tuning import FileTuner, QuickTuner, TuneStudy
from apple_roofline.tuning import runner
from apple_roofline.tuning.model import candidates, check_blocks, device_block_limit
from apple_roofline.tuning.outputs import write_tune
from apple_roofline.tuning.report import format_tune

SIMD, MAX_PIPELINE, SMS = 32, 512, 4


class FakeBuffer:
    def __init__(self, nbytes: int) -> None:
        self.data = np.zeros(nbytes, dtype=np.uint8)

    def write(self, arr: np.ndarray, offset: int) -> None:
        b = np.ascontiguousarray(arr).view(np.uint8).ravel()
        self.data[offset:offset + b.size] = b

    def view(self, dtype: str) -> np.ndarray:
        return self.data.view(dtype)


class FakeKernel:
    """A GPU kernel whose STREAM entries compute in NumPy; its time per launch depends on the block
    (fastest at 128), so the best size is known; ``broken`` writes nothing (validation must fail)."""

    timer = ""

    def __init__(self, entry: str, block: int, broken: bool) -> None:
        self.entry, self.block, self.broken = entry, block, broken
        self.simd_width, self.max_block = SIMD, 1024
        self.wave_items = SMS * (2048 // block) * block

    def time(self, args: Sequence[Any], launch: int, batch: int = 1, reps: int = 1) -> List[float]:
        a, b, c = (x.view("float32") for x in args[:3])
        n = launch * 4
        if not self.broken:
            op = self.entry.split("_")[1]
            if op == "copy":
                c[:n] = a[:n]
            elif op == "scale":
                b[:n] = np.float32(Q) * c[:n]
            elif op == "add":
                c[:n] = a[:n] + b[:n]
            else:
                a[:n] = b[:n] + np.float32(Q) * c[:n]
        per_launch = 1e-3 * (1.0 + abs(np.log2(self.block / 128.0)))
        return [per_launch * batch] * reps


class FakeBackend:
    def __init__(self, broken: bool = False, simd: int = SIMD) -> None:
        self.broken, self.simd, self.max_pipeline = broken, simd, MAX_PIPELINE
        self.compiled: List[Any] = []

    def info(self) -> Dict[str, Any]:
        return {"backend": "cuda", "name": "Fake GPU", "index": 0, "compute_units": SMS,
                "memory_bytes": 48 << 20, "max_threads_per_block": 1024}

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(nbytes)

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> FakeKernel:
        block = int(constants.get("BLOCK", 256))
        self.compiled.append((entry, block))
        if block > self.max_pipeline:
            raise ValueError(f"constant BLOCK {block} exceeds the {self.max_pipeline} threads per block kernel '{entry}' allows")
        k = FakeKernel(entry, block, self.broken)
        if not self.simd:
            k.simd_width = k.max_block = k.block = k.wave_items = 0
        return k


class _BackendError(RuntimeError):
    pass


class _CompileError(_BackendError):
    pass


class _UnsupportedError(_BackendError):
    pass


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    """The fake backend, opened for "cuda:0"; the extension's exception types stand in as a fake
    ``apple_roofline._native`` (the unit tier never loads the extension)."""
    native = types.ModuleType("apple_roofline._native")
    native._core = types.SimpleNamespace(BackendError=_BackendError, CompileError=_CompileError,  # type: ignore[attr-defined]
                                         UnsupportedError=_UnsupportedError)
    monkeypatch.setitem(sys.modules, "apple_roofline._native", native)
    backend = FakeBackend()
    monkeypatch.setattr(runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(runner, "open_device", lambda spec: backend)
    return backend


def _tune(**kw: Any) -> TuneStudy:
    return runner.run_tune("cuda:0", ["stream"], array_bytes=4096, reps=2, **kw)


def test_candidates_are_multiples_of_the_simd_width() -> None:
    assert candidates(32, 1024, False) == list(range(32, 1025, 32))
    assert candidates(32, 1024, True) == [32, 64, 128, 256, 512, 1024]
    assert candidates(0, 1024, True) == []
    assert device_block_limit({"max_threads_per_threadgroup": 4096}) == 1024
    assert device_block_limit({"max_threads_per_block": 512}) == 512


@pytest.mark.parametrize("bad, problem", [(48, "not a multiple of the SIMD width"), (2048, "out of range"),
                                          ("x", "not an integer")])
def test_bad_block_names_the_valid_range(bad: object, problem: str) -> None:
    with pytest.raises(OptionError, match=f"{problem}.*multiples of 32 from 32 to 1024"):
        check_blocks([64, bad], 32, 1024)


def test_tune_measures_validates_and_finds_the_best(fake: FakeBackend) -> None:
    study = _tune(blocks=[64, 128, 256, 1024])
    assert study.params["candidates"] == [64, 128, 256, 1024] and study.params["simd_width"] == SIMD
    assert study.kernels() == [f"stream/{k}/fp32" for k in ("copy", "scale", "add", "triad")]
    assert all(m.valid for m in study.measurements) and len(study.measurements) == 4 * 3
    assert study.blocks() == {k: 128 for k in study.kernels()}
    # 1024 exceeds the fake pipeline's maximum: an invalid point with the message, not a crash
    assert {(x.kernel, x.block) for x in study.rejected} == {(k, 1024) for k in ("copy", "scale", "add", "triad")}
    assert "exceeds the 512 threads" in study.rejected[0].message
    m = study.points("stream/triad/fp32")[0]
    assert m.params["block"] == 64 and m.params["resident_blocks_per_sm"] == 2048 // 64
    assert m.params["resident_threads_per_sm"] == 2048


def test_a_wrong_output_is_an_invalid_point(fake: FakeBackend) -> None:
    fake.broken = True
    study = _tune(blocks=[128])
    assert study.measurements and not any(m.valid for m in study.measurements)
    assert study.blocks() == {} and any("failed validation" in w for w in study.warnings)


def test_kernel_filter_and_unknown_kernel(fake: FakeBackend) -> None:
    study = _tune(blocks=[128], kernels=["triad"])
    assert study.kernels() == ["stream/triad/fp32"]
    with pytest.raises(OptionError, match="names no kernel"):
        _tune(blocks=[128], kernels=["nope"])


def test_device_without_threadgroup_is_a_one_line_error(fake: FakeBackend) -> None:
    fake.simd = 0
    with pytest.raises(OptionError, match="has no threadgroup size to tune"):
        _tune()


def test_unknown_suite_names_the_tunable_ones() -> None:
    with pytest.raises(OptionError, match="stream, sweep, peak, idiv"):
        runner.parse_tune_suites("gemm")


def test_results_file_round_trips_and_views(fake: FakeBackend, tmp_path: Path) -> None:
    study = _tune(blocks=[64, 128, 1024])
    written, problems = write_tune(study, tmp_path)
    assert [p.name for p in written] == ["tune.json", "tune.md", "tune.png"] and not problems
    again = load_results(tmp_path / "tune.json")
    assert isinstance(again, TuneStudy) and again.blocks() == study.blocks()
    md = format_tune(study)
    assert "**128** (best)" in md and "rejected: constant BLOCK 1024" in md
    assert "best" in format_tune(study, "csv")
    d = json.loads((tmp_path / "tune.json").read_text())
    d["measurements"][0]["params"]["block"] = "big"
    with pytest.raises(ValueError, match=r"measurements\[0\]\.params\.block must be a positive integer"):
        TuneStudy.from_dict(d)


def test_run_tune_measures_each_suite_at_its_best_size(fake: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    run = roofline_runner.run_roofline("cuda:0", ["stream"], array_bytes=4096, reps=2, telemetry=False,
                                       tuner=QuickTuner(2))
    assert run.measurements and all(m.params["block"] == 128 for m in run.measurements)
    assert "quick tune" in str(run.device["tune"])
    fake.max_pipeline = 1024
    plain = roofline_runner.run_roofline("cuda:0", ["stream"], array_bytes=4096, reps=2, telemetry=False)
    assert {m.params["block"] for m in plain.measurements} == {1024}  # the stream table's CUDA block


def test_run_tune_file_uses_the_study(fake: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    study = _tune(blocks=[64, 96])  # best of these: 96 (closer to 128)
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    run = roofline_runner.run_roofline("cuda:0", ["stream"], array_bytes=4096, reps=2, telemetry=False,
                                       tuner=FileTuner(study, "t.json"))
    assert {m.params["block"] for m in run.measurements} == {96}


def test_cli_tune_writes_files_and_rejects_bad_sizes(fake: FakeBackend, tmp_path: Path) -> None:
    from apple_roofline.cli.app import app

    r = CliRunner().invoke(app, ["tune", "-d", "cuda:0", "-s", "stream", "--block", "64,128", "--reps", "2",
                                 "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "tune.md").exists() and "best block 128" in r.output
    r = CliRunner().invoke(app, ["tune", "-d", "cuda:0", "-s", "stream", "--block", "48", "-o", str(tmp_path)])
    assert r.exit_code == 2 and "not a multiple of the SIMD width" in r.output
    r = CliRunner().invoke(app, ["run", "--tune-file", str(tmp_path / "tune.json"), "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--tune-file needs --tune" in r.output
