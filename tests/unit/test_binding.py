"""One binding roof per point: the rows of the newcomer's table that judged a point against the wrong
roof, or showed a share above 100 %, each as written; and a property test over random points and
ceilings that no path (the API, the CLI's ``--point`` line, the kernels table, the hover) shows a
share above 100 % or two binding roofs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import apple_roofline as ar
from apple_roofline.cli import app
from apple_roofline.roofline.model.binding import binding
from apple_roofline.roofline.model.model import Point, RooflineModel, derive_ceilings
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.interactive import measurement_hover
from apple_roofline.study.records import Ceiling, Measurement
from apple_roofline.user_kernels import KernelSet, place
from apple_roofline.user_kernels.model import KernelDot
from apple_roofline.user_kernels.tables import placements_table
from conftest import build_m5_run, make_measurement

DATA = Path(__file__).parent / "data"
#: a share as the views print it ("93.1 %", "41.0%"): none may exceed 100
_SHARE = re.compile(r"(\d+(?:\.\d+)?)\s?%")


def _run(name: str) -> Run:
    return Run.load(DATA / name)


def _c(name: str, kind: str, value: float, working_set: Tuple[int, int] | None = None) -> Ceiling:
    return Ceiling(name, kind, value, "GB/s" if kind == "bandwidth" else "GFLOP/s", "measured", "t", working_set)


#: a CPU-like roofline: DRAM 33 GB/s, L3/L2/L1d above it, FP32 vector and GEMM ceilings
CPU = (
    _c("DRAM bandwidth", "bandwidth", 33.4),
    _c("L3 bandwidth", "bandwidth", 196.6, (2 << 20, 32 << 20)),
    _c("L2 bandwidth", "bandwidth", 226.5, (64 << 10, 2 << 20)),
    _c("L1d bandwidth", "bandwidth", 301.7, (32 << 10, 64 << 10)),
    _c("FP32 vector", "compute", 113.3),
    _c("FP32 scalar ILP", "compute", 98.1),
    _c("GEMM FP32", "compute", 113.2),
    _c("FP64", "compute", 35.0),
)


def _binding_lines(lines: Sequence[str]) -> List[str]:
    return [ln for ln in lines if ln.startswith("bound by ") or ln.startswith("above every roof")]


def _shares(text: str) -> List[float]:
    return [float(x) for x in _SHARE.findall(text)]


def test_a_point_above_dram_is_judged_against_the_cache_level_that_holds_it() -> None:
    model = RooflineModel(CPU)
    p = Point("scale", flops=2.5e8, bytes=1e9, seconds=0.0125, dtype="fp32")  # 20 GFLOP/s at 0.25 FLOP/B
    b = model.judge(p)
    assert b.level == "L3" and b.ceiling.name == "L3 bandwidth" and b.bound == "memory-bound"
    assert b.reading == "consistent with L3-resident data" and b.reading in b.text
    assert b.fraction == pytest.approx(20.0 / (196.6 * 0.25))
    assert model.roof(p) == b.ceiling and model.classify(p) == "memory-bound"
    assert model.efficiency(p) == b.fraction


def test_a_working_set_sets_the_level_and_the_roof_named_is_the_one_that_binds() -> None:
    # the NumPy in-place scale: 256 KiB of float32, one FLOP per element, 8 bytes moved
    model = RooflineModel(CPU)
    n = 1 << 16
    p = Point("np.multiply(a, 2, out=a)", n, 8 * n, 8 * n / 150e9, dtype="fp32", working_set=4 * n)  # 150 GB/s
    b = model.judge(p)
    assert b.level == "L2" and b.reading == ""  # its working set lives in L2: no reading needed
    assert model.roof(p).name == "L2 bandwidth" != "GEMM FP32"
    assert model.classify(p) == "memory-bound" and b.fraction == pytest.approx(150.0 / 226.5)


def test_measure_takes_the_working_set_and_the_pipe_and_never_reports_a_share_above_one() -> None:
    a = np.ones(1 << 14, np.float32)
    p = ar.measure(lambda: np.multiply(a, 1.0, out=a), flops=a.size, bytes=2 * a.nbytes, working_set=a.nbytes, reps=3)
    assert p.working_set == a.nbytes and p.dtype == "fp32" and p.pipe is None
    b = RooflineModel(CPU).judge(p)
    assert b.level in ("L1d", "L2", "L3") or b.above  # 64 KiB: L1d's range, or a faster level, or flagged
    assert b.fraction is None or 0 < b.fraction <= 1
    assert (b.fraction is None) == bool(b.above)
    with pytest.raises(ValueError, match="working_set"):
        ar.measure(lambda: None, flops=1, bytes=1, working_set=-1)
    with pytest.raises(ValueError, match="pipe"):
        ar.measure(lambda: None, flops=1, bytes=1, pipe="simd")


def test_a_point_above_every_roof_is_flagged_with_no_share() -> None:
    model = RooflineModel(CPU)
    fast = Point("fast", flops=1e9, bytes=4e9, seconds=1e-2, dtype="fp32")  # 100 GFLOP/s at 0.25: L1d's is 75
    b = model.judge(fast)
    assert b.fraction is None and model.efficiency(fast) is None and b.share_text == "-"
    assert b.text.startswith("above every roof") and "bytes under-counted or time wrong" in b.text
    assert not [s for s in _shares(b.text) if s > 100]
    over = Point("over", flops=1e12, bytes=1e9, seconds=1.0, dtype="fp32")  # 1 TFLOP/s at 1000 FLOP/B
    b = model.judge(over)
    assert b.fraction is None and "over the measured FP32 vector ceiling" in b.text and "FLOPs over-counted" in b.text


def test_a_fma_kernel_is_judged_against_its_pipe_and_a_gemm_against_gemm() -> None:
    model = RooflineModel(CPU + (_c("GEMM FP32 fast", "compute", 500.0),))
    p = Point("k", flops=1e12, bytes=1e9, seconds=10.0, dtype="fp32", pipe="fma")
    assert model.judge(p).compute.name == "FP32 vector"
    assert model.judge(dataclasses.replace(p, pipe="tensor")).compute.name == "GEMM FP32 fast"


def test_the_sweep_is_judged_against_its_own_fma_pipe_not_gemm() -> None:
    run = _run("run_h100.json")  # GEMM FP32 and FP32 vector both measured
    sweep = [m for m in run.measurements if m.suite == "sweep" and m.dtype == "fp32" and m.flops > 0]
    vec4 = max((m for m in sweep if m.kernel == "vec4"), key=lambda m: m.intensity)  # F = 1024
    b = binding(vec4, run.ceilings)
    assert b is not None and b.compute.name == "FP32 vector"
    scalar8 = max((m for m in sweep if m.kernel == "scalar8"), key=lambda m: m.intensity)
    b = binding(scalar8, run.ceilings)
    assert b is not None and b.compute.name == "FP32 scalar ILP"


def test_a_quick_cpu_run_judges_each_cache_resident_point_against_its_level() -> None:
    run = _run("run_epyc_quick.json")
    judged = [(m, binding(m, run.ceilings)) for m in run.measurements if m.suite in ("sweep", "peak") and m.flops > 0]
    assert judged and all(b is not None for _m, b in judged)
    for m, b in judged:
        assert b is not None
        assert b.fraction is None or b.fraction <= 1.0, (m.label, b.text)
        dram = next(c for c in run.ceilings if c.name == "DRAM bandwidth" and c.source == "measured")
        if b.fraction is not None and m.gflops > dram.value * m.intensity:  # above the DRAM roof
            assert b.level != "DRAM" and "resident data" in b.text
    # the sweep's F = 1 vec4 point: 36 GFLOP/s at 1 FLOP/B with 512 MiB of arrays, above DRAM's 33
    f1 = next(m for m, _b in judged if m.kernel == "vec4" and m.params.get("F") == 1)
    b = binding(f1, run.ceilings)
    assert b is not None and b.reading == "consistent with L3-resident data"


@pytest.mark.parametrize(
    "name", ["run_h100.json", "run_epyc_quick.json", "run_epyc_2vcpu.json", "run_h200_default.json"]
)
def test_every_hover_names_one_binding_roof_and_no_share_above_100(name: str) -> None:
    run = _run(name)
    hovered = [m for m in run.measurements if m.valid and m.flops > 0]
    assert hovered
    for m in hovered:
        lines = measurement_hover(m, run)
        assert len(_binding_lines(lines)) <= 1, lines
        assert not [s for ln in lines for s in _shares(ln) if s > 100 and "reaches" in ln], lines
    sgemm = [m for m in hovered if m.suite == "gemm"]
    assert all(len(_binding_lines(measurement_hover(m, run))) == 1 for m in sgemm)


def _cli_run(tmp_path: Path, dram_gbps: float, fp32_gflops: float) -> Path:
    """A saved run whose measured ceilings are DRAM ``dram_gbps`` and FP32 vector ``fp32_gflops``."""
    triad = make_measurement(
        "stream",
        "triad",
        "fp32",
        flops=2 << 20,
        bytes=12 << 20,
        gbps=dram_gbps,
        ceiling_class="DRAM bandwidth",
        ceiling_kind="bandwidth",
    )
    vec4 = make_measurement(
        "peak",
        "vec4_indep8",
        "fp32",
        flops=1 << 33,
        bytes=8 << 20,
        gflops=fp32_gflops,
        ceiling_class="FP32 vector",
        ceiling_kind="compute",
    )
    run = build_m5_run(theoretical=False)
    run = dataclasses.replace(run, measurements=(triad, vec4), ceilings=tuple(derive_ceilings([triad, vec4])))
    path = tmp_path / "run.json"
    run.save(path)
    return path


def test_the_readme_point_on_a_slow_machine_is_flagged_not_shown_above_100(tmp_path: Path) -> None:
    # the 2-vCPU guest: 40 GFLOP/s at 5 FLOP/B over a 37.1 GFLOP/s FP32 peak read "107.8 %"
    path = _cli_run(tmp_path, 33.4, 37.1)
    result = CliRunner().invoke(
        app, ["plot", str(path), "-o", str(tmp_path / "p.png"), "--point", "my kernel:2e9:4e8:0.05"]
    )
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("my kernel"))
    assert "above every roof" in line and not [s for s in _shares(line) if s > 100]
    assert " - " in line  # the share column


def test_a_point_whose_rate_is_not_finite_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _cli_run(tmp_path, 33.4, 113.3)
    result = CliRunner().invoke(app, ["plot", str(path), "-o", str(tmp_path / "p.png"), "--point", "k:1:1:1e-320"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    errors = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and "not finite" in errors[0], errors


# -- the property: no path shows a share above 100 % or two binding roofs ----------------------------

_VALUES = st.floats(min_value=1e-2, max_value=1e7, allow_nan=False)


@st.composite
def _ceilings(draw: st.DrawFn) -> Tuple[Ceiling, ...]:
    dram = draw(_VALUES)
    levels = draw(st.lists(st.floats(min_value=1.01, max_value=50.0), max_size=3))
    out = [_c("DRAM bandwidth", "bandwidth", dram)]
    lo = 1 << 14
    for i, factor in enumerate(levels):
        out.append(_c(f"L{i + 1} bandwidth", "bandwidth", dram * factor, (lo, lo * 8)))
        lo *= 8
    names = draw(st.lists(st.sampled_from(["FP32 vector", "FP32 scalar ILP", "GEMM FP32", "FP16 vector"]), min_size=1))
    out += [_c(n, "compute", draw(_VALUES)) for n in dict.fromkeys(names)]
    return tuple(out)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    ceilings=_ceilings(),
    flops=st.floats(min_value=1.0, max_value=1e15),
    nbytes=st.floats(min_value=1.0, max_value=1e13),
    seconds=st.floats(min_value=1e-7, max_value=1e3),
    dtype=st.sampled_from([None, "fp32", "fp16", "fp64"]),
    pipe=st.sampled_from([None, "fma", "tensor"]),
    working_set=st.one_of(st.none(), st.floats(min_value=1.0, max_value=1e12)),
)
def test_no_path_shows_a_share_above_100_or_two_binding_roofs(
    ceilings: Tuple[Ceiling, ...],
    flops: float,
    nbytes: float,
    seconds: float,
    dtype: str | None,
    pipe: str | None,
    working_set: float | None,
) -> None:
    model = RooflineModel(ceilings)
    p = Point("k", flops, nbytes, seconds, dtype=dtype, pipe=pipe, working_set=working_set)
    b = model.judge(p)
    # the API: one verdict, its parts agreeing
    assert model.roof(p) == b.ceiling and model.classify(p) == b.bound and model.efficiency(p) == b.fraction
    assert (b.ceiling.kind == "bandwidth") == (b.bound == "memory-bound")
    if b.fraction is None:
        assert b.above and b.text.startswith("above every roof")
    else:
        assert 0 < b.fraction <= 1 and p.gflops <= b.attainable * (1 + 1e-12)
    assert not [s for s in _shares(b.text) if s > 100]
    # the kernels table: a measured dot of the same work
    dot = KernelDot("k", "DRAM", flops, nbytes, seconds, precision=dtype, pipe=pipe)
    (placed,) = place(model, KernelSet((dot,)))
    assert placed.fraction is None or placed.fraction <= 1
    for row in placements_table([placed]).rows:
        assert not [s for cell in row for s in _shares(str(cell)) if s > 100 and "%" in str(cell)], row
    # the hover's verdict (binding, what measurement_hover prints) for a sweep measurement of the same work
    m = Measurement("sweep", "vec4", dtype or "fp32", {}, int(max(flops, 1)), int(max(nbytes, 1)), (seconds,), True)
    hb = binding(m, ceilings, "measured")
    assert hb is None or hb.fraction is None or hb.fraction <= 1
    assert hb is None or not [s for s in _shares(hb.text) if s > 100]


def test_a_kernels_file_keeps_the_pipe_and_the_working_set_the_verdict_reads(tmp_path: Path) -> None:
    """A point saved and placed from its kernels file is judged as it was in Python: against the GEMM
    ceilings (pipe "tensor") at the level of its working set."""
    model = RooflineModel(CPU + (_c("FP32 vector fast", "compute", 500.0),))
    p = Point("matmul", 2e9, 1.5e6, 0.05, dtype="fp32", pipe="tensor", working_set=1.5e6)  # 40 GFLOP/s
    ar.save_kernels(tmp_path / "k.json", [p], device={"backend": "cpu", "name": "test"})
    (back,) = ar.load_results(tmp_path / "k.json").points
    assert (back.pipe, back.working_set) == ("tensor", 1.5e6)
    (placed,) = place(model, ar.load_kernels(tmp_path / "k.json"))
    assert placed.judged is not None and placed.judged == model.judge(p)
    assert placed.roof is not None and placed.roof.name == "GEMM FP32"  # not the faster FP32 vector one
