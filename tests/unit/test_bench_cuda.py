"""bench/bench_cuda.py's pure parts: the reference programs' output parsers, the theoretical figures,
the tool-side summaries, ratios and verdicts. No GPU, torch or reference binary is needed.

The sample outputs were produced by small programs that copy the references' own printing code
(BabelStream 5.0 src/main.cpp ``run<T>()`` with ``--csv``, iostream default float format;
mixbench-cuda's ``printf`` formats in lcutil.h ``StoreDeviceInfo`` and mix_kernels_cuda.cu
``runbench``), with made-up timings.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from apple_roofline.study.records import Measurement
from bench_scripts import load_bench

bc = load_bench("bench_cuda")

BABELSTREAM_DOUBLE = """\
Using CUDA device NVIDIA H100 80GB HBM3
Driver: 13000
Memory: DEFAULT
Reduction kernel config: 528 groups of (fixed) size 1024
phase,n_elements,sizeof,max_mbytes_per_sec,runtime
Init,134217728,8,7811.95,0.412346
Read,134217728,8,1.0313e+06,0.00312346
function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime
Copy,100,134217728,8,3.02517e+06,0.000709871,0.000731167,0.00071697
Mul,100,134217728,8,3.01467e+06,0.000712345,0.000733715,0.000719468
Add,100,134217728,8,3.08054e+06,0.00104567,0.00107704,0.00105613
Triad,100,134217728,8,3.09367e+06,0.00104123,0.00107247,0.00105164
Dot,100,134217728,8,2.85861e+06,0.000751234,0.000773771,0.000758746
"""

BABELSTREAM_FLOAT_MIB = """\
Using CUDA device NVIDIA H200
Driver: 13000
Memory: DEFAULT
Reduction kernel config: 528 groups of (fixed) size 1024
phase,n_elements,sizeof,max_mibytes_per_sec,runtime
Init,268435456,4,7450.06,0.412346
Read,268435456,4,983526,0.00312346
function,num_times,n_elements,sizeof,max_mibytes_per_sec,min_runtime,max_runtime,avg_runtime
Copy,100,268435456,4,2.88503e+06,0.000709871,0.000731167,0.00071697
Mul,100,268435456,4,2.87501e+06,0.000712345,0.000733715,0.000719468
Add,100,268435456,4,2.93783e+06,0.00104567,0.00107704,0.00105613
Triad,100,268435456,4,2.95036e+06,0.00104123,0.00107247,0.00105164
Dot,100,268435456,4,3.72618e+06,0.000751234,0.000773771,0.000758746
"""

MIXBENCH = """\
mixbench (v0.04-18-g236a0be)
------------------------ Device specifications ------------------------
Device:              NVIDIA H100 80GB HBM3
CUDA driver version: 13.0
GPU clock rate:      1980 MHz
Memory clock rate:   1309 MHz
Memory bus width:    5120 bits
WarpSize:            32
L2 cache size:       51200 KB
Total global mem:    81079 MB
ECC enabled:         Yes
Compute Capability:  9.0
Total SPs:           16896 (132 MPs x 128 SPs/MP)
Compute throughput:  66908.16 GFlops (theoretical single precision FMAs)
Memory bandwidth:    3352.32 GB/sec
-----------------------------------------------------------------------
Total GPU memory 85017755648, free 84488683520
Buffer size:          256MB
Trade-off type:       compute with global memory (block strided)
Elements per thread:  8
Thread fusion degree: 4
----------------------------------------------------------------------------- CSV data -----------------------------------------------------------------------------
Experiment ID, Single Precision ops,,,,              Double precision ops,,,,              Half precision ops,,,,                Integer operations,,, 
Compute iters, Flops/byte, ex.time,  GFLOPS, GB/sec, Flops/byte, ex.time,  GFLOPS, GB/sec, Flops/byte, ex.time,  GFLOPS, GB/sec, Iops/byte, ex.time,   GIOPS, GB/sec
            0,      0.250,    0.08,  414.25,1657.01,      0.125,    0.16,  208.41,1667.30,      0.500,    0.08,  828.50,1657.01,     0.250,    0.08,  414.25,1657.01
            1,      0.750,    0.08, 1227.60,1636.80,      0.375,    0.16,  621.38,1657.01,      1.500,    0.08, 2455.20,1636.80,     0.750,    0.08, 1212.81,1617.08
           64,     32.250,    0.35,12296.94, 381.30,     16.125,    0.69, 6282.32, 389.60,     64.500,    0.18,47828.97, 741.53,    32.250,    0.70, 6174.78, 191.47
          256,    128.250,    1.10,15634.35, 121.91,     64.125,    2.05, 8388.61, 130.82,    256.500,    0.56,61476.51, 239.67,   128.250,    2.74, 6279.98,  48.97
          512,    256.250,    2.10,16401.19,  64.00,    128.125,    4.07, 8440.07,  65.87,    512.500,    1.06,64831.84, 126.50,   256.250,    5.44, 6325.79,  24.69
         1024,    512.250,    4.20,16381.47,  31.98,    256.125,    8.10, 8486.98,  33.14,   1024.500,    2.09,65792.38,  64.22,   512.250,   10.91, 6301.26,  12.30
