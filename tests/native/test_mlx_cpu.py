"""MLX on this machine's CPU (``mlx[cpu]``, the test extra's on Linux): the dispatch study's MLX peer and
examples/mlx_matmul_sweep.py run for real, so the MLX code a Mac user runs is exercised here. What is
asserted is deterministic: every output validated, the records well-formed, the points' FLOPs and bytes
from the formulas and no share above 100 %; never a timing."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import apple_roofline as ar
from apple_roofline.cli import app
from apple_roofline.dispatch import DispatchStudy, PeerSkipped, measure_peers
from apple_roofline.dispatch.peers import mlx_peer
from apple_roofline.user_kernels import KernelsFile

try:
    import mlx.core as mx
except ImportError as exc:  # not installed, or a broken install: say which
    pytest.skip(f"MLX cannot be imported ({exc}); the test extra installs mlx[cpu] on Linux", allow_module_level=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mlx_matmul_sweep.py"
ON_CPU = f"MLX {mx.__version__} on Device(cpu, 0)"


def test_mlx_peer_runs_on_the_cpu() -> None:
    reps, launches, warmup = 8, 20, 4
    series, skipped = measure_peers("cpu", 0, reps=reps, launches=launches, warmup=warmup)
    assert skipped == [PeerSkipped("mlx", mlx_peer.CPU_NULL_SKIP)]
    assert [(s.path, s.kernel, s.measure) for s in series] == [
        ("mlx", "tiny", "throughput"),
        ("mlx", "tiny", "round_trip"),
    ]
    throughput, round_trip = series
    n = warmup + reps * launches
    assert throughput.valid and throughput.validation == f"all 1024 floats == {n} after {n} launches"
    assert (
        round_trip.valid
        and round_trip.validation == f"all 1024 floats == {warmup + reps} after {warmup + reps} launches"
    )
    for s in series:
        assert s.note.startswith(ON_CPU) and "mx.add(x, 1.0)" in s.note  # the device it ran on, the call
        assert len(s.samples_s) == reps and all(t > 0 for t in s.samples_s)
        assert s.launches_per_sample == (launches if s.measure == "throughput" else 1)


def test_dispatch_study_records_the_mlx_peer(tmp_path: Path) -> None:
    """`apple-roofline dispatch -d cpu` (peers on) writes a study with MLX's series, valid and read back."""
    out = tmp_path / "d"
    args = ["dispatch", "-d", "cpu", "--reps", "6", "--launches", "4", "--warmup", "2", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    study = DispatchStudy.load(out / "dispatch.json")
    assert study.complete and study.valid, study.warnings
    mlx = [s for s in study.series if s.path == "mlx"]
    assert [(s.kernel, s.measure) for s in mlx] == [("tiny", "throughput"), ("tiny", "round_trip")]
    assert mlx[0].validation == "all 1024 floats == 26 after 26 launches" and mlx[0].note.startswith(ON_CPU)
    assert PeerSkipped("mlx", mlx_peer.CPU_NULL_SKIP) in study.skipped
    assert "mlx" in (out / "dispatch.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def cpu_run_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick CPU run with GEMM ceilings (FP32, FP64), for the example to place its points on."""
    run = ar.run_roofline(
        ar.RunOptions(device="cpu", quick=True, suites=("stream", "peak", "gemm"), array_bytes=1 << 20, reps=3)
    )
    path = tmp_path_factory.mktemp("mlx") / "run.json"
    run.save(path)
    return path


ROW = re.compile(r"^\s*(fp32|fp16|bf16)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.+)$")


def test_mlx_example_on_the_cpu(
    cpu_run_json: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    sizes, dtypes = (32, 96), ("fp32", "fp16", "bf16")
    plot, kernels = tmp_path / "mm.png", tmp_path / "mm.json"
    argv = [str(cpu_run_json), "--device", "cpu", "--sizes", ",".join(map(str, sizes)), "--dtypes", ",".join(dtypes)]
    argv += ["--reps", "2", "-o", str(plot), "--save-kernels", str(kernels)]
    monkeypatch.setattr(sys, "argv", ["mlx_matmul_sweep.py", *argv])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert exc.value.code == 0, out
    assert out.startswith(f"{ON_CPU}") and "as --device cpu asks" in out.splitlines()[0]
    rows = [m.groups() for m in map(ROW.match, out.splitlines()) if m]
    assert [(d, int(n)) for d, n, *_ in rows] == [(d, n) for d in dtypes for n in sizes]
    assert out.count("valid: all ") == len(rows)  # each product checked against NumPy float64 first
    for dtype, n, _gflops, intensity, _attainable, share, verdict in rows:
        flops, nbytes = ar.flops_bytes.matmul(int(n), int(n), int(n), dtype)
        assert float(intensity) == round(flops / nbytes, 2)
        if share == "-":  # above every roof: flagged, no share
            assert verdict.startswith("above every roof: ")
            continue
        assert share.endswith("%") and 0 < float(share[:-1]) <= 100.0
        roof, _, said = verdict.partition(": ")
        assert said.startswith(("compute-bound", "memory-bound"))
        if dtype == "fp32":  # the CPU run's own GEMM ceiling, or the bandwidth of the level A, B and C fit
            assert roof == "GEMM FP32" or roof.endswith("bandwidth")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    saved = KernelsFile.load(kernels)
    assert saved.device["backend"] == "cpu"
    model = ar.Roofline.from_run(ar.Run.load(cpu_run_json))
    for p, (dtype, n) in zip(saved.points, [(d, n) for d in dtypes for n in sizes], strict=True):
        assert (p.name, p.dtype) == (f"{dtype} N={n}", dtype)
        assert (p.flops, p.bytes) == ar.flops_bytes.matmul(n, n, n, dtype)  # 2N³ and 3N² elements
        share = model.judge(p).fraction
        assert share is None or 0 < share <= 1  # the model's verdict: never above the roof
