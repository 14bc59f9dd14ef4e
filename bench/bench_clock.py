#!/usr/bin/env python3
"""The CUDA effective clock against Nsight Compute's, and what the probed launches cost.

    python bench/bench_clock.py [--device cuda:0] [--reps 10] [--rounds 12] [--pairs 32] [--ncu PATH] [--no-ncu]
                                [--out DIR]

For the FP32 peak kernels (the peak suite's FP32 variants), one mma.sync shape (32×32×32 FP16→FP32)
and two wgmma shapes (64×64×32 and 64×256×64 FP16→FP32, Hopper only), each built through the
suites exactly as ``run`` builds it (docs/design/clocks.md, "Clocks"):

* **cost of the probe**: the backend times every kernel's build without the probe and reads the clock
  from probed launches of a second build between the samples (shaders/cuda/clock.cuh); the same
  kernel with ``AR_CLOCK_PROBE=0`` (no probed launches at all) and with them are compared in
  **sample pairs**: each pair is two calls back to back, one per build, of two samples each (ABAB
  order, alternating which build goes first); the second sample of the probed call follows its first
  sample's probed launches, as a sample of ``run`` that follows a probed sample does, and the second sample
  of the other call follows a sample directly. The pair's ratio is GFLOP/s without ÷ with of those
  two samples (1.000: free). A pair lasts a few milliseconds, so a rate that moves between levels
  over longer times (vec4_cross4 sits at one of two about 2 % apart, whichever build runs) weighs on
  both samples of a pair alike. ``--pairs`` pairs follow each of ``--rounds`` rounds; the row is
  the median of every pair's ratio with its 95 % distribution-free interval; the target is met when
  the whole interval lies within 0.5 % of 1 (``cost_of_probe``). Each round also times both builds
  as ``run`` does (ABBA order, the GFLOP/s columns); every round's output is validated against
  NumPy after its pairs, the build that ran last alternating by round.
* **effective clock vs Nsight Compute**: ``ncu --clock-control none --metrics
  sm__cycles_elapsed.avg.per_second`` on the probed launches (``<entry>_ar_clock``) in a child process
  (this script with ``--child``: the same case, warmed by 200 launches of the build without the probe,
  then 5 timed launches, each followed by its probed ones), which also prints the tool's effective
  clock (Σ cycles / Σ ns of every SM's window from its first block's entry to its last block's exit)
  of those same launches; the row is the ratio tool / ncu, medians of the same launches (target:
  within 1 %). The tool's effective clock over its own timed samples (``effective_clock_mhz``, a
  steady stream of launches) is given beside it: ncu serializes the launches it profiles, and a
  tensor-core kernel that a steady stream holds at its power limit runs faster alone.

Prints one table; writes bench_clock-<timestamp>.json to ``--out`` (default bench/results), after every row. Needs a
CUDA GPU; ncu where ``--no-ncu`` is not given (its rows say "NOT RUN" where it is missing).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime as dt
import glob
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (label, suite, selector) of the kernels compared.
TARGETS: Tuple[Tuple[str, str, Tuple[Any, ...]], ...] = (
    ("mma.sync 32x32x32 fp16→fp32", "matrix", ("mma", "fp16→fp32", (32, 32, 32))),
    ("wgmma 64x64x32 fp16→fp32", "matrix", ("wgmma", "fp16→fp32", (64, 64, 32))),
    ("wgmma 64x256x64 fp16→fp32", "matrix", ("wgmma", "fp16→fp32", (64, 256, 64))),
    ("FP32 peak", "peak", ("fp32", "vec4_indep8", "vec4_cross4")),
)


#: Launches the ncu child runs unprofiled first, so the profiled ones find the GPU at its loaded clock.
WARM = 200
#: How the ncu child prints the tool's effective clock of the profiled launches.
TOOL_LINE = "AR_TOOL_MHZ"
#: The probed build's entry is the timed one's with this suffix (native/cuda/cuda_backend.cpp).
PROBE_SUFFIX = "_ar_clock"


class ProbeSwitch:
    """A ``_core.Backend`` whose compile() adds ``AR_CLOCK_PROBE=0`` while :attr:`off` is set (no
    probed launches, no clock read: clock.cuh), so that the suites' own cases build both variants."""

    def __init__(self, backend: Any) -> None:
        self._b = backend
        self.off = False

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> Any:
        extra = {"AR_CLOCK_PROBE": 0} if self.off else {}
        return self._b.compile(source, entry, {**constants, **extra})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)


