#!/usr/bin/env python3
"""The device's timer against the host's clock, and the clock the probe reads over the same samples.

    python bench/bench_timer.py [--device cuda:0] [--seconds 1.0] [--repeats 3] [--out DIR]

Every rate the tool reports is work over a time its backend's timer measured (CUDA events on
NVIDIA, docs/design.md, "Measurement"), and every clock it reports is cycles over the GPU's own
nanosecond timer (docs/design.md, "Clocks"). A timer that ran slow would raise both alike: a figure
above its pipe would then look like a misread clock. This script times one long sample (about
``--seconds`` of back-to-back launches) of two kernels, cuBLAS SGEMM at 4096 and the peak suite's FP32
``vec4_indep8`` case (built without the clock probe, so nothing runs but the timed launches), by the
backend's timer and by the host's ``time.perf_counter`` around the same synchronous call, and reads
the probe's clock over ten samples of the same kernel (``vec4_indep8``'s probed build; the SGEMM's
spin probe around its sample). The host's time includes the call's launch and synchronisation, so
host ÷ device is at least 1: the row "agrees" when it lies within 1 to 1 + :data:`TOLERANCE`.
The SGEMM's output is checked against NumPy (Freivalds, the GEMM suite's check) and the peak
kernel's with its case's check (the FMA-chain reference) after its samples; an invalid output ends
the script with 1 before any table.

Writes bench_timer-<timestamp>.json to ``--out`` (default bench/results) after every row. Needs a
CUDA GPU (cuBLAS for the SGEMM row).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: How far the host's time may exceed the device's over one sample and still agree: the limits'
#: tolerance (roofline.limits.TOLERANCE), far above a launch's and a synchronisation's microseconds.
TOLERANCE = 0.005
#: The longest sample asked for, in seconds.
MAX_SECONDS = 30.0


def verdict(event_s: float, host_s: float) -> Dict[str, Any]:
    """Host ÷ device of one sample and what it says: "agrees" within 1 to 1 + TOLERANCE, "device
    timer fast or host late" above, "device timer slow" below 1 (the host cannot time less than
    the device ran).

    Raises:
        ValueError: a time that is not positive.
    """
    if not (event_s > 0 and host_s > 0):
        raise ValueError(f"times must be positive seconds (got device {event_s!r}, host {host_s!r})")
    ratio = host_s / event_s
    words = (
        "agrees"
        if 1.0 <= ratio <= 1.0 + TOLERANCE
        else "device timer slow"
        if ratio < 1.0
        else "device timer fast or host late"
    )
    return {"event_s": event_s, "host_s": host_s, "host_over_event": ratio, "verdict": words}


def batch_for(seconds: float, launch_s: float) -> int:
    """Launches for one sample of about ``seconds`` at ``launch_s`` seconds a launch (at least 1)."""
    return max(1, int(round(seconds / max(launch_s, 1e-9))))


def mean_mhz(clock: Optional[Dict[str, Any]]) -> Optional[float]:
    """The mean of a ``Kernel.clock`` reading's values (MHz), None where it has none."""
    values = [float(v) for v in (clock or {}).get("mhz", []) or []]
    return statistics.fmean(values) if values else None


def table(rows: Sequence[Dict[str, Any]]) -> str:
    """The Markdown table of the rows (a dash where the probe read no clock)."""
    head = "| kernel | launches | device timer (s) | host perf_counter (s) | host / device | verdict | probe MHz |\n"
    head += "| --- | ---: | ---: | ---: | ---: | --- | ---: |\n"
    return head + "".join(
        f"| {r['kernel']} | {r['batch']} | {r['event_s']:.6f} | {r['host_s']:.6f} | {r['host_over_event']:.5f} | "
        f"{r['verdict']} | {'—' if r.get('probe_mhz') is None else format(r['probe_mhz'], '.1f')} |\n"
        for r in rows
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    if not 0.01 <= args.seconds <= MAX_SECONDS:
        ap.error(f"--seconds {args.seconds} is outside 0.01 to {MAX_SECONDS:g}")
    if not 1 <= args.repeats <= 100:
        ap.error(f"--repeats {args.repeats} is outside 1 to 100")
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from bench_clock import ProbeSwitch  # the suites' own cases, built without the probe and with it

    from apple_roofline.devices import open_device
    from apple_roofline.suites import SuiteContext
    from apple_roofline.suites.base import read
    from apple_roofline.suites.gemm.suite import check_gemm, gemm_inputs
    from apple_roofline.suites.peak.suite import PeakSuite

    switch = ProbeSwitch(open_device(args.device))
    info = dict(switch.info())
    if info.get("backend") != "cuda":
        ap.error(f"{args.device} is not a CUDA device: the script compares CUDA events with the host's clock")
    n = 4096
    a, b, a_st, b_st = gemm_inputs("fp32", n, np.random.default_rng(n))
    gbufs = [switch.alloc(n * n * 4) for _ in range(3)]
    gbufs[0].write(a_st.ravel())
    gbufs[1].write(b_st.ravel())
    sgemm = switch.gemm("fp32", n, n, n)
    peak_cases = PeakSuite(SuiteContext(switch, "cuda", info, False, 1 << 26)).cases()
    case = next(c for c in peak_cases if c.kernel.name == "vec4_indep8" and c.kernel.dtype == "fp32")
    switch.off = True
    peak = case.make_kernel()
    switch.off = False
    probed = case.make_kernel()

    def sgemm_check() -> Tuple[bool, str]:
        return check_gemm(a, b, read(gbufs[2], "fp32", n * n).reshape(n, n), "fp32")

    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"bench_timer-{stamp}.json")
    rows: List[Dict[str, Any]] = []
    for name, kernel, argv, items, clocked, check in (
        ("cuBLAS SGEMM 4096", sgemm, gbufs, 1, sgemm, sgemm_check),
        (f"FP32 peak vec4_indep8, {case.launch} lanes", peak, case.args, case.launch, probed, case.check),
    ):
        launch_s = min(kernel.time(argv, items, 1, 5))
        batch = batch_for(args.seconds, launch_s)
        for _ in range(args.repeats):
            start = time.perf_counter()
            event_s = kernel.time(argv, items, batch, 1)[0]
            host_s = time.perf_counter() - start
            if clocked is not kernel:
                clocked.time(argv, items, max(1, batch // 10), 10)
            row = {"kernel": name, "batch": batch, **verdict(event_s, host_s), "probe_mhz": mean_mhz(clocked.clock)}
            rows.append(row)
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"device": info, "rows": rows}, f, indent=1)
        ok, message = check()
        if not ok:
            print(f"{name}: invalid output: {message}", file=sys.stderr)
            return 1
    print(f"\n{info.get('name', args.device)} ({args.device}); {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(table(rows))
    print(path)
    return 0 if all(r["verdict"] == "agrees" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
