"""Your kernels on the roofline: ncu raw CSV exports (units, thousands separators, the sections'
metrics and the simple totals, unplaceable kernels), kernels files from the embedding API, the
placement against measured ceilings, the default roof of a point's dtype, and the CLI's --kernels."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np
import pytest
from typer.testing import CliRunner

import apple_roofline as ar
from apple_roofline.cli import app
from apple_roofline.roofline.model.model import RooflineModel
from apple_roofline.roofline.model.roofs import ceiling_precision, precision_of_dtype, roof_for
from apple_roofline.study.files import ResultsError
from apple_roofline.study.records import Ceiling
from apple_roofline.user_kernels import KernelSet, load_kernels, place, save_kernels
from apple_roofline.user_kernels.model import KernelDot
from apple_roofline.user_kernels.ncu import read_ncu_csv
from apple_roofline.user_kernels.units import UnitError, parse_number, unit_scale

DATA = Path(__file__).parent / "data"
SYNTHETIC = DATA / "ncu_synthetic_raw.csv"
runner = CliRunner()


def raw_table(path: Path) -> List[Dict[str, str]]:
    """The launch rows of an ncu raw CSV, read with the csv module alone (no code under test):
    each row's cells by column, units in the key ``"<metric>|unit"``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(line for line in lines[start:] if not line.startswith("==")))))
    header, units = rows[0], rows[1]
    return [dict(zip(header, r), **{f"{h}|unit": u for h, u in zip(header, units)}) for r in rows[2:] if r]


_SCALE = {
    "": 1.0,
    "byte": 1.0,
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "byte/s": 1.0,
    "hz": 1.0,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "nsecond": 1e-9,
    "usecond": 1e-6,
    "msecond": 1e-3,
    "second": 1.0,
    "inst": 1.0,
    "inst/cycle": 1.0,
    "cycle/nsecond": 1e9,
    "cycle/usecond": 1e6,
    "cycle/second": 1.0,
    "Ghz": 1e9,
    "Mhz": 1e6,
    "byte/second": 1.0,
    "Kbyte/second": 1e3,
    "Mbyte/second": 1e6,
    "Gbyte/second": 1e9,
    "Tbyte/second": 1e12,
}


def value(row: Dict[str, str], metric: str) -> float:
    """A cell in its base unit, by the test's own table of ncu's units."""
    return float(row[metric].replace(",", "")) * _SCALE[row[f"{metric}|unit"]]


# --------------------------------------------------------------------------
# units and numbers


@pytest.mark.parametrize(
    "unit, scale",
    [
        ("byte", 1.0),
        ("Kbyte", 1e3),
        ("Mbyte", 1e6),
        ("Gbyte", 1e9),
        ("nsecond", 1e-9),
        ("usecond", 1e-6),
        ("msecond", 1e-3),
        ("inst", 1.0),
        ("inst/cycle", 1.0),
        ("cycle/nsecond", 1e9),
        ("Tbyte/second", 1e12),
        ("Ghz", 1e9),
        ("%", 1.0),
        ("", 1.0),
        ("Kibyte", 1024.0),
    ],
)
def test_unit_scale(unit: str, scale: float) -> None:
    assert unit_scale(unit) == pytest.approx(scale)


def test_unknown_unit_and_numbers() -> None:
    with pytest.raises(UnitError, match="furlong"):
        unit_scale("furlong")
    assert parse_number("1,073,741,824") == 1073741824.0
    assert parse_number(" 3,000.25 ") == 3000.25
    assert parse_number("n/a") is None and parse_number("") is None and parse_number("(!) n/a") is None


# --------------------------------------------------------------------------
# an ncu export written in ncu's documented raw format (the sections' rates, units, separators)


