"""The embedding API: apple_roofline.measure, flops_bytes, plot_roofline and the NumPy example."""

from __future__ import annotations

import math
import runpy
import sys
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

import apple_roofline as ar
from apple_roofline.roofline.model.run import Run
from apple_roofline.user_kernels import flops_bytes

ROOT = Path(__file__).resolve().parents[2]


def busy() -> float:
    return float(sum(range(200)))


def test_measure_returns_point() -> None:
    p = ar.measure(busy, flops=2e6, bytes=4e5, reps=5, min_sample_s=1e-4)
    assert isinstance(p, ar.Point)
    assert p.name == "busy"
    assert p.flops == 2e6 and p.bytes == 4e5
    assert p.seconds > 0 and math.isfinite(p.seconds)
    assert p.summary is not None and p.summary.n == 5 and p.seconds == p.summary.median
    assert p.summary.min <= p.seconds <= p.summary.max
    assert p.gflops == pytest.approx(2e6 / p.seconds / 1e9)
    assert p.intensity == pytest.approx(5.0)


def test_measure_name_override_and_lambda() -> None:
    assert ar.measure(lambda: None, flops=0, bytes=1, reps=1, name="noop").name == "noop"
    assert ar.measure(lambda: None, flops=0, bytes=1, reps=1).name == "<lambda>"


def test_measure_calls_sync_after_every_sample() -> None:
    calls: List[str] = []
    p = ar.measure(
        lambda: calls.append("fn"),
        flops=1,
        bytes=1,
        sync=lambda: calls.append("sync"),
        warmup=2,
        reps=4,
        min_sample_s=1e-4,
    )
    assert p.seconds > 0
    syncs = calls.count("sync")
    # one after warm-up, at least one calibration sample, then one per rep
    assert syncs >= 1 + 1 + 4
    assert calls[:3] == ["fn", "fn", "sync"]
    assert calls[-1] == "sync"  # the clock is read after sync


def test_measure_batches_fast_callables() -> None:
    n = [0]

    def fn() -> None:
        n[0] += 1

    ar.measure(fn, flops=1, bytes=1, warmup=0, reps=3, min_sample_s=2e-3)
    assert n[0] > 3 * 10  # many calls per sample, not one


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"flops": -1.0, "bytes": 1.0}, "flops"),
        ({"flops": 1.0, "bytes": 0}, "bytes"),
        ({"flops": 1.0, "bytes": -4}, "bytes"),
        ({"flops": math.nan, "bytes": 1.0}, "flops"),
        ({"flops": 1.0, "bytes": math.inf}, "bytes"),
        ({"flops": "2e9", "bytes": 1.0}, "flops"),
        ({"flops": 1.0, "bytes": 1.0, "reps": 0}, "reps"),
        ({"flops": 1.0, "bytes": 1.0, "reps": 10001}, "reps"),
        ({"flops": 1.0, "bytes": 1.0, "warmup": -1}, "warmup"),
        ({"flops": 1.0, "bytes": 1.0, "min_sample_s": 0}, "min_sample_s"),
    ],
)
def test_measure_bad_arguments(kwargs: Any, needle: str) -> None:
    called = []
    with pytest.raises(ValueError, match=needle):
        ar.measure(lambda: called.append(1), **kwargs)
    assert not called  # validated before anything runs


def test_measure_not_callable() -> None:
    with pytest.raises(TypeError, match="fn must be callable"):
        ar.measure(42, flops=1, bytes=1)  # type: ignore[arg-type]
    called = []
    with pytest.raises(TypeError, match="sync must be callable"):
        ar.measure(lambda: called.append(1), flops=1, bytes=1, sync="cuda")  # type: ignore[arg-type]
    assert not called


class Boom(Exception):
    pass


def test_measure_propagates_fn_exception() -> None:
    def fails() -> None:
        raise Boom("kernel failed")

    with pytest.raises(Boom, match="kernel failed"):
        ar.measure(fails, flops=1, bytes=1)


def test_measure_propagates_sync_exception() -> None:
    def sync() -> None:
        raise Boom("device lost")

    with pytest.raises(Boom, match="device lost"):
        ar.measure(lambda: None, flops=1, bytes=1, sync=sync)


def test_package_module_measure_still_importable() -> None:
    """The package's ``measure`` function does not hide its ``measure`` module."""
    from apple_roofline.timing.measure import time_kernel

    assert callable(time_kernel) and callable(ar.measure)


# -- flops_bytes ---------------------------------------------------------------


