"""Core ML predictions on a Mac: the native path and the Python path time validated predictions,
the compute plan is known on macOS 14.4+ (or says why not), and a quick engines study is valid.
Skips elsewhere with the reason."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

if sys.platform != "darwin":
    pytest.skip("Core ML predictions need macOS", allow_module_level=True)
if importlib.util.find_spec("coremltools") is None:
    pytest.skip("coremltools is not installed (pip install 'apple_roofline[coreml]')", allow_module_level=True)

from apple_roofline.engines import EnginesOptions, matmul_call_seconds, run_engines
from apple_roofline.engines import kernels as K
from apple_roofline.engines.models import build_model
from apple_roofline.engines.predict import compute_plan, native_timing, python_timing


@pytest.mark.parametrize("precision", ["fp16", "w8a16"])
@pytest.mark.parametrize("units", K.UNITS)
def test_both_paths_validate(tmp_path_factory: pytest.TempPathFactory, precision: str, units: str) -> None:
    model = build_model(K.Shape(256, 256), 4, precision, tmp_path_factory.getbasetemp() / "cache")
    for timing in (native_timing(model, units, 10), python_timing(model, units, 10)):
        assert timing.valid, timing.validation
        assert len(timing.samples_s) == 10 and timing.warmup >= 3


def test_compute_plan_is_known_or_says_why(tmp_path: Path) -> None:
    plan = compute_plan(build_model(K.Shape(256, 256), 1, "fp16", tmp_path), "ALL")
    if plan["known"]:
        assert any(op["op"] == "matmul" and op["preferred"] in ("cpu", "gpu", "neural_engine") for op in plan["ops"])
    else:
        assert "14.4" in plan["reason"]


def test_per_call_seconds(tmp_path: Path) -> None:
    seconds = matmul_call_seconds(1, 256, "CPU_ONLY", reps=5, cache_dir=tmp_path)
    assert len(seconds) == 5 and all(s > 0 for s in seconds)


def test_quick_study_is_valid(tmp_path: Path) -> None:
    study = run_engines(EnginesOptions(["CPU_ONLY", "ALL"], "256", [1, 16], reps=5, cache_dir=tmp_path))
    assert study.valid and len(study.measured) == len(study.points) == 8