def test_synthetic_export_dots_match_the_raw_metrics() -> None:
    kernels = load_kernels(SYNTHETIC)
    assert kernels.kind == "ncu" and kernels.device == "NVIDIA H200"
    rows = raw_table(SYNTHETIC)
    for kernel in (
        "sgemm_128x64_nn",
        "hgemm_tensorop_f16",
        "stream_triad(float*, const float*, const float*, float, long)",
    ):
        mine = [r for r in rows if r["Kernel Name"] == kernel]
        seconds = sum(value(r, "gpu__time_duration.sum") for r in mine)
        # the sections' achieved work: FP32 (fadd + fmul + 2 ffma) per cycle x SM clock, plus the tensor ops
        flops = 0.0
        for r in mine:
            t = value(r, "gpu__time_duration.sum")
            fp32 = sum(
                w * value(r, f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
                for op, w in (("fadd", 1), ("fmul", 1), ("ffma", 2))
            )
            flops += fp32 * value(r, "smsp__cycles_elapsed.avg.per_second") * t
            flops += (
                value(r, "sm__ops_path_tensor_src_fp16.sum.per_cycle_elapsed")
                * value(r, "sm__cycles_elapsed.avg.per_second")
                * t
            )  # src_fp16_dst_fp32 is inside it
        bytes_at = {
            "DRAM": "dram__bytes.sum.per_second",
            "L2": "derived__lts__lts2xbar_bytes.sum.per_second",
            "L1": "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second",
        }
        dots = {d.level: d for d in kernels.dots if d.kernel == kernel}
        assert set(dots) == {"L1", "L2", "DRAM"}
        for level, metric in bytes_at.items():
            b = sum(value(r, metric) * value(r, "gpu__time_duration.sum") for r in mine)
            assert dots[level].intensity == pytest.approx(flops / b, rel=1e-3)
            assert dots[level].gflops == pytest.approx(flops / seconds / 1e9, rel=1e-3)
            assert dots[level].launches == 2
            assert metric in dots[level].metrics
    hgemm = next(d for d in kernels.dots if d.kernel == "hgemm_tensorop_f16")
    assert hgemm.precision == "fp16" and hgemm.pipe == "tensor"
    assert next(d for d in kernels.dots if d.kernel == "sgemm_128x64_nn").pipe == "fma"
    assert hgemm.flops == pytest.approx(2 * 2 * 4096**3, rel=1e-3)  # counted once, not once per nested path


def test_integer_kernel_is_listed_with_its_reason() -> None:
    kernels = load_kernels(SYNTHETIC)
    (idiv,) = [u for u in kernels.unplaced if u.kernel.startswith("idiv_chain")]
    assert "integer-only" in idiv.reason and "no FLOPs" in idiv.reason
    assert idiv.level is None and idiv.seconds is not None and idiv.seconds > 0
    assert not any(d.kernel.startswith("idiv") for d in kernels.dots)
    # its time still counts in the shares
    assert sum(kernels.shares().values()) == pytest.approx(1.0)
    assert kernels.shares()[idiv.kernel] > 0


def _csv(header: Sequence[str], units: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["ID", "Kernel Name", *header])
    w.writerow(["", "", *units])
    for i, r in enumerate(rows):
        w.writerow([str(i), *r])
    return out.getvalue()


def test_simple_totals_and_counts() -> None:
    text = _csv(
        [
            "gpu__time_duration.sum",
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
            "dram__bytes.sum",
            "lts__t_bytes.sum",
            "l1tex__t_bytes.sum",
        ],
        ["msecond", "inst", "Gbyte", "Mbyte", "byte"],
        [["k", "2.5", "1,000,000,000", "1.5", "3,000", "9,000,000,000"]],
    )
    ks = read_ncu_csv(text, source="totals.csv")
    dots = {d.level: d for d in ks.dots}
    assert dots["DRAM"].flops == 2e9 and dots["DRAM"].bytes == 1.5e9 and dots["DRAM"].seconds == pytest.approx(2.5e-3)
    assert dots["L2"].bytes == 3e9 and dots["L1"].bytes == 9e9
    assert "lts__t_bytes.sum" in dots["L2"].metrics and "l1tex__t_bytes.sum" in dots["L1"].metrics
    assert dots["DRAM"].gflops == pytest.approx(2e9 / 2.5e-3 / 1e9)


def test_missing_metrics_are_named() -> None:
    text = _csv(
        ["gpu__time_duration.sum", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes.sum"],
        ["usecond", "inst", "byte"],
        [["k", "10", "100", "400"]],
    )
    ks = read_ncu_csv(text)
    assert [d.level for d in ks.dots] == ["DRAM"]
    missing = {u.level: u for u in ks.unplaced}
    assert set(missing) == {"L1", "L2"}
    assert any("lts__t_bytes.sum" in m for m in missing["L2"].missing)
    assert any("l1tex__t_bytes.sum" in m for m in missing["L1"].missing)
    no_flops = read_ncu_csv(_csv(["gpu__time_duration.sum", "dram__bytes.sum"], ["usecond", "byte"], [["k", "1", "4"]]))
    (u,) = no_flops.unplaced
    assert "no FLOP metrics" in u.reason and u.missing
    no_time = read_ncu_csv(_csv(["dram__bytes.sum"], ["byte"], [["k", "4"]]))
    assert "gpu__time_duration.sum" in no_time.unplaced[0].missing


@pytest.mark.parametrize(
    "text, needle",
    [
        ("a,b,c\n1,2,3\n", "not an Nsight Compute raw CSV"),
        ('"ID","Process ID","Section Name","Metric Name","Metric Unit","Metric Value"\n', "--page raw"),
        ('"ID","Kernel Name","dram__bytes.sum"\n"","","furlong"\n"0","k","1"\n', "furlong"),
    ],
)
def test_not_an_export_is_one_line(text: str, needle: str) -> None:
    with pytest.raises(ResultsError, match="x.csv") as info:
        read_ncu_csv(text, source="x.csv")
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_filter_by_name_and_share_keeps_the_file_shares() -> None:
    ks = load_kernels(SYNTHETIC)
    full = ks.shares()
    gemms = ks.filtered(("*gemm*",))
    assert set(gemms.kernels()) == {"sgemm_128x64_nn", "hgemm_tensorop_f16"}
    assert gemms.shares()["hgemm_tensorop_f16"] == pytest.approx(full["hgemm_tensorop_f16"])
    assert ks.filtered(("TRIAD",)).kernels() == ["stream_triad(float*, const float*, const float*, float, long)"]
    big = ks.filtered(min_share=0.5)
    assert big.kernels() == ["sgemm_128x64_nn"]
    with pytest.raises(ValueError, match="0 to 1"):
        ks.filtered(min_share=1.5)


# --------------------------------------------------------------------------
# placement: the binding ceiling and the speedup left


def _model() -> RooflineModel:
    return RooflineModel(
        [
            Ceiling("DRAM bandwidth", "bandwidth", 4000.0, "GB/s", "measured", "t"),
            Ceiling("L2 bandwidth", "bandwidth", 10000.0, "GB/s", "measured", "t", working_set=(1 << 20, 1 << 24)),
            Ceiling("FP32 vector", "compute", 60000.0, "GFLOP/s", "measured", "t"),
            Ceiling("GEMM FP32", "compute", 50000.0, "GFLOP/s", "measured", "t"),
            Ceiling("GEMM FP16", "compute", 700000.0, "GFLOP/s", "measured", "t"),
            Ceiling("FP16 vector", "compute", 120000.0, "GFLOP/s", "measured", "t"),
            Ceiling("GEMM FP64", "compute", 90000.0, "GFLOP/s", "theoretical", "t"),
        ]
    )


def test_placement_binding_and_speedup() -> None:
    dots = (
        KernelDot("mem", "DRAM", 1e9, 1e10, 0.01, precision="fp32"),  # 0.1 FLOP/B, 100 GFLOP/s
        KernelDot("mem", "L2", 1e9, 2e10, 0.01, precision="fp32"),  # 0.05 FLOP/B
        KernelDot("mem", "L1", 1e9, 4e10, 0.01, precision="fp32"),
        KernelDot("mma", "DRAM", 1e15, 1e11, 2.0, precision="fp16", pipe="tensor"),  # 1e4 FLOP/B, 500 TFLOP/s
        KernelDot("hfma", "DRAM", 1e14, 1e10, 2.0, precision="fp16", pipe="fma"),
        KernelDot("dp", "DRAM", 1e12, 1e9, 1.0, precision="fp64"),
    )
    placed = {(p.dot.kernel, p.dot.level): p for p in place(_model(), KernelSet(dots))}
    mem = placed[("mem", "DRAM")]
    assert mem.binding is not None and mem.binding.name == "DRAM bandwidth"
    assert mem.attainable == pytest.approx(400.0) and mem.speedup == pytest.approx(4.0)
    assert mem.roof is not None and mem.roof.name == "FP32 vector"  # the highest FP32 ceiling
    l2 = placed[("mem", "L2")]
    assert l2.binding is not None and l2.binding.name == "L2 bandwidth" and l2.attainable == pytest.approx(500.0)
    l1 = placed[("mem", "L1")]
    assert l1.binding is None and "L1" in l1.note  # no measured L1 ceiling: says so
    mma = placed[("mma", "DRAM")]
    assert mma.binding is not None and mma.binding.name == "GEMM FP16" and mma.speedup == pytest.approx(1.4)
    hfma = placed[("hfma", "DRAM")]
    assert hfma.roof is not None and hfma.roof.name == "FP16 vector"  # FMA-pipe work: not the tensor cores' roof
    dp = placed[("dp", "DRAM")]
    assert dp.binding is None and "FP64" in dp.note  # only a theoretical FP64 roof
    assert mem.share == pytest.approx(0.01 / 5.01)


def test_roof_follows_the_dtype() -> None:
    model = _model()
    p32 = ar.Point("matmul", 2e12, 1.2e10, 0.05, dtype="fp32")  # 40 TFLOP/s at 167 FLOP/B
    assert model.roof(p32).name == "FP32 vector"
    assert model.efficiency(p32) == pytest.approx(40000.0 / 60000.0)
    untyped = ar.Point("matmul", 2e12, 1.2e10, 0.05)
    # the peak is its compute roof; at 167 FLOP/B the DRAM roof lies below it, so DRAM's binds it
    assert model.judge(untyped).compute.name == "GEMM FP16" and model.roof(untyped).name == "DRAM bandwidth"
    assert model.efficiency(untyped) == pytest.approx(40000.0 / (4000.0 * 2e12 / 1.2e10))  # under DRAM's slope
    assert model.classify(ar.Point("m", 1e9, 1e8, 1.0, dtype="fp32")) == "memory-bound"  # 10 < ridge 15
    fp64 = roof_for(model.ceilings, "fp64")
    assert fp64 is not None and fp64.name == "GEMM FP64"  # theoretical when nothing measured
    assert ceiling_precision("CPU GEMM FP32") == "fp32" and ceiling_precision("DRAM bandwidth") is None
    with pytest.raises(ValueError, match="dtype"):
        ar.Point("x", 1, 1, 1, dtype="float32")


@pytest.mark.parametrize(
    "dtype, want",
    [
        ("fp32", "fp32"),
        (np.float32, "fp32"),
        (np.dtype("float16"), "fp16"),
        ("float64", "fp64"),
        ("torch.bfloat16", "bf16"),
        ("mlx.core.float32", "fp32"),
        ("int8", "int8"),
        (np.int32, None),
        (None, None),
    ],
)
def test_precision_of_dtype(dtype: object, want: object) -> None:
    assert precision_of_dtype(dtype) == want


def test_measure_infers_and_takes_the_dtype() -> None:
    a = np.ones((8, 8), np.float32)
    assert ar.measure(lambda: a @ a, flops=1024, bytes=768, reps=2, min_sample_s=1e-5).dtype == "fp32"
    assert ar.measure(lambda: None, flops=1, bytes=1, reps=1, min_sample_s=1e-5, dtype=np.float16).dtype == "fp16"
    assert ar.measure(lambda: a @ a, flops=1, bytes=1, reps=1, warmup=0, min_sample_s=1e-5).dtype is None
    with pytest.raises(ValueError, match="dtype"):
        ar.measure(lambda: None, flops=1, bytes=1, dtype="complex")


# --------------------------------------------------------------------------
# the kernels file of the embedding API


def test_kernels_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    pts = [ar.Point("matmul", 2e9, 1.2e7, 1e-3, dtype="fp32"), ar.Point("copy", 0, 8e6, 1e-4)]
    save_kernels(path, pts, device={"backend": "cpu", "name": "test cpu"})
    doc = ar.load_results(path)
    assert doc.KIND == "kernels" and [p.name for p in doc.points] == ["matmul", "copy"]
    ks = load_kernels(path)
    (dot,) = ks.dots
    assert (dot.kernel, dot.level, dot.precision, dot.flops, dot.bytes) == ("matmul", "DRAM", "fp32", 2e9, 1.2e7)
    (u,) = ks.unplaced
    assert u.kernel == "copy" and "no FLOPs" in u.reason
    data = json.loads(path.read_text())
    data["kernels"][0]["dtype"] = "float32"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match=r"kernels\[0\]\.dtype"):
        load_kernels(path)
    with pytest.raises(ValueError, match="at least one"):
        save_kernels(tmp_path / "none.json", [])


# --------------------------------------------------------------------------
# the command line


def test_plot_and_report_with_kernels(tmp_path: Path) -> None:
    run = DATA / "run_h100.json"
    out = tmp_path / "r.png"
    anywhere = ["--kernels-any-device"]  # an H200 profile on an H100 run
    result = runner.invoke(app, ["plot", str(run), "--kernels", str(SYNTHETIC), "-o", str(out), *anywhere])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("warning: These kernels ran on another device (NVIDIA H200)")
    assert "bound by" in result.stdout and "FP32 vector (compute)" in result.stdout
    assert "not placed: idiv_chain(int*, long)" in result.stdout and "integer-only" in result.stdout
    assert out.stat().st_size > 0
    md = runner.invoke(app, ["report", str(run), "--kernels", str(SYNTHETIC), "--kernels-match", "hgemm", *anywhere])
    assert md.exit_code == 0, md.output
    section = md.stdout[md.stdout.index("## Your kernels") :]
    assert (
        "hgemm_tensorop_f16" in section and "GEMM FP16 (compute)" in section and "sgemm" not in section.split("##")[1]
    )
    assert "another device than this run's NVIDIA H100" in section  # an H200 profile on an H100 run
    assert "These kernels ran on another device (NVIDIA H200)" in section
    html = runner.invoke(app, ["report", str(run), "-f", "html", "--kernels", str(SYNTHETIC), *anywhere])
    assert html.exit_code == 0 and "<h2>Your kernels</h2>" in html.stdout
    assert "These kernels ran on another device (NVIDIA H200)" in html.stdout
    assert "ran on NVIDIA H200, another device than this run&#x27;s" in html.stdout  # each dot's hover
    assert "left below" in html.stdout and "<title>" in html.stdout  # the hover text of the dots


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--kernels", "README"], "neither a kernels file"),
        (["--kernels", "SYNTH", "--kernels-min-share", "150"], "0 to 100"),
        (["--kernels-match", "x"], "--kernels FILE"),
    ],
)
def test_kernels_option_errors(tmp_path: Path, args: List[str], needle: str) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# not an export\n")
    args = [str(readme) if a == "README" else str(SYNTHETIC) if a == "SYNTH" else a for a in args]
    result = runner.invoke(app, ["plot", str(DATA / "run_h100.json"), "-o", str(tmp_path / "x.png"), *args])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_report_kernels_needs_md_or_html() -> None:
    result = runner.invoke(app, ["report", str(DATA / "run_h100.json"), "-f", "csv", "--kernels", str(SYNTHETIC)])
    assert result.exit_code == 2 and "md and html" in result.stderr