def cases(backend: Any, info: Dict[str, Any], only: str = "") -> Iterator[Tuple[str, Any]]:
    """(label, Case) of every target this GPU can run (wgmma only on Hopper); with ``only``, of the
    target whose label it starts with (the ncu child builds no other kernel)."""
    from apple_roofline.suites import SuiteContext
    from apple_roofline.suites.matrix import suite as matrix_suite
    from apple_roofline.suites.matrix.kernels import API_BY_NAME
    from apple_roofline.suites.peak.suite import PeakSuite

    ctx = SuiteContext(backend, "cuda", info, False, 1 << 26)
    for label, suite, sel in TARGETS:
        if only and not only.startswith(label):
            continue
        if suite == "peak":
            for case in PeakSuite(ctx).cases():
                if case.kernel.dtype == sel[0] and case.kernel.name in sel[1:]:
                    yield f"{label} {case.kernel.name}", case
            continue
        api = dataclasses.replace(API_BY_NAME[sel[0]], shapes=(sel[2],))
        saved = matrix_suite.APIS
        matrix_suite.APIS = (api,)
        try:
            for case in matrix_suite.MatrixSuite(ctx).cases():
                if case.kernel.dtype == sel[1] and case.work_items > 1:
                    yield label, case
        finally:
            matrix_suite.APIS = saved


#: The probe's cost target: the paired ratio's whole interval within this fraction of 1.
COST_TARGET = 0.005


def cost_of_probe(ratios: List[float]) -> Dict[str, Any]:
    """The probe's cost from sample pairs (:func:`paired_ratios`: GFLOP/s without ÷ with, each of two
    samples timed back to back): the median of the ratios and its 95 % distribution-free interval
    (``apple_roofline.timing.stats.median_interval``), and the verdict against :data:`COST_TARGET`: "within"
    when the whole interval lies within it of 1, "above" when it lies wholly outside, "not resolved"
    otherwise."""
    from apple_roofline.timing.stats import median_interval

    ci = median_interval(ratios)
    lo, hi = 1 - COST_TARGET, 1 + COST_TARGET
    verdict = "within" if lo <= ci.low and ci.high <= hi else "above" if ci.high < lo or ci.low > hi else "not resolved"
    return {
        "cost_ratio": ci.median,
        "cost_ratio_low": ci.low,
        "cost_ratio_high": ci.high,
        "cost_coverage": ci.coverage,
        "cost_pairs": len(ratios),
        "cost_ratios": ratios,
        "cost_verdict": verdict,
    }


def paired_ratios(case: Any, kernels: Dict[bool, Any], batch: int, pairs: int) -> List[float]:
    """``pairs`` sample pairs of ``case`` (module docstring, "cost of the probe"): for each, both
    builds (``kernels[False]`` with the probed launches, ``kernels[True]`` without) make one call of
    two samples of ``batch`` launches, back to back, the first build alternating; the ratio is the
    second samples' seconds, with ÷ without (= GFLOP/s without ÷ with). Every call waits within the
    watchdog's bound of its predicted time."""
    from apple_roofline.timing.watchdog import watched

    ratios = []
    per_sample = None
    for i in range(pairs):
        second: Dict[bool, float] = {}
        for off in (False, True) if i % 2 == 0 else (True, False):
            with watched(f"kernel {case.kernel.name} (sample pairs)", None if per_sample is None else 4 * per_sample):
                got = kernels[off].time(case.args, case.work_items, batch, 2)
            per_sample = max(got)
            second[off] = got[1]
        ratios.append(second[False] / second[True])
    return ratios


def timed(case: Any, kernel: Any, reps: int) -> Tuple[float, Dict[str, Any], int]:
    """Median GFLOP/s of ``kernel`` on ``case`` as ``run`` times it, its effective-clock parameters
    and its launches per sample."""
    from apple_roofline.timing.clocks import effective_clock
    from apple_roofline.timing.measure import time_kernel

    t = time_kernel(kernel, case.args, case.work_items, reps=reps, spin_up_s=0.2)
    return case.flops / statistics.median(t.samples_s) / 1e9, effective_clock(t.clock, {}), t.batch


def validated(case: Any) -> None:
    """Raise SystemExit naming the kernel where ``case``'s output does not match NumPy."""
    ok, msg = case.check()
    if not ok:
        raise SystemExit(f"{case.kernel.name}: invalid output: {msg}")


