"""The command line with the real extension on this machine's CPU: devices, a device error, and one
whole run end to end (the unit tier fakes the runner and the device registry)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

import pytest
from typer.testing import CliRunner, Result

from apple_roofline.cli import app
from apple_roofline.roofline.model.run import Run

runner = CliRunner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def invoke(args: Sequence[str]) -> Result:
    return runner.invoke(app, list(args))


def _patch_runner(monkeypatch: pytest.MonkeyPatch, behaviour: Any) -> None:
    import apple_roofline.roofline.run.runner as runner_mod

    class FakeRunner:
        def __init__(self, *args: Any, **kw: Any) -> None:
            pass

        def run(self) -> Run:
            return behaviour(runner_mod)  # type: ignore[no-any-return]

    monkeypatch.setattr(runner_mod, "RooflineRunner", FakeRunner)


def test_devices_table() -> None:
    result = invoke(["devices"])
    assert result.exit_code == 0, result.output
    for backend in ("cpu", "cuda", "metal"):
        assert backend in result.stdout


def test_devices_json() -> None:
    result = invoke(["devices", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert isinstance(data, list)
    by_backend = {d["backend"]: d for d in data}
    assert set(by_backend) >= {"cpu", "cuda", "metal"}
    cpu = by_backend["cpu"]
    assert cpu["compiled"] is True
    assert cpu["devices"] >= 1
    assert isinstance(cpu["name"], str) and cpu["name"]
    for d in data:
        assert set(d) >= {"backend", "compiled", "devices", "name", "reason", "details"}
        if not d["compiled"] or d["devices"] == 0:
            assert d["reason"], d  # an absent backend says why


def test_run_device_error_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline._native import _core

    def fail(_m: Any) -> Run:
        raise _core.DeviceError("[cpu::alloc] out of memory\nsecond line")

    _patch_runner(monkeypatch, fail)
    result = invoke(["run", "--device", "cpu", "--suite", "stream", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "out of memory" in lines[0]
    assert "second line" not in result.stderr


def test_run_end_to_end_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "tmp"
    args = [
        "run",
        "--device",
        "cpu",
        "--suite",
        "stream,peak",
        "--array-bytes",
        "8MiB",
        "--reps",
        "3",
        "--out",
        str(out),
    ]
    monkeypatch.setattr(sys, "argv", ["/somewhere/bin/apple-roofline", *args])
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    for name in ("run.json", "roofline.png", "roofline.svg", "report.md"):
        assert (out / name).is_file(), name
    assert (out / "roofline.png").read_bytes()[:8] == PNG_MAGIC
    run = Run.load(out / "run.json")
    assert run.complete
    assert run.backend == "cpu"
    assert run.measurements
    assert all(m.valid for m in run.measurements), [m.label for m in run.measurements if not m.valid]
    assert {m.suite for m in run.measurements} <= {"stream", "peak"}
    kinds = {c.kind for c in run.ceilings if c.source == "measured"}
    assert kinds == {"bandwidth", "compute"}
    assert list(run.command) == ["apple-roofline", *args]


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the Metal backend is built")
def test_graphics_on_metal_without_the_metal_backend_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["graphics", "--device", "metal:0", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "'metal:0' is not available" in result.output and "built on macOS only" in result.output


# -- a study that would measure nothing refuses (docs/design/files.md, "Exit codes") ------------------------


def _errors(result: Result) -> list[str]:
    return [ln for ln in result.stderr.splitlines() if ln.startswith("error")]


def test_a_suite_the_device_cannot_run_is_refused_and_nothing_written(tmp_path: Path) -> None:
    """``run --device cpu --suite matrix`` wrote a run.json of no measurement and exited 0: the
    arguments ask for what this device has no kernel for, so exit 2, one line, no files."""
    out = tmp_path / "o"
    result = invoke(["run", "--device", "cpu", "--suite", "matrix", "--quick", "--out", str(out)])
    assert result.exit_code == 2, result.output
    (line,) = _errors(result)
    assert line.startswith("error: --suite matrix cannot run on ") and "the matrix suite measures GPUs only" in line
    assert line.endswith("(valid: suites with a kernel this device runs)")
    assert not out.exists() or not list(out.iterdir())


def test_calls_of_a_path_of_another_backend_is_refused(tmp_path: Path) -> None:
    """``calls --device cpu --path cublas`` exited 0 with files that held nothing measured."""
    out = tmp_path / "o"
    result = invoke(["calls", "--device", "cpu", "--path", "cublas", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert _errors(result) == [
        "error: --path cublas cannot run on this device: cpu ("
        + _cpu_name()
        + ") is a cpu device (valid: paths of a cpu device: blas)"
    ]
    assert not list(out.glob("calls*"))


def _cpu_name() -> str:
    from apple_roofline._native import _core

    return str(_core.Backend("cpu", 0).info()["name"])


def test_a_wgpu_adapter_that_is_not_there_is_an_argument_error(tmp_path: Path) -> None:
    pytest.importorskip("wgpu")
    result = invoke(["graphics", "--device", "wgpu:99", "--quick", "--out", str(tmp_path / "o")])
    if "finds no adapter" in result.output:
        pytest.skip("wgpu finds no adapter here")
    assert result.exit_code == 2, result.output
    (line,) = _errors(result)
    assert (
        line.startswith("error: --device wgpu:99 is not an adapter: wgpu finds ") and "(valid: wgpu:0 to wgpu:" in line
    )


def test_run_kernels_of_another_device_is_refused_before_measuring(tmp_path: Path) -> None:
    """``run --kernels`` with an H200's profile on this CPU: exit 2, one line naming both devices,
    before anything is measured (issue 45)."""
    import apple_roofline as ar

    kernels = tmp_path / "k.json"
    ar.save_kernels(kernels, [ar.Point("k", 1e9, 1e8, 1e-3)], device={"backend": "cuda", "name": "NVIDIA H200"})
    out = tmp_path / "o"
    result = invoke(
        ["run", "--device", "cpu", "--suite", "stream", "--quick", "--out", str(out), "--kernels", str(kernels)]
    )
    assert result.exit_code == 2, result.output
    (line,) = _errors(result)
    assert "ran on NVIDIA H200, this run on " in line and "--kernels-any-device" in line
    assert not out.exists()
