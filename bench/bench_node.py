#!/usr/bin/env python3
"""Every GPU of a node at once against one GPU at a time, on the same machine the same day.

    python bench/bench_node.py [--devices cuda:all | cuda:0,1 | cuda:0+cuda:0] [--out bench/results/node]
                               [-- RUN OPTIONS, e.g. --suite stream,peak,gemm --quick]

Target (issue 25): ``run --device cuda:all`` finishes with every GPU's run valid in at most 1.3× the
wall time of a single-GPU run, and each GPU's ceilings match its single-GPU run.

1. Each GPU alone, one after another: ``apple-roofline run --device cuda:N OPTIONS --out
   OUT/single/cudaN`` (wall time each).
2. All of them at once: with a device list (``cuda:all``, ``cuda:0,1``) the tool's own ``run
   --device LIST --out OUT/node`` (one process per GPU, node.md); with ``+`` between devices
   (``cuda:0+cuda:0``: two children sharing one GPU, the check on a one-GPU machine) the same
   orchestration (:func:`apple_roofline.node.measure_node`) with one child per entry.
3. Prints the wall times and their ratio (node / the slowest single run), and per GPU each measured
   ceiling of the node run against its single run; writes bench_node-<timestamp>.json to --out and
   markdown rows for bench/README.md. Exit 0 when every run is valid and the ratio is at most 1.3,
   1 otherwise. Two children on one GPU share it, so their ceilings are expected to halve where the
   GPU is the bottleneck: that mode checks the orchestration, not the target.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

TARGET_RATIO = 1.3


def cli(*args: str) -> List[str]:
    return [sys.executable, "-m", "apple_roofline", *args]


def timed(argv: Sequence[str]) -> Tuple[int, float]:
    start = time.monotonic()
    code = subprocess.run(list(argv)).returncode
    return code, time.monotonic() - start


def measured(path: Path) -> Dict[str, float]:
    from apple_roofline.roofline.model.run import Run

    run = Run.load(path)
    if not run.complete or any(not m.valid for m in run.measurements):
        raise SystemExit(f"{path}: not a complete, valid run")
    return {c.name: c.value for c in run.ceilings if c.source == "measured"}


def parse_args(raw: List[str]) -> Tuple[argparse.Namespace, List[str]]:
    """The command line (see the module docstring): this script's options and the run options after
    ``--``."""
    options = raw[raw.index("--") + 1 :] if "--" in raw else []
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", default="cuda:all")
    ap.add_argument("--out", type=Path, default=Path("bench/results/node"))
    a = ap.parse_args(raw[: raw.index("--")] if "--" in raw else raw)
    return a, options


def shared_node(
    specs: Sequence[Any], options: Sequence[str], node_out: Path
) -> Tuple[int, float, List[Tuple[str, str]]]:
    """One child per entry of a ``+`` list (children may share a GPU), run at once by the tool's node
    orchestration: its worst exit status, wall time (s) and (child folder, single-run folder) pairs."""
    from apple_roofline.host.cpus import usable_cpus
    from apple_roofline.node import Child, measure_node, split_cpus

    shares = split_cpus(usable_cpus(), len(specs))
    children = [
        Child(
            f"{s.backend}{s.index}-{i}",
            cli("run", "--device", str(s), *options, "--out", str(node_out / f"{s.backend}{s.index}-{i}")),
            node_out / f"{s.backend}{s.index}-{i}",
            shares[i],
        )
        for i, s in enumerate(specs)
    ]
    start = time.monotonic()
    node = measure_node(children, "run.json", node_out, devices=[str(s) for s in specs])
    node_wall, node_code = time.monotonic() - start, max(r.returncode for r in node.results)
    return node_code, node_wall, [(c.name, f"{s.backend}{s.index}") for c, s in zip(children, specs)]


def ceiling_rows(out: Path, node_out: Path, pairs: Sequence[Tuple[str, str]]) -> List[Dict[str, Any]]:
    """Per GPU of the node run, each measured ceiling of its single run beside the node run's."""
    rows: List[Dict[str, Any]] = []
    for child, single in pairs:
        at_once, alone = measured(node_out / child / "run.json"), measured(out / "single" / single / "run.json")
        for name in alone:
            rows.append(
                {
                    "gpu": child,
                    "ceiling": name,
                    "alone": alone[name],
                    "at_once": at_once.get(name),
                    "ratio": at_once[name] / alone[name] if name in at_once else None,
                }
            )
    return rows


def print_report(
    devices: str, singles: Dict[str, Tuple[int, float]], node_wall: float, rows: List[Dict[str, Any]]
) -> None:
    """Print the wall times, their ratio and the table of ceilings."""
    ratio = node_wall / max(w for _c, w in singles.values())
    print(
        f"devices {devices}: single runs {', '.join(f'{k} {w:.1f} s' for k, (_c, w) in singles.items())}; "
        f"all at once {node_wall:.1f} s = {ratio:.2f}x the slowest single run (target <= {TARGET_RATIO})"
    )
    print("| GPU | Ceiling | alone | at once | at once / alone |")
    print("| --- | --- | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['gpu']} | {r['ceiling']} | {r['alone']:.4g} | "
            + (f"{r['at_once']:.4g} | {r['ratio']:.3f} |" if r["ratio"] is not None else "— | — |")
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run each GPU alone, then all at once, and compare; returns 0 where every run is valid and the
    ratio meets the target, else 1."""
    a, options = parse_args(list(sys.argv[1:] if argv is None else argv))
    from apple_roofline.devices import parse_device
    from apple_roofline.node import parse_device_list

    shared = "+" in a.devices
    specs = [parse_device(d) for d in a.devices.split("+")] if shared else parse_device_list(a.devices)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = a.out / stamp
    singles: Dict[str, Tuple[int, float]] = {}
    for spec in dict.fromkeys(specs):
        name = f"{spec.backend}{spec.index}"
        singles[name] = timed(cli("run", "--device", str(spec), *options, "--out", str(out / "single" / name)))
    node_out = out / "node"
    if shared:
        node_code, node_wall, pairs = shared_node(specs, options, node_out)
    else:
        node_code, node_wall = timed(cli("run", "--device", a.devices, *options, "--out", str(node_out)))
        pairs = [(f"{s.backend}{s.index}", f"{s.backend}{s.index}") for s in specs]
    ratio = node_wall / max(w for _c, w in singles.values())
    ok = node_code == 0 and all(c == 0 for c, _w in singles.values()) and ratio <= TARGET_RATIO
    rows = ceiling_rows(out, node_out, pairs)
    print_report(a.devices, singles, node_wall, rows)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / f"bench_node-{stamp}.json").write_text(
        json.dumps(
            {
                "devices": a.devices,
                "options": options,
                "single_wall_s": {k: w for k, (_c, w) in singles.items()},
                "node_wall_s": node_wall,
                "ratio": ratio,
                "target": TARGET_RATIO,
                "ceilings": rows,
                "ok": ok,
            },
            indent=2,
        )
        + "\n"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