# --------------------------------------------------------------------------
# a real export: cuBLAS FP32 and FP16 GEMMs, a STREAM triad and an integer-only kernel on an H200


REAL = DATA / "ncu_h200_raw.csv"
_OPS = {
    "fp32": (("fadd", 1), ("fmul", 1), ("ffma", 2)),
    "fp64": (("dadd", 1), ("dmul", 1), ("dfma", 2)),
    "fp16": (("hadd", 2), ("hmul", 2), ("hfma", 4)),
}


#: Per level, the traffic metrics of ncu's hierarchical sections (bytes per second, or active
#: cycles per second × bytes per cycle), then the simple totals (bytes): (metric, factor, is a rate).
_TRAFFIC = {
    "DRAM": (("dram__bytes.sum.per_second", 1, True), ("dram__bytes.sum", 1, False)),
    "L2": (
        ("derived__lts__lts2xbar_bytes.sum.per_second", 1, True),
        ("lts__lts2xbar_cycles_active.sum.per_second", 32, True),
        ("lts__t_bytes.sum", 1, False),
    ),
    "L1": (
        ("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second", 1, True),
        ("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", 128, True),
        ("l1tex__t_bytes.sum", 1, False),
    ),
}


def _traffic(row: Dict[str, str], level: str) -> float:
    """Bytes one launch moved at ``level``, by the first of :data:`_TRAFFIC` the export has."""
    for metric, factor, rate in _TRAFFIC[level]:
        if metric in row:
            return value(row, metric) * factor * (value(row, "gpu__time_duration.sum") if rate else 1.0)
    raise AssertionError(f"no {level} traffic metric in the export")