def find_ncu(given: Optional[str]) -> Optional[str]:
    if given:
        return given
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in (
        "/usr/local/cuda*/bin/ncu",
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/cuda*/nsight-compute*/ncu",
    ):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def ncu_mhz(text: str) -> List[float]:
    """Every ``sm__cycles_elapsed.avg.per_second`` of ncu's ``--csv`` output, in MHz."""
    start = text.find('"ID"')
    if start < 0:
        return []
    scale = {
        "cycle/second": 1e-6,
        "cycle/msecond": 1e-3,
        "cycle/usecond": 1.0,
        "cycle/nsecond": 1e3,
        "hz": 1e-6,
        "khz": 1e-3,
        "mhz": 1.0,
        "ghz": 1e3,
    }
    out = []
    for row in csv.DictReader(io.StringIO(text[start:])):
        if row.get("Metric Name") == "sm__cycles_elapsed.avg.per_second":
            unit = (row.get("Metric Unit") or "").strip().lower()
            value = float((row.get("Metric Value") or "nan").replace(",", ""))
            if unit in scale:
                out.append(value * scale[unit])
    return out


def child(label: str, device: str) -> None:
    """Run ``label``'s kernel: :data:`WARM` unprofiled launches back to back, then 5 single launches
    (the profiled ones: ncu ``--launch-skip WARM``), printing the tool's effective clock of each of
    those same launches on one line (:data:`TOOL_LINE`, then a JSON list of MHz)."""
    from apple_roofline.devices import open_device

    backend = ProbeSwitch(open_device(device))
    for name, case in cases(backend, backend.info(), label):
        if name != label:
            continue
        backend.off = True  # the warm-up launches no probed build: ncu profiles only the 5 below
        warm = case.make_kernel()
        backend.off = False
        k = case.make_kernel()
        warm.time(case.args, case.work_items, WARM, 1)
        mhz = []
        for _ in range(5):
            k.time(case.args, case.work_items, 1, 1)
            mhz += list(k.clock["mhz"])
        print(TOOL_LINE, json.dumps(mhz), flush=True)
        return


def tool_mhz(text: str) -> List[float]:
    """The child's :data:`TOOL_LINE` values (MHz) in ncu's output, or [] without one."""
    for line in text.splitlines():
        if line.startswith(TOOL_LINE):
            return [float(v) for v in json.loads(line[len(TOOL_LINE) :])]
    return []