def test_matmul_counts() -> None:
    assert flops_bytes.matmul(2, 3, 4) == (48, (8 + 12 + 6) * 4)
    assert flops_bytes.matmul(1024, 1024, 1024, "fp16") == (2 * 1024**3, 3 * 1024**2 * 2)
    # the MLX article: N×N fp16 matmul has intensity 2N³ / 6N² = N/3
    f, b = flops_bytes.matmul(300, 300, 300, "fp16")
    assert f / b == pytest.approx(100.0)
    assert flops_bytes.matmul(2, 3, 4, "int8") == (48, (8 + 12) * 1 + 6 * 4)
    assert flops_bytes.matmul(2, 3, 4, np.float64) == (48, 26 * 8)
    assert flops_bytes.matmul(2, 3, 4, "bf16") == (48, 26 * 2)
    assert flops_bytes.matmul(0, 3, 4) == (0, 12 * 4)


def test_elementwise_and_reduction_counts() -> None:
    assert flops_bytes.elementwise(1000) == (1000, 8000)  # the MLX article's 1/8 FLOP/B
    assert flops_bytes.elementwise(10, inputs=2, outputs=1, flops_per_element=2) == (20, 120)
    assert flops_bytes.elementwise(10, dtype=np.float16) == (10, 40)
    assert flops_bytes.reduction(10) == (9, 44)
    assert flops_bytes.reduction(1, "fp64") == (0, 16)
    assert flops_bytes.reduction(0) == (0, 4)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: flops_bytes.matmul(-1, 2, 2), "m must be >= 0"),
        (lambda: flops_bytes.matmul(2, 2, -3), "k must be >= 0"),
        (lambda: flops_bytes.matmul(2, 2, 2.5), "k must be an integer"),
        (lambda: flops_bytes.elementwise(-5), "n must be >= 0"),
        (lambda: flops_bytes.elementwise(5, inputs=-1), "inputs"),
        (lambda: flops_bytes.reduction(-1), "n must be >= 0"),
        (lambda: flops_bytes.matmul(2, 2, 2, "fp8"), "unknown dtype 'fp8' .*fp16, bf16, fp32"),
        (lambda: flops_bytes.reduction(4, np.bool_), "unknown dtype"),
        (lambda: flops_bytes.elementwise(4, dtype="U8"), "unknown dtype"),
    ],
)
def test_flops_bytes_bad_arguments(call: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        call()


# -- ar.plot_roofline -----------------------------------------------------------


def test_roofline_plot_shows_points(m5_run: Run) -> None:
    model = ar.Roofline.from_run(m5_run)
    pts = [ar.Point("mine", 4e12, 2e11, 8.0), ar.Point("zero", 0.0, 1e9, 1.0)]
    fig = ar.plot_roofline(model, points=pts)
    gids = {a.get_gid() for ax in fig.axes for a in ax.get_children()}
    assert "point:mine" in gids and "point:zero" not in gids  # zero FLOPs cannot sit on log axes
    assert any(g and g.startswith("sweep:") for g in gids)  # the run's measurements are drawn too


def test_roofline_plot_from_bare_ceilings(m5_run: Run) -> None:
    fig = ar.plot_roofline(ar.Roofline(m5_run.ceilings), points=[ar.Point("mine", 4e12, 2e11, 8.0)])
    gids = {a.get_gid() for ax in fig.axes for a in ax.get_children()}
    assert "point:mine" in gids
    assert fig.axes[0].get_title() == "Roofline"


# -- the NumPy example ------------------------------------------------------------


def test_numpy_matmul_example_missing_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setattr(sys, "argv", ["numpy_matmul.py", str(tmp_path / "nope.json")])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "examples" / "numpy_matmul.py"), run_name="__main__")
    assert exc.value.code == 1
    assert "apple-roofline run --device cpu" in capsys.readouterr().err


def test_gemm_ceiling_judges_a_matmul_against_its_own_precision() -> None:
    """gemm_ceiling("fp32") is the run's "GEMM FP32" ceiling (measured first), None for a precision
    the run lacks; efficiency against it differs from the default (highest) ceiling's."""
    import os

    run = ar.Run.load(os.path.join(os.path.dirname(__file__), "data", "run_epyc_2vcpu.json"))
    model = run.roofline()
    c = model.gemm_ceiling("fp32")
    assert c is not None and c.name == "GEMM FP32" and c.source == "measured" and c.kind == "compute"
    assert model.gemm_ceiling("int8") is None
    p = ar.Point("mm", flops=2e12, bytes=1e9, seconds=2e3 / (0.5 * c.value))  # 2000 FLOP/B at half the ceiling
    assert model.efficiency(p, compute=c) == pytest.approx(0.5)
    if model.peak().value != c.value:
        assert model.efficiency(p) != pytest.approx(0.5)
