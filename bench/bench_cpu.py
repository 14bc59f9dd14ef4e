#!/usr/bin/env python3
"""Compare apple_roofline's CPU ceilings with plain C references measured in the same run.

    python bench/bench_cpu.py [--array-bytes 128MiB] [--rounds 3] [--out bench/results]

Two comparisons (the issue's acceptance criteria), as RATIOS tool / reference:

* ``stream`` triad (median-based GB/s of ``run_roofline(RunOptions(device="cpu", suites=["stream"]))``) against a plain
  OpenMP C triad (bench/cpu_reference.c) over arrays of the same size with the same thread count:
  target >= 0.90.
* the best FP32 ``peak`` variant (max median GFLOP/s over the valid fp32 peak measurements) against a
  hand-written intrinsics FMA loop on all the tool's threads: target >= 0.85.

The reference is compiled into a temporary directory with ``cc -O3 -march=native -fopenmp``
(``-mcpu=native`` on arm64; on macOS, Apple clang has no -fopenmp: Homebrew's libomp is tried,
otherwise the script explains and stops). Rounds are interleaved (reference triad, tool triad,
reference FMA, tool peak) so that a drift in clocks or load hits both sides alike; the verdict uses
the median ratio over rounds. Other processes' CPU use during the run is measured from /proc/stat
(Linux) and reported, because on a small machine any foreign load distorts the figures.

Prints a table and markdown rows for bench/README.md, and writes bench_cpu-<timestamp>.json to --out.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cpu_reference.c"
TRIAD_TARGET = 0.90
PEAK_TARGET = 0.85
QUIET = 0.05  # other processes' share of the CPUs below which a window counts as quiet


# ---- building the reference ------------------------------------------------------------------


def _arch_flag() -> str:
    return "-mcpu=native" if platform.machine().lower() in ("arm64", "aarch64") else "-march=native"


def _try_compile(cmd: List[str]) -> Tuple[bool, str]:
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr).strip()


def build_reference(cc: str, outdir: Path) -> Tuple[Path, List[str]]:
    """Compile cpu_reference.c; returns (binary, command). Exits with an explanation on failure."""
    exe = outdir / "cpu_reference"
    base = [cc, "-std=c11", "-O3", _arch_flag()]
    cmd = base + ["-fopenmp", str(SOURCE), "-o", str(exe), "-lm"]
    ok, log = _try_compile(cmd)
    if ok:
        return exe, cmd
    if sys.platform == "darwin":
        # Apple clang understands OpenMP pragmas but ships no -fopenmp driver support and no runtime:
        # `-Xpreprocessor -fopenmp` plus Homebrew's libomp (brew install libomp) does the job.
        prefix = None
        if shutil.which("brew"):
            r = subprocess.run(["brew", "--prefix", "libomp"], capture_output=True, text=True)
            if r.returncode == 0 and Path(r.stdout.strip(), "include", "omp.h").exists():
                prefix = r.stdout.strip()
        if prefix:
            cmd = base + [
                "-Xpreprocessor",
                "-fopenmp",
                f"-I{prefix}/include",
                str(SOURCE),
                "-o",
                str(exe),
                f"-L{prefix}/lib",
                "-lomp",
            ]
            ok, log2 = _try_compile(cmd)
            if ok:
                return exe, cmd
            log += "\n" + log2
        sys.exit(
            "bench_cpu: cannot compile the OpenMP reference on macOS.\n"
            "Apple's clang does not accept -fopenmp and ships no OpenMP runtime. Either\n"
            "  brew install libomp      (then re-run: the script adds -Xpreprocessor -fopenmp -lomp), or\n"
            "  brew install llvm        (then re-run with --cc $(brew --prefix llvm)/bin/clang), or\n"
            "  brew install gcc         (then re-run with --cc gcc-14 or similar).\n"
            f"Compiler output:\n{log}"
        )
    sys.exit(f"bench_cpu: compiling the reference failed:\n  {' '.join(cmd)}\n{log}")


def check_hot_loop(exe: Path) -> Dict[str, Any]:
    """Disassemble fma_block and inspect its innermost loop: how many FMAs, any other vector op,
    any stack access (a register spill). Returns a dict for the JSON (``ok`` None: not checked)."""
    objdump = shutil.which("objdump") or shutil.which("llvm-objdump")
    if not objdump:
        return {"ok": None, "note": "objdump not found"}
    p = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True)
    m = re.search(r"<_?fma_block>:\n(.*?)(?:\n\n|\Z)", p.stdout, re.S)
    if p.returncode != 0 or not m:
        return {"ok": None, "note": "fma_block not found in the disassembly"}
    insns = []
    for line in m.group(1).splitlines():
        parts = line.split(":", 1)
        if len(parts) != 2:
            continue
        try:
            addr = int(parts[0].strip(), 16)
        except ValueError:
            continue
        insns.append((addr, parts[1].strip()))
    # The innermost loop: the backward branch with the shortest span.
    best = None
    for i, (addr, text) in enumerate(insns):
        mm = re.match(r"(j\w+|b\.\w+|b|cbnz|cbz|tbnz|tbz)\s+(?:\w+,\s*)*(?:#\d+,\s*)?([0-9a-f]+)", text)
        if mm:
            target = int(mm.group(2), 16)
            if target <= addr and (best is None or addr - target < best[1] - best[0]):
                best = (target, addr)
    if best is None:
        return {"ok": False, "note": "no loop found in fma_block"}
    body = [t for a, t in insns if best[0] <= a <= best[1]]
    fmas = [t for t in body if re.match(r"v?fmadd|vfmadd|fmla|vfma", t)]
    spills = [t for t in body if re.search(r"\((%rsp|%rbp)|\[sp|\[x29", t)]
    others = [
        t for t in body if t not in fmas and not re.match(r"(inc|dec|add|sub|cmp|j\w+|b\.|subs|cbnz|nop|cs nop)", t)
    ]
    return {
        "ok": bool(fmas) and not spills,
        "loop_instructions": len(body),
        "fmas": len(fmas),
        "spills": spills,
        "other": others,
        "first_fma": fmas[0] if fmas else None,
    }


# ---- load monitoring ---------------------------------------------------------------------------


def _proc_stat_busy() -> Optional[Tuple[float, float]]:
    """(busy, total) jiffies of all CPUs from /proc/stat, or None off Linux."""
    try:
        with open("/proc/stat") as f:
            v = [float(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0.0)  # idle + iowait
    return sum(v[:8]) - idle, sum(v[:8])


class LoadMonitor:
    """Other processes' CPU use over an interval: system busy time minus this process's and its
    children's, as a fraction of all CPUs."""

    def __init__(self) -> None:
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.start()

    def start(self) -> None:
        self.s0 = _proc_stat_busy()
        self.t0 = os.times()

    def foreign(self) -> Optional[float]:
        s1, t1 = _proc_stat_busy(), os.times()
        if self.s0 is None or s1 is None or s1[1] <= self.s0[1]:
            return None
        own = (t1.user + t1.system + t1.children_user + t1.children_system) - (
            self.t0.user + self.t0.system + self.t0.children_user + self.t0.children_system
        )
        busy = (s1[0] - self.s0[0]) / self.hz
        total = (s1[1] - self.s0[1]) / self.hz
        return max(0.0, (busy - own) / total)