def parse_args() -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--pairs", type=int, default=32, help="sample pairs after each round")
    ap.add_argument("--ncu", default=None)
    ap.add_argument("--no-ncu", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return ap.parse_args()


def both_builds(backend: ProbeSwitch, case: Any) -> Dict[bool, Any]:
    """``case``'s kernel built with the probed launches (key False) and without them (key True)."""
    kernels = {}
    for off in (False, True):
        backend.off = off
        kernels[off] = case.make_kernel()
    backend.off = False
    return kernels


def measure_rounds(case: Any, kernels: Dict[bool, Any], a: argparse.Namespace) -> Dict[str, Any]:
    """``a.rounds`` rounds of ``case``, each timing both builds as ``run`` does (ABBA order), then
    ``a.pairs`` sample pairs, then validating the output: ``with_probe`` and ``without`` (GFLOP/s per
    round), ``clocks`` (the probed build's effective-clock parameters per round) and ``ratios`` (every
    pair's). Raises SystemExit where an output is invalid."""
    got: Dict[str, List[Any]] = {"with_probe": [], "without": [], "clocks": [], "ratios": []}
    for i in range(a.rounds):  # ABBA: with, without, without, with, ...
        order = (False, True) if i % 2 == 0 else (True, False)
        case.reset()
        batch = 1
        for off in order:
            rate, clock, batch = timed(case, kernels[off], a.reps)
            if off:
                got["without"].append(rate)
            else:
                got["with_probe"].append(rate)
                got["clocks"].append(clock)
        got["ratios"] += paired_ratios(case, kernels, batch, a.pairs)
        validated(case)
    return got


def ncu_fields(ncu: str, entry: str, label: str, device: str) -> Dict[str, Any]:
    """Nsight Compute's clock of the probed launches of ``entry`` in a child process (module
    docstring) beside the tool's own of the same launches: ``ncu_mhz``,
    ``tool_mhz_profiled_launches``, ``ncu_returncode`` and ``tool_over_ncu`` (or ``ncu_error`` where
    either is missing)."""
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--metrics",
        "sm__cycles_elapsed.avg.per_second",
        "--csv",
        "-k",
        f"regex:^{entry}{PROBE_SUFFIX}$",
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        label,
        "--device",
        device,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    got, same = ncu_mhz(p.stdout), tool_mhz(p.stdout)
    fields: Dict[str, Any] = {"ncu_mhz": got, "tool_mhz_profiled_launches": same, "ncu_returncode": p.returncode}
    if not got or not same:
        fields["ncu_error"] = (p.stderr or p.stdout)[-600:]
    else:
        fields["tool_over_ncu"] = statistics.median(same) / statistics.median(got)
    return fields


def case_row(label: str, case: Any, backend: ProbeSwitch, a: argparse.Namespace, ncu: Optional[str]) -> Dict[str, Any]:
    """One kernel's row: both builds' rates, the probe's cost, the effective clocks and, with ncu,
    the comparison with its clock."""
    kernels = both_builds(backend, case)
    got = measure_rounds(case, kernels, a)
    row: Dict[str, Any] = {
        "kernel": label,
        "entry": case.kernel.name,
        "gflops_with_probe": statistics.median(got["with_probe"]),
        "gflops_without_probe": statistics.median(got["without"]),
        **cost_of_probe(got["ratios"]),
        "gflops_with_probe_rounds": got["with_probe"],
        "gflops_without_probe_rounds": got["without"],
        "effective_clock_mhz": [c.get("effective_clock_mhz") for c in got["clocks"]],
        "clock": got["clocks"][-1],
    }
    if ncu:
        row.update(ncu_fields(ncu, kernels[False].entry, label, a.device))
    return row


def save_rows(path: str, info: Dict[str, Any], ncu: Optional[str], rows: List[Dict[str, Any]]) -> str:
    """Write the JSON (the device's scalar facts, ncu's path, the rows so far) to path; returns path."""
    with open(path, "w") as f:
        json.dump(
            {
                "device": {k: v for k, v in info.items() if isinstance(v, (int, float, str, bool))},
                "ncu": ncu,
                "rows": rows,
            },
            f,
            indent=1,
            default=str,
        )
    return path


def print_table(info: Dict[str, Any], device: str, rows: List[Dict[str, Any]]) -> None:
    """Print the markdown table of every row."""
    print(f"\n{info.get('name')} ({device}); {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(
        "| kernel | GFLOP/s with probe | without | without / with (sample pairs: median, 95 % interval) | "
        "effective MHz, timed samples | effective MHz, profiled launches | ncu MHz | tool / ncu |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        ncu_text = f"{statistics.median(r['ncu_mhz']):.0f}" if r.get("ncu_mhz") else "NOT RUN"
        same = (
            f"{statistics.median(r['tool_mhz_profiled_launches']):.0f}"
            if r.get("tool_mhz_profiled_launches")
            else "NOT RUN"
        )
        ratio = f"{r['tool_over_ncu']:.4f}" if "tool_over_ncu" in r else "—"
        eff = "/".join(f"{e:.0f}" if isinstance(e, float) else "—" for e in r["effective_clock_mhz"])
        print(
            f"| {r['kernel']} | {r['gflops_with_probe']:,.0f} | {r['gflops_without_probe']:,.0f} | "
            f"{r['cost_ratio']:.4f} ({r['cost_ratio_low']:.4f} to {r['cost_ratio_high']:.4f}, "
            f"{r['cost_verdict']}) | {eff} | {same} | {ncu_text} | {ratio} |"
        )


def main() -> int:
    """Measure every target kernel (or, with ``--child``, be the ncu child); returns 0."""
    a = parse_args()
    if a.child:
        child(a.child, a.device)
        return 0

    from apple_roofline.devices import open_device

    real = open_device(a.device)
    info = real.info()
    backend = ProbeSwitch(real)
    ncu = None if a.no_ncu else find_ncu(a.ncu)
    rows: List[Dict[str, Any]] = []
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"bench_clock-{dt.datetime.now():%Y%m%d-%H%M%S}.json")
    for label, case in cases(backend, info):
        row = case_row(label, case, backend, a, ncu)
        rows.append(row)
        save_rows(path, info, ncu, rows)  # after every row, so a run cut short keeps what it measured
        print(
            f"{label:38s} cost {row['cost_ratio']:.4f}  effective {row['effective_clock_mhz']} MHz  profiled launches "
            f"{row.get('tool_mhz_profiled_launches', 'NOT RUN')}  ncu {row.get('ncu_mhz', 'NOT RUN')}"
            f"  ratio {row.get('tool_over_ncu', float('nan')):.4f}",
            file=sys.stderr,
            flush=True,
        )
    print_table(info, a.device, rows)
    print(f"\n{save_rows(path, info, ncu, rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
