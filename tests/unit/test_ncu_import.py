"""Nsight Compute imports that say what they lack (issue 45's ncu rows), and the exports recorded on
an H200 (``data/record_ncu_h200.py``: a cuBLAS SGEMM and HGEMM, a CuPy STREAM triad, an integer
kernel and an FP32+FP64 kernel, two launches each) collected three ways: the totals without the
tensor pipe's operations, ``--set roofline`` and the hierarchical roofline sections. ncu's own
roofline figures come from the details page of the ``--set roofline`` report
(``ncu_h200_roofline_chart.csv``: its chart rows, ``--print-details all``) and, for the other two
exports, from their counters as ncu's sections combine them, read here with the csv module alone."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from typer.testing import CliRunner

from apple_roofline.cli import app
from apple_roofline.roofline.model.model import RooflineModel
from apple_roofline.study.files import ResultsError
from apple_roofline.study.records import Ceiling
from apple_roofline.user_kernels import KernelSet, load_kernels, place
from apple_roofline.user_kernels.ncu import read_ncu_csv

DATA = Path(__file__).parent / "data"
TOTALS = DATA / "ncu_h200_totals_raw.csv"
ROOFLINE = DATA / "ncu_h200_roofline_raw.csv"
HIERARCHICAL = DATA / "ncu_h200_hierarchical_raw.csv"
DETAILS = DATA / "ncu_h200_details.csv"
CHART = DATA / "ncu_h200_roofline_chart.csv"
RECORDED = (TOTALS, ROOFLINE, HIERARCHICAL)
H200_RUN = DATA / "run_h200_default.json"
H100_RUN = DATA / "run_h100.json"
SGEMM = (
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_"
    "execute_kernel__5x_cublas"
)
HGEMM = "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
runner = CliRunner()

#: ncu's units as these exports write them, to base units (the test's own table).
_SCALE = {
    "": 1.0,
    "inst": 1.0,
    "inst/cycle": 1.0,
    "byte": 1.0,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "Tbyte": 1e12,
    "Gbyte/s": 1e9,
    "Tbyte/s": 1e12,
    "Ghz": 1e9,
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "%": 1.0,
}


def _table(path: Path) -> Tuple[List[str], List[str], List[List[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    return rows[0], rows[1], rows[2:]


def _write(header: List[str], units: List[str], body: List[List[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerows([header, units, *body])
    return out.getvalue()


def _edited(path: Path, kernel: str, launch: int, metric: str, cell: str) -> str:
    """The export with one cell replaced: ``metric`` of the ``launch``-th (0-based) launch of ``kernel``."""
    header, units, body = _table(path)
    rows = [r for r in body if r[header.index("Kernel Name")] == kernel]
    rows[launch][header.index(metric)] = cell
    return _write(header, units, body)


def _value(cell: str, unit: str) -> float:
    return float(cell.replace(",", "")) * _SCALE[unit]


# --------------------------------------------------------------------------
# the issue's rows


def test_tensor_pipe_without_tensor_ops_lacks_them() -> None:
    """The recorded totals: the HGEMM ran 2,097,152 tensor-pipe warp instructions a launch and no FP
    instruction; it lacks sm__ops_path_tensor_src_* (and says which section collects them), it is
    not integer-only."""
    (hgemm,) = [u for u in load_kernels(TOTALS).unplaced if u.kernel == HGEMM]
    assert hgemm.level is None and hgemm.missing == ("sm__ops_path_tensor_src_*",)
    assert "SpeedOfLight_HierarchicalTensorRooflineChart" in hgemm.reason and "--set roofline" in hgemm.reason
    assert "integer-only" not in hgemm.reason and "4,194,304" in hgemm.reason  # two launches


def _one_row(metrics: Dict[str, Tuple[str, str]]) -> str:
    header = ["ID", "Kernel Name", *metrics]
    return _write(
        header, ["", "", *(u for u, _v in metrics.values())], [["0", "k", *(v for _u, v in metrics.values())]]
    )


def test_the_issue_case_as_written() -> None:
    """sm__inst_executed_pipe_tensor.sum = 2,097,152, every FP count 0, no sm__ops_path_tensor_src_*."""
    base = {"gpu__time_duration.sum": ("usecond", "100"), "dram__bytes.sum": ("Mbyte", "100")}
    counts = {f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum": ("inst", "0") for op in ("ffma", "hfma", "dfma")}
    pipe = {"sm__inst_executed_pipe_tensor.sum": ("inst", "2,097,152")}
    (u,) = read_ncu_csv(_one_row({**base, **counts, **pipe})).unplaced
    assert u.missing == ("sm__ops_path_tensor_src_*",) and "integer-only" not in u.reason
    # without the pipe's count a tensor-core kernel cannot be told from an integer one either
    (u,) = read_ncu_csv(_one_row({**base, **counts})).unplaced
    assert u.missing == ("sm__ops_path_tensor_src_*",) and "integer-only" not in u.reason
    # a pipe that ran nothing: integer-only, and the lacks column names the counts that are 0
    (u,) = read_ncu_csv(_one_row({**base, **counts, "sm__inst_executed_pipe_tensor.sum": ("inst", "0")})).unplaced
    assert "integer-only" in u.reason and all("__" in m for m in u.missing) and u.missing


def test_every_unplaced_kernel_names_a_metric() -> None:
    files = [*RECORDED, DATA / "ncu_h200_raw.csv", DATA / "ncu_synthetic_raw.csv"]
    zero_bytes = _one_row(
        {"gpu__time_duration.sum": ("usecond", "1"), FFMA: ("inst", "10"), "dram__bytes.sum": ("byte", "0")}
    )
    sets = [load_kernels(f) for f in files] + [read_ncu_csv(zero_bytes)]
    unplaced = [u for ks in sets for u in ks.unplaced]
    assert len(unplaced) > 5
    for u in unplaced:
        assert u.missing and all("__" in m for m in u.missing), u


def test_the_details_page_is_an_error() -> None:
    with pytest.raises(ResultsError, match="details page") as info:
        load_kernels(DETAILS)
    assert "--page raw" in str(info.value) and "\n" not in str(info.value)
    result = runner.invoke(app, ["plot", str(H200_RUN), "--kernels", str(DETAILS), "-o", "never.png"])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "details page" in lines[0] and "--page raw" in lines[0]


def test_a_cell_that_does_not_parse_is_an_error(tmp_path: Path) -> None:
    text = _edited(TOTALS, SGEMM, 0, FFMA, "12abc")
    with pytest.raises(ResultsError) as info:
        read_ncu_csv(text, source="x.csv")
    msg = str(info.value)
    assert SGEMM in msg and FFMA in msg and "'12abc'" in msg and "\n" not in msg
    (tmp_path / "x.csv").write_text(text)
    result = runner.invoke(app, ["report", str(H200_RUN), "--kernels", str(tmp_path / "x.csv")])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "'12abc'" in lines[0]


def test_a_launch_lacking_a_metric_is_not_summed_as_zero() -> None:
    ks = read_ncu_csv(_edited(TOTALS, SGEMM, 1, FFMA, "n/a"))
    assert not [d for d in ks.dots if d.kernel == SGEMM]
    (u,) = [u for u in ks.unplaced if u.kernel == SGEMM]
    assert u.missing == (FFMA,) and "launch row" in u.reason
    ks = read_ncu_csv(_edited(TOTALS, SGEMM, 0, "dram__bytes.sum", ""))
    assert {d.level for d in ks.dots if d.kernel == SGEMM} == {"L1", "L2"}
    (u,) = [u for u in ks.unplaced if u.kernel == SGEMM]
    assert u.level == "DRAM" and "dram__bytes.sum" in u.missing[0]


@pytest.mark.parametrize("cell", ["inf", "nan", "-inf", "1e999", "1e308"])
def test_non_finite_cells_are_errors(tmp_path: Path, cell: str) -> None:
    """inf, nan, a number past a float, and 1e308 FFMAs (2e308 FLOPs: an infinite rate)."""
    text = _edited(TOTALS, SGEMM, 0, FFMA, cell)
    with pytest.raises(ResultsError) as info:
        read_ncu_csv(text, source="x.csv")
    assert SGEMM in str(info.value) and "\n" not in str(info.value)
    (tmp_path / "x.csv").write_text(text)
    result = runner.invoke(app, ["plot", str(H200_RUN), "--kernels", str(tmp_path / "x.csv"), "-o", "never.png"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("flops, seconds", [(1e308, 1e-3), (1.0, 1e-320)])
def test_a_kernels_file_with_infinite_rates_is_an_error(tmp_path: Path, flops: float, seconds: float) -> None:
    doc = json.loads((DATA / "kernels_synthetic.json").read_text())
    first = doc["kernels"][0]
    first.pop("samples_s", None)
    first.pop("n", None)
    first.update(flops=flops, seconds=seconds)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["plot", str(H100_RUN), "--kernels", str(path), "-o", str(tmp_path / "x.png")])
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "not finite" in lines[0] and "kernels[0]" in lines[0]


def test_another_devices_profile_is_refused_or_placed_with_a_banner(tmp_path: Path) -> None:
    for cmd in (["plot", str(H100_RUN), "-o", str(tmp_path / "x.png")], ["report", str(H100_RUN)]):
        result = runner.invoke(app, [*cmd, "--kernels", str(ROOFLINE)])
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert "NVIDIA H200" in lines[0] and "NVIDIA H100" in lines[0] and "--kernels-any-device" in lines[0]
    assert not (tmp_path / "x.png").exists()
    svg = tmp_path / "x.svg"
    result = runner.invoke(
        app, ["plot", str(H100_RUN), "-o", str(svg), "--kernels", str(ROOFLINE), "--kernels-any-device"]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("warning: These kernels ran on another device (NVIDIA H200)")
    assert "not this run's device" in svg.read_text()  # the figure's legend
    md = runner.invoke(app, ["report", str(H100_RUN), "--kernels", str(ROOFLINE), "--kernels-any-device"])
    assert md.exit_code == 0 and "These kernels ran on another device (NVIDIA H200)" in md.stdout
    # the run's own device: no banner, no option needed
    same = runner.invoke(app, ["plot", str(H200_RUN), "-o", str(tmp_path / "y.png"), "--kernels", str(ROOFLINE)])
    assert same.exit_code == 0 and "another device" not in same.stdout
    alone = runner.invoke(app, ["plot", str(H200_RUN), "-o", str(tmp_path / "z.png"), "--kernels-any-device"])
    assert alone.exit_code == 2 and "--kernels FILE" in alone.stderr


def test_a_mix_of_precisions_is_placed_by_most_and_shown() -> None:
    from apple_roofline.user_kernels.tables import precision_text

    (dot,) = [d for d in load_kernels(HIERARCHICAL).dots if d.kernel == "mixed_f32_f64" and d.level == "DRAM"]
    assert dot.precision == "fp32" and set(dot.work) == {"fp32", "fp64", "fp16"}
    assert precision_text(dot) == "fp32 (76%; fp16 16%, fp64 8%)"
    # most of the FLOPs, not the first precision found: 10 DFMA against 1 FFMA is an FP64 kernel
    text = _one_row(
        {
            "gpu__time_duration.sum": ("usecond", "1"),
            FFMA: ("inst", "1"),
            "sm__sass_thread_inst_executed_op_dfma_pred_on.sum": ("inst", "10"),
            "dram__bytes.sum": ("byte", "8"),
        }
    )
    (dot,) = read_ncu_csv(text).dots
    assert dot.precision == "fp64" and precision_text(dot) == "fp64 (91%; fp32 9%)"
    result = runner.invoke(app, ["plot", str(H200_RUN), "-o", "/dev/null.png", "--kernels", str(HIERARCHICAL)])
    assert "fp32 (76%; fp16 16%, fp64 8%)" in result.stdout


# --------------------------------------------------------------------------
# the recorded exports: every kernel at ncu's own figures, or listed with the metric it lacks


def _chart() -> Dict[Tuple[str, str, str], Dict[str, float]]:
    """ncu's chart rows: per (launch ID, precision chart, level) its achieved work (FLOP/s) and
    traffic (B/s), and per launch ID its duration (s) under ``(id, "", "")``."""
    rows = list(csv.DictReader(io.StringIO(CHART.read_text(encoding="utf-8"))))
    charts = {"Single": "fp32", "Double": "fp64", "Half": "fp16", "Tensor": "fp16 tensor"}
    groups: Dict[Tuple[str, str, str], List[Dict[str, str]]] = {}
    for r in rows:
        if r["Metric Name"] == "Duration":
            groups[(r["ID"], "", "")] = [r]
            continue
        if "Hierarchical" not in r["Section Name"] or (
            "Tensor" in r["Section Name"] and "(Src:" not in r["Body Item Label"]
        ):
            continue  # the hierarchical charts (the plain chart's DRAM dots are theirs), the tensor paths' totals
        chart = next(p for k, p in charts.items() if k in r["Section Name"])
        level = r["Body Item Label"].split(" ")[0].replace("L1/TEX", "L1")
        groups.setdefault((r["ID"], chart, level), []).append(r)
    out: Dict[Tuple[str, str, str], Dict[str, float]] = {}
    for key, g in groups.items():
        values = {r["Metric Name"]: _value(r["Metric Value"], r["Metric Unit"]) for r in g}
        if key[1] == "":
            out[key] = {"seconds": values["Duration"]}
            continue
        clock = values.pop("SM Frequency")
        traffic = next(v for m, v in values.items() if "Bandwidth" in m)
        work = sum(v for m, v in values.items() if "Per Cycle" in m)
        out[key] = {"flops_per_s": work * clock, "bytes_per_s": traffic}
    return out


def _model() -> RooflineModel:
    """Ceilings (as made up as needed: the placement is tested elsewhere) for every kind the dots need."""
    c = [
        Ceiling("DRAM bandwidth", "bandwidth", 4800.0, "GB/s", "measured", "t"),
        Ceiling("L2 bandwidth", "bandwidth", 12000.0, "GB/s", "measured", "t", working_set=(1 << 20, 1 << 25)),
        Ceiling("L1 bandwidth", "bandwidth", 40000.0, "GB/s", "measured", "t", working_set=(1 << 12, 1 << 17)),
    ]
    for name, v in (("FP32", 67e3), ("FP16", 134e3), ("FP64", 34e3)):
        c += [Ceiling(f"{name} vector", "compute", v, "GFLOP/s", "measured", "t")]
        c += [Ceiling(f"GEMM {name}", "compute", v * 7, "GFLOP/s", "measured", "t")]
    return RooflineModel(c)


def _placed_or_lacking(ks: KernelSet) -> None:
    placements = place(_model(), ks)
    assert all(p.binding is not None for p in placements)
    for kernel in ks.kernels():
        levels = {p.dot.level for p in placements if p.dot.kernel == kernel}
        lacking = {u.level or "all" for u in ks.unplaced if u.kernel == kernel}
        assert levels | lacking >= {"L1", "L2", "DRAM"} or lacking == {"all"}, kernel


def test_the_roofline_set_places_every_kernel_as_ncus_charts_do() -> None:
    ks = load_kernels(ROOFLINE)
    assert ks.device == "NVIDIA H200" and not ks.unplaced
    chart = _chart()
    header, _units, body = _table(ROOFLINE)
    ids: Dict[str, List[str]] = {}
    for r in body:
        ids.setdefault(r[header.index("Kernel Name")], []).append(r[header.index("ID")])
    assert len(ids) == 5 and all(len(v) == 2 for v in ids.values())
    for d in ks.dots:
        launches = ids[d.kernel]
        seconds = sum(chart[(i, "", "")]["seconds"] for i in launches)
        assert d.seconds == pytest.approx(seconds, rel=0.01)
        mine = {k[1]: 0.0 for k in chart if k[0] in launches and k[2] == d.level}
        for p in mine:  # each chart: FLOPs = rate × duration, bytes likewise, over the launches
            flops = sum(chart[(i, p, d.level)]["flops_per_s"] * chart[(i, "", "")]["seconds"] for i in launches)
            traffic = sum(chart[(i, p, d.level)]["bytes_per_s"] * chart[(i, "", "")]["seconds"] for i in launches)
            mine[p] = flops
            precision = p.split(" ")[0]
            if flops < 0.01 * d.flops:  # ncu's page rounds such a chart's rate to a digit or two
                continue
            assert d.work[precision] / d.seconds == pytest.approx(flops / seconds, rel=0.01), (d.kernel, p)
            assert d.work[precision] / d.bytes == pytest.approx(flops / traffic, rel=0.01), (d.kernel, p)
        assert d.flops == pytest.approx(sum(mine.values()), rel=0.01)
        assert d.precision == max(mine, key=lambda p: mine[p]).split(" ")[0]
        assert d.pipe == ("tensor" if "fp16 tensor" in mine else "fma")
    _placed_or_lacking(ks)


def _counters(path: Path, kernel: str, level: str) -> Tuple[Dict[str, float], float, float]:
    """FLOPs per precision (the tensor pipe's as ``"tensor"``), bytes at ``level`` and seconds of
    ``kernel``, from the export's counters as ncu's sections count them: per-cycle rates × the SM
    clock × the duration (or the counts themselves), the level's bytes per second × the duration
    (or its total)."""
    header, units, body = _table(path)
    col = {h: i for i, h in enumerate(header)}

    def v(r: List[str], m: str) -> float:
        return _value(r[col[m]], units[col[m]])

    weights = {"f": "fp32", "d": "fp64", "h": "fp16"}
    traffic = {
        "DRAM": ("dram__bytes.sum.per_second", "dram__bytes.sum"),
        "L2": ("derived__lts__lts2xbar_bytes.sum.per_second", "lts__t_bytes.sum"),
        "L1": ("derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second", "l1tex__t_bytes.sum"),
    }[level]
    work: Dict[str, float] = {}
    nbytes = seconds = 0.0
    for r in (r for r in body if r[col["Kernel Name"]] == kernel):
        t = v(r, "gpu__time_duration.sum")
        seconds += t
        for x, p in weights.items():
            for op, w in (("add", 1), ("mul", 1), ("fma", 2)):
                w *= 2 if x == "h" else 1
                rate = f"smsp__sass_thread_inst_executed_op_{x}{op}_pred_on.sum.per_cycle_elapsed"
                count = f"sm__sass_thread_inst_executed_op_{x}{op}_pred_on.sum"
                if rate in col:
                    work[p] = work.get(p, 0.0) + w * v(r, rate) * v(r, "smsp__cycles_elapsed.avg.per_second") * t
                elif count in col:
                    work[p] = work.get(p, 0.0) + w * v(r, count)
        for m in ("sm__ops_path_tensor_src_fp16.sum.per_cycle_elapsed",):
            if m in col:
                work["tensor"] = work.get("tensor", 0.0) + v(r, m) * v(r, "sm__cycles_elapsed.avg.per_second") * t
        nbytes += v(r, traffic[0]) * t if traffic[0] in col else v(r, traffic[1])
    return work, nbytes, seconds


@pytest.mark.parametrize("path", [TOTALS, HIERARCHICAL], ids=["totals", "hierarchical"])
def test_the_other_exports_place_every_kernel_at_its_counters_or_list_what_it_lacks(path: Path) -> None:
    ks = load_kernels(path)
    assert ks.device == "NVIDIA H200"
    assert {d.kernel for d in ks.dots} | {u.kernel for u in ks.unplaced} == {
        SGEMM,
        HGEMM,
        "stream_triad",
        "int_mix",
        "mixed_f32_f64",
    }
    for d in ks.dots:
        work, nbytes, seconds = _counters(path, d.kernel, d.level)
        flops = sum(work.values())
        assert d.seconds == pytest.approx(seconds, rel=1e-6)
        assert d.gflops == pytest.approx(flops / seconds / 1e9, rel=0.01), (d.kernel, d.level)
        assert d.intensity == pytest.approx(flops / nbytes, rel=0.01), (d.kernel, d.level)
    if path == TOTALS:  # the HGEMM's tensor-pipe work is not counted there
        assert [u.kernel for u in ks.unplaced] == [HGEMM]
    else:
        assert not ks.unplaced
    _placed_or_lacking(ks)


def test_the_recorded_gemms_count_their_work() -> None:
    """2·4096³ FLOPs a launch for both GEMMs, whichever way they were collected (the HGEMM where
    the export has the tensor pipe's operations)."""
    for path in RECORDED:
        for d in load_kernels(path).dots:
            if d.kernel in (SGEMM, HGEMM) and d.level == "DRAM":
                assert d.flops / d.launches == pytest.approx(2 * 4096**3, rel=0.01), (path.name, d.kernel)