def _ncu_chart_figures(rows: List[Dict[str, str]], kernel: str, level: str) -> Dict[str, float]:
    """ncu's own figures for one kernel, per precision chart, from the raw metrics as its
    hierarchical sections compute them: achieved work = Σ(weight × per-cycle instruction rate) × SM
    clock (tensor: ops per cycle × SM clock); traffic = the level's bytes per second (:func:`_traffic`).
    Launches are combined by their durations. Returns {precision: (FLOP/s, FLOP/B)} flattened as
    ``"<p>:gflops"``, ``"<p>:intensity"``."""
    mine = [r for r in rows if r["Kernel Name"] == kernel]
    seconds = sum(value(r, "gpu__time_duration.sum") for r in mine)
    traffic = sum(_traffic(r, level) for r in mine)
    work: Dict[str, float] = {}
    for r in mine:
        t = value(r, "gpu__time_duration.sum")
        for p, ops in _OPS.items():
            names = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed" for op, _w in ops]
            if all(n in r for n in names):
                rate = sum(w * value(r, n) for (_op, w), n in zip(ops, names))
                work[p] = work.get(p, 0.0) + rate * value(r, "smsp__cycles_elapsed.avg.per_second") * t
        tensor = [
            c
            for c in r
            if c.startswith("sm__ops_path_tensor_src_") and c.endswith(".sum.per_cycle_elapsed") and "|" not in c
        ]
        paths = [c[: -len(".sum.per_cycle_elapsed")] for c in tensor]
        for c, path in zip(tensor, paths):
            if any(path != q and path.startswith(q + "_") for q in paths):
                continue
            work["tensor"] = work.get("tensor", 0.0) + value(r, c) * value(r, "sm__cycles_elapsed.avg.per_second") * t
    out: Dict[str, float] = {}
    for p, f in work.items():
        out[f"{p}:gflops"] = f / seconds / 1e9
        out[f"{p}:intensity"] = f / traffic if traffic else math.inf
    return out


