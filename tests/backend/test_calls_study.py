"""The per-call cost study on every backend with a device (apple_roofline.calls.run_calls and
``apple-roofline calls``): each path of the backend measured on a small grid, every call's output
validated, a fit per path; CUDA and Metal are skipped where absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

pytest.importorskip("apple_roofline._native")

from typer.testing import CliRunner

from apple_roofline.calls import CallsOptions, CallsStudy, run_calls
from apple_roofline.cli import app

#: The paths each backend's study measures (Core ML needs macOS: skipped elsewhere).
EXPECTED: Dict[str, List[str]] = {
    "cpu": ["blas"],
    "cuda": ["blas", "cublas", "kernel"],
    "metal": ["blas", "mps", "kernel"],
}


def _devices() -> List[str]:
    from apple_roofline._native import _core

    return [str(b["name"]) for b in _core.backends() if b["compiled"] and int(b["devices"]) > 0]


@pytest.fixture(scope="module", params=["cpu", "cuda", "metal"])
def study(request: pytest.FixtureRequest) -> CallsStudy:
    name = request.param
    if name not in _devices():
        pytest.skip(f"no {name} device here")
    # B 1 and 4 exercise the tiled kernel's padding to 16 rows; N 32 and 64 its tiles.
    return run_calls(
        name if name == "cpu" else f"{name}:0",
        CallsOptions(batches=[1, 4, 16], sizes=[32, 64], max_reps=10, budget_s=0.005),
    )


def test_every_path_of_the_backend_is_measured_and_valid(study: CallsStudy) -> None:
    assert [p.name for p in study.paths] == EXPECTED[study.backend]
    assert study.complete and study.valid, study.warnings
    for p in study.paths:
        ms = study.of_path(p.name)
        assert [(m.batch, m.n) for m in ms] == [(1, 32), (4, 32), (1, 64), (16, 32), (4, 64), (16, 64)]
        for m in ms:
            assert m.flops == 2 * m.batch * m.n * m.n and len(m.samples_s) >= 10
            assert "within" in m.validation  # the exact elementwise check (at most 512 rows)
            assert m.rows == (16 if p.name == "kernel" else m.batch)
    assert [f.path for f in study.fits()] == EXPECTED[study.backend]
    assert all(f.t0_s >= 0.0 and f.points == 6 for f in study.fits())
    if study.backend == "metal":
        assert {s.path for s in study.skipped} >= {"coreml_all", "coreml_cpu_and_ne"}


def test_the_cli_writes_a_study_that_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "calls"
    result = CliRunner().invoke(
        app, ["calls", "--device", "cpu", "--batches", "1,4", "--sizes", "16,32", "--max-reps", "10", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    data = json.loads((out / "calls.json").read_text())
    assert data["kind"] == "calls" and len(data["measurements"]) == 4
    assert "## Crossovers" in (out / "calls.md").read_text() and (out / "calls.png").stat().st_size > 0
    assert "blas" in result.stdout and "t0" in result.stdout