--------------------------------------------------------------------------------------------------------------------------------------------------------------------
"""

# The same rows from a GPU without FP16 (mixbench prints time 0.00 and rate inf for half).
MIXBENCH_NO_HALF_ROWS = """\
Compute iters, Flops/byte, ex.time,  GFLOPS, GB/sec, Flops/byte, ex.time,  GFLOPS, GB/sec, Flops/byte, ex.time,  GFLOPS, GB/sec, Iops/byte, ex.time,   GIOPS, GB/sec
          256,    128.250,    1.10,15634.35, 121.91,     64.125,    2.05, 8388.61, 130.82,    256.500,    0.00,     inf,    inf,   128.250,    2.74, 6279.98,  48.97
          512,    256.250,    2.10,16401.19,  64.00,    128.125,    4.07, 8440.07,  65.87,    512.500,    0.00,     inf,    inf,   256.250,    5.44, 6325.79,  24.69
--------------------------------------------------------------------------------------------------------------------------------------------------------------------
"""

NVIDIA_SMI = """\
name, driver_version, clocks.current.sm [MHz], clocks.max.sm [MHz], clocks.current.memory [MHz], clocks.max.memory [MHz], power.draw [W], power.limit [W], temperature.gpu
NVIDIA H100 80GB HBM3, 580.82.07, 1980 MHz, 1980 MHz, 2619 MHz, 2619 MHz, 118.64 W, 700.00 W, 34
"""


# ---- BabelStream ---------------------------------------------------------------------------------


def test_babelstream_csv_megabytes() -> None:
    p = bc.parse_babelstream_csv(BABELSTREAM_DOUBLE)
    assert p["device"] == "NVIDIA H100 80GB HBM3" and p["driver"] == "13000" and p["memory"] == "DEFAULT"
    assert list(p["kernels"]) == ["Copy", "Mul", "Add", "Triad", "Dot"]
    triad = p["kernels"]["Triad"]
    assert triad["gbps"] == pytest.approx(3093.67)  # 3.09367e+06 MB/s
    assert triad["n"] == 1 << 27 and triad["sizeof"] == 8 and triad["num_times"] == 100
    assert triad["bytes"] == 3 * 8 << 27
    assert triad["min_s"] == pytest.approx(0.00104123)
    # BabelStream's own figure is bytes / min time; the parser's counting must agree with it.
    assert triad["bytes"] / triad["min_s"] / 1e9 == pytest.approx(triad["gbps"], rel=1e-5)
    assert triad["gbps_avg"] == pytest.approx(triad["bytes"] / 0.00105164 / 1e9)
    assert p["kernels"]["Copy"]["bytes"] == 2 * 8 << 27
    assert set(p["phases"]) == {"Init", "Read"}


def test_babelstream_csv_mebibytes_converted_to_gb() -> None:
    p = bc.parse_babelstream_csv(BABELSTREAM_FLOAT_MIB)
    triad = p["kernels"]["Triad"]
    assert triad["sizeof"] == 4 and triad["n"] == 1 << 28
    assert triad["gbps"] == pytest.approx(2.95036e6 * 2**20 / 1e9)
    assert triad["bytes"] / triad["min_s"] / 1e9 == pytest.approx(triad["gbps"], rel=1e-5)


def test_babelstream_best_uses_the_shared_kernels() -> None:
    p = bc.parse_babelstream_csv(BABELSTREAM_FLOAT_MIB)  # here Dot is (artificially) the fastest
    b = bc.babelstream_best(p)
    assert b["kernel"] == "Triad"
    assert b["gbps"] == pytest.approx(p["kernels"]["Triad"]["gbps"])
    assert b["kernel_avg"] == "Triad"
    assert bc.babelstream_best(p, ("Copy", "Dot"))["kernel"] == "Dot"
    with pytest.raises(ValueError, match="none of"):
        bc.babelstream_best(p, ("Nstream",))


def test_babelstream_triad_only_csv() -> None:
    text = (
        "Using CUDA device NVIDIA H100 80GB HBM3\nDriver: 13000\nMemory: DEFAULT\n"
        "function,num_times,n_elements,sizeof,gbytes_per_sec,runtime\nTriad,100,33554432,8,2985.12,0.0269786\n"
    )
    k = bc.parse_babelstream_csv(text)["kernels"]["Triad"]
    assert k["gbps"] == pytest.approx(2985.12) and k["runtime_s"] == pytest.approx(0.0269786)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "BabelStream\nVersion: 5.0\nImplementation: CUDA\nRunning kernels 100 times\nPrecision: double\n"
        "Function    MBytes/sec  Min (sec)   Max         Average\nCopy        3025170.000 0.00071     0.00073     0.00072\n",
        "Using CUDA device X\nError: out of memory\n",
    ],
)
def test_babelstream_without_csv_table_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="no BabelStream CSV kernel table"):
        bc.parse_babelstream_csv(text)


# ---- mixbench ------------------------------------------------------------------------------------


def test_mixbench_maxima_and_device_block() -> None:
    p = bc.parse_mixbench(MIXBENCH)
    assert p["version"] == "v0.04-18-g236a0be"
    assert [r["iters"] for r in p["rows"]] == [0, 1, 64, 256, 512, 1024]
    assert p["max"]["sp"] == {"gflops": 16401.19, "iters": 512, "time_ms": 2.10}
    assert p["max"]["dp"]["gflops"] == 8486.98 and p["max"]["dp"]["iters"] == 1024
    assert p["max"]["hp"]["gflops"] == 65792.38
    assert p["max"]["int"]["gflops"] == 6325.79
    assert p["compute_throughput_gflops"] == 66908.16
    assert p["memory_bandwidth_gbps"] == 3352.32
    assert p["spec"]["Device"] == "NVIDIA H100 80GB HBM3"
    assert p["spec"]["Memory bus width"] == "5120 bits"
    assert p["rows"][2]["dp"] == {"flops_per_byte": 16.125, "time_ms": 0.69, "gflops": 6282.32, "gbps": 389.60}


def test_mixbench_without_half_precision() -> None:
    p = bc.parse_mixbench(MIXBENCH_NO_HALF_ROWS)
    assert p["max"]["hp"] is None
    assert p["max"]["sp"]["gflops"] == 16401.19
    assert math.isinf(p["rows"][0]["hp"]["gflops"])
    assert p["compute_throughput_gflops"] is None


def test_mixbench_without_rows_is_an_error() -> None:
    head = MIXBENCH.split("----------------------------------------------------------------------------- CSV")[0]
    with pytest.raises(ValueError, match="no mixbench table row"):
        bc.parse_mixbench(head + "Cuda error in file 'mix_kernels_cuda.cu' in line 180 : out of memory.\n")


# ---- nvidia-smi ----------------------------------------------------------------------------------


def test_nvidia_smi_csv() -> None:
    (g,) = bc.parse_nvidia_smi_csv(NVIDIA_SMI)
    assert g["name"] == "NVIDIA H100 80GB HBM3"
    assert g["driver_version"] == "580.82.07"  # not a number: stays text
    assert g["clocks.current.sm"] == 1980.0 and g["clocks.max.memory"] == 2619.0
    assert g["power.draw"] == 118.64 and g["power.limit"] == 700.0
    assert g["temperature.gpu"] == 34.0


def test_nvidia_smi_csv_not_available_values() -> None:
    text = "name, power.draw [W], clocks.max.sm [MHz]\nNVIDIA H200, [N/A], 1980 MHz\nNVIDIA H200, 80.5 W, [N/A]\n"
    a, b = bc.parse_nvidia_smi_csv(text)
    assert a["power.draw"] is None and a["clocks.max.sm"] == 1980.0
    assert b["power.draw"] == 80.5 and b["clocks.max.sm"] is None
    assert bc.parse_nvidia_smi_csv("") == []


# ---- theoretical figures -------------------------------------------------------------------------

H100_INFO: Dict[str, Any] = {
    "memory_clock_hz": 2619e6,
    "memory_bus_bits": 5120,
    "compute_units": 132,
    "clock_hz": 1980e6,
    "compute_capability": "9.0",
}


def test_theoretical_dram_prefers_the_runs_ceiling() -> None:
    ceilings = [
        {"name": "DRAM bandwidth", "source": "measured", "value": 3000.0, "from": "stream/copy/fp32"},
        {"name": "DRAM bandwidth", "source": "theoretical", "value": 3350.0, "from": "spec"},
    ]
    v, src = bc.theoretical_dram_gbps(ceilings, H100_INFO)
    assert v == 3350.0 and "ceiling" in src


def test_theoretical_dram_fallbacks() -> None:
    v, src = bc.theoretical_dram_gbps([], H100_INFO)
    assert v == pytest.approx(3352.32) and "device info" in src  # 2 x 2619 MHz x 5120 bit / 8
    v, src = bc.theoretical_dram_gbps([], {}, {"memory_clock_khz": 2619000, "bus_bits": 5120})
    assert v == pytest.approx(3352.32) and "CUDA attributes" in src
    v, src = bc.theoretical_dram_gbps([], {}, {}, bc.parse_mixbench(MIXBENCH))
    assert v == 3352.32 and "mixbench" in src
    v, src = bc.theoretical_dram_gbps([], {"memory_bus_bits": 5120})
    assert v is None and "unknown" in src


def test_theoretical_fp32_fallbacks() -> None:
    c = [{"name": "FP32 vector", "source": "theoretical", "value": 67000.0, "from": "spec"}]
    assert bc.theoretical_fp32_gflops(c, {})[0] == 67000.0
    v, src = bc.theoretical_fp32_gflops([], H100_INFO)
    assert v == pytest.approx(66908.16) and "132 SMs" in src and "device info" in src
    attrs = {"sm_count": 108, "clock_khz": 1410000, "cc_major": 8, "cc_minor": 0}  # A100: 64 lanes per SM
    assert bc.theoretical_fp32_gflops([], {}, attrs)[0] == pytest.approx(108 * 64 * 2 * 1.41)
    assert bc.theoretical_fp32_gflops([], {}, {}, bc.parse_mixbench(MIXBENCH))[0] == 66908.16
    assert bc.theoretical_fp32_gflops([], {})[0] is None


# ---- the tool's measurements ---------------------------------------------------------------------


def _m(
    suite: str,
    kernel: str,
    dtype: str,
    samples: List[float],
    *,
    flops: int = 0,
    bytes: int = 1,
    valid: bool = True,
    params: Optional[Dict[str, Any]] = None,
) -> Measurement:
    return Measurement(
        suite=suite,
        kernel=kernel,
        dtype=dtype,
        params=params or {},
        flops=flops,
        bytes=bytes,
        samples_s=tuple(samples),
        valid=valid,
        validation="ok" if valid else "wrong",
    )


def _stream() -> List[Measurement]:
    n = 1 << 28
    p = {"n": n, "array_bytes": 4 * n}
    return [
        _m("stream", "copy", "fp32", [1.0e-3, 0.65e-3, 1.0e-3], bytes=8 * n, params=p),  # best sample 3303 GB/s
        _m("stream", "triad", "fp32", [1.05e-3, 1.04e-3, 1.06e-3], bytes=12 * n, params=p),  # median 3067 GB/s
        _m("stream", "add", "fp32", [1.2e-3], bytes=12 * n, params=p),
    ]


def test_tool_stream_summary_best_and_median() -> None:
    s = bc.tool_stream_summary(_stream())
    n = 1 << 28
    assert s["best_kernel"] == "copy" and s["best_gbps"] == pytest.approx(8 * n / 0.65e-3 / 1e9)
    assert s["median_kernel"] == "triad" and s["median_gbps"] == pytest.approx(12 * n / 1.05e-3 / 1e9)
    assert s["array_bytes"] == 4 * n and set(s["kernels"]) == {"copy", "triad", "add"}


def test_tool_stream_summary_asserts_valid() -> None:
    ms = _stream() + [_m("stream", "scale", "fp32", [1e-3], bytes=8, valid=False)]
    with pytest.raises(bc.ToolInvalid, match="stream/scale/fp32"):
        bc.tool_stream_summary(ms)
    with pytest.raises(bc.ToolInvalid):
        bc.tool_stream_summary([])


def test_tool_peak_summary() -> None:
    ms = [
        _m("peak", "vec4_indep8", "fp32", [1e-3, 1e-3, 0.9e-3], flops=50 * 10**9),
        _m("peak", "scalar_indep16", "fp32", [0.98e-3, 0.98e-3, 0.98e-3], flops=50 * 10**9),
        _m("peak", "scalar_indep8", "fp64", [2e-3], flops=50 * 10**9),
    ]
    s = bc.tool_peak_summary(ms, "fp32")
    assert s["variant"] == "scalar_indep16" and s["gflops"] == pytest.approx(50 / 0.98e-3)
    assert s["best_variant"] == "vec4_indep8" and s["best_gflops"] == pytest.approx(50 / 0.9e-3)
    assert bc.tool_peak_summary(ms, "fp64")["variant"] == "scalar_indep8"
    assert bc.tool_peak_summary(ms, "fp16") is None
    ms.append(_m("peak", "vec4_cross4", "fp32", [1e-3], flops=1, valid=False))
    with pytest.raises(bc.ToolInvalid):
        bc.tool_peak_summary(ms, "fp32")


def test_tool_gemm_largest() -> None:
    def g(n: int, dtype: str, valid: bool = True) -> Measurement:
        return _m(
            "gemm",
            "hgemm" if dtype == "fp16" else "bf16gemm",
            dtype,
            [1e-3, 2e-3, 3e-3],
            flops=2 * n**3,
            bytes=6 * n * n,
            valid=valid,
            params={"m": n, "n": n, "k": n},
        )

    ms = [g(1024, "fp16"), g(8192, "fp16"), g(4096, "fp16"), g(2048, "bf16"), g(4096, "bf16", valid=False)]
    s = bc.tool_gemm_largest(ms, "fp16")
    assert s["n"] == 8192 and s["kernel"] == "hgemm"
    assert s["gflops"] == pytest.approx(2 * 8192**3 / 2e-3 / 1e9)
    assert s["best_gflops"] == pytest.approx(2 * 8192**3 / 1e-3 / 1e9)
    with pytest.raises(bc.ToolInvalid, match="bf16gemm"):
        bc.tool_gemm_largest(ms, "bf16")  # the largest bf16 size is invalid
    assert bc.tool_gemm_largest(ms, "fp64") is None


# ---- comparisons, verdicts, report ---------------------------------------------------------------


def test_compare() -> None:
    r = bc.compare(3000.0, 3100.0, tool_alt=2900.0, reference_alt=3000.0, tool_detail="copy")
    assert r["ratio"] == pytest.approx(3000 / 3100) and r["ratio_alt"] == pytest.approx(2900 / 3000)
    assert r["tool_detail"] == "copy" and "not_run" not in r
    assert bc.compare(3000.0, None, reason="no theoretical figure") == {"not_run": "no theoretical figure"}
    assert bc.compare(None, 1.0)["not_run"] == "no tool figure"
    assert "ratio_alt" not in bc.compare(1.0, 2.0, tool_alt=float("inf"), reference_alt=1.0)


def _target(threshold: Optional[float]) -> Any:
    return bc.Target("k", "stream", "STREAM best kernel", "BabelStream", "GB/s", threshold)


def test_summarize_target_median_of_round_ratios() -> None:
    recs = [bc.compare(3000.0, 3100.0), bc.compare(3100.0, 3000.0), bc.compare(3050.0, 3000.0), bc.not_run("crashed")]
    s = bc.summarize_target(_target(1.0), recs)
    assert s["rounds"] == 3 and s["skipped_rounds"] == 1
    assert s["ratio"] == pytest.approx(3050 / 3000)  # the median ratio, not the ratio of medians
    assert s["ratio_min"] == pytest.approx(3000 / 3100) and s["ratio_max"] == pytest.approx(3100 / 3000)
    assert s["tool"] == 3050.0 and s["reference"] == 3000.0
    assert s["verdict"] == "PASS" and s["passed"] is True
    assert bc.summarize_target(_target(1.02), recs)["verdict"] == "FAIL"
    assert bc.summarize_target(_target(None), recs)["verdict"] == "INFO"


def test_summarize_target_not_run() -> None:
    s = bc.summarize_target(_target(1.0), [bc.not_run("babelstream-cuda not found"), None])
    assert s["verdict"] == "NOT RUN" and s["reason"] == "babelstream-cuda not found" and s["rounds"] == 0


def test_exit_status() -> None:
    ok = {"verdict": "PASS", "target": 1.0}
    info = {"verdict": "NOT RUN", "target": None}
    assert bc.exit_status([ok, info]) == 0
    assert bc.exit_status([ok, {"verdict": "NOT RUN", "target": 0.95}]) == 2
    assert bc.exit_status([{"verdict": "FAIL", "target": 0.91}, {"verdict": "NOT RUN", "target": 1.0}]) == 1


def test_markdown_rows_and_text_table() -> None:
    recs = [
        bc.compare(3050.0, 3000.0, tool_detail="copy", reference_detail="Triad"),
        bc.compare(3020.0, 3010.0, tool_detail="copy", reference_detail="Triad"),
    ]
    summary = [
        bc.summarize_target(_target(1.0), recs),
        bc.summarize_target(
            bc.Target("g", "gemm", "hgemm", "torch.matmul fp16", "GFLOP/s", 0.95), [bc.not_run("torch not importable")]
        ),
    ]
    rows = bc.markdown_rows(summary, date="2026-11-21", gpu="NVIDIA H100 80GB HBM3", rounds=2)
    assert rows[0].startswith("| 2026-11-21 | NVIDIA H100 80GB HBM3 | 2 | STREAM best kernel | BabelStream: ")
    assert "(copy)" in rows[0] and "(Triad)" in rows[0] and "| ≥ 1.00 | PASS |" in rows[0]
    assert rows[0].count("|") == 10
    assert "not run (torch not importable)" in rows[1] and rows[1].endswith("| ≥ 0.95 | NOT RUN |")
    lines = bc.text_table(summary)
    assert "PASS" in lines[1] and "NOT RUN: torch not importable" in lines[2]


def test_json_safe() -> None:
    assert bc.json_safe({"a": float("inf"), "b": (1, float("nan")), 3: [2.5]}) == {
        "a": None,
        "b": [1, None],
        "3": [2.5],
    }


def test_parse_only() -> None:
    assert bc._parse_only("gemm,stream") == ["stream", "gemm"]
    with pytest.raises(argparse.ArgumentTypeError):
        bc._parse_only("stream,sweep")


def test_main_without_a_cuda_device_explains(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """On a machine where the tool has no cuda:0 the script stops at once, naming the reason."""
    try:
        from apple_roofline.devices import open_device

        open_device("cuda:0")
    except Exception:
        pass
    else:
        pytest.skip("this machine has a CUDA device")
    assert bc.main(["--out", str(tmp_path)]) == 1
    assert "cannot open cuda:0" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_source_tag() -> None:
    _, src = bc.theoretical_dram_gbps([], H100_INFO)
    assert bc.source_tag(src) == "device info"
    _, src = bc.theoretical_fp32_gflops(
        [{"name": "FP32 vector", "source": "theoretical", "value": 1.0, "from": "x"}], {}
    )
    assert bc.source_tag(src) == "Run ceiling"
    assert bc.source_tag(bc.theoretical_dram_gbps([], {}, {}, bc.parse_mixbench(MIXBENCH))[1]) == "mixbench's figure"


def test_not_run_reasons_stay_on_one_markdown_row() -> None:
    s = bc.summarize_target(
        _target(1.0), [bc.not_run("babelstream-cuda exited 2: Error: out of memory\n| x\n" + "y" * 300)]
    )
    (row,) = bc.markdown_rows([s], date="d", gpu="g", rounds=1)
    assert "\n" not in row and row.count("|") == 10 and "…" in row
