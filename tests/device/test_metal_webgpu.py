"""Device tier, a Mac's two paths to its GPU: the native Metal backend (``metal:0``) and WebGPU through
wgpu's Metal backend (``wgpu:N``, the Metal adapter). Both run the STREAM suite quickly, every
measurement validated, the WebGPU run records its adapter's API, and ``compare`` of the two sets each
ceiling side by side (docs/compare.md, "Two paths to one
GPU"). Runs on macOS with an Apple GPU and wgpu's Metal adapter; skips elsewhere with the reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

if sys.platform != "darwin":
    pytest.skip("the Metal and WebGPU paths to one GPU need a Mac", allow_module_level=True)

_core = pytest.importorskip("apple_roofline._native")._core
_ROW = next(b for b in _core.backends() if b["name"] == "metal")
if not (_ROW["compiled"] and _ROW["devices"] > 0):
    pytest.skip(f"no Metal device: {_ROW['reason']}", allow_module_level=True)
wgpu = pytest.importorskip("wgpu", reason="wgpu is not installed (pip install 'apple_roofline[graphics]')")

from apple_roofline.cli import app  # noqa: E402
from apple_roofline.roofline.model.run import Run  # noqa: E402


def _metal_adapter() -> int:
    for i, a in enumerate(wgpu.gpu.enumerate_adapters_sync()):
        if str(a.info.get("backend_type", "")).lower() == "metal":
            return i
    pytest.skip("wgpu finds no Metal adapter")
    raise AssertionError  # unreachable


@pytest.fixture(scope="module")
def runs(tmp_path_factory: Any) -> "tuple[Path, Path]":
    root = tmp_path_factory.mktemp("paths")
    out = []
    for device, name in (("metal:0", "metal"), (f"wgpu:{_metal_adapter()}", "wgpu")):
        args = ["run", "--device", device, "--suite", "stream", "--quick", "-o", str(root / name)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        out.append(root / name / "run.json")
    return out[0], out[1]


def test_both_paths_validate_every_measurement(runs: "tuple[Path, Path]") -> None:
    for path in runs:
        run = Run.load(path)
        assert run.measurements and all(m.valid for m in run.measurements), [m.label for m in run.measurements]
        assert any(c.name == "DRAM bandwidth" and c.source == "measured" for c in run.ceilings)
    webgpu = json.loads(runs[1].read_text())["device"]
    assert webgpu["backend"] == "wgpu" and webgpu["api"] == "Metal"
    assert Run.load(runs[0]).device_name == Run.load(runs[1]).device_name  # what pairs the two paths


def test_compare_sets_the_paths_side_by_side(runs: "tuple[Path, Path]") -> None:
    result = CliRunner().invoke(app, ["compare", str(runs[0]), str(runs[1])])
    assert result.exit_code == 0, result.output
    assert "Metal (A) and WebGPU on Metal (B)" in result.stdout
    row = next(ln for ln in result.stdout.splitlines() if ln.startswith("| DRAM bandwidth | GB/s |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] != "—" and cells[3] != "—" and cells[4].endswith("×"), row