def wait_quiet(max_wait_s: float, threshold: float = 0.05, probe_s: float = 5.0) -> Optional[float]:
    """Wait (up to max_wait_s) until other processes use < threshold of the CPUs over probe_s.
    Returns the last foreign fraction seen."""
    deadline = time.monotonic() + max_wait_s
    while True:
        mon = LoadMonitor()
        time.sleep(probe_s)
        f = mon.foreign()
        if f is None or f < threshold or time.monotonic() >= deadline:
            return f
        print(f"  waiting for a quiet machine: other processes use {f:.0%} of the CPUs", flush=True)
        time.sleep(min(30.0, max(0.0, deadline - time.monotonic())))


# ---- measurements ------------------------------------------------------------------------------


def run_reference(exe: Path, env: Dict[str, str], *args: Any) -> Dict[str, Any]:
    p = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench_cpu: reference {' '.join(map(str, args))} failed (exit {p.returncode}):\n{p.stderr}")
    record: Dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return record


def tool_triad(array_bytes: int, reps: int) -> Tuple[Dict[str, Any], Any]:
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    run = run_roofline(RunOptions(device="cpu", suites=["stream"], array_bytes=array_bytes, reps=reps))
    ms = [m for m in run.measurements if m.suite == "stream" and m.kernel == "triad"]
    assert len(ms) == 1, f"expected one stream triad measurement, got {len(ms)}"
    m = ms[0]
    assert m.valid, f"tool stream triad failed validation: {m.validation}"
    return {
        "gbps_median": m.gbps,
        "gbps_best": m.best_gbps,
        "n": m.params.get("n"),
        "cv": m.cv,
        "samples_s": list(m.samples_s),
        "batch": m.batch,
    }, run