def test_real_h200_export_matches_ncu_figures() -> None:
    kernels = load_kernels(REAL)
    rows = raw_table(REAL)
    placed = {d.kernel for d in kernels.dots}
    assert len(placed) >= 3  # the two GEMMs and the triad
    for kernel in placed:
        for level in ("DRAM", "L2", "L1"):
            dot = next(d for d in kernels.dots if d.kernel == kernel and d.level == level)
            ncu = _ncu_chart_figures(rows, kernel, level)
            # the chart of the dot's precision: the tensor chart where the tensor pipe did the work
            chart = max((k.split(":")[0] for k in ncu if k.endswith(":gflops")), key=lambda p: ncu[f"{p}:gflops"])
            share = ncu[f"{chart}:gflops"] / sum(v for k, v in ncu.items() if k.endswith(":gflops"))
            assert share > 0.99, (kernel, ncu)  # one precision does the work, so the charts agree with the dot
            assert dot.gflops == pytest.approx(ncu[f"{chart}:gflops"], rel=0.01), (kernel, level)
            assert dot.intensity == pytest.approx(ncu[f"{chart}:intensity"], rel=0.01), (kernel, level)
    integer = [u for u in kernels.unplaced if u.level is None]
    assert integer and all("integer-only" in u.reason for u in integer)
    assert any("idiv" in u.kernel.lower() for u in integer)


