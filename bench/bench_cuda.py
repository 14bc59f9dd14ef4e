#!/usr/bin/env python3
"""Compare apple_roofline's CUDA ceilings with reference programs measured in the same run on the same GPU.

    python bench/bench_cuda.py [--rounds 3] [--out bench/results] [--only stream,peak,gemm]
                               [--refs-dir .bench-src/bin] [--quick]

Targets (the CUDA issue's acceptance criteria; reference GPU H100 / H200), each a RATIO tool / reference:

* ``stream``: the best STREAM kernel (max over copy / scale / add / triad of the GB/s at the fastest
  sample) >= 0.91 x the theoretical DRAM bandwidth (the Run's theoretical "DRAM bandwidth" ceiling,
  else 2 x memory clock x bus width / 8), and >= 1.0 x BabelStream 5.0's best kernel (its max MB/s,
  i.e. its fastest of --numtimes runs) for double at 2^27 and float at 2^28 elements, the tool's
  arrays being the same number of bytes. cudaMemcpy device-to-device (1 GiB, read + write counted)
  is reported as a further reference, without a target.
* ``peak``: the best valid FP32 peak variant (median GFLOP/s) >= 0.93 x the theoretical "FP32
  vector" ceiling; the best FP64 and FP16 variants >= 1.0 x mixbench-cuda's double / half GFLOPS
  (max over its compute-iteration rows; FP32 against its single column is reported, no target).
* ``gemm``: the tool's hgemm and bf16gemm at the largest N it measured >= 0.95 x torch.matmul
  (N x N row-major fp16 / bf16 in and out, CUDA events, torch's default matmul flags, recorded).

Rounds interleave references and tool (BabelStream, tool stream, BabelStream, tool stream, memcpy;
mixbench, tool peak; tool gemm, torch) so drifts in clocks, power and temperature hit both sides
alike; the verdict is the median over rounds of the per-round ratio. nvidia-smi's clocks, power and
temperature are recorded before and after each round. A missing reference binary, torch or cupy
makes its comparison "NOT RUN" (reported, never a crash). Every tool measurement used is asserted
valid. Progress goes to stderr; the table and markdown rows for bench/README.md to stdout; the JSON
(bench_cuda-<timestamp>.json, rewritten after every round) to --out. Exit status: 0 when every
target passed, 1 when one failed (or the run stopped on an error), 2 when none failed but some did
not run.

Importing this module needs no GPU, torch or the tool: the parsers are pure functions
(tests/unit/test_bench_cuda.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_REFS_DIR = ROOT / ".bench-src" / "bin"
DEVICE = "cuda:0"
SUITE_NAMES = ("stream", "peak", "gemm")

#: BabelStream configurations: (precision, elements). Both are 1 GiB per array.
BABELSTREAM_CONFIGS: Tuple[Tuple[str, int], ...] = (("double", 1 << 27), ("float", 1 << 28))
BABELSTREAM_SIZEOF = {"double": 8, "float": 4}
#: BabelStream 5.0's bytes per element of each kernel, in units of sizeof(T) (main.cpp, `sizes`).
BABELSTREAM_ARRAYS_MOVED = {"Copy": 2, "Mul": 2, "Add": 3, "Triad": 3, "Dot": 2, "Nstream": 4}
#: The BabelStream kernels the tool's stream suite also has (copy, scale = Mul, add, triad).
BABELSTREAM_SHARED = ("Copy", "Mul", "Add", "Triad")
#: Bandwidth columns of BabelStream's CSV and their factor to GB/s (1e9 B/s).
_BS_UNITS = {
    "max_mbytes_per_sec": 1e-3,
    "max_mibytes_per_sec": 2.0**20 / 1e9,
    "gbytes_per_sec": 1.0,
    "gibytes_per_sec": 2.0**30 / 1e9,
}

MEMCPY_BYTES = 1 << 30
MIXBENCH_PRECISIONS = ("sp", "dp", "hp", "int")
MIXBENCH_COLUMNS = ("flops_per_byte", "time_ms", "gflops", "gbps")
#: GEMM precisions compared with torch.matmul: tool dtype -> (tool kernel, torch dtype name).
GEMM_TORCH = {"fp16": ("hgemm", "float16"), "bf16": ("bf16gemm", "bfloat16")}
#: FP32 lanes per SM by compute capability (mixbench's lcutil.h _ConvertSMVer2Cores, for cc >= 7).
SMI_QUERY = (
    "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu"
)
SMI_REASONS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")


@dataclass(frozen=True)
class Target:
    """One comparison: ``ratio = tool / reference`` must reach ``threshold`` (None: reported only)."""

    key: str
    suite: str
    benchmark: str
    reference: str
    unit: str
    threshold: Optional[float]


TARGETS: Tuple[Target, ...] = (
    Target(
        "stream_theoretical", "stream", "STREAM best kernel (best sample)", "theoretical DRAM bandwidth", "GB/s", 0.91
    ),
    Target(
        "stream_babelstream_double",
        "stream",
        "STREAM best kernel (best sample)",
        "BabelStream 5.0 best kernel, double, 2^27",
        "GB/s",
        1.0,
    ),
    Target(
        "stream_babelstream_float",
        "stream",
        "STREAM best kernel (best sample)",
        "BabelStream 5.0 best kernel, float, 2^28",
        "GB/s",
        1.0,
    ),
    Target(
        "stream_memcpy",
        "stream",
        "STREAM best kernel (best sample)",
        "cudaMemcpy D2D 1 GiB (best sample)",
        "GB/s",
        None,
    ),
    Target("peak_fp32_theoretical", "peak", "FP32 peak (median)", "theoretical FP32 vector", "GFLOP/s", 0.93),
    Target("peak_fp64_mixbench", "peak", "FP64 peak (median)", "mixbench-cuda double (max)", "GFLOP/s", 1.0),
    Target("peak_fp16_mixbench", "peak", "FP16 peak (median)", "mixbench-cuda half (max)", "GFLOP/s", 1.0),
    Target("peak_fp32_mixbench", "peak", "FP32 peak (median)", "mixbench-cuda single (max)", "GFLOP/s", None),
    Target("gemm_fp16_torch", "gemm", "hgemm, largest N (median)", "torch.matmul fp16 (median)", "GFLOP/s", 0.95),
    Target("gemm_bf16_torch", "gemm", "bf16gemm, largest N (median)", "torch.matmul bf16 (median)", "GFLOP/s", 0.95),
)


class ReferenceError_(RuntimeError):
    """A reference program failed or printed nothing parseable; its comparison is not run."""


def log(msg: str) -> None:
    """A progress line on stderr."""
    print(msg, file=sys.stderr, flush=True)


# ---- parsers (pure) -------------------------------------------------------------------------------


def _num(text: str) -> Optional[float]:
    """float(text) or None ("inf", "nan" and "-nan" parse as floats; words do not)."""
    try:
        return float(text)
    except ValueError:
        return None


def parse_babelstream_csv(text: str) -> Dict[str, Any]:
    """Parse the stdout of BabelStream 5.0 run with ``--csv`` (src/main.cpp ``run<T>()``).

    Before the CSV the CUDA model prints ``Using CUDA device <name>``, ``Driver: <int>``,
    ``Memory: DEFAULT`` and the reduction config (CUDAStream.cu, not gated by --csv). Then two
    tables: ``phase,n_elements,sizeof,max_mbytes_per_sec,runtime`` (Init, Read) and
    ``function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime``
    (Copy, Mul, Add, Triad, Dot), numbers in iostream's default format (``3.02517e+06``). The
    bandwidth column is ``max_mibytes_per_sec`` with --mibibytes; --triad-only prints
    ``gbytes_per_sec`` and ``runtime`` instead.

    Returns ``{"device", "driver", "memory", "kernels": {name: {...}}, "phases": {name: {...}}}``;
    each kernel has ``gbps`` (BabelStream's max bandwidth, i.e. at its fastest run, in 1e9 B/s),
    ``min_s``, ``max_s``, ``avg_s``, ``n``, ``sizeof``, ``num_times``, ``bytes`` (per run, BabelStream's
    counting) and ``gbps_avg`` (bytes / avg_s). Raises ValueError when there is no kernel table.
    """
    out: Dict[str, Any] = {"device": None, "driver": None, "memory": None, "kernels": {}, "phases": {}}
    header: Optional[List[str]] = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or _babelstream_preamble(line, out):
            continue
        cells = [c.strip() for c in line.split(",")]
        if cells[0] in ("function", "phase"):
            header = cells
            continue
        if header is None or len(cells) != len(header):
            continue
        row = dict(zip(header, cells))
        gbps = _babelstream_gbps(row)
        if gbps is None:
            continue
        if header[0] == "phase":
            out["phases"][cells[0]] = {"gbps": gbps, "runtime_s": _num(row.get("runtime", ""))}
            continue
        out["kernels"][cells[0]] = _babelstream_kernel(cells[0], row, gbps)
    if not out["kernels"]:
        raise ValueError("no BabelStream CSV kernel table (function,num_times,...) in the output")
    return out


def _babelstream_preamble(line: str, out: Dict[str, Any]) -> bool:
    """Store a line of the CUDA model's preamble (``Using CUDA device``, ``Driver:``, ``Memory:``) in
    out's ``device``, ``driver`` or ``memory``; True where the line was one of them."""
    if line.startswith("Using CUDA device "):
        out["device"] = line[len("Using CUDA device ") :].strip()
        return True
    for prefix, key in (("Driver:", "driver"), ("Memory:", "memory")):
        if line.startswith(prefix):
            out[key] = line.split(":", 1)[1].strip()
            return True
    return False


def _babelstream_gbps(row: Mapping[str, str]) -> Optional[float]:
    """A CSV row's bandwidth in GB/s (1e9 B/s) from whichever column of _BS_UNITS it has; None where it
    has none or the value is not a number."""
    unit = next((u for u in _BS_UNITS if u in row), None)
    bw = _num(row[unit]) if unit else None
    if unit is None or bw is None:
        return None
    return bw * _BS_UNITS[unit]


def _babelstream_kernel(name: str, row: Mapping[str, str], gbps: float) -> Dict[str, Any]:
    """One kernel row of the function table as parse_babelstream_csv returns it."""
    n = int(row["n_elements"])
    size = int(row["sizeof"])
    k: Dict[str, Any] = {"gbps": gbps, "n": n, "sizeof": size, "num_times": int(row["num_times"])}
    if "min_runtime" in row:
        k.update(min_s=_num(row["min_runtime"]), max_s=_num(row["max_runtime"]), avg_s=_num(row["avg_runtime"]))
    else:  # --triad-only: one runtime for all num_times launches
        k.update(runtime_s=_num(row.get("runtime", "")))
    if name in BABELSTREAM_ARRAYS_MOVED:
        k["bytes"] = BABELSTREAM_ARRAYS_MOVED[name] * size * n
        avg = k.get("avg_s")
        k["gbps_avg"] = k["bytes"] / avg / 1e9 if avg else None
    return k


def babelstream_best(parsed: Mapping[str, Any], names: Sequence[str] = BABELSTREAM_SHARED) -> Dict[str, Any]:
    """The best of ``names`` in a parse_babelstream_csv result: ``kernel`` / ``gbps`` (max
    bandwidth, BabelStream's own figure) and ``kernel_avg`` / ``gbps_avg`` (bandwidth from the
    average time). Raises ValueError when none of ``names`` is present."""
    ks = {n: k for n, k in parsed["kernels"].items() if n in names}
    if not ks:
        raise ValueError(f"none of {', '.join(names)} in the BabelStream output")
    best = max(ks, key=lambda n: ks[n]["gbps"])
    avgs = {n: k["gbps_avg"] for n, k in ks.items() if k.get("gbps_avg")}
    best_avg = max(avgs, key=lambda n: avgs[n]) if avgs else None
    return {
        "kernel": best,
        "gbps": ks[best]["gbps"],
        "kernel_avg": best_avg,
        "gbps_avg": avgs[best_avg] if best_avg else None,
    }


_MB_KV = re.compile(r"^([A-Za-z][A-Za-z0-9 ./\-]*?):\s+(.*)$")


def parse_mixbench(text: str) -> Dict[str, Any]:
    """Parse the stdout of mixbench-cuda (main-cuda.cpp, lcutil.h ``StoreDeviceInfo``,
    mix_kernels_cuda.cu ``runbench``).

    The device block is ``Key:   value`` lines (``Device``, ``GPU clock rate``, ``Memory bus width``,
    ``Compute throughput:  %.2f GFlops (theoretical single precision FMAs)``, ``Memory bandwidth:
    %.2f GB/sec`` …). The table rows follow the ``Compute iters, Flops/byte, ...`` header, one per
    compute-iteration count: ``%4d`` then, for single, double, half (half2 lanes counted) and
    integer, ``Flops/byte, ex.time (ms), GFLOPS, GB/sec`` -- 17 comma-separated fields. Half's time
    is 0 and its rates ``inf`` when the GPU lacks FP16.

    Returns ``{"version", "spec": {key: text}, "compute_throughput_gflops", "memory_bandwidth_gbps",
    "rows": [{"iters", "sp": {...}, ...}], "max": {prec: {"gflops", "iters", "time_ms"} or None}}``.
    Raises ValueError when no table row is found.
    """
    spec: Dict[str, str] = {}
    rows: List[Dict[str, Any]] = []
    version = None
    in_table = False
    for raw in text.splitlines():
        s = raw.strip()
        if not s:
            continue
        m = re.match(r"^mixbench \((.*)\)$", s)
        if m:
            version = m.group(1)
            continue
        if s.startswith("Compute iters"):
            in_table = True
            continue
        if in_table:
            if s.startswith("---"):
                in_table = False
                continue
            row = _mixbench_row(s)
            if row is not None:
                rows.append(row)
            continue
        kv = _MB_KV.match(s)
        if kv:
            spec[kv.group(1)] = kv.group(2).strip()
    if not rows:
        raise ValueError("no mixbench table row (Compute iters, ...) in the output")
    return {
        "version": version,
        "spec": spec,
        "compute_throughput_gflops": _lead_number(spec, "Compute throughput"),
        "memory_bandwidth_gbps": _lead_number(spec, "Memory bandwidth"),
        "rows": rows,
        "max": _mixbench_max(rows),
    }


def _mixbench_row(line: str) -> Optional[Dict[str, Any]]:
    """A table row (``iters`` and, per precision of MIXBENCH_PRECISIONS, its MIXBENCH_COLUMNS), or None
    where the line is not one (wrong field count, no leading iteration count)."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 1 + 4 * len(MIXBENCH_PRECISIONS) or not parts[0].isdigit():
        return None
    vals = [_num(p) for p in parts[1:]]
    row: Dict[str, Any] = {"iters": int(parts[0])}
    for i, prec in enumerate(MIXBENCH_PRECISIONS):
        row[prec] = dict(zip(MIXBENCH_COLUMNS, vals[4 * i : 4 * i + 4]))
    return row


def _lead_number(spec: Mapping[str, str], key: str) -> Optional[float]:
    """The number a device-block value starts with (``1234.5 GFlops ...``), or None."""
    m = re.match(r"([0-9.]+)", spec.get(key, ""))
    return float(m.group(1)) if m else None


def _mixbench_max(rows: Sequence[Mapping[str, Any]]) -> Dict[str, Optional[Dict[str, Any]]]:
    """Per precision, the row of highest GFLOPS among those with a usable rate and time: its
    ``gflops``, ``iters`` and ``time_ms``; None where no row is usable."""
    best: Dict[str, Optional[Dict[str, Any]]] = {}
    for prec in MIXBENCH_PRECISIONS:
        ok = [r for r in rows if _usable(r[prec].get("gflops")) and _usable(r[prec].get("time_ms"))]
        if ok:
            top = max(ok, key=lambda r: r[prec]["gflops"])
            best[prec] = {"gflops": top[prec]["gflops"], "iters": top["iters"], "time_ms": top[prec]["time_ms"]}
        else:
            best[prec] = None
    return best


def _usable(x: Optional[float]) -> bool:
    return x is not None and math.isfinite(x) and x > 0


def parse_nvidia_smi_csv(text: str) -> List[Dict[str, Any]]:
    """Parse ``nvidia-smi --query-gpu=... --format=csv``: a header (``clocks.current.sm [MHz]``) and
    one line per GPU (``1980 MHz``). Keys drop the ``[unit]``; values that are a number and the
    header's unit become floats; ``[N/A]`` / ``N/A`` become None; other text stays text."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = []
    for h in lines[0].split(","):
        m = re.match(r"^\s*(.*?)\s*(?:\[(.*)\])?\s*$", h)
        assert m is not None
        header.append((m.group(1), m.group(2)))
    gpus = []
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.split(",")]
        if len(cells) != len(header):
            continue
        d: Dict[str, Any] = {}
        for (key, unit), cell in zip(header, cells):
            if cell in ("[N/A]", "N/A", "[Not Supported]", "Not Supported", ""):
                d[key] = None
                continue
            value = cell[: -len(unit)].strip() if unit and cell.endswith(unit) else cell
            x = _num(value) if (unit or re.fullmatch(r"-?[0-9.]+", value)) else None
            d[key] = x if x is not None and math.isfinite(x) else cell
        gpus.append(d)
    return gpus