def tool_peak(reps: int) -> Tuple[Dict[str, Any], Any]:
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    run = run_roofline(RunOptions(device="cpu", suites=["peak"], reps=reps))
    ms = [m for m in run.measurements if m.suite == "peak" and m.dtype == "fp32"]
    assert ms, "no fp32 peak measurement"
    for m in ms:
        assert m.valid, f"tool peak {m.kernel}/fp32 failed validation: {m.validation}"
    best = max(ms, key=lambda m: m.gflops)
    return {
        "gflops_median": best.gflops,
        "gflops_best": best.best_gflops,
        "variant": best.kernel,
        "cv": best.cv,
        "samples_s": list(best.samples_s),
        "batch": best.batch,
        "variants": {m.kernel: round(m.gflops, 2) for m in ms},
    }, run


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    """The command line (see the module docstring); exits with a usage error on a count below 1."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--array-bytes", default="128MiB", help="bytes per STREAM array (default 128MiB)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--out", default=str(HERE / "results"), help="folder for the JSON (default bench/results)")
    ap.add_argument("--reps", type=int, default=10, help="timed samples per measurement, both sides (default 10)")
    ap.add_argument(
        "--fma-seconds",
        type=float,
        default=0.01,
        help="seconds per reference FMA sample (default 0.01, close to the tool's peak samples)",
    )
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler (default $CC or cc)")
    ap.add_argument(
        "--retry-busy",
        type=int,
        default=0,
        metavar="N",
        help="re-run (up to N times in all) a round during which other processes used >= 5%% of the CPUs",
    )
    ap.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to SECONDS for other processes to use < 5%% of the CPUs (default 0)",
    )
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.reps < 1:
        ap.error("--rounds and --reps must be at least 1")
    return args


@dataclass
class Reference:
    """The compiled C reference: its binary, the build command, the compiler's first ``--version`` line
    (a list of at most one string), the hot-loop check (:func:`check_hot_loop`) and the OpenMP
    environment it runs with."""

    exe: Path
    build_cmd: List[str]
    cc_version: List[str]
    hot: Dict[str, Any]
    env: Dict[str, str]


def prepare_reference(cc: str, threads: int, outdir: Path) -> Reference:
    """Compile the reference into outdir with cc and check its hot loop; its OpenMP environment pins
    ``threads`` threads close together on cores. Exits as :func:`build_reference` does."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    exe, build_cmd = build_reference(cc, outdir)
    cc_version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    return Reference(exe, build_cmd, cc_version, check_hot_loop(exe), env)


def print_setup(ref: Reference, core: Dict[str, Any], threads: int, n: int, args: argparse.Namespace) -> None:
    """Print what is compared: the reference's build and hot loop, the native module, threads, arrays."""
    from apple_roofline.sizes import format_size

    hot = ref.hot
    print(f"reference: {' '.join(ref.build_cmd)}")
    print(
        f"  hot loop: {hot.get('fmas')} FMAs in {hot.get('loop_instructions')} instructions, "
        f"spills: {len(hot.get('spills', []))}, check {'OK' if hot.get('ok') else hot}"
    )
    print(f"tool: native module {core.get('path')} (built {core.get('mtime')}, sha256 {core.get('sha256')})")
    print(f"threads: {threads} (tool) -> OMP_NUM_THREADS={threads} OMP_PROC_BIND=close OMP_PLACES=cores")
    print(f"arrays: {format_size(4 * n)} x 3 ({n} fp32 elements); rounds: {args.rounds}; reps: {args.reps}")


@dataclass
class Rounds:
    """The interleaved rounds: those kept, those discarded as busy, and the device and host records of
    the last run of the tool's peak suite."""

    kept: List[Dict[str, Any]] = field(default_factory=list)
    discarded: List[Dict[str, Any]] = field(default_factory=list)
    device: Dict[str, Any] = field(default_factory=dict)
    host: Dict[str, Any] = field(default_factory=dict)