def test_a_kernels_file_on_its_own(tmp_path: Path) -> None:
    path = DATA / "kernels_synthetic.json"
    report = runner.invoke(app, ["report", str(path)])
    assert report.exit_code == 0 and "numpy matmul N=256" in report.stdout and "fp32" in report.stdout
    plot = runner.invoke(app, ["plot", str(path), "-o", str(tmp_path / "x.png")])
    assert plot.exit_code == 1 and "--kernels" in plot.stderr and not (tmp_path / "x.png").exists()
    doc = ar.load_results(path)
    first = doc.points[0]
    assert len(first.samples) == 5 and first.seconds == float(np.median(first.samples))


def test_measured_samples_survive_the_file(tmp_path: Path) -> None:
    a = np.ones((16, 16), np.float32)
    p = ar.measure(lambda: a @ a, flops=2 * 16**3, bytes=3 * 16 * 16 * 4, reps=3, min_sample_s=1e-5)
    save_kernels(tmp_path / "k.json", [p])
    (back,) = ar.load_results(tmp_path / "k.json").points
    assert back.samples == p.samples and back.seconds == p.seconds and back.dtype == "fp32"


def test_a_metric_not_used_may_have_any_unit() -> None:
    text = _csv(
        [
            "launch__occupancy_per_block_size",
            "gpu__time_duration.sum",
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
            "dram__bytes.sum",
        ],
        ["smoot/parsec", "nsecond", "inst", "Kbyte"],
        [["k", "7", "1,000", "500", "2"]],
    )
    (dot,) = [d for d in read_ncu_csv(text).dots if d.level == "DRAM"]
    assert dot.bytes == 2000.0 and dot.seconds == pytest.approx(1e-6) and dot.flops == 1000.0


