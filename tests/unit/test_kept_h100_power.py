"""The H100 run kept as data (tests/unit/data/run_h100_power.json; bench/README.md, "NVIDIA H100 80GB
HBM3", docs/matrix.md, docs/report-h100-power.md, docs/roofline-h100-power.png): what the docs say
about it must stay true of the file, and the docs must be the file rendered."""

from __future__ import annotations

from pathlib import Path

import pytest

from apple_roofline.results import load_results
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.report import to_markdown

DATA = Path(__file__).parent / "data" / "run_h100_power.json"
DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def run() -> Run:
    loaded = load_results(DATA)
    assert isinstance(loaded, Run)
    return loaded


def test_the_kept_run_is_whole_valid_and_from_an_h100(run: Run) -> None:
    assert "H100" in str(run.device["name"]) and run.device["backend"] == "cuda"
    assert {m.suite for m in run.measurements} == {"stream", "sweep", "peak", "gemm", "matrix"}
    assert run.measurements and all(m.valid for m in run.measurements)
    tele = run.device["telemetry"]
    assert isinstance(tele, dict) and tele["sampler"] == "nvml"
    assert "NVML_FI_DEV_POWER_INSTANT" in str(tele["power_source"]) and tele["power_window_s"] >= 0.2


def test_every_measurement_of_the_power_window_run_has_power_and_clocks(run: Run) -> None:
    """--power-window lengthened the measurements past the sensor's 0.1 s averaging, so they have a
    power reading and per-watt figures derived from it (never stored). One did not get there (the
    16×16 DGEMM: 0.096 s of timed samples) and honestly has no power."""
    without = []
    for m in run.measurements:
        assert m.params["sm_clock_mhz"] > 0 and isinstance(m.params["throttle"], str)
        if m.power_w is None:
            without.append(m)
            assert sum(m.samples_s) * m.batch < 0.1, (m.kernel, m.params)
            continue
        assert 50 < m.power_w < 1500, (m.kernel, m.power_w)
        assert m.gflops_per_watt == pytest.approx(m.gflops / m.power_w)
    assert len(without) <= 1


def test_the_matrix_ceilings_sit_below_cublas_of_the_same_inputs(run: Run) -> None:
    """What docs/matrix.md says: mma.sync reaches 0.88-0.96x of cuBLAS of the same input type."""
    ceilings = {c.name: c.value for c in run.ceilings if c.kind == "compute" and c.source == "measured"}
    for matrix, gemm in (
        ("Matrix FP16→FP32", "GEMM FP16"),
        ("Matrix BF16→FP32", "GEMM BF16"),
        ("Matrix INT8→INT32", "GEMM INT8"),
    ):
        assert 0.8 < ceilings[matrix] / ceilings[gemm] < 1.0, (matrix, ceilings[matrix], ceilings[gemm])


def test_the_docs_report_is_the_kept_run_rendered(run: Run) -> None:
    assert to_markdown(run) == (DOCS / "report-h100-power.md").read_text(encoding="utf-8")