def measure_round(
    ref: Reference, n: int, threads: int, args: argparse.Namespace, number: int
) -> Tuple[Dict[str, Any], Any]:
    """One interleaved round (reference triad, tool triad, reference FMA, tool peak) over n fp32
    elements: its record (both sides, their ratios, other processes' CPU share) and the tool's peak run.
    Raises AssertionError where the two sides' thread counts or array sizes differ."""
    rmon = LoadMonitor()
    ref_t = run_reference(ref.exe, ref.env, "triad", n, args.reps)
    tool_t, _ = tool_triad(4 * n, args.reps)
    ref_f = run_reference(ref.exe, ref.env, "fma", args.fma_seconds, args.reps)
    tool_p, run_p = tool_peak(args.reps)
    assert int(run_p.device["threads"]) == threads == ref_t["threads"] == ref_f["threads"], "thread counts differ"
    assert tool_t["n"] == ref_t["n"] == n, "array sizes differ"
    rd = {
        "round": number,
        "foreign_cpu": rmon.foreign(),
        "triad": {
            "reference": ref_t,
            "tool": tool_t,
            "ratio": tool_t["gbps_median"] / ref_t["gbps_median"],
            "ratio_best": tool_t["gbps_best"] / ref_t["gbps_best"],
        },
        "peak": {
            "reference": ref_f,
            "tool": tool_p,
            "ratio": tool_p["gflops_median"] / ref_f["gflops_median"],
            "ratio_best": tool_p["gflops_best"] / ref_f["gflops_best"],
        },
    }
    return rd, run_p


def _share(fc: Optional[float]) -> str:
    return "n/a" if fc is None else f"{fc:.0%}"


def run_rounds(ref: Reference, n: int, threads: int, args: argparse.Namespace) -> Rounds:
    """``args.rounds`` kept rounds; a round during which other processes used at least QUIET of the
    CPUs is discarded and run again while ``args.retry_busy`` retries last (after waiting for a quiet
    machine where ``args.wait_quiet`` is set). Prints a line per round."""
    out = Rounds()
    retries = args.retry_busy
    while len(out.kept) < args.rounds:
        rd, run_p = measure_round(ref, n, threads, args, len(out.kept) + 1)
        out.device, out.host = dict(run_p.device), dict(run_p.host)
        fc = rd["foreign_cpu"]
        if fc is not None and fc >= QUIET and retries > 0:
            retries -= 1
            out.discarded.append(rd)
            print(
                f"round {rd['round']} discarded: other processes used {fc:.0%} of the CPUs "
                f"(triad ratio {rd['triad']['ratio']:.3f}, peak ratio {rd['peak']['ratio']:.3f}); "
                f"{retries} retries left",
                flush=True,
            )
            if args.wait_quiet > 0:
                wait_quiet(args.wait_quiet)
            continue
        out.kept.append(rd)
        tri, peak = rd["triad"], rd["peak"]
        print(
            f"round {rd['round']}: triad {tri['tool']['gbps_median']:.1f} / {tri['reference']['gbps_median']:.1f} "
            f"GB/s = {tri['ratio']:.3f};  peak {peak['tool']['gflops_median']:.1f} ({peak['tool']['variant']}) / "
            f"{peak['reference']['gflops_median']:.1f} GFLOP/s = {peak['ratio']:.3f};  "
            f"other processes: {_share(fc)} CPU",
            flush=True,
        )
    return out


def _summary_side(rounds: List[Dict[str, Any]], key: str, unit: str, target: float) -> Dict[str, Any]:
    """One comparison's summary over the kept rounds: the median of each side's median-based figure
    (``unit`` "gbps" or "gflops"), the median ratios, the per-round range, the target and the verdict."""
    ratio = statistics.median(rd[key]["ratio"] for rd in rounds)
    rs = [rd[key]["ratio"] for rd in rounds]
    side = {
        f"reference_{unit}": statistics.median(rd[key]["reference"][f"{unit}_median"] for rd in rounds),
        f"tool_{unit}": statistics.median(rd[key]["tool"][f"{unit}_median"] for rd in rounds),
    }
    if key == "peak":
        variants = [rd["peak"]["tool"]["variant"] for rd in rounds]
        side["variant"] = max(set(variants), key=variants.count)
    return {
        **side,
        "ratio": ratio,
        "ratio_best": statistics.median(rd[key]["ratio_best"] for rd in rounds),
        "ratio_min": min(rs),
        "ratio_max": max(rs),
        "target": target,
        "pass": ratio >= target,
    }


