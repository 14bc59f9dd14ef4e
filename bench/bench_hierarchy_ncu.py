#!/usr/bin/env python3
"""The hierarchy suite's byte counts and shared-memory ceiling against Nsight Compute, on a CUDA GPU.

    python bench/bench_hierarchy_ncu.py [--out DIR] [--ncu PATH] [--device cuda:0] [--skip-sweep]

Targets (issue 24, reference GPU H100 / H200):

* **bytes per level**: for the read kernel at one working set inside each level — a quarter of one
  SM's L1, a quarter of the L2, 8× the L2 — and for read-modify-write at 8× the L2, the bytes the
  tool claims per launch (the kernel table's count, :mod:`apple_roofline.suites.hierarchy.suite`) over the
  bytes Nsight Compute counts at that level in one launch: ``l1tex__t_bytes.sum`` (L1), ``lts__t_bytes.sum``
  (L2), ``dram__bytes.sum`` (DRAM). Target: every ratio within 5 % of 1. Beside the L2's, the bytes
  of the L2 sectors L1TEX requested (``lts__t_sectors_srcunit_tex.sum`` × 32), since ``lts__t_bytes``
  also counts traffic L1 never asked for (:data:`EXTRA_METRICS`). The shared-memory kernel's
  claimed bytes (threadgroup memory read and written) are set against ``smsp__sass_data_bytes_mem_shared.sum``
  (reported, same target).
* **shared-memory ceiling**: the tool's measured ``Shared memory bandwidth`` ceiling over
  SMs × 128 B/clk × the SM clock it ran at (NVML's ``sm_clock_mhz`` during its samples where the run
  sampled it; else the highest SM clock ``nvidia-smi`` reported during the sweep; else the driver's
  maximum clock: either can only lower the ratio). Target: >= 0.90.

First the tool's full sweep runs (``run_roofline(RunOptions(device=device, suites=["hierarchy"]))``,
written to ``--out`` as a run with its report and figures; ``--skip-sweep`` leaves it out and then
no ceiling is checked); then one child process of this script, under ``ncu --metrics ... --csv
--print-units base``, plans the same cases through the suite itself and launches each exactly once
(``Kernel.launch``), writing the claimed bytes of each to a JSON file; ncu replays each launch to
collect its counters. No ncu (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute/*) makes that
part NOT RUN, reported. Prints a table and the verdicts; writes bench_hierarchy_ncu-<timestamp>.json
to --out. Exit status 0 when every target that ran passed, 1 when one failed, 2 when none failed but
some did not run.

Importing this module needs no GPU: :func:`parse_ncu_csv` and :func:`verdicts` are pure
(tests/unit/test_bench_hierarchy.py).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import glob
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
#: The counter each case's claimed bytes are compared with, by the level its working set lies in.
METRICS: Dict[str, str] = {
    "L1": "l1tex__t_bytes.sum",
    "L2": "lts__t_bytes.sum",
    "DRAM": "dram__bytes.sum",
    "Shared memory": "smsp__sass_data_bytes_mem_shared.sum",
}
#: Further counters, reported beside: the L2's sectors requested by L1TEX alone (32 bytes each). On an
#: H100 (2026-11-26) lts__t_bytes counted 1.12× the bytes a read at an L2 working set requested and
#: 1.51× at DRAM working sets (where dram__bytes matched the claim within 0.01 %): it also counts
#: traffic L1 did not ask for (fills from DRAM, the fabric between the L2's two partitions).
EXTRA_METRICS: Dict[str, str] = {"L2": "lts__t_sectors_srcunit_tex.sum"}
SECTOR = 32
#: Ratios within this of 1 pass.
BYTES_TOLERANCE = 0.05
#: The shared-memory ceiling's target fraction of SMs × 128 B/clk × clock.
SHARED_TARGET = 0.90
#: Bytes per clock per SM of shared memory (32 banks × 4 bytes: NVIDIA's tuning guides, "Shared Memory").
SHARED_BYTES_PER_CLK = 128


def find_ncu(given: Optional[str]) -> Optional[str]:
    """The ncu binary: ``given``, else on PATH, else /usr/local/cuda/bin, else the newest
    /opt/nvidia/nsight-compute/*/ncu; None when there is none."""
    for cand in [
        given,
        shutil.which("ncu"),
        "/usr/local/cuda/bin/ncu",
        *sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True),
    ]:
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


def parse_ncu_csv(text: str) -> List[Dict[str, float]]:
    """ncu's ``--csv --print-units base`` page: one dict of metric name to value per profiled
    launch, in launch order (the ``ID`` column). Lines before the header (ncu's ``==PROF==`` notes,
    the application's output) are skipped; numbers may carry thousands separators."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    out: Dict[int, Dict[str, float]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        try:
            launch = int(row["ID"])
            value = float(str(row["Metric Value"]).replace(",", ""))
        except (KeyError, ValueError):
            continue
        out.setdefault(launch, {})[str(row["Metric Name"])] = value
    return [out[k] for k in sorted(out)]


def verdicts(cases: Sequence[Mapping[str, Any]], counters: Sequence[Mapping[str, float]]) -> List[Dict[str, Any]]:
    """One row per case: its claimed bytes, the counter of its level and the ratio claimed / counted,
    PASS within :data:`BYTES_TOLERANCE`. ``cases`` and ``counters`` are in launch order."""
    rows = []
    for case, got in zip(cases, counters):
        metric = METRICS[str(case["level"])]
        counted = got.get(metric)
        ratio = case["bytes"] / counted if counted else None
        extra = EXTRA_METRICS.get(str(case["level"]))
        sectors = got.get(extra) if extra else None
        rows.append(
            {
                **case,
                "metric": metric,
                "counted": counted,
                "ratio": ratio,
                "verdict": "NOT RUN" if ratio is None else "PASS" if abs(ratio - 1) <= BYTES_TOLERANCE else "FAIL",
                **(
                    {
                        "extra_metric": extra,
                        "extra_counted": sectors * SECTOR if sectors else None,
                        "extra_ratio": case["bytes"] / (sectors * SECTOR) if sectors else None,
                    }
                    if extra
                    else {}
                ),
            }
        )
    return rows


# ---- the child: plans the suite's cases and launches each once (under ncu) -----------------------------


def child(device: str, claims_path: str) -> None:
    from apple_roofline.devices import open_device
    from apple_roofline.suites import SuiteContext
    from apple_roofline.suites.hierarchy.suite import SWEEP_OPTION, HierarchySuite
    from apple_roofline.theoretical.caches import cache_levels

    backend = open_device(device)
    info = dict(backend.info())
    levels = {lv.name: lv.capacity for lv in cache_levels(info)[0]}
    want = {
        ("read", levels["L1"] // 4): "L1",
        ("read", levels["L2"] // 4): "L2",
        ("read", levels["L2"] * 8): "DRAM",
        ("rmw", levels["L2"] * 8): "DRAM",
    }
    suite = HierarchySuite(SuiteContext(backend, str(info["backend"]), info, False, 0, {SWEEP_OPTION: "levels"}))
    suite.points = sorted({ws for _k, ws in want})
    suite.gbps = {"read": 0.0, "rmw": 0.0}  # no probe launches (ncu would profile them): first-launch passes
    claims = []
    for case in suite.cases():
        ws = int(case.params.get("working_set_bytes", 0))
        level = "Shared memory" if case.kernel.name == "shared" else want.get((case.kernel.name, _nearest(ws, want)))
        if level is None:
            continue
        kernel = case.make_kernel()
        kernel.launch(case.args, case.work_items)
        backend.synchronize()
        ok, msg = case.check()
        claims.append(
            {
                "kernel": case.kernel.name,
                "level": level,
                "working_set_bytes": ws,
                "bytes": int(case.bytes),
                "passes": case.params.get("passes"),
                "lanes": case.params.get("lanes"),
                "valid": ok,
                "validation": msg,
            }
        )
    Path(claims_path).write_text(json.dumps(claims, indent=1))


def _nearest(ws: int, want: Mapping[Tuple[str, int], str]) -> int:
    """The planned working set ``ws`` was rounded from (whole lanes)."""
    return min((w for _k, w in want), key=lambda w: abs(w - ws))


# ---- the parent ----------------------------------------------------------------------------------------


def sweep(device: str, out: Path) -> Dict[str, Any]:
    """The tool's full sweep; its run files in ``out``; the shared-memory ceiling's verdict."""
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline
    from apple_roofline.roofline.views.outputs import write_run_files
    from apple_roofline.suites.hierarchy.levels import level_curves

    smi = shutil.which("nvidia-smi")
    sampler = (
        subprocess.Popen(
            [smi, "--query-gpu=clocks.sm", "--format=csv,noheader,nounits", "-lms", "100"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        if smi
        else None
    )
    try:
        run = run_roofline(RunOptions(device=device, suites=["hierarchy"], command=sys.argv))
    finally:
        smi_mhz = _stop_sampler(sampler)
    folder = out / "hierarchy-run"
    folder.mkdir(parents=True, exist_ok=True)
    write_run_files(run, folder)
    for curve in level_curves(run.measurements):
        for p in curve.plateaus:
            print(
                f"  {curve.kernel:5s} {p.level:5s} {p.gbps:10.1f} GB/s  working sets {p.lo} to {p.hi} B, "
                f"edge {int(p.edge) if p.edge else '-'} B, documented {p.capacity or '-'} B"
            )
    shared = [m for m in run.measurements if m.kernel == "shared" and m.valid]
    result: Dict[str, Any] = {
        "device": run.device_name,
        "invalid": sum(not m.valid for m in run.measurements),
        "ceilings": [c.to_dict() for c in run.ceilings if c.is_level],
    }
    if shared:
        m = shared[0]
        sms = int(run.device.get("compute_units", 0) or 0)
        mhz = m.params.get("sm_clock_mhz")
        if isinstance(mhz, (int, float)):
            clock, clock_from = float(mhz) * 1e6, "NVML sm_clock_mhz during the samples"
        elif smi_mhz:
            clock, clock_from = (
                smi_mhz * 1e6,
                "the highest SM clock nvidia-smi reported during the sweep (every 100 ms)",
            )
        else:
            clock, clock_from = float(run.device.get("clock_hz", 0) or 0), "the driver's maximum clock"
        peak = sms * SHARED_BYTES_PER_CLK * clock / 1e9
        ratio = m.best_gbps / peak if peak else None
        result["shared"] = {
            "gbps_best": m.best_gbps,
            "gbps_median": m.gbps,
            "sms": sms,
            "clock_hz": clock,
            "clock_from": clock_from,
            "peak_gbps": peak,
            "ratio": ratio,
            "verdict": "NOT RUN" if ratio is None else "PASS" if ratio >= SHARED_TARGET else "FAIL",
        }
    return result


def _stop_sampler(p: Optional["subprocess.Popen[str]"]) -> Optional[float]:
    """Stop an ``nvidia-smi -lms`` sampler; the highest SM clock it printed, MHz (None without one)."""
    if p is None:
        return None
    p.terminate()
    out, _ = p.communicate(timeout=10)
    values = [float(x) for x in out.split() if x.replace(".", "", 1).isdigit()]
    return max(values) if values else None


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--ncu", default=None)
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def profile(
    ncu: str, metrics: Sequence[str], device: str, claims_path: Path, log: Path
) -> Tuple[List[str], "subprocess.CompletedProcess[str]"]:
    """This script's child under ``ncu --metrics metrics`` (its CSV into log, the claims into
    claims_path): the command and the finished process."""
    cmd = [
        str(ncu),
        "--metrics",
        ",".join(metrics),
        "--csv",
        "--print-units",
        "base",
        "--log-file",
        str(log),
        "-k",
        "regex:^hier_",
        sys.executable,
        str(Path(__file__).resolve()),
        "--device",
        device,
        "--child",
        str(claims_path),
    ]
    return cmd, subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def byte_rows(ncu: str, device: str, out: Path, report: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The cases profiled under ncu (every counter, else the targets' alone) and judged
    (:func:`verdicts`); the command, exit status and stderr noted in report. [] where ncu failed."""
    claims_path = out / "hierarchy-claims.json"
    log = out / "hierarchy-ncu.csv"
    cmd, p = profile(ncu, [*METRICS.values(), *EXTRA_METRICS.values()], device, claims_path, log)
    if p.returncode != 0 or not log.exists() or not parse_ncu_csv(log.read_text()):
        # an ncu that lacks a further counter: the targets' alone
        cmd, p = profile(ncu, list(METRICS.values()), device, claims_path, log)
    report["ncu_command"] = " ".join(cmd)
    report["ncu_returncode"] = p.returncode
    report["ncu_stderr"] = p.stderr[-4000:]
    if p.returncode == 0 and claims_path.exists() and log.exists():
        return verdicts(json.loads(claims_path.read_text()), parse_ncu_csv(log.read_text()))
    print(f"ncu failed ({p.returncode}): {p.stderr[-2000:]}", file=sys.stderr)
    return []


def print_bytes(device: str, ncu: Optional[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Print the table of bytes claimed against bytes counted by ncu (NOT RUN where there are no rows)."""
    print(f"\n{device}: bytes the tool claims per launch against Nsight Compute ({ncu or 'not found'})")
    print(
        f"{'kernel':8s} {'level':14s} {'working set':>14s} {'claimed B':>16s} {'counter':40s} {'counted B':>16s} "
        f"{'ratio':>7s} verdict"
    )
    for r in rows:
        counted = f"{r['counted']:.0f}" if r["counted"] is not None else "-"
        ratio = f"{r['ratio']:.4f}" if r["ratio"] is not None else "-"
        print(
            f"{r['kernel']:8s} {r['level']:14s} {r['working_set_bytes']:14d} {r['bytes']:16d} {r['metric']:40s} "
            f"{counted:>16s} {ratio:>7s} {r['verdict']}{'' if r['valid'] else ' (INVALID output)'}"
        )
        if r.get("extra_ratio") is not None:
            print(
                f"{'':8s} {'':14s} {'':14s} {'':16s} {r['extra_metric'] + ' x 32':40s} {r['extra_counted']:16.0f} "
                f"{r['extra_ratio']:7.4f} (L1TEX's requests alone)"
            )
    if not rows:
        print("NOT RUN: " + ("no ncu found" if ncu is None else "ncu did not profile the cases (see the JSON)"))


def print_shared(shared: Mapping[str, Any]) -> None:
    """Print the shared-memory ceiling against its peak."""
    print(
        f"\nshared-memory ceiling {shared['gbps_best']:.0f} GB/s (best sample; median {shared['gbps_median']:.0f}) "
        f"/ ({shared['sms']} SMs x {SHARED_BYTES_PER_CLK} B/clk x {shared['clock_hz'] / 1e6:.0f} MHz, "
        f"{shared['clock_from']}) = {shared['peak_gbps']:.0f} GB/s: ratio {shared['ratio']:.3f} "
        f"(target >= {SHARED_TARGET}) {shared['verdict']}"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the sweep and the profiled child (or, with ``--child``, be the child); returns the exit
    status of the module docstring."""
    args = parse_args(argv)
    if args.child:
        child(args.device, args.child)
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: Dict[str, Any] = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    if not args.skip_sweep:
        print("the tool's working-set sweep:", file=sys.stderr)
        report["sweep"] = sweep(args.device, out)
    ncu = find_ncu(args.ncu)
    report["ncu"] = ncu or "not found"
    rows = byte_rows(ncu, args.device, out, report) if ncu is not None else []
    report["bytes"] = rows
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    (out / f"bench_hierarchy_ncu-{stamp}.json").write_text(json.dumps(report, indent=1))
    print_bytes(report.get("sweep", {}).get("device", args.device), ncu, rows)
    shared = report.get("sweep", {}).get("shared")
    if shared:
        print_shared(shared)
    verdict_list = [r["verdict"] for r in rows] + ([shared["verdict"]] if shared else [])
    if "FAIL" in verdict_list:
        return 1
    return 2 if not rows or not shared or "NOT RUN" in verdict_list else 0


if __name__ == "__main__":
    sys.exit(main())
