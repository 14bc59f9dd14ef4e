#!/usr/bin/env python3
"""Where the CPU's quick working-set sweep puts each cache level, against the sizes the host documents.

    python bench/bench_hierarchy_cpu.py [--rounds 3] [--out bench/results]

A benchmark, not a test: what a core gets of each level is the machine's, and a neighbour on a small
virtual machine blurs one level into the next. Each round runs
``run_roofline(RunOptions(device="cpu", suites=["hierarchy"], quick=True))`` and judges its read
curve as docs/design/hierarchy.md, "The memory hierarchy", expects it on a quiet host: the private
levels (L1d, L2) end within a step of their documented sizes; a shared L3 ends at or below its size
(within a step) and above the L2's, its edge within two steps; DRAM last; the level ceilings those
of the plateaus found. Prints each round's plateaus and verdict and writes
bench_hierarchy_cpu-<timestamp>.json to --out; exits 1 when no round shows the documented levels.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from apple_roofline.devices import open_device
from apple_roofline.roofline.run.options import RunOptions
from apple_roofline.roofline.run.runner import run_roofline
from apple_roofline.sizes import format_size
from apple_roofline.suites.hierarchy.levels import level_ceilings, level_curves
from apple_roofline.suites.hierarchy.plateaus import DRAM
from apple_roofline.suites.hierarchy.suite import STEPS_PER_OCTAVE
from apple_roofline.theoretical.caches import cache_levels


def levels_wrong(run: Any, documented: Any) -> Optional[str]:
    """Why the read curve does not show the documented levels at their sizes (None when it does)."""
    read = next(c for c in level_curves(run.measurements) if c.kernel == "read")
    step = 2 ** (2 / STEPS_PER_OCTAVE)  # quick: two points per octave
    found = [p.level for p in read.plateaus]
    if found not in (["L1d", "L2", "L3", DRAM], ["L1d", "L2", DRAM]):
        return f"levels {found}"
    for p, nxt in zip(read.plateaus, read.plateaus[1:]):
        if p.capacity is None or p.edge is None:
            return f"no size or edge: {p.level}"
        if p.level == "L3":  # shared: all of it or a share; its edge within two steps of its size
            if not (p.hi / step <= p.capacity and documented[1].capacity < p.edge <= p.capacity * step * step):
                return f"L3 edge {format_size(int(p.edge))} for {format_size(p.capacity)}"
            continue
        if not p.hi / step <= p.capacity <= nxt.lo * step:
            return f"{p.level}: {format_size(p.capacity)} outside its plateau's reach"
        if abs(math.log(p.edge / p.capacity)) > math.log(step) + math.log(nxt.lo / p.hi):
            return f"{p.level} edge {format_size(int(p.edge))} for {format_size(p.capacity)}"
    got = {c.name for c in level_ceilings(run.measurements)}
    want = {f"{n} bandwidth" for n in found[:-1]}
    return None if got == want else f"level ceilings {sorted(got)}, not {sorted(want)}"


def one_round(documented: Any) -> Dict[str, Any]:
    run = run_roofline(RunOptions(device="cpu", suites=["hierarchy"], quick=True, telemetry=False))
    read = next(c for c in level_curves(run.measurements) if c.kernel == "read")
    plateaus = [
        {
            "level": p.level,
            "gbps": p.gbps,
            "from": p.lo,
            "to": p.hi,
            "edge": p.edge,
            "documented": p.capacity,
            "told_apart": p.resolved,
        }
        for p in read.plateaus
    ]
    for p in plateaus:
        print(
            f"  {p['level']:5s} {p['gbps']:8.1f} GB/s  {format_size(p['from'])} to {format_size(p['to'])}, "
            f"edge {format_size(int(p['edge'])) if p['edge'] else '-'}, "
            f"documented {format_size(p['documented']) if p['documented'] else '-'}"
        )
    wrong = levels_wrong(run, documented)
    print(f"  -> {'documented levels shown' if wrong is None else wrong}")
    return {"plateaus": plateaus, "wrong": wrong, "valid": all(m.valid for m in run.measurements)}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="quick sweeps to run (default 3)")
    parser.add_argument("--out", default="bench/results", help="where the JSON goes (default bench/results)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    info = open_device("cpu").info()
    documented, notes = cache_levels(info)
    print(f"{info.get('name')}: documented {', '.join(f'{lv.name} {format_size(lv.capacity)}' for lv in documented)}")
    rounds = []
    for i in range(args.rounds):
        print(f"round {i + 1} of {args.rounds}")
        rounds.append(one_round(documented))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"bench_hierarchy_cpu-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"device": info.get("name"), "notes": list(notes), "rounds": rounds}, indent=1))
    print(f"wrote {path}")
    return 0 if any(r["wrong"] is None and r["valid"] for r in rounds) else 1


if __name__ == "__main__":
    sys.exit(main())