def summarize(rounds: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The verdicts: the stream triad's against TRIAD_TARGET, the fp32 peak's against PEAK_TARGET."""
    return {
        "triad": _summary_side(rounds, "triad", "gbps", TRIAD_TARGET),
        "peak": _summary_side(rounds, "peak", "gflops", PEAK_TARGET),
    }


def _loadavg() -> Optional[Tuple[float, float, float]]:
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def load_record(rounds: Rounds, foreign: Optional[float], before: Dict[str, Any], loadavg_after: Any) -> Dict[str, Any]:
    """The run's load: other processes' CPU share over the whole run and at most in a kept round,
    whether every kept round was quiet (discarded rounds don't count), the quiet probe and load
    averages (``before``: ``quiet_probe_before`` and ``loadavg_before``)."""
    kept = [rd["foreign_cpu"] for rd in rounds.kept]
    return {
        "foreign_cpu": foreign,
        "foreign_cpu_max_kept_round": None if any(f is None for f in kept) else max(kept),
        "quiet": all(f is not None and f < QUIET for f in kept),
        "quiet_probe_before": before["quiet_probe_before"],
        "loadavg_before": before["loadavg_before"],
        "loadavg_after": loadavg_after,
    }


def machine_record(rounds: Rounds, threads: int) -> Dict[str, Any]:
    """The machine measured, from the tool's device and host records and /proc/cpuinfo."""
    device, host = rounds.device, rounds.host
    return {
        "cpu": device.get("name"),
        "threads": threads,
        "isa": device.get("isa"),
        "vector_bits": device.get("vector_bits"),
        "os": host.get("os"),
        "hostname": host.get("hostname"),
        "logical_cpus": host.get("logical_cpus"),
        "hypervisor": _hypervisor(),
    }


def reference_record(ref: Reference) -> Dict[str, Any]:
    """The reference's build, compiler, hot-loop check and OpenMP environment, for the JSON."""
    return {
        "build": ref.build_cmd,
        "compiler": ref.cc_version[0] if ref.cc_version else None,
        "hot_loop": ref.hot,
        "env": {k: ref.env[k] for k in ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES")},
    }


def write_result(result: Dict[str, Any], out_dir: str, started: dt.datetime) -> Path:
    """Write the result as ``bench_cpu-<timestamp>.json`` into out_dir (created); returns its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_cpu-{started.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_table(result: Dict[str, Any], path: Path) -> None:
    """Print the comparison table: machine and load, both benchmarks' figures, ratios and verdicts."""
    t, p = result["summary"]["triad"], result["summary"]["peak"]
    machine, load = result["machine"], result["load"]
    kept_max, quiet = load["foreign_cpu_max_kept_round"], load["quiet"]
    load_txt = (
        "n/a"
        if kept_max is None
        else f"other processes used up to {kept_max:.0%} of the CPUs in a kept round "
        f"({'quiet' if quiet else 'NOT quiet'}; {len(result['discarded_rounds'])} busy rounds discarded)"
    )
    print()
    print(
        f"machine: {machine['cpu']}, {machine['threads']} threads, {machine['isa']}; {result['date']}; load: {load_txt}"
    )
    print(f"{'benchmark':<12}{'reference':>22}{'tool':>34}{'ratio':>8}{'target':>8}  verdict")
    print(
        f"{'stream triad':<12}{t['reference_gbps']:>17.1f} GB/s{t['tool_gbps']:>29.1f} GB/s{t['ratio']:>8.3f}"
        f"{t['target']:>8.2f}  {_verdict(t['pass'])}"
    )
    print(
        f"{'fp32 peak':<12}{p['reference_gflops']:>14.1f} GFLOP/s{p['tool_gflops']:>14.1f} GFLOP/s ({p['variant']})"
        f"{p['ratio']:>8.3f}{p['target']:>8.2f}  {_verdict(p['pass'])}"
    )
    print(
        f"(ratios: median over {result['options']['rounds']} rounds of median-based figures, per-round range "
        f"triad {t['ratio_min']:.3f}-{t['ratio_max']:.3f}, peak {p['ratio_min']:.3f}-{p['ratio_max']:.3f}; "
        f"best-sample ratios {t['ratio_best']:.3f} and {p['ratio_best']:.3f})"
    )
    print(f"results: {path}")


def print_markdown(result: Dict[str, Any], started: dt.datetime) -> None:
    """Print the two rows bench/README.md's table takes."""
    t, p = result["summary"]["triad"], result["summary"]["peak"]
    machine, load = result["machine"], result["load"]
    kept_max, quiet = load["foreign_cpu_max_kept_round"], load["quiet"]
    print()
    print("markdown rows for bench/README.md:")
    day = started.strftime("%Y-%m-%d")
    cpu = f"{machine['cpu']}, {machine['threads']} threads"
    lw = (
        "load n/a"
        if kept_max is None
        else f"{'quiet' if quiet else 'BUSY'} ({'≤' if quiet else 'up to'} {kept_max:.0%})"
    )
    lw += f", {len(result['rounds'])} rounds"
    print(
        f"| {day} | {cpu} | {lw} | stream triad | {t['reference_gbps']:.1f} GB/s | {t['tool_gbps']:.1f} GB/s "
        f"| {t['ratio']:.3f} | ≥ 0.90 | {_verdict(t['pass'])} |"
    )
    print(
        f"| {day} | {cpu} | {lw} | FP32 peak ({p['variant']}) | {p['reference_gflops']:.1f} GFLOP/s "
        f"| {p['tool_gflops']:.1f} GFLOP/s | {p['ratio']:.3f} | ≥ 0.85 | {_verdict(p['pass'])} |"
    )


def main(argv: Optional[List[str]] = None) -> int:
    """Build the reference, run the interleaved rounds, write the JSON and print the verdicts; returns 0
    where both ratios meet their targets, else 1."""
    args = parse_args(argv)

    from apple_roofline._native import _core
    from apple_roofline.sizes import parse_size

    n = max(64, parse_size(args.array_bytes) // 4 // 64 * 64)  # the stream suite's own element count
    features = _core.cpu_features()
    threads = int(features["threads"])
    tmp = tempfile.TemporaryDirectory(prefix="bench_cpu-")
    ref = prepare_reference(args.cc, threads, Path(tmp.name))
    core = _core_file()
    print_setup(ref, core, threads, n, args)

    quiet_before = wait_quiet(args.wait_quiet) if args.wait_quiet > 0 else None
    before = {"quiet_probe_before": quiet_before, "loadavg_before": _loadavg()}
    mon = LoadMonitor()
    started = dt.datetime.now(dt.timezone.utc).astimezone()
    rounds = run_rounds(ref, n, threads, args)
    load = load_record(rounds, mon.foreign(), before, _loadavg())
    result: Dict[str, Any] = {
        "date": started.isoformat(timespec="seconds"),
        "machine": machine_record(rounds, threads),
        "tool": {"version": _tool_version(), "core": core, "features": features},
        "reference": reference_record(ref),
        "options": {
            "array_bytes": 4 * n,
            "n": n,
            "rounds": args.rounds,
            "reps": args.reps,
            "fma_seconds": args.fma_seconds,
        },
        "load": load,
        "summary": summarize(rounds.kept),
        "rounds": rounds.kept,
        "discarded_rounds": rounds.discarded,
    }
    path = write_result(result, args.out, started)
    print_table(result, path)
    print_markdown(result, started)
    tmp.cleanup()
    summary = result["summary"]
    return 0 if summary["triad"]["pass"] and summary["peak"]["pass"] else 1


def _hypervisor() -> Optional[str]:
    try:
        with open("/proc/cpuinfo") as f:
            if " hypervisor" not in f.read():
                return None
        r = subprocess.run(["lscpu"], capture_output=True, text=True)
        m = re.search(r"Hypervisor vendor:\s*(\S+)", r.stdout)
        return m.group(1) if m else "yes"
    except OSError:
        return None


def _tool_version() -> Optional[str]:
    try:
        from apple_roofline._version import __version__

        return __version__
    except ImportError:
        return None


def _core_file() -> Dict[str, Any]:
    """Which native module was measured (path, mtime, sha256 prefix): builds change under you."""
    import hashlib

    from apple_roofline._native import _core

    path = getattr(_core, "__file__", None)
    if not path:
        return {}
    data = Path(path).read_bytes()
    mtime = dt.datetime.fromtimestamp(os.path.getmtime(path)).astimezone().isoformat(timespec="seconds")
    return {"path": path, "mtime": mtime, "sha256": hashlib.sha256(data).hexdigest()[:16]}


if __name__ == "__main__":
    sys.exit(main())
