#!/usr/bin/env python3
"""The fragment shader's ALU rate against the same FMA chains run as a compute kernel, on one GPU in one run.

    python bench/bench_graphics.py [--graphics wgpu:0] [--compute cuda:0] [--rounds 3] [--reps 10]
                                   [--overdraw 128] [--resolution 1920x1080]
                                   [--out bench/results]

The fill shader (``fs_fill``) runs F iterations of the compute suites' ``vec4_cross4`` chains per pixel,
so a render pass and a compute kernel do the same arithmetic. Each round measures, interleaved:

* the graphics side: ``run_graphics(GraphicsOptions(device=--graphics, suites=["fillrate"],
  f_values=[512], overdraw=--overdraw))``, the ``blended`` pass with store action ``store`` (every
  layer shaded: the FLOPs are real);
* the compute side: ``run_roofline(RunOptions(device=--compute, suites=["peak"]))``, the fp32
  ``vec4_cross4`` variant (the same chains) and the best fp32 variant.

It reports ratio = fragment GFLOP/s / compute GFLOP/s (median over rounds of the per-round ratio), and the
fill rate (F = 0, ``opaque`` and ``blended``, drawn GPixel/s) beside it, without a target: a fragment
shader that reaches the compute rate shows the graphics path adds no ALU cost at high F. Every
measurement used is asserted valid. Prints a table and markdown rows for bench/README.md; writes
bench_graphics-<timestamp>.json to --out. Exit status 0, or 1 when a measurement is missing or invalid.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple


def _valid(ms: List[Any], what: str) -> Any:
    if not ms:
        raise SystemExit(f"error: no {what} was measured")
    m = ms[0]
    if not m.valid:
        raise SystemExit(f"error: {what} failed validation: {m.validation}")
    return m


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphics", default="wgpu:0", help="the graphics device (wgpu:N or metal:N)")
    ap.add_argument("--compute", default=None, help="the compute device (cuda:0, metal:0; default: the best)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--overdraw", type=int, default=128)
    ap.add_argument("--resolution", default="1920x1080", help="the render target, WIDTHxHEIGHT")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    return ap.parse_args(argv)


def _fill(study: Any, F: int, mode: str) -> Any:
    """The study's valid fill pass of ``F`` iterations in ``mode`` with store action ``store``."""
    return _valid(
        [
            m
            for m in study.measurements
            if m.params.get("F") == F and m.params.get("mode") == mode and m.params.get("store") == "store"
        ],
        f"fill pass F={F} {mode} store",
    )


def round_row(r: int, study: Any, run: Any) -> Dict[str, Any]:
    """Round r's figures from its graphics study and compute run: the fragment and compute GFLOP/s,
    their ratios and the fill rates (GPixel/s). Exits where a measurement is missing or invalid."""
    from apple_roofline.graphics.model import drawn_rate

    frag = _fill(study, 512, "blended")
    opaque0, blended0 = _fill(study, 0, "opaque"), _fill(study, 0, "blended")
    cross = _valid(
        [m for m in run.measurements if m.suite == "peak" and m.dtype == "fp32" and m.kernel == "vec4_cross4"],
        "compute fp32 vec4_cross4",
    )
    best = max(
        (m for m in run.measurements if m.suite == "peak" and m.dtype == "fp32" and m.valid), key=lambda m: m.gflops
    )
    row = {
        "round": r,
        "fragment_gflops": frag.gflops,
        "fragment_layers": frag.params["layers"],
        "compute_cross4_gflops": cross.gflops,
        "compute_best_gflops": best.gflops,
        "compute_best": best.kernel,
        "fill_opaque_gpixels": drawn_rate(opaque0),
        "fill_blended_gpixels": drawn_rate(blended0),
    }
    row["ratio_cross4"] = row["fragment_gflops"] / row["compute_cross4_gflops"]
    row["ratio_best"] = row["fragment_gflops"] / row["compute_best_gflops"]
    return row


def measure_rounds(args: argparse.Namespace) -> Tuple[List[Dict[str, Any]], Dict[str, str]]:
    """``--rounds`` rounds, each a graphics study then a compute run, printed as they end: the rows and
    the two devices' names."""
    from apple_roofline.graphics.options import GraphicsOptions, parse_resolution
    from apple_roofline.graphics.runner import run_graphics
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import run_roofline

    width, height = parse_resolution(args.resolution)
    rows: List[Dict[str, Any]] = []
    device_names: Dict[str, str] = {}
    for r in range(args.rounds):
        study = run_graphics(
            GraphicsOptions(
                device=args.graphics,
                suites=["fillrate"],
                f_values=[0, 512],
                overdraw=args.overdraw,
                reps=args.reps,
                width=width,
                height=height,
            )
        )
        run = run_roofline(RunOptions(device=args.compute, suites=["peak"], reps=args.reps))
        device_names = {"graphics": study.device["name"], "compute": str(run.device.get("name", ""))}
        row = round_row(r, study, run)
        rows.append(row)
        print(
            f"round {r + 1}/{args.rounds}: fragment {row['fragment_gflops']:.0f} GFLOP/s, compute vec4_cross4 "
            f"{row['compute_cross4_gflops']:.0f}, best {row['compute_best_gflops']:.0f} ({row['compute_best']}); "
            f"fill {row['fill_opaque_gpixels']:.1f} / {row['fill_blended_gpixels']:.1f} GPixel/s",
            flush=True,
        )
    return rows, device_names


def print_table(args: argparse.Namespace, rows: List[Dict[str, Any]], name: str, date: str) -> None:
    """Print the markdown row for bench/README.md: the medians over rounds."""

    def med(key: str) -> float:
        return float(statistics.median(float(row[key]) for row in rows))

    print(
        "\n| date | device | rounds | fragment GFLOP/s (F=512, blended) | compute vec4_cross4 | ratio | "
        "best compute fp32 | ratio | fill GPixel/s (F=0 opaque / blended) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {date} | {name} | {args.rounds} | {med('fragment_gflops'):.0f} | {med('compute_cross4_gflops'):.0f} | "
        f"{med('ratio_cross4'):.3f} | {med('compute_best_gflops'):.0f} ({rows[-1]['compute_best']}) | "
        f"{med('ratio_best'):.3f} | {med('fill_opaque_gpixels'):.1f} / {med('fill_blended_gpixels'):.1f} |"
    )


def main(argv: Optional[List[str]] = None) -> int:
    """Measure the rounds, print the table and write the JSON; returns 0 (a missing or invalid
    measurement exits with 1)."""
    args = parse_args(argv)
    rows, device_names = measure_rounds(args)
    date = dt.date.today().isoformat()
    name = f"{device_names['graphics']} ({args.graphics}; compute {args.compute or 'default'})"
    print_table(args, rows, name, date)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"bench_graphics-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(
        json.dumps(
            {"date": date, "devices": device_names, "args": {k: str(v) for k, v in vars(args).items()}, "rounds": rows},
            indent=1,
        )
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