# ---- theoretical figures (pure) -----------------------------------------------------------------


def find_ceiling(
    ceilings: Iterable[Mapping[str, Any]], name: str, source: str = "theoretical"
) -> Optional[Mapping[str, Any]]:
    """The ceiling dict (Run.to_dict()["ceilings"] item) named ``name`` from ``source``, or None."""
    for c in ceilings:
        if c.get("name") == name and c.get("source") == source:
            return c
    return None


def _attrs_as_info(attrs: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """CUDA attributes read through CuPy (``memory_clock_khz``, ``bus_bits``, ``sm_count``,
    ``clock_khz``, ``cc_major``, ``cc_minor``) under the tool's device-info keys."""
    if not attrs:
        return {}
    keys = (
        ("memory_clock_khz", "memory_clock_hz", 1e3),
        ("bus_bits", "memory_bus_bits", 1),
        ("sm_count", "compute_units", 1),
        ("clock_khz", "clock_hz", 1e3),
        ("cc_major", "cc_major", 1),
        ("cc_minor", "cc_minor", 1),
    )
    out: Dict[str, Any] = {}
    for src, dst, scale in keys:
        v = attrs.get(src)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
            out[dst] = int(v * scale)
    return out


def _modelled(name: str, info: Mapping[str, Any], attrs: Optional[Mapping[str, Any]]) -> Optional[Tuple[float, str]]:
    """The tool's own theoretical ceiling ``name`` (apple_roofline.theoretical.cuda, the model the Run's
    ceilings come from) computed from the tool's device info, else from CUDA attributes."""
    from apple_roofline.theoretical.cuda import cuda_theoretical

    for label, d in (("tool device info", dict(info)), ("CUDA attributes", _attrs_as_info(attrs))):
        if not d:
            continue
        c = next((c for c in cuda_theoretical(d)[1] if c.name == name), None)
        if c is not None:
            return c.value, f"{c.from_} ({label})"
    return None


#: Per theoretical figure: mixbench's key for it, what mixbench's figure is, what the model needs.
_THEORETICAL = {
    "DRAM bandwidth": (
        "memory_bandwidth_gbps",
        "mixbench-cuda's 'Memory bandwidth' (2 x memory clock x bus width / 8)",
        "no memory clock / bus width in the device info",
    ),
    "FP32 vector": (
        "compute_throughput_gflops",
        "mixbench-cuda's 'Compute throughput' (SPs x 2 x clock)",
        "no SM count / clock in the device info",
    ),
}


def _theoretical(
    name: str,
    ceilings: Iterable[Mapping[str, Any]],
    info: Mapping[str, Any],
    attrs: Optional[Mapping[str, Any]],
    mixbench: Optional[Mapping[str, Any]],
) -> Tuple[Optional[float], str]:
    c = find_ceiling(ceilings, name)
    if c is not None:
        return float(c["value"]), f"the Run's theoretical '{name}' ceiling ({c.get('from', '')})"
    m = _modelled(name, info, attrs)
    if m is not None:
        return m
    key, what, needs = _THEORETICAL[name]
    if mixbench and _usable(mixbench.get(key)):
        return float(mixbench[key]), what
    return None, f"unknown: no '{name}' ceiling in the Run, {needs}"


def theoretical_dram_gbps(
    ceilings: Iterable[Mapping[str, Any]],
    info: Mapping[str, Any],
    attrs: Optional[Mapping[str, Any]] = None,
    mixbench: Optional[Mapping[str, Any]] = None,
) -> Tuple[Optional[float], str]:
    """Theoretical DRAM bandwidth in GB/s and where it came from, first found of: the Run's
    theoretical "DRAM bandwidth" ceiling; the tool's model (2 x memory clock x bus width / 8,
    apple_roofline.theoretical.cuda) from its device info, or from CUDA attributes (``attrs``:
    ``memory_clock_khz``, ``bus_bits``); mixbench's printed "Memory bandwidth" (the same formula,
    lcutil.h). (None, reason) otherwise."""
    return _theoretical("DRAM bandwidth", ceilings, info, attrs, mixbench)


def theoretical_fp32_gflops(
    ceilings: Iterable[Mapping[str, Any]],
    info: Mapping[str, Any],
    attrs: Optional[Mapping[str, Any]] = None,
    mixbench: Optional[Mapping[str, Any]] = None,
) -> Tuple[Optional[float], str]:
    """Theoretical FP32 GFLOP/s and its source, first found of: the Run's theoretical "FP32 vector"
    ceiling; the tool's model (SMs x FP32 lanes per SM x 2 x clock, apple_roofline.theoretical.cuda) from
    its device info, or from CUDA attributes (``sm_count``, ``clock_khz``, ``cc_major``,
    ``cc_minor``); mixbench's printed "Compute throughput". (None, reason) otherwise."""
    return _theoretical("FP32 vector", ceilings, info, attrs, mixbench)


# ---- the tool's measurements (pure, on apple_roofline.study.records.Measurement) -----------------------


class ToolInvalid(AssertionError):
    """A tool measurement the benchmark uses failed validation (or is missing)."""


def _require_valid(m: Any) -> None:
    if not m.valid:
        raise ToolInvalid(f"tool measurement {m.label} {dict(m.params)} failed validation: {m.validation}")


def tool_stream_summary(measurements: Sequence[Any]) -> Dict[str, Any]:
    """Best of the tool's stream kernels: ``best_gbps`` (max over kernels of GB/s at the fastest
    sample) and ``median_gbps`` (max over kernels of the median-based GB/s), with the kernels that
    set them, the array size and per-kernel figures. Raises ToolInvalid when a stream measurement
    is invalid or there is none."""
    ms = [m for m in measurements if m.suite == "stream"]
    if not ms:
        raise ToolInvalid("the tool's stream suite returned no measurement")
    for m in ms:
        _require_valid(m)
    best = max(ms, key=lambda m: m.best_gbps)
    med = max(ms, key=lambda m: m.gbps)
    return {
        "best_gbps": best.best_gbps,
        "best_kernel": best.kernel,
        "median_gbps": med.gbps,
        "median_kernel": med.kernel,
        "array_bytes": ms[0].params.get("array_bytes"),
        "ceiling_class": ms[0].ceiling_class,
        "kernels": {m.kernel: {"gbps": m.gbps, "best_gbps": m.best_gbps, "cv": m.cv, "batch": m.batch} for m in ms},
    }


def tool_peak_summary(measurements: Sequence[Any], dtype: str) -> Optional[Dict[str, Any]]:
    """The best ``dtype`` peak variant by median GFLOP/s (``gflops``, ``variant``) and the best by
    fastest sample (``best_gflops``); None when the tool measured no ``dtype`` variant (skipped).
    Raises ToolInvalid when any ``dtype`` peak measurement is invalid."""
    ms = [m for m in measurements if m.suite == "peak" and m.dtype == dtype]
    if not ms:
        return None
    for m in ms:
        _require_valid(m)
    med = max(ms, key=lambda m: m.gflops)
    best = max(ms, key=lambda m: m.best_gflops)
    return {
        "gflops": med.gflops,
        "variant": med.kernel,
        "best_gflops": best.best_gflops,
        "best_variant": best.kernel,
        "cv": med.cv,
        "variants": {m.kernel: m.gflops for m in ms},
    }


def tool_gemm_largest(measurements: Sequence[Any], dtype: str) -> Optional[Dict[str, Any]]:
    """The tool's ``dtype`` GEMM at the largest square N it measured: ``n``, ``kernel``, ``gflops``
    (median), ``best_gflops``, ``samples_s``; None when it measured none. Raises ToolInvalid when
    that measurement is invalid."""
    ms = [m for m in measurements if m.suite == "gemm" and m.dtype == dtype]
    if not ms:
        return None
    m = max(ms, key=lambda m: int(m.params.get("n", 0)))
    _require_valid(m)
    n = int(m.params["n"])
    if int(m.params.get("m", n)) != n or int(m.params.get("k", n)) != n:
        raise ToolInvalid(f"{m.label}: expected a square GEMM, got {dict(m.params)}")
    return {
        "n": n,
        "kernel": m.kernel,
        "gflops": m.gflops,
        "best_gflops": m.best_gflops,
        "cv": m.cv,
        "samples_s": list(m.samples_s),
        "batch": m.batch,
    }


# ---- comparisons and verdicts (pure) ------------------------------------------------------------


def compare(
    tool: Optional[float],
    reference: Optional[float],
    *,
    tool_alt: Optional[float] = None,
    reference_alt: Optional[float] = None,
    **detail: Any,
) -> Dict[str, Any]:
    """One round's comparison record: ``ratio = tool / reference`` (and ``ratio_alt`` of the
    alternative statistic, when both are given); ``not_run`` when either side is missing."""
    if not _usable(tool) or not _usable(reference):
        missing = "tool" if not _usable(tool) else "reference"
        return {"not_run": detail.pop("reason", f"no {missing} figure"), **detail}
    assert tool is not None and reference is not None
    rec: Dict[str, Any] = {"tool": tool, "reference": reference, "ratio": tool / reference, **detail}
    rec.pop("reason", None)
    if _usable(tool_alt) and _usable(reference_alt):
        assert tool_alt is not None and reference_alt is not None
        rec.update(tool_alt=tool_alt, reference_alt=reference_alt, ratio_alt=tool_alt / reference_alt)
    return rec


def not_run(reason: str) -> Dict[str, Any]:
    return {"not_run": reason}


def _mode(values: Sequence[Any]) -> Any:
    vals = [v for v in values if v is not None]
    return max(set(vals), key=vals.count) if vals else None


def summarize_target(target: Target, records: Sequence[Optional[Mapping[str, Any]]]) -> Dict[str, Any]:
    """Median over rounds of the per-round ratio (rounds where it ran), with the sides' medians,
    the ratio's range and the verdict: PASS / FAIL against the threshold, INFO without one, NOT RUN
    when no round produced a ratio (``reason``: the first round's reason)."""
    ran = [r for r in records if r and "ratio" in r]
    out: Dict[str, Any] = {
        "key": target.key,
        "suite": target.suite,
        "benchmark": target.benchmark,
        "reference_name": target.reference,
        "unit": target.unit,
        "target": target.threshold,
        "rounds": len(ran),
    }
    if not ran:
        reasons = [r.get("not_run") for r in records if r and r.get("not_run")]
        out.update(verdict="NOT RUN", passed=None, reason=reasons[0] if reasons else "not measured")
        return out
    ratios = [float(r["ratio"]) for r in ran]
    ratio = statistics.median(ratios)
    alts = [float(r["ratio_alt"]) for r in ran if "ratio_alt" in r]
    out.update(
        tool=statistics.median(float(r["tool"]) for r in ran),
        reference=statistics.median(float(r["reference"]) for r in ran),
        ratio=ratio,
        ratio_min=min(ratios),
        ratio_max=max(ratios),
        ratio_alt=statistics.median(alts) if alts else None,
        tool_detail=_mode([r.get("tool_detail") for r in ran]),
        reference_detail=_mode([r.get("reference_detail") for r in ran]),
        skipped_rounds=len(records) - len(ran),
    )
    if target.threshold is None:
        out.update(verdict="INFO", passed=None)
    else:
        passed = ratio >= target.threshold
        out.update(verdict="PASS" if passed else "FAIL", passed=passed)
    return out


def source_tag(source: str) -> str:
    """A short name for a theoretical figure's source (the full text is in the JSON)."""
    for key, tag in (
        ("the Run's", "Run ceiling"),
        ("tool device info", "device info"),
        ("CUDA attributes", "CUDA attributes"),
        ("mixbench", "mixbench's figure"),
    ):
        if key in source:
            return tag
    return source


def _clip(text: str, n: int = 160) -> str:
    """``text`` on one line (whitespace collapsed), at most ``n`` characters."""
    text = " ".join(text.split()).replace("|", "/")
    return text if len(text) <= n else text[: n - 1] + "…"


def exit_status(summary: Sequence[Mapping[str, Any]]) -> int:
    """0: every target with a threshold passed; 1: one failed; 2: none failed but some did not run."""
    with_target = [s for s in summary if s.get("target") is not None]
    if any(s["verdict"] == "FAIL" for s in with_target):
        return 1
    if any(s["verdict"] == "NOT RUN" for s in with_target):
        return 2
    return 0


def _fmt_rate(x: Optional[float], unit: str) -> str:
    return "n/a" if x is None else f"{x:,.1f} {unit}" if x < 1e5 else f"{x:,.0f} {unit}"


def _with_detail(value: Optional[float], unit: str, detail: Optional[str]) -> str:
    return _fmt_rate(value, unit) + (f" ({detail})" if detail else "")


def markdown_rows(summary: Sequence[Mapping[str, Any]], *, date: str, gpu: str, rounds: int) -> List[str]:
    """Rows for bench/README.md's CUDA table:
    ``| date | GPU | rounds | benchmark | reference | tool | ratio | target | verdict |``."""
    rows = []
    for s in summary:
        tgt = "—" if s.get("target") is None else f"≥ {s['target']:.2f}"
        if s["verdict"] == "NOT RUN":
            rows.append(
                f"| {date} | {gpu} | {rounds} | {s['benchmark']} | {s['reference_name']}: not run "
                f"({_clip(str(s.get('reason', '')))}) | — | — | {tgt} | NOT RUN |"
            )
            continue
        ref = f"{s['reference_name']}: {_with_detail(s['reference'], s['unit'], s.get('reference_detail'))}"
        tool = _with_detail(s["tool"], s["unit"], s.get("tool_detail"))
        rng = f" ({s['ratio_min']:.3f}–{s['ratio_max']:.3f})" if s["rounds"] > 1 else ""
        rows.append(
            f"| {date} | {gpu} | {s['rounds']} | {s['benchmark']} | {ref} | {tool} | "
            f"{s['ratio']:.3f}{rng} | {tgt} | {s['verdict']} |"
        )
    return rows


def text_table(summary: Sequence[Mapping[str, Any]]) -> List[str]:
    """The console table: one line per target."""
    lines = [
        f"{'benchmark':<34} {'reference':<44} {'ref':>16} {'tool':>16} {'ratio':>7} {'alt':>7} {'target':>7}  verdict"
    ]
    for s in summary:
        tgt = "-" if s.get("target") is None else f">={s['target']:.2f}"
        if s["verdict"] == "NOT RUN":
            lines.append(
                f"{s['benchmark']:<34} {s['reference_name']:<44} {'':>16} {'':>16} {'':>7} {'':>7} {tgt:>7}  "
                f"NOT RUN: {_clip(str(s.get('reason', '')))}"
            )
            continue
        alt = "" if s.get("ratio_alt") is None else f"{s['ratio_alt']:.3f}"
        lines.append(
            f"{s['benchmark']:<34} {s['reference_name']:<44} {_fmt_rate(s['reference'], s['unit']):>16} "
            f"{_fmt_rate(s['tool'], s['unit']):>16} {s['ratio']:>7.3f} {alt:>7} {tgt:>7}  {s['verdict']}"
        )
    return lines


def json_safe(x: Any) -> Any:
    """``x`` with non-finite floats replaced by None (strict JSON), tuples as lists."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, Mapping):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


# ---- the GPU side (not imported at module load) -------------------------------------------------


def _run(cmd: Sequence[str], timeout: float) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout)


def _tail(text: str, n: int = 1500) -> str:
    return text if len(text) <= n else "…" + text[-n:]


def run_babelstream(exe: Path, precision: str, n: int, numtimes: int, timeout: float = 600) -> Dict[str, Any]:
    """Run BabelStream (``--csv --arraysize n [--float] --numtimes k``) and parse it. Raises
    ReferenceError_ on a non-zero exit, a timeout or unparseable output. ``valid`` is False when it
    reported a failed validation of an array it wrote (stderr ``Validation failed on a[]``, ``b[]``
    or ``c[]``): those are the Copy / Mul / Add / Triad outputs compared with the tool. A failed
    check of the Dot sum alone (``Validation failed on sum``: BabelStream 5.0 asks a float sum of
    2^28 products to match to 1e-8 relative, below float's 6e-8 epsilon) is kept in ``note`` and
    does not invalidate the bandwidth kernels."""
    cmd = [str(exe), "--csv", "--arraysize", str(n), "--numtimes", str(numtimes)]
    if precision == "float":
        cmd.insert(1, "--float")
    t0 = time.monotonic()
    try:
        p = _run(cmd, timeout)
    except subprocess.TimeoutExpired:
        raise ReferenceError_(f"{' '.join(cmd)} timed out after {timeout:.0f} s") from None
    if p.returncode != 0:
        raise ReferenceError_(f"{' '.join(cmd)} exited {p.returncode}: {_tail(p.stderr + p.stdout, 400)}")
    try:
        parsed = parse_babelstream_csv(p.stdout)
        babelstream_best(parsed)
    except ValueError as e:
        raise ReferenceError_(f"{' '.join(cmd)}: {e}; output: {_tail(p.stdout, 400)}") from None
    arrays_ok = re.search(r"Validation failed on [abc]\[\]", p.stderr) is None
    note = (
        "its Dot sum check failed (Copy/Mul/Add/Triad arrays passed)" if "Validation failed on sum" in p.stderr else ""
    )
    parsed.update(
        command=cmd, wall_s=time.monotonic() - t0, valid=arrays_ok, note=note, stderr=_tail(p.stderr), stdout=p.stdout
    )
    return parsed


def run_mixbench(exe: Path, timeout: float = 600) -> Dict[str, Any]:
    """Run mixbench-cuda (no arguments; device 0, 256 MB buffer) and parse it. Raises
    ReferenceError_ on failure."""
    t0 = time.monotonic()
    try:
        p = _run([str(exe)], timeout)
    except subprocess.TimeoutExpired:
        raise ReferenceError_(f"{exe} timed out after {timeout:.0f} s") from None
    if p.returncode != 0:
        raise ReferenceError_(f"{exe} exited {p.returncode}: {_tail(p.stderr + p.stdout, 400)}")
    try:
        parsed = parse_mixbench(p.stdout)
    except ValueError as e:
        raise ReferenceError_(f"{exe}: {e}; output: {_tail(p.stdout, 400)}") from None
    parsed.update(command=[str(exe)], wall_s=time.monotonic() - t0, stderr=_tail(p.stderr), stdout=p.stdout)
    return parsed


def nvidia_smi() -> Dict[str, Any]:
    """Clocks, power and temperature now (plus the active clock-event reasons where the driver
    knows the field); ``{"available": False}`` without nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return {"available": False}
    out: Dict[str, Any] = {"available": True, "time": _now()}
    try:
        p = _run([smi, f"--query-gpu={SMI_QUERY}", "--format=csv"], 30)
        out["raw"] = p.stdout.strip() or p.stderr.strip()
        out["gpus"] = parse_nvidia_smi_csv(p.stdout) if p.returncode == 0 else []
        for field in SMI_REASONS:
            q = _run([smi, f"--query-gpu={field}", "--format=csv,noheader"], 30)
            if q.returncode == 0:
                out[field] = [ln.strip() for ln in q.stdout.splitlines() if ln.strip()]
                break
    except (OSError, subprocess.TimeoutExpired) as e:
        out["error"] = str(e)
    return out


class TorchSide:
    """torch (and cupy for the memcpy when torch is absent), imported on first use."""

    def __init__(self) -> None:
        self.torch: Any = None
        self.cupy: Any = None
        self.reason_torch = ""
        self.reason_cupy = ""
        try:
            import torch  # type: ignore[import-not-found, unused-ignore]

            if not torch.cuda.is_available():
                self.reason_torch = f"torch {torch.__version__} sees no CUDA device"
            else:
                self.torch = torch
        except Exception as e:  # ImportError, or a broken install
            self.reason_torch = f"torch not importable: {e}"
        try:
            import cupy  # type: ignore[import-not-found, unused-ignore]

            cupy.cuda.runtime.getDeviceCount()
            self.cupy = cupy
        except Exception as e:
            self.reason_cupy = f"cupy not usable: {e}"

    def info(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        if self.torch is not None:
            t = self.torch
            mm = t.backends.cuda.matmul

            def attr(obj: Any, name: str) -> Any:
                try:
                    v = getattr(obj, name)
                    return v if isinstance(v, (bool, int, float, str, type(None))) else str(v)
                except Exception as e:
                    return f"unavailable: {e}"

            d["torch"] = {
                "version": t.__version__,
                "cuda": t.version.cuda,
                "cudnn": t.backends.cudnn.version() if t.backends.cudnn.is_available() else None,
                "device": t.cuda.get_device_name(0),
                "capability": list(t.cuda.get_device_capability(0)),
                "matmul.allow_tf32": attr(mm, "allow_tf32"),
                "matmul.allow_fp16_reduced_precision_reduction": attr(mm, "allow_fp16_reduced_precision_reduction"),
                "matmul.allow_bf16_reduced_precision_reduction": attr(mm, "allow_bf16_reduced_precision_reduction"),
                "float32_matmul_precision": t.get_float32_matmul_precision(),
            }
            try:
                d["torch"]["preferred_blas_library"] = str(t.backends.cuda.preferred_blas_library())
            except Exception as e:
                d["torch"]["preferred_blas_library"] = f"unavailable: {e}"
        else:
            d["torch"] = {"unavailable": self.reason_torch}
        if self.cupy is not None:
            rt = self.cupy.cuda.runtime
            d["cupy"] = {
                "version": self.cupy.__version__,
                "runtime": rt.runtimeGetVersion(),
                "driver": rt.driverGetVersion(),
            }
        else:
            d["cupy"] = {"unavailable": self.reason_cupy}
        return d

    def cuda_attributes(self) -> Dict[str, Any]:
        """CUDA device attributes of device 0 through cupy (memory clock kHz, bus bits, SM clock
        kHz, SMs, compute capability); {} without cupy."""
        if self.cupy is None:
            return {}
        rt = self.cupy.cuda.runtime
        ids = {"clock_khz": 13, "sm_count": 16, "memory_clock_khz": 36, "bus_bits": 37, "cc_major": 75, "cc_minor": 76}
        out: Dict[str, Any] = {}
        for k, attr in ids.items():
            try:
                out[k] = int(rt.deviceGetAttribute(attr, 0))
            except Exception as e:
                out[k + "_error"] = str(e)
        return out

    def release(self) -> None:
        if self.torch is not None:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()
        if self.cupy is not None:
            self.cupy.get_default_memory_pool().free_all_blocks()

    def time_matmul(self, n: int, dtype: str, iters: int, samples: int, warmup_s: float = 0.3) -> Dict[str, Any]:
        """Seconds per ``torch.matmul(a, b, out=c)`` of N x N ``dtype`` matrices (uniform in
        [-1, 1), like the tool's GEMM inputs): warm-up of at least 3 calls and ``warmup_s``, then
        ``samples`` samples of ``iters`` back-to-back calls between CUDA events."""
        t = self.torch
        tdt = getattr(t, dtype)
        g = t.Generator(device="cuda").manual_seed(n)
        a = (t.rand(n, n, device="cuda", generator=g) * 2 - 1).to(tdt)
        b = (t.rand(n, n, device="cuda", generator=g) * 2 - 1).to(tdt)
        c = t.empty(n, n, device="cuda", dtype=tdt)
        t.cuda.synchronize()
        t0, k = time.monotonic(), 0
        while k < 3 or time.monotonic() - t0 < warmup_s:
            t.matmul(a, b, out=c)
            t.cuda.synchronize()
            k += 1
        start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        secs = []
        for _ in range(samples):
            start.record()
            for _ in range(iters):
                t.matmul(a, b, out=c)
            end.record()
            end.synchronize()
            secs.append(start.elapsed_time(end) / 1e3 / iters)
        del a, b, c
        self.release()
        flops = 2.0 * n * n * n
        med, best = statistics.median(secs), min(secs)
        return {
            "n": n,
            "dtype": dtype,
            "iters": iters,
            "warmup_calls": k,
            "samples_s": secs,
            "gflops": flops / med / 1e9,
            "best_gflops": flops / best / 1e9,
        }

    def time_memcpy(self, nbytes: int, iters: int, samples: int) -> Dict[str, Any]:
        """cudaMemcpy device-to-device between two ``nbytes`` buffers (torch ``copy_``, which is
        cudaMemcpyAsync D2D for contiguous same-type tensors; cupy's memcpyAsync without torch),
        ``samples`` samples of ``iters`` copies between CUDA events; GB/s counts read + write (2x)."""
        if self.torch is not None:
            t = self.torch
            src = t.ones(nbytes, dtype=t.uint8, device="cuda")
            dst = t.empty_like(src)
            for _ in range(3):
                dst.copy_(src)
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            secs = []
            for _ in range(samples):
                start.record()
                for _ in range(iters):
                    dst.copy_(src)
                end.record()
                end.synchronize()
                secs.append(start.elapsed_time(end) / 1e3 / iters)
            how = "torch Tensor.copy_ (cudaMemcpyAsync D2D)"
            del src, dst
        else:
            cp = self.cupy
            rt = cp.cuda.runtime
            src = cp.ones(nbytes, dtype=cp.uint8)
            dst = cp.empty_like(src)
            stream = cp.cuda.get_current_stream()
            for _ in range(3):
                rt.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, rt.memcpyDeviceToDevice, stream.ptr)
            start, end = cp.cuda.Event(), cp.cuda.Event()
            secs = []
            for _ in range(samples):
                start.record(stream)
                for _ in range(iters):
                    rt.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, rt.memcpyDeviceToDevice, stream.ptr)
                end.record(stream)
                end.synchronize()
                secs.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / iters)
            how = "cupy runtime.memcpyAsync D2D"
            del src, dst
        self.release()
        med, best = statistics.median(secs), min(secs)
        return {
            "bytes": nbytes,
            "iters": iters,
            "how": how,
            "samples_s": secs,
            "gbps": 2 * nbytes / med / 1e9,
            "best_gbps": 2 * nbytes / best / 1e9,
        }


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def _sha256(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def _read_text(path: Path) -> Optional[str]:
    try:
        return path.read_text()
    except OSError:
        return None


def _find_exe(refs: Path, name: str) -> Tuple[Optional[Path], str]:
    exe = refs / name
    if not exe.is_file():
        return None, (f"{exe} not found (build it with bench/build_cuda_refs.sh and carry .bench-src to this machine)")
    if not os.access(exe, os.X_OK):
        return None, f"{exe} is not executable"
    return exe, ""


def _core_file() -> Dict[str, Any]:
    """Which native module was measured (path, mtime, sha256 prefix)."""
    from apple_roofline._native import _core

    path = getattr(_core, "__file__", None)
    if not path:
        return {}
    mtime = dt.datetime.fromtimestamp(os.path.getmtime(path)).astimezone().isoformat(timespec="seconds")
    return {"path": path, "mtime": mtime, "sha256": _sha256(Path(path))}


def _versions(refs: Path, side: TorchSide) -> Dict[str, Any]:
    v: Dict[str, Any] = {"python": sys.version.split()[0]}
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            text = _run([smi], 30).stdout
            m = re.search(r"Driver Version:\s*(\S+)", text)
            c = re.search(r"CUDA Version:\s*(\S+)", text)
            v["nvidia_smi"] = {"driver": m.group(1) if m else None, "cuda": c.group(1) if c else None, "text": text}
        except (OSError, subprocess.TimeoutExpired) as e:
            v["nvidia_smi"] = {"error": str(e)}
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc:
        try:
            v["nvcc"] = _run([nvcc, "--version"], 30).stdout.strip().splitlines()[-1]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            pass
    v.update(side.info())
    v["references"] = {
        "dir": str(refs),
        "build_info": _read_text(refs / "BUILD_INFO.txt"),
        "babelstream": {
            "sha256": _sha256(refs / "babelstream-cuda"),
            "source": _read_text(refs.parent / "babelstream" / "SOURCE.txt"),
        },
        "mixbench": {
            "sha256": _sha256(refs / "mixbench-cuda"),
            "source": _read_text(refs.parent / "mixbench" / "SOURCE.txt"),
        },
    }
    return v


class Bench:
    """One benchmark session: options, the references found, the rounds measured so far."""

    def __init__(self, args: argparse.Namespace, suites: Sequence[str]) -> None:
        self.args = args
        self.suites = suites
        self.quick = bool(args.quick)
        self.reps = int(args.reps)
        refs = Path(args.refs_dir)
        self.refs = refs if refs.is_absolute() else (Path.cwd() / refs)
        self.bs_exe, self.bs_reason = _find_exe(self.refs, "babelstream-cuda")
        self.mb_exe, self.mb_reason = _find_exe(self.refs, "mixbench-cuda")
        self.side = TorchSide()
        self.attrs = self.side.cuda_attributes()
        self.numtimes = args.numtimes or (20 if self.quick else 100)
        self.gemm_iters = 10 if self.quick else 20
        self.gemm_samples = 5 if self.quick else 10
        self.tool_info: Dict[str, Any] = {}
        self.mixbench_last: Optional[Dict[str, Any]] = None

    # -- tool ---------------------------------------------------------------------------------
    def tool(self, suite: str, array_bytes: Optional[int] = None) -> Any:
        from apple_roofline.roofline.run.options import RunOptions
        from apple_roofline.roofline.run.runner import run_roofline

        t0 = time.monotonic()
        run = run_roofline(
            RunOptions(
                device=DEVICE,
                suites=[suite],
                quick=self.quick,
                reps=self.reps,
                array_bytes=array_bytes,
                command=("bench/bench_cuda.py", suite),
            )
        )
        log(
            f"    tool {suite}: {len(run.measurements)} measurements, {len(run.skipped)} skipped "
            f"in {time.monotonic() - t0:.1f} s"
        )
        for w in run.warnings[:5]:
            log(f"    tool warning: {w}")
        if len(run.warnings) > 5:
            log(f"    ({len(run.warnings) - 5} more tool warnings in the JSON)")
        return run

    # -- one round ----------------------------------------------------------------------------
    def round(self, r: int) -> Dict[str, Any]:
        rd: Dict[str, Any] = {
            "round": r,
            "started": _now(),
            "smi_before": nvidia_smi(),
            "comparisons": {},
            "references": {},
            "tool": {},
            "tool_runs": {},
        }
        cmp: Dict[str, Dict[str, Any]] = rd["comparisons"]
        ceilings: List[Mapping[str, Any]] = []
        stream_best: Optional[Dict[str, Any]] = None
        fp32: Optional[Dict[str, Any]] = None
        if "stream" in self.suites:
            stream_best, ceilings = self.round_stream(rd)
        if "peak" in self.suites:
            fp32, c2 = self.round_peak(rd)
            ceilings = ceilings or c2
        if "gemm" in self.suites:
            c3 = self.round_gemm(rd)
            ceilings = ceilings or c3
        # Theoretical targets once the round's tool Runs (and mixbench's device block) are in.
        if "stream" in self.suites:
            theo, src = theoretical_dram_gbps(ceilings, self.tool_info, self.attrs, self.mixbench_last)
            rd["theoretical_dram"] = {"gbps": theo, "source": src}
            if stream_best is None:
                cmp["stream_theoretical"] = not_run("no tool stream measurement")
            else:
                cmp["stream_theoretical"] = compare(
                    stream_best["best_gbps"],
                    theo,
                    tool_alt=stream_best["median_gbps"],
                    reference_alt=theo,
                    tool_detail=stream_best["best_kernel"],
                    reference_detail=source_tag(src),
                    reason=src,
                )
        if "peak" in self.suites:
            theo, src = theoretical_fp32_gflops(ceilings, self.tool_info, self.attrs, self.mixbench_last)
            rd["theoretical_fp32"] = {"gflops": theo, "source": src}
            if fp32 is None:
                cmp["peak_fp32_theoretical"] = not_run("no valid tool fp32 peak measurement")
            else:
                cmp["peak_fp32_theoretical"] = compare(
                    fp32["gflops"],
                    theo,
                    tool_alt=fp32["best_gflops"],
                    reference_alt=theo,
                    tool_detail=fp32["variant"],
                    reference_detail=source_tag(src),
                    reason=src,
                )
        rd["smi_after"] = nvidia_smi()
        rd["finished"] = _now()
        return rd

    def round_stream(self, rd: Dict[str, Any]) -> Tuple[Optional[Dict[str, Any]], List[Mapping[str, Any]]]:
        """The round's stream comparisons (each BabelStream configuration beside a tool stream run of its
        array size, then cudaMemcpy), recorded in rd: the best tool stream summary (None where there
        was none) and the ceilings of the last tool run."""
        cmp = rd["comparisons"]
        bests: List[Dict[str, Any]] = []
        ceilings: List[Mapping[str, Any]] = []
        cache: Dict[int, Dict[str, Any]] = {}
        for precision, n in BABELSTREAM_CONFIGS:
            key = f"stream_babelstream_{precision}"
            array_bytes = n * BABELSTREAM_SIZEOF[precision]
            ref, reason = self.babelstream(rd, precision, n)
            if ref is None and array_bytes in cache:
                ts = cache[array_bytes]  # no reference to pair with: reuse this round's tool run
            else:
                ts, ceilings = self.tool_stream(rd, precision, array_bytes)
                cache[array_bytes] = ts
            bests.append(ts)
            if ref is None:
                cmp[key] = not_run(reason)
            else:
                b = babelstream_best(ref)
                cmp[key] = compare(
                    ts["best_gbps"],
                    b["gbps"],
                    tool_alt=ts["median_gbps"],
                    reference_alt=b["gbps_avg"],
                    tool_detail=ts["best_kernel"],
                    reference_detail=b["kernel"] + (f"; {ref['note']}" if ref.get("note") else ""),
                )
        best = max(bests, key=lambda t: t["best_gbps"]) if bests else None
        cmp["stream_memcpy"] = self.memcpy_comparison(rd, best)
        return best, ceilings

    def babelstream(self, rd: Dict[str, Any], precision: str, n: int) -> Tuple[Optional[Dict[str, Any]], str]:
        """BabelStream of ``precision`` over n elements, its record kept in rd's references:
        ``(parsed output, "")``, or ``(None, why not)`` where it is missing, fails or fails its own
        validation."""
        reason = self.bs_reason
        if self.bs_exe is None:
            return None, reason
        array_bytes = n * BABELSTREAM_SIZEOF[precision]
        log(f"  BabelStream {precision} n={n} ({array_bytes >> 20} MiB per array), {self.numtimes} times")
        try:
            ref = run_babelstream(self.bs_exe, precision, n, self.numtimes)
        except ReferenceError_ as e:
            rd["references"][f"babelstream_{precision}"] = {"error": str(e)}
            log(f"    BabelStream failed: {e}")
            return None, str(e)
        rd["references"][f"babelstream_{precision}"] = ref
        b = babelstream_best(ref)
        log(
            f"    BabelStream best: {b['kernel']} {b['gbps']:.1f} GB/s"
            + ("" if ref["valid"] else "  (its validation FAILED)")
            + (f"  ({ref['note']})" if ref.get("note") else "")
        )
        if not ref["valid"]:
            return None, f"BabelStream reported a failed validation: {ref['stderr']}"
        return ref, reason

    def tool_stream(
        self, rd: Dict[str, Any], precision: str, array_bytes: int
    ) -> Tuple[Dict[str, Any], List[Mapping[str, Any]]]:
        """The tool's stream suite over arrays of ``array_bytes`` (BabelStream's ``precision``), its Run
        and summary kept in rd: ``(summary, the Run's ceilings)``."""
        log(f"  tool stream, {array_bytes >> 20} MiB per array")
        run = self.tool("stream", array_bytes)
        self._note_run(run)
        ts = tool_stream_summary(run.measurements)
        rd["tool_runs"][f"stream_{precision}"] = run.to_dict()
        rd["tool"][f"stream_{precision}"] = ts
        log(
            f"    tool best: {ts['best_kernel']} {ts['best_gbps']:.1f} GB/s (best sample), "
            f"{ts['median_kernel']} {ts['median_gbps']:.1f} GB/s (median)"
        )
        return ts, [c.to_dict() for c in run.ceilings]

    def memcpy_comparison(self, rd: Dict[str, Any], best: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        """The best tool stream summary against cudaMemcpy device-to-device (through torch or CuPy),
        the memcpy record kept in rd's references; not run where neither library is there."""
        if self.side.torch is None and self.side.cupy is None:
            return not_run(f"{self.side.reason_torch}; {self.side.reason_cupy}")
        log(f"  cudaMemcpy D2D, {MEMCPY_BYTES >> 20} MiB")
        mc = self.side.time_memcpy(MEMCPY_BYTES, 5 if self.quick else 10, 5 if self.quick else 10)
        rd["references"]["memcpy_d2d"] = mc
        log(f"    memcpy: {mc['best_gbps']:.1f} GB/s (best), {mc['gbps']:.1f} GB/s (median)")
        if best is None:
            return not_run("no tool stream measurement")
        return compare(
            best["best_gbps"],
            mc["best_gbps"],
            tool_alt=best["median_gbps"],
            reference_alt=mc["gbps"],
            tool_detail=best["best_kernel"],
            reference_detail=mc["how"],
        )

    def round_peak(self, rd: Dict[str, Any]) -> Tuple[Optional[Dict[str, Any]], List[Mapping[str, Any]]]:
        cmp = rd["comparisons"]
        mb: Optional[Dict[str, Any]] = None
        reason = self.mb_reason
        if self.mb_exe is not None:
            log("  mixbench-cuda")
            try:
                mb = run_mixbench(self.mb_exe)
                self.mixbench_last = mb
                rd["references"]["mixbench"] = mb
                mx = mb["max"]
                log(
                    "    mixbench max: "
                    + ", ".join(f"{p} {mx[p]['gflops']:.0f}" if mx[p] else f"{p} n/a" for p in MIXBENCH_PRECISIONS)
                    + " GFLOP/s"
                )
            except ReferenceError_ as e:
                reason = str(e)
                rd["references"]["mixbench"] = {"error": reason}
                log(f"    mixbench failed: {reason}")
        log("  tool peak")
        run = self.tool("peak")
        self._note_run(run)
        rd["tool_runs"]["peak"] = run.to_dict()
        per = {d: tool_peak_summary(run.measurements, d) for d in ("fp32", "fp64", "fp16")}
        rd["tool"]["peak"] = per
        log(
            "    tool peak: "
            + ", ".join(f"{d} {s['gflops']:.0f} ({s['variant']})" if s else f"{d} skipped" for d, s in per.items())
            + " GFLOP/s"
        )
        skipped = {f"{s.kernel}/{s.dtype}": s.reason for s in run.skipped}
        for dtype, prec, key in (
            ("fp64", "dp", "peak_fp64_mixbench"),
            ("fp16", "hp", "peak_fp16_mixbench"),
            ("fp32", "sp", "peak_fp32_mixbench"),
        ):
            t = per[dtype]
            if t is None:
                why = next(
                    (f"{k}: {v}" for k, v in skipped.items() if k.endswith("/" + dtype)), "not in its peak suite"
                )
                cmp[key] = not_run(f"the tool measured no {dtype} peak variant ({why})")
            elif mb is None:
                cmp[key] = not_run(reason)
            elif mb["max"].get(prec) is None:
                cmp[key] = not_run(f"mixbench printed no usable {prec} figure")
            else:
                m = mb["max"][prec]
                cmp[key] = compare(
                    t["gflops"],
                    m["gflops"],
                    tool_alt=t["best_gflops"],
                    reference_alt=m["gflops"],
                    tool_detail=t["variant"],
                    reference_detail=f"{m['iters']} iterations",
                )
        return per["fp32"], [c.to_dict() for c in run.ceilings]

    def round_gemm(self, rd: Dict[str, Any]) -> List[Mapping[str, Any]]:
        cmp = rd["comparisons"]
        log("  tool gemm")
        run = self.tool("gemm")
        self._note_run(run)
        rd["tool_runs"]["gemm"] = run.to_dict()
        for dtype, (kernel, tdtype) in GEMM_TORCH.items():
            key = f"gemm_{dtype}_torch"
            t = tool_gemm_largest(run.measurements, dtype)
            rd["tool"][f"gemm_{dtype}"] = t
            if t is None:
                why = next((s.reason for s in run.skipped if s.dtype == dtype), "not in its gemm suite")
                cmp[key] = not_run(f"the tool measured no {kernel} ({why})")
                continue
            log(f"    tool {kernel} N={t['n']}: {t['gflops']:.0f} GFLOP/s (median)")
            if self.side.torch is None:
                cmp[key] = not_run(self.side.reason_torch)
                continue
            log(f"  torch.matmul {tdtype} N={t['n']}")
            ref = self.side.time_matmul(t["n"], tdtype, self.gemm_iters, self.gemm_samples)
            rd["references"][f"torch_{dtype}"] = ref
            log(f"    torch: {ref['gflops']:.0f} GFLOP/s (median), {ref['best_gflops']:.0f} (best)")
            cmp[key] = compare(
                t["gflops"],
                ref["gflops"],
                tool_alt=t["best_gflops"],
                reference_alt=ref["best_gflops"],
                tool_detail=f"N={t['n']}",
                reference_detail=f"N={t['n']}",
            )
        return [c.to_dict() for c in run.ceilings]

    def _note_run(self, run: Any) -> None:
        if not self.tool_info:
            self.tool_info = {k: v for k, v in run.device.items() if k != "theoretical"}


def _parse_only(text: str) -> List[str]:
    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    bad = [n for n in names if n not in SUITE_NAMES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"--only takes a comma-separated subset of {','.join(SUITE_NAMES)}, not {text!r}"
        )
    return [s for s in SUITE_NAMES if s in names]


def parse_args(argv: Optional[List[str]]) -> Tuple[argparse.Namespace, int]:
    """The command line (see the module docstring) and the number of rounds; exits with a usage
    error on a count out of range."""
    doc = __doc__ or ""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3; 1 with --quick)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for the JSON (default bench/results)")
    ap.add_argument(
        "--only",
        type=_parse_only,
        default=list(SUITE_NAMES),
        help="comma-separated subset of stream,peak,gemm (default: all)",
    )
    ap.add_argument(
        "--refs-dir",
        default=str(DEFAULT_REFS_DIR),
        help="folder with babelstream-cuda and mixbench-cuda (default .bench-src/bin)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: the tool's --quick budgets, 1 round, BabelStream 20 times, fewer torch samples",
    )
    ap.add_argument("--reps", type=int, default=10, help="timed samples per tool measurement (default 10)")
    ap.add_argument("--numtimes", type=int, default=None, help="BabelStream --numtimes (default 100; 20 with --quick)")
    args = ap.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    if rounds < 1 or args.reps < 1 or (args.numtimes is not None and args.numtimes < 2):
        ap.error("--rounds and --reps must be at least 1, --numtimes at least 2")
    return args, rounds


def open_tool_device() -> Optional[Dict[str, Any]]:
    """The tool's device record of DEVICE, or None (the reason on stderr) where the tool cannot open it."""
    try:
        from apple_roofline.devices import open_device

        backend = open_device(DEVICE)
        tool_device = dict(backend.info())
        del backend
    except Exception as e:  # ImportError, UnsupportedError, DeviceError
        print(f"bench_cuda: the tool cannot open {DEVICE}: {type(e).__name__}: {e}", file=sys.stderr)
        return None
    return tool_device


def log_setup(bench: Bench, tool_device: Mapping[str, Any], rounds: int) -> None:
    """Log what the session compares: the GPU, suites and rounds, and which references are there."""
    log(
        f"bench_cuda: {tool_device.get('name')} via the tool; suites {','.join(bench.suites)}; {rounds} rounds"
        f"{' (quick)' if bench.args.quick else ''}"
    )
    for what, exe, why in (("BabelStream", bench.bs_exe, bench.bs_reason), ("mixbench", bench.mb_exe, bench.mb_reason)):
        log(f"  {what}: {exe}" if exe else f"  {what}: NOT RUN: {why}")
    log(
        f"  torch: {'yes' if bench.side.torch else bench.side.reason_torch}; "
        f"cupy: {'yes' if bench.side.cupy else bench.side.reason_cupy}"
    )


def new_result(bench: Bench, tool_device: Dict[str, Any], started: dt.datetime, rounds: int) -> Dict[str, Any]:
    """The JSON's record before any round: date, tool and reference versions, options, targets."""
    from apple_roofline._version import __version__

    args, suites = bench.args, bench.suites
    return {
        "date": started.isoformat(timespec="seconds"),
        "complete": False,
        "device": DEVICE,
        "tool": {"version": __version__, "core": _core_file(), "device_info": tool_device},
        "versions": _versions(bench.refs, bench.side),
        "cuda_attributes": bench.attrs,
        "options": {
            "rounds": rounds,
            "suites": suites,
            "quick": args.quick,
            "reps": args.reps,
            "babelstream_numtimes": bench.numtimes,
            "babelstream_configs": BABELSTREAM_CONFIGS,
            "memcpy_bytes": MEMCPY_BYTES,
            "torch_iters": bench.gemm_iters,
            "torch_samples": bench.gemm_samples,
            "refs_dir": str(bench.refs),
            "argv": sys.argv,
        },
        "targets": [asdict(t) for t in TARGETS if t.suite in suites],
        "summary": [],
        "rounds": [],
    }


def save_result(result: Dict[str, Any], targets: Sequence[Target], path: Path) -> None:
    """Summarize the rounds so far against the targets and (re)write the JSON at path."""
    result["summary"] = [
        summarize_target(t, [rd["comparisons"].get(t.key) for rd in result["rounds"]]) for t in targets
    ]
    result["finished"] = _now()
    path.write_text(json.dumps(json_safe(result), indent=1) + "\n")


def run_rounds(
    bench: Bench, result: Dict[str, Any], rounds: int, targets: Sequence[Target], path: Path
) -> Optional[BaseException]:
    """Measure the rounds, saving the JSON after each; returns the error (an exception, or a
    KeyboardInterrupt) that stopped them, None where all ran (the result is then ``complete``)."""
    error: Optional[BaseException] = None
    try:
        for r in range(1, rounds + 1):
            t0 = time.monotonic()
            log(f"round {r}/{rounds}")
            result["rounds"].append(bench.round(r))
            result["tool"]["device_info_from_run"] = bench.tool_info
            save_result(result, targets, path)
            ratios = ", ".join(
                f"{k} {v['ratio']:.3f}" for k, v in result["rounds"][-1]["comparisons"].items() if "ratio" in v
            )
            log(f"round {r} done in {time.monotonic() - t0:.0f} s: {ratios}")
        result["complete"] = True
    except (Exception, KeyboardInterrupt) as e:
        error = e
        result["error"] = f"{type(e).__name__}: {e}"
        log(f"bench_cuda: stopped in round {len(result['rounds']) + 1}: {type(e).__name__}: {e}")
    save_result(result, targets, path)
    return error


def gpu_description(result: Mapping[str, Any], gpu: str) -> str:
    """The GPU's name with the driver and maximum clocks nvidia-smi gave before the first round."""
    smi = (result["rounds"][0]["smi_before"].get("gpus") or [{}])[0] if result["rounds"] else {}
    driver = smi.get("driver_version") or (result["versions"].get("nvidia_smi") or {}).get("driver")
    clocks = (
        f", SM max {smi.get('clocks.max.sm'):.0f} MHz, mem max {smi.get('clocks.max.memory'):.0f} MHz"
        if isinstance(smi.get("clocks.max.sm"), float) and isinstance(smi.get("clocks.max.memory"), float)
        else ""
    )
    return f"{gpu}, driver {driver}{clocks}" if driver else gpu


def print_report(result: Mapping[str, Any], gpu_desc: str, path: Path, started: dt.datetime) -> None:
    """Print the table of verdicts and the markdown rows for bench/README.md."""
    summary = result["summary"]
    print()
    print(
        f"GPU: {gpu_desc}; {result['date']}; {len(result['rounds'])} rounds"
        + ("" if result["complete"] else " (INCOMPLETE: " + result.get("error", "") + ")")
    )
    for line in text_table(summary):
        print(line)
    print(
        "(ratio = tool / reference, median over rounds of the per-round ratio; stream compares best samples"
        " (BabelStream: max MB/s), peak and gemm medians; alt = the other statistic: stream medians vs BabelStream's"
        " average-time bandwidth, peak and gemm best samples. The JSON has every sample.)"
    )
    print(f"results: {path}")
    print()
    print("markdown rows for bench/README.md:")
    for row in markdown_rows(summary, date=started.strftime("%Y-%m-%d"), gpu=gpu_desc, rounds=len(result["rounds"])):
        print(row)


def error_status(error: BaseException) -> int:
    """The exit status of a session stopped by error: 130 for an interrupt, else 1 (with the traceback
    on stderr unless it is a tool measurement found invalid or a reference that failed)."""
    if isinstance(error, KeyboardInterrupt) or type(error).__name__ == "RunInterrupted":
        return 130
    if not isinstance(error, (ToolInvalid, ReferenceError_)):
        import traceback

        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    return 1


def main(argv: Optional[List[str]] = None) -> int:
    """Run the session; returns the exit status of the module docstring."""
    args, rounds = parse_args(argv)
    suites: List[str] = args.only
    tool_device = open_tool_device()
    if tool_device is None:
        return 1

    bench = Bench(args, suites)
    started = dt.datetime.now(dt.timezone.utc).astimezone()
    log_setup(bench, tool_device, rounds)
    result = new_result(bench, tool_device, started, rounds)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"bench_cuda-{started.strftime('%Y%m%d-%H%M%S')}.json"
    targets = [t for t in TARGETS if t.suite in suites]
    error = run_rounds(bench, result, rounds, targets, path)
    print_report(result, gpu_description(result, str(tool_device.get("name", "GPU"))), path, started)
    return exit_status(result["summary"]) if error is None else error_status(error)


if __name__ == "__main__":
    sys.exit(main())