def test_run_files_carry_the_kernels(tmp_path: Path) -> None:
    """What `run --kernels FILE` writes: the dots on roofline.svg, their section in report.md and
    report.html, each dot's hover text there."""
    from apple_roofline.roofline.views.outputs import write_run_files

    run = ar.Run.load(DATA / "run_h100.json")
    write_run_files(run, tmp_path, kernels=load_kernels(SYNTHETIC))
    assert "## Your kernels" in (tmp_path / "report.md").read_text()
    page = (tmp_path / "report.html").read_text()
    assert '<g id="kernel:0"><title>sgemm_128x64_nn at L1 (fp32)' in page
    assert 'id="kernel:' in (tmp_path / "roofline.svg").read_text()


def test_real_h200_export_counts_the_work_it_did() -> None:
    """The GEMMs did 2·4096³ FLOPs a launch and the triad 2 per element of its 256 MiB arrays
    (2·2^26): the dots count exactly that, tensor-pipe operations included once."""
    kernels = load_kernels(REAL)
    per_launch = {d.kernel: d.flops / d.launches for d in kernels.dots if d.level == "DRAM"}
    gemms = [f for k, f in per_launch.items() if "gemm" in k or "nvjet" in k]
    assert len(gemms) == 2 and all(f == pytest.approx(2 * 4096**3, rel=0.01) for f in gemms)
    assert per_launch["stream_triad_f32"] == pytest.approx(2 * 2**26, rel=0.01)
    pipes = {d.kernel: d.pipe for d in kernels.dots}
    assert sorted(str(p) for p in pipes.values()) == ["fma", "fma", "tensor"]


def test_real_h200_export_on_the_h200_run() -> None:
    """On the H200's own default run: the FFMA SGEMM against the FP32 vector roof, the tensor-core
    FP16 GEMM against the matrix units' FP16 roof, the triad at DRAM's measured bandwidth."""
    model = ar.Roofline.from_run(ar.Run.load(DATA / "run_h200_default.json"))
    placed = {(p.dot.kernel, p.dot.level): p for p in place(model, load_kernels(REAL))}
    sgemm = next(p for (k, level), p in placed.items() if k.startswith("sm80_xmma_gemm") and level == "DRAM")
    assert sgemm.roof is not None and sgemm.roof.name == "FP32 vector" and sgemm.binding is sgemm.roof
    hgemm = next(p for (k, level), p in placed.items() if k.startswith("nvjet") and level == "DRAM")
    assert hgemm.roof is not None and ceiling_precision(hgemm.roof.name) == "fp16" and hgemm.binding is hgemm.roof
    assert hgemm.speedup is not None and 1.0 < hgemm.speedup < 2.0
    triad = placed[("stream_triad_f32", "DRAM")]
    assert triad.binding is not None and triad.binding.name == "DRAM bandwidth"
    assert triad.speedup is not None and 0.9 < triad.speedup < 1.1  # STREAM runs at the STREAM ceiling
    assert ceiling_precision("Matrix E4M3→FP32 (wgmma)") == "fp8"  # a matrix unit's input, not its accumulator
    assert ceiling_precision("Matrix INT8→INT32 (mma.sync)") == "int8"
