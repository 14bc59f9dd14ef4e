#!/usr/bin/env python3
"""The device's timer against the host's clock, and the clock the probe reads over the same samples.

    python bench/bench_timer.py [--device cuda:0] [--seconds 1.0] [--repeats 3] [--load-s 0]
                                [--out DIR]

Every rate the tool reports is work over a time its backend's timer measured (CUDA events on
NVIDIA, docs/design/measurement.md, "Measurement"), and every clock it reports is cycles over the GPU's own
nanosecond timer (docs/design/clocks.md, "Clocks"). A timer that ran slow would raise both alike: a figure
above its pipe would then look like a misread clock, and a clock read above the device's maximum
would look like a faster SM. This script times one long sample (about ``--seconds`` of back-to-back
launches) of three kernels, cuBLAS SGEMM at 4096, the peak suite's FP32 ``vec4_indep8`` case (its
rate follows the SM clock) and the stream suite's copy at 1 GiB arrays (DRAM-bound: its rate does
not follow the SM clock), each built without the clock probe, so nothing runs but the timed
launches, by the backend's timer and by the host's ``time.perf_counter`` around the same synchronous
call, and reads the probe's clock over ten samples of the same kernel right after (the probed
build; the SGEMM's spin probe around its sample), whose rate is the one set beside that clock. The
host's time includes the call's launch and synchronisation, so host ÷ device is at least 1: the row
"agrees" when it lies within 1 to 1 + :data:`TOLERANCE`. Each repeat times the three kernels in turn.

``--load-s`` drives cuBLAS HGEMM at 8192 back to back for that many seconds before each repeat:
the tensor cores at their power limit, after which an H100's SM was seen running at 15 MHz steps
above the maximum clock its driver reports (bench/README.md). The load is not a reported figure and
its output is not checked. The summary then sets, for each kernel, the rows whose probe read above
the maximum (by more than :data:`TOLERANCE`) against the rows at or below it: the ratio of their
median clocks beside the ratio of their median rates, and their median host ÷ device. A slow timer
would raise every kernel's rate with the clock and lower host ÷ device below 1; an SM that runs
faster raises only the SM-bound rates, and the host keeps the device's time.

Every output is checked after its kernel's samples: the SGEMM against NumPy (Freivalds, the GEMM
suite's check), the peak and copy kernels with their case's check; an invalid output ends the
script with 1 before any table. Writes bench_timer-<timestamp>.json to ``--out`` (default
bench/results) after every row. Needs a CUDA GPU (cuBLAS for the SGEMM row and the load).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: How far the host's time may exceed the device's over one sample and still agree: the limits'
#: tolerance (roofline.limits.TOLERANCE), far above a launch's and a synchronisation's microseconds.
TOLERANCE = 0.005
#: The longest sample asked for, in seconds.
MAX_SECONDS = 30.0
#: The longest load before a repeat, in seconds.
MAX_LOAD_S = 60.0


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
    head = "| kernel | launches | device timer (s) | host perf_counter (s) | host / device | verdict | rate "
    head += "| probe MHz |\n| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n"
    return head + "".join(
        f"| {r['kernel']} | {r['batch']} | {r['event_s']:.6f} | {r['host_s']:.6f} | {r['host_over_event']:.5f} | "
        f"{r['verdict']} | {r['rate']:,.0f} {r['unit']} | "
        f"{'—' if r.get('probe_mhz') is None else format(r['probe_mhz'], '.1f')} |\n"
        for r in rows
    )


def above_the_maximum(rows: Sequence[Dict[str, Any]], max_mhz: float) -> List[Dict[str, Any]]:
    """Per kernel (in the order of first appearance), its rows whose probe read above ``max_mhz`` by
    more than :data:`TOLERANCE` set against its rows at or below it: the count of each, the ratio of
    their median probe clocks, of their median rates over the probed samples (``probed_rate``: the
    samples between which the probe read, so the clock and the rate are of the same moment; the long
    sample's own rate comes before them), and each group's median host ÷ device. A kernel with no
    row in one of the groups gets None ratios. Rows without a probe reading count in neither group.

    Raises:
        ValueError: ``max_mhz`` not positive.
    """
    if not max_mhz > 0:
        raise ValueError(f"the maximum clock must be a positive MHz (got {max_mhz!r})")
    out: List[Dict[str, Any]] = []
    for name in dict.fromkeys(r["kernel"] for r in rows):
        mine = [r for r in rows if r["kernel"] == name and r.get("probe_mhz") is not None]
        high = [r for r in mine if r["probe_mhz"] > max_mhz * (1.0 + TOLERANCE)]
        at = [r for r in mine if r["probe_mhz"] <= max_mhz * (1.0 + TOLERANCE)]

        def med(group: Sequence[Dict[str, Any]], key: str) -> float:
            return statistics.median(r[key] for r in group)

        both = bool(high and at)
        out.append(
            {
                "kernel": name,
                "at": len(at),
                "above": len(high),
                "clock_ratio": med(high, "probe_mhz") / med(at, "probe_mhz") if both else None,
                "rate_ratio": med(high, "probed_rate") / med(at, "probed_rate") if both else None,
                "host_over_event_at": med(at, "host_over_event") if at else None,
                "host_over_event_above": med(high, "host_over_event") if high else None,
            }
        )
    return out


def summary_table(summary: Sequence[Dict[str, Any]], max_mhz: float) -> str:
    """The Markdown table of :func:`above_the_maximum`'s rows (a dash where a group is empty)."""

    def num(v: Optional[float], digits: int) -> str:
        return "—" if v is None else f"{v:.{digits}f}"

    head = (
        f"| kernel | rows at or below {max_mhz:,.0f} MHz | rows above | clock above ÷ at | rate above ÷ at | "
        "host / device at | host / device above |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
    )
    return head + "".join(
        f"| {s['kernel']} | {s['at']} | {s['above']} | {num(s['clock_ratio'], 4)} | {num(s['rate_ratio'], 4)} | "
        f"{num(s['host_over_event_at'], 5)} | {num(s['host_over_event_above'], 5)} |\n"
        for s in summary
    )


def library_gemm(backend: Any, dtype: str, n: int) -> Tuple[Any, List[Any], np.ndarray, np.ndarray]:
    """The library's n×n×n GEMM of ``dtype`` on ``backend`` with the GEMM suite's inputs written
    (:func:`~apple_roofline.suites.gemm.inputs.gemm_inputs`, seeded by ``n``): ``(kernel, [A, B, C]
    buffers, a, b)``, ``a`` and ``b`` the input values the suite's check takes."""
    from apple_roofline.suites.base import ITEMSIZE
    from apple_roofline.suites.gemm.inputs import gemm_inputs
    from apple_roofline.suites.gemm.precisions import GEMM_PRECISIONS

    p = GEMM_PRECISIONS[dtype]
    a, b, a_stored, b_stored = gemm_inputs(dtype, n, np.random.default_rng(n))
    bufs = [backend.alloc(n * n * ITEMSIZE[t]) for t in (p.in_dtype, p.in_dtype, p.out_dtype)]
    bufs[0].write(a_stored.ravel())
    bufs[1].write(b_stored.ravel())
    return backend.gemm(dtype, n, n, n), bufs, a, b


def parse_args() -> Tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The command line (see the module docstring), checked, and its parser (for the device's errors)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--load-s", type=float, default=0.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    if not 0.01 <= args.seconds <= MAX_SECONDS:
        ap.error(f"--seconds {args.seconds} is outside 0.01 to {MAX_SECONDS:g}")
    if not 1 <= args.repeats <= 100:
        ap.error(f"--repeats {args.repeats} is outside 1 to 100")
    if not 0 <= args.load_s <= MAX_LOAD_S:
        ap.error(f"--load-s {args.load_s} is outside 0 to {MAX_LOAD_S:g}")
    return ap, args


def open_cuda(ap: argparse.ArgumentParser, device: str) -> Tuple[Any, Dict[str, Any], float]:
    """The device behind a ProbeSwitch (bench_clock.py), its info and its maximum SM clock (MHz);
    a usage error where it is not a CUDA device or reports no maximum clock."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from bench_clock import ProbeSwitch  # the suites' own cases, built without the probe and with it

    from apple_roofline.devices import open_device

    switch = ProbeSwitch(open_device(device))
    info = dict(switch.info())
    if info.get("backend") != "cuda":
        ap.error(f"{device} is not a CUDA device: the script compares CUDA events with the host's clock")
    max_mhz = float(info.get("clock_hz") or 0) / 1e6
    if not max_mhz > 0:
        ap.error(f"{device} reports no maximum SM clock (clock_hz): rows cannot be set against it")
    return switch, info, max_mhz


class Target(NamedTuple):
    """One kernel timed: its row's name, the build without the probe with its arguments and items, the
    probed build (the same kernel where it is its own probe), the check of its output, and the work
    of one launch in ``unit`` ("FLOP" or "B")."""

    name: str
    kernel: Any
    args: Any
    items: int
    clocked: Any
    check: Callable[[], Tuple[bool, str]]
    work: float
    unit: str


def build_targets(switch: Any, info: Dict[str, Any]) -> List[Target]:
    """The three kernels of the module docstring: cuBLAS SGEMM at 4096, the peak suite's FP32
    vec4_indep8 and the stream suite's copy at 1 GiB arrays."""
    from apple_roofline.suites import SuiteContext
    from apple_roofline.suites.base import read
    from apple_roofline.suites.gemm.checks import check_gemm
    from apple_roofline.suites.gemm.precisions import gemm_flops
    from apple_roofline.suites.peak.suite import PeakSuite
    from apple_roofline.suites.stream.suite import StreamSuite

    n = 4096
    sgemm, gbufs, a, b = library_gemm(switch, "fp32", n)
    ctx = SuiteContext(switch, "cuda", info, False, 1 << 30)
    peak_case = next(c for c in PeakSuite(ctx).cases() if c.kernel.name == "vec4_indep8" and c.kernel.dtype == "fp32")
    copy_case = next(c for c in StreamSuite(ctx).cases() if c.kernel.name == "copy")

    def sgemm_check() -> Tuple[bool, str]:
        return check_gemm(a, b, read(gbufs[2], "fp32", n * n).reshape(n, n), "fp32")

    targets = [Target("cuBLAS SGEMM 4096", sgemm, gbufs, 1, sgemm, sgemm_check, float(gemm_flops(n, n, n)), "FLOP")]
    for label, case in (
        (f"FP32 peak vec4_indep8, {peak_case.work_items} lanes", peak_case),
        (f"STREAM copy, {copy_case.bytes // 2 >> 20} MiB arrays", copy_case),
    ):
        switch.off = True
        bare = case.make_kernel()
        switch.off = False
        work, unit = (case.flops, "FLOP") if case.flops else (case.bytes, "B")
        targets.append(
            Target(label, bare, case.args, case.work_items, case.make_kernel(), case.check, float(work), unit)
        )
    return targets


def build_load(switch: Any, load_s: float) -> Optional[Tuple[Any, List[Any], int, int]]:
    """``(kernel, buffers, samples, batch)`` of cuBLAS HGEMM at 8192 for about load_s seconds in
    one-second samples, None where load_s is 0."""
    if not load_s > 0:
        return None
    # random inputs: the tensor cores draw their full power only on real data
    hgemm, lbufs, _, _ = library_gemm(switch, "fp16", 8192)
    pieces = math.ceil(load_s)  # one-second samples: no single wait longer than a sample usually is
    return hgemm, lbufs, pieces, batch_for(load_s / pieces, min(hgemm.time(lbufs, 1, 1, 3)))


def time_row(t: Target, batch: int, repeat: int) -> Dict[str, Any]:
    """One long sample of ``batch`` launches of t timed by the device and the host, and the probe's
    clock over ten samples of the probed build right after: the row."""
    start = time.perf_counter()
    event_s = t.kernel.time(t.args, t.items, batch, 1)[0]
    host_s = time.perf_counter() - start
    rate = t.work * batch / event_s / 1e9
    probed_rate = rate  # a kernel that is its own probe: the long sample is the probed one
    if t.clocked is not t.kernel:  # the probed build's samples: the same time as its clock readings
        few = max(1, batch // 10)
        probed_rate = t.work * few / statistics.median(t.clocked.time(t.args, t.items, few, 10)) / 1e9
    return {
        "kernel": t.name,
        "repeat": repeat,
        "batch": batch,
        **verdict(event_s, host_s),
        "rate": rate,
        "probed_rate": probed_rate,
        "unit": "GFLOP/s" if t.unit == "FLOP" else "GB/s",
        "probe_mhz": mean_mhz(t.clocked.clock),
    }


def write_json(path: str, document: Dict[str, Any]) -> None:
    """Write the JSON document to path."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)


def main() -> int:
    """Time the kernels and print the tables; returns 0 where every row agrees, 1 where one does not
    or an output is invalid."""
    ap, args = parse_args()
    switch, info, max_mhz = open_cuda(ap, args.device)
    targets = build_targets(switch, info)
    load = build_load(switch, args.load_s)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"bench_timer-{stamp}.json")
    batches = [batch_for(args.seconds, min(t.kernel.time(t.args, t.items, 1, 5))) for t in targets]
    rows: List[Dict[str, Any]] = []
    for repeat in range(args.repeats):
        if load is not None:
            hgemm, lbufs, pieces, lbatch = load
            hgemm.time(lbufs, 1, lbatch, pieces)
        for t, batch in zip(targets, batches):
            rows.append(time_row(t, batch, repeat))
            write_json(path, {"device": info, "load_s": args.load_s, "rows": rows})
    for t in targets:
        ok, message = t.check()
        if not ok:
            print(f"{t.name}: invalid output: {message}", file=sys.stderr)
            return 1
    summary = above_the_maximum(rows, max_mhz)
    write_json(path, {"device": info, "load_s": args.load_s, "rows": rows, "summary": summary})
    print(f"\n{info.get('name', args.device)} ({args.device}); {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print(table(rows))
    print(summary_table(summary, max_mhz))
    print(path)
    return 0 if all(r["verdict"] == "agrees" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
