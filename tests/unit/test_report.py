from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.report import CSV_COLUMNS, to_csv, to_markdown
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.records import Ceiling
from apple_roofline.text import date_of as run_date


def _section(md: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", md, re.S | re.M)
    assert m is not None, f"no section {title!r}"
    return m.group(1)


def _row(md: str, first_cell: str) -> list:
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row starting with {first_cell!r}")


def test_run_date() -> None:
    assert run_date("2026-11-20T12:34:56+00:00") == "2026-11-20"
    assert run_date("2026-11-20T12:34:56Z") == "2026-11-20"
    assert run_date("yesterday") == "yesterday"


def test_markdown_title_and_provenance(m5_run: Run) -> None:
    md = to_markdown(m5_run)
    assert md.splitlines()[0] == "# Roofline: Apple M5 (metal) — 2026-11-20"
    prov = _section(md, "Provenance")
    assert "apple_roofline 0.1.0" in prov and "abc1234" in prov
    assert "`apple-roofline run --suite all`" in prov
    assert "2026-11-20T12:34:56+00:00" in prov
    assert "macOS 26.1" in prov
    assert _row(md, "Status")[1] == "complete"
    assert "INTERRUPTED" not in md
    conv = _section(md, "Conventions")
    assert "an FMA is 2 FLOPs" in conv and "BabelStream" in conv and "1e9" in conv


def test_markdown_interrupted(m5_run: Run) -> None:
    md = to_markdown(dataclasses.replace(m5_run, complete=False))
    assert "INTERRUPTED — partial results" in md.splitlines()[2]
    assert _row(md, "Status")[1] == "INTERRUPTED — partial results"


def test_markdown_ceilings(m5_run: Run) -> None:
    sec = _section(to_markdown(m5_run), "Ceilings")
    assert _row(sec, "FP32 scalar ILP")[1:4] == ["compute", "3,849 GFLOP/s", "measured"]
    assert _row(sec, "DRAM bandwidth")[2] == "122 GB/s"
    assert "theoretical" in sec and "154 GB/s" in sec
    assert "stream/triad/fp32 n=67108864 (median of 10)" in sec
    # measured ceilings listed before theoretical
    assert sec.index("| measured |") < sec.index("| theoretical |")


def test_markdown_ridge_points(m5_run: Run) -> None:
    sec = _section(to_markdown(m5_run), "Ridge points")
    row = _row(sec, "FP32 scalar ILP")
    assert row[1] == "3,849 GFLOP/s"
    assert row[2] == "31.5"  # 3849 / 122
    assert row[3] == "4,096 GFLOP/s"
    assert row[4] == "26.7"  # 4096 / 153.6
    assert row[5] == "94.0 %"  # 3849 / 4096
    assert _row(sec, "FP32 vector")[2] == "6.68"  # 815 / 122
    assert _row(sec, "FP32 vector")[5] == "—"
    assert _row(sec, "DRAM bandwidth (bandwidth)")[5] == "79.4 %"  # 122 / 153.6


def test_markdown_suite_tables(m5_run: Run) -> None:
    md = to_markdown(m5_run)
    for suite in ("stream", "sweep", "peak", "gemm"):
        assert f"## Suite: {suite}" in md
    stream = _section(md, "Suite: stream")
    triad = _row(stream, "triad")
    assert triad == ["triad", "fp32", "n=67108864", "0.167", "20.3", "122", "0.258 %", "yes"]
    peak = _section(md, "Suite: peak")
    assert _row(peak, "vec4_indep8")[-1] == "**NO**"
    assert len([line for line in _section(md, "Suite: sweep").splitlines() if line.startswith("| vec4 ")]) == 11


def test_markdown_skipped_and_warnings(m5_run: Run) -> None:
    md = to_markdown(m5_run)
    assert "| peak/scalar_indep8/fp64 | no FP64 arithmetic on this GPU |" in _section(md, "Skipped")
    warn = _section(md, "Warnings")
    assert "- GPU clocks not readable" in warn
    assert "peak/vec4_indep8/fp32 (F=512) failed validation" in warn
    assert "gemm/sgemm/fp32 (N=256) is noisy: CV 12.9 % > 5 %" in warn
    # quiet measurements are not warned about
    assert "N=1024" not in warn


def test_markdown_without_ceilings(m5_run: Run) -> None:
    md = to_markdown(m5_run.with_ceilings([]))
    assert "No ceilings." in _section(md, "Ceilings")
    assert "No ridge points" in _section(md, "Ridge points")


def test_markdown_empty_run() -> None:
    run = Run(ToolInfo("t", "1", None), "2026-01-02", {}, {"backend": "cpu", "name": "x|y"}, (), (), ())
    md = to_markdown(run)
    assert md.startswith("# Roofline: x|y (cpu) — 2026-01-02")
    assert "No measurements." in md
    assert "None." in _section(md, "Skipped") and "None." in _section(md, "Warnings")
    assert "unknown" in _row(md, "Git revision")[1]


def test_markdown_lists_what_webgpu_cannot_reach() -> None:
    """A wgpu run's device record names what WebGPU cannot reach; the report lists it after the skipped
    kernels, with the reasons; a run whose device records nothing of the kind has no such section."""
    device = {"backend": "wgpu", "name": "lavapipe", "not_reachable": {"FP64": "WGSL has no f64 type"}}
    run = Run(ToolInfo("t", "1", None), "2026-01-02", {}, device, (), (), ())
    md = to_markdown(run)
    assert md.index("## Skipped") < md.index("## Not reachable through WebGPU")
    assert _row(_section(md, "Not reachable through WebGPU"), "FP64") == ["FP64", "WGSL has no f64 type"]
    assert "Not reachable" not in to_markdown(dataclasses.replace(run, device={"backend": "cpu", "name": "x"}))


def test_markdown_escapes_pipes(m5_run: Run) -> None:
    run = m5_run.with_ceilings([Ceiling("a|b", "compute", 1.0, "GFLOP/s", "measured", "x")])
    assert "a\\|b" in _section(to_markdown(run), "Ceilings")


def test_csv(m5_run: Run) -> None:
    text = to_csv(m5_run)
    rows = list(csv.reader(io.StringIO(text)))
    assert (
        tuple(rows[0])
        == CSV_COLUMNS
        == (
            "suite",
            "kernel",
            "dtype",
            "params",
            "flops",
            "bytes",
            "intensity",
            "median_s",
            "min_s",
            "max_s",
            "cv",
            "gflops",
            "gbps",
            "valid",
            "over_limit",
        )
    )
    assert len(rows) == 1 + len(m5_run.measurements)
    for row, m in zip(rows[1:], m5_run.measurements):
        d = dict(zip(rows[0], row))
        assert (d["suite"], d["kernel"], d["dtype"]) == (m.suite, m.kernel, m.dtype)
        assert json.loads(d["params"]) == dict(m.params)
        assert int(d["flops"]) == m.flops and int(d["bytes"]) == m.bytes
        assert float(d["median_s"]) == m.median_s  # full precision
        assert float(d["gflops"]) == m.gflops and float(d["gbps"]) == m.gbps
        assert d["valid"] == ("true" if m.valid else "false")
    assert "\r" not in text


# --------------------------------------------------------------------------
# the real CPU runs (tests/unit/data): warnings once, figures formatted, no empty column

from pathlib import Path  # noqa: E402

DATA = Path(__file__).parent / "data"


def _bullets(sec: str) -> list:
    return [line[2:] for line in sec.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("name", ["run_epyc_2vcpu.json", "run_xeon_16vcpu.json"])
def test_real_run_warnings_listed_once(name: str) -> None:
    run = Run.load(DATA / name)
    warn = _bullets(_section(to_markdown(run), "Warnings"))
    assert len(warn) == len(set(warn))
    # the runner's own warnings, in order, then nothing that repeats them
    assert warn == list(run.warnings)
    # each noisy measurement warned about exactly once
    noisy = [m for m in run.measurements if m.cv > 0.05]
    assert noisy and sum("CV" in w for w in warn) == len(noisy)


def test_warnings_deduplicated(m5_run: Run) -> None:
    runner_style = (
        "GPU clocks not readable",
        "GPU clocks not readable",
        "gemm/sgemm/fp32 N=256: CV 12.9% > 5% (noisy samples)",
        "peak/vec4_indep8/fp32 failed validation: max rel err 0.5 > tol 1.2e-04",
    )
    run = dataclasses.replace(m5_run, warnings=runner_style)
    warn = _bullets(_section(to_markdown(run), "Warnings"))
    assert warn == list(runner_style[1:])  # exact repeat dropped; nothing measurement-derived added
    # a warning about another measurement of the same kernel does not hide this one's
    other = dataclasses.replace(m5_run, warnings=("gemm/sgemm/fp32 N=1024: CV 9.9% > 5% (noisy samples)",))
    warn = _bullets(_section(to_markdown(other), "Warnings"))
    assert "gemm/sgemm/fp32 (N=256) is noisy: CV 12.9 % > 5 %" in warn
    assert len(warn) == 3  # the run's, the noisy N=256, the invalid vec4_indep8


def test_warnings_interrupted_once(m5_run: Run) -> None:
    run = dataclasses.replace(m5_run, complete=False)
    warn = _bullets(_section(to_markdown(run), "Warnings"))
    assert warn[0] == "run was interrupted: partial results"
    assert sum("interrupted" in w for w in warn) == 1


def test_real_run_figures_formatted() -> None:
    md = to_markdown(Run.load(DATA / "run_epyc_2vcpu.json"))
    sec = _section(md, "Theoretical peaks")
    assert _row(sec, "clock_hz")[1] == "3.60 GHz"
    assert _row(sec, "physical_cores")[1] == "2"
    assert _row(sec, "vector_bits")[1] == "512"
    assert _row(sec, "fma_pipes")[1] == "2"
    assert "3600566933" not in md and "512.0" not in md and "| 2.0 |" not in md


def test_ridge_table_without_theoretical_bandwidth() -> None:
    sec = _section(to_markdown(Run.load(DATA / "run_xeon_16vcpu.json")), "Ridge points")
    header = [line for line in sec.splitlines() if line.startswith("| Ceiling")][0]
    assert "Ridge, theoretical" not in header
    assert "No theoretical bandwidth" in sec
    row = _row(sec, "FP32 vector")
    assert row == ["FP32 vector", "1,148 GFLOP/s", "11.4", "5,374 GFLOP/s", "21.4 %"]
    assert all(len(_row(sec, n)) == 5 for n in ("FP16 scalar ILP", "GEMM FP64"))


def test_ridge_table_keeps_theoretical_column_with_bandwidth(m5_run: Run) -> None:
    sec = _section(to_markdown(m5_run), "Ridge points")
    assert "Ridge, theoretical (FLOP/B)" in sec
    assert "No theoretical bandwidth" not in sec
