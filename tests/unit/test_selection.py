"""Which ceilings the default roofline figure shows (:mod:`apple_roofline.roofline.model.selection`)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Sequence

import pytest

from apple_roofline.roofline import RooflineModel
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.model.selection import default_gemm_names, default_names, select_ceilings
from apple_roofline.study.records import Ceiling

DATA = Path(__file__).parent / "data"


def _model(name: str) -> RooflineModel:
    m: RooflineModel = RooflineModel.from_run(Run.load(DATA / name))
    return m


def _c(name: str, value: float, source: str = "measured", kind: str = "compute") -> Ceiling:
    return Ceiling(name, kind, value, "GB/s" if kind == "bandwidth" else "GFLOP/s", source, "test")


def _names(ceilings: Sequence[Ceiling]) -> List[str]:
    return sorted({c.name for c in ceilings})


def test_the_h100_default_is_fewer_than_all() -> None:
    model = _model("run_h100.json")
    default = select_ceilings(model, "default")
    every = select_ceilings(model, "all")
    assert len(_names(default)) < len(_names(every)) - 2
    assert default_names(model) == [
        "DRAM bandwidth",
        "GEMM INT8",
        "GEMM BF16",
        "FP16 vector",
        "FP32 vector",
        "GEMM FP64",
        "FP32 scalar ILP",
        "GEMM FP32",
        "FP64",
    ]
    # left out: the lower half-precision GEMM, the lower tensor precision, the lower FP16 class
    assert not {"GEMM FP16", "GEMM TF32", "FP16 scalar ILP"} & set(_names(default))


def test_theoretical_ceilings_follow_their_measured_class() -> None:
    model = _model("run_h100.json")
    default = select_ceilings(model, "default")
    measured = {c.name for c in default if c.source == "measured"}
    theoretical = {c.name for c in default if c.source == "theoretical"}
    have = {c.name for c in model.ceilings if c.source == "theoretical"}
    assert theoretical == measured & have
    # GEMM FP16 and BF16 have the same theoretical peak: the measured BF16 decides, and FP16's is not shown
    assert "GEMM BF16" in theoretical and "GEMM FP16" not in theoretical


@pytest.mark.parametrize(
    "name, want",
    [
        ("run_epyc_2vcpu.json", ["DRAM bandwidth", "FP32 vector", "FP32 scalar ILP", "GEMM FP32", "FP64", "GEMM FP64"]),
        (
            "run_xeon_16vcpu.json",
            ["DRAM bandwidth", "FP16 scalar ILP", "FP32 scalar ILP", "FP32 vector", "GEMM FP32", "FP64", "GEMM FP64"],
        ),
    ],
)
def test_cpu_runs_show_their_classes(name: str, want: List[str]) -> None:
    """Every class of a CPU run but the lower FP16 one (the Xeon's FP16 vector, below its FP16 scalar ILP)."""
    model = _model(name)
    assert default_names(model) == want
    missing = set(_names(model.ceilings)) - set(want)
    assert missing == ({"FP16 vector"} if "xeon" in name else set())


def test_gemm_choice() -> None:
    compute = sorted(
        [
            _c("GEMM TF32", 400.0),
            _c("GEMM INT8", 1400.0),
            _c("GEMM FP8", 1500.0),
            _c("GEMM FP16", 760.0),
            _c("GEMM BF16", 790.0),
            _c("GEMM FP32", 50.0),
            _c("GEMM FP64", 60.0),
            _c("CPU GEMM FP32", 2.0),
            _c("CPU GEMM FP16", 3.0),
            _c("CPU GEMM BF16", 1.0),
            _c("FP32 vector", 64.0),
        ],
        key=lambda c: -c.value,
    )
    assert default_gemm_names(compute) == [
        "GEMM FP64",
        "GEMM FP32",
        "GEMM BF16",
        "GEMM FP8",
        "CPU GEMM FP32",
        "CPU GEMM FP16",
    ]
    assert default_gemm_names([_c("GEMM FP32", 50.0)]) == ["GEMM FP32"]
    assert default_gemm_names([_c("FP32 vector", 64.0)]) == []


def test_the_best_fp16_class_wins() -> None:
    ceilings = [
        _c("DRAM bandwidth", 100.0, kind="bandwidth"),
        _c("FP16 vector", 300.0),
        _c("FP16 scalar ILP", 200.0),
        _c("FP32 vector", 150.0),
        _c("FP16 scalar ILP", 400.0, "theoretical"),
    ]
    names = default_names(RooflineModel(ceilings))
    assert names == ["DRAM bandwidth", "FP16 vector", "FP32 vector"]
    ceilings[1] = _c("FP16 vector", 100.0)
    assert default_names(RooflineModel(ceilings)) == ["DRAM bandwidth", "FP16 scalar ILP", "FP32 vector"]
