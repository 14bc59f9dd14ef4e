#!/usr/bin/env python3
"""How much a vendor GEMM's rate moves with where its buffers land and how its inputs are laid out.

    python bench/bench_gemm_placement.py [--device cuda:0] [--dtype int8] [--n 4096] [--pads 0,1,17,100]
                                         [--rounds 2] [--repeats 5] [--reps 10] [--out DIR]

The GEMM suite's ``run`` times the library's GEMM (``Backend.gemm``) on inputs drawn by the suite
(``suites.gemm.inputs.gemm_inputs``, seeded by N) in buffers allocated where the run's earlier work left
the allocator. Two trees that allocate differently, or draw an input in another layout, put the same
product's buffers at other addresses; this script measures what that alone does to the rate
(docs/design/matrix.md, "The GEMM ladder"). For each round, each ``--pads`` size (MiB allocated before the
three buffers, held while they are timed) and each layout:

* **as drawn**: the suite's inputs, B stored as ``gemm_inputs`` draws it (for int8, the N×K array the
  library takes, B its transpose);
* **transposed on the host** (precisions whose B the library takes transposed, int8): B drawn K×N with
  the same generator and written transposed, as the suite did before it drew the stored layout.

each configuration is timed ``--repeats`` times as ``run`` times a case (``measure.time_kernel``,
``--reps`` samples) and its output checked once against NumPy with the suite's own check
(``check_gemm``); a configuration whose output fails is reported and exits non-zero. The table gives
each configuration's median TFLOP/s (TOPS for int8) over its ``rounds × repeats`` measurements, its
spread (lowest and highest over the median) and its ratio to the reference configuration measured in
the same run (no pad, as drawn); a measurement below three quarters of its configuration's median is
counted apart as an outlier and left out of the spread. Writes bench_gemm_placement-<timestamp>.json to
``--out`` (default bench/results) after every configuration. Needs a backend with a GEMM routine of
``--dtype`` (int8: CUDA); another says so and exits with 2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The layouts (module docstring), the reference first.
AS_DRAWN, TRANSPOSED = "as drawn", "transposed on the host"
#: A measurement below this fraction of its configuration's median is an outlier (a measurement that
#: ran at about half the rate: 790 of 1,440 TOPS once on an H100), counted apart.
OUTLIER_FRACTION = 0.75


def parse_pads(text: str) -> List[int]:
    """``--pads`` as MiB sizes: comma-separated integers from 0 to 65536, 0 first if given.

    Raises:
        ValueError: naming the entry that is not such an integer, and the valid range.
    """
    out = []
    for part in text.split(","):
        try:
            mib = int(part)
        except ValueError:
            raise ValueError(f"--pads: {part!r} is not an integer number of MiB (valid: 0 to 65536)") from None
        if not 0 <= mib <= 65536:
            raise ValueError(f"--pads: {mib} MiB is outside 0 to 65536")
        out.append(mib)
    if not out:
        raise ValueError("--pads: no size given (valid: comma-separated MiB, 0 to 65536)")
    return out


def layouts(dtype: str, n: int) -> Dict[str, Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """The layouts of ``dtype``'s n×n inputs (module docstring): name -> ``(a, b, a_stored, b_stored)``
    as ``gemm_inputs`` returns them. Only "as drawn" where the library takes B as drawn."""
    from apple_roofline.suites.gemm.inputs import gemm_inputs
    from apple_roofline.suites.gemm.precisions import GEMM_PRECISIONS

    out = {AS_DRAWN: gemm_inputs(dtype, n, np.random.default_rng(n))}
    if GEMM_PRECISIONS[dtype].b_transposed:
        a, b_stored = out[AS_DRAWN][0], out[AS_DRAWN][3]
        b = b_stored  # drawn K×N: the values the product takes
        out[TRANSPOSED] = (a, b, a, np.ascontiguousarray(b.T))
    return out


def summarize(rows: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One line per configuration (``(pad_mib, layout)``, in first-seen order) from ``rows`` (each with
    ``pad_mib``, ``layout`` and ``rates``, the measurements' median rates in TFLOP/s, TOPS for int8;
    the summary keeps their unit): the median of every rate above
    :data:`OUTLIER_FRACTION` of the median of all of them, ``low`` and ``high`` (the lowest and
    highest such rate over that median), ``outliers`` (how many were left out) and ``ratio`` to the
    first configuration's median."""
    groups: Dict[Tuple[int, str], List[float]] = {}
    for r in rows:
        groups.setdefault((int(r["pad_mib"]), str(r["layout"])), []).extend(float(v) for v in r["rates"])
    out: List[Dict[str, Any]] = []
    for (pad, layout), rates in groups.items():
        whole = statistics.median(rates)
        kept = [v for v in rates if v >= OUTLIER_FRACTION * whole]
        med = statistics.median(kept)
        out.append(
            {
                "pad_mib": pad,
                "layout": layout,
                "median": med,
                "low": min(kept) / med,
                "high": max(kept) / med,
                "measurements": len(kept),
                "outliers": len(rates) - len(kept),
            }
        )
    for line in out:
        line["ratio"] = line["median"] / out[0]["median"]
    return out


def table(lines: Sequence[Dict[str, Any]], unit: str) -> str:
    """The Markdown table of :func:`summarize`'s lines."""
    head = f"| pad before (MiB) | layout | median {unit} | spread | outliers | ratio to no pad, as drawn |\n"
    head += "| ---: | --- | ---: | --- | ---: | ---: |\n"
    return head + "".join(
        f"| {x['pad_mib']} | {x['layout']} | {x['median']:,.4g} | {100 * (x['low'] - 1):+.1f} to "
        f"{100 * (x['high'] - 1):+.1f} % | {x['outliers']} | {x['ratio']:.4f} |\n"
        for x in lines
    )


def configurations(pads: Sequence[int], names: Sequence[str], rounds: int) -> Iterator[Tuple[int, int, str]]:
    """``(round, pad_mib, layout)`` in the order they are measured: every pad and layout in each round."""
    for rnd in range(rounds):
        for pad in pads:
            for name in names:
                yield rnd, pad, name


def parse_args() -> Tuple[argparse.Namespace, List[int], int]:
    """The command line (see the module docstring), checked: the options, the pads (MiB) and the
    samples per measurement. Exits with a usage error on a value out of range."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--dtype", default="int8")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--pads", default="0,1,17,100")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args()
    from apple_roofline.suites.gemm.precisions import GEMM_PRECISIONS
    from apple_roofline.timing.measure import check_reps

    if args.dtype not in GEMM_PRECISIONS:
        ap.error(f"--dtype {args.dtype!r} is not a GEMM precision (valid: {', '.join(GEMM_PRECISIONS)})")
    if not 16 <= args.n <= 16384:
        ap.error(f"--n {args.n} is outside 16 to 16384")
    if not (1 <= args.rounds <= 100 and 1 <= args.repeats <= 100):
        ap.error("--rounds and --repeats must each be 1 to 100")
    try:
        pads, reps = parse_pads(args.pads), check_reps(args.reps)
    except ValueError as exc:
        ap.error(str(exc))
    return args, pads, reps


class Placement:
    """The device's ``--dtype`` GEMM at ``--n``, measured in buffers placed after a pad: each
    configuration ``--repeats`` times as ``run`` times a case, ``reps`` samples each."""

    def __init__(self, backend: Any, args: argparse.Namespace, reps: int) -> None:
        from apple_roofline.suites.gemm.precisions import GEMM_PRECISIONS

        self.backend, self.args, self.reps = backend, args, reps
        self.p = GEMM_PRECISIONS[args.dtype]
        self.n = int(args.n)

    def buffers(self, a_stored: np.ndarray, b_stored: np.ndarray) -> List[Any]:
        """A, B (written with the stored inputs) and C, allocated in that order."""
        from apple_roofline.suites.base import ITEMSIZE

        n, p = self.n, self.p
        bufs = [
            self.backend.alloc(n * n * ITEMSIZE[p.in_dtype]),
            self.backend.alloc(n * n * ITEMSIZE[p.in_dtype]),
            self.backend.alloc(n * n * ITEMSIZE[p.out_dtype]),
        ]
        bufs[0].write(np.ascontiguousarray(a_stored).ravel())
        bufs[1].write(np.ascontiguousarray(b_stored).ravel())
        return bufs

    def check(self, bufs: List[Any], a: np.ndarray, b: np.ndarray) -> Tuple[bool, str]:
        """C against NumPy with the GEMM suite's own check."""
        from apple_roofline.suites.base import read
        from apple_roofline.suites.gemm.checks import check_gemm
        from apple_roofline.suites.gemm.precisions import bf16_values

        c = read(bufs[2], self.p.out_dtype, self.n * self.n).reshape(self.n, self.n)
        if self.p.out_dtype == "bf16":  # stored as bit patterns: their values
            c = bf16_values(c)
        ok, message = check_gemm(a, b, c, self.args.dtype)
        return ok, message

    def row(self, rnd: int, pad_mib: int, name: str, arrays: Tuple[np.ndarray, ...]) -> Optional[Dict[str, Any]]:
        """One configuration (round, pad, layout) measured and checked: its row (median rates in
        TFLOP/s, TOPS for int8); None where the device has no such GEMM (said on stderr)."""
        from apple_roofline.suites.gemm.precisions import gemm_flops
        from apple_roofline.timing.measure import time_kernel

        n = self.n
        a, b, a_stored, b_stored = arrays
        pad = self.backend.alloc(pad_mib << 20) if pad_mib else None  # held while the buffers are timed
        bufs = self.buffers(a_stored, b_stored)
        try:
            kernel = self.backend.gemm(self.args.dtype, n, n, n)
        except Exception as exc:  # the backend's UnsupportedError: no such GEMM here
            print(f"{self.args.device} cannot run a {self.args.dtype} GEMM: {exc}", file=sys.stderr)
            return None
        rates = []
        for _ in range(self.args.repeats):
            t = time_kernel(kernel, bufs, 1, reps=self.reps)
            rates.append(gemm_flops(n, n, n) / statistics.median(t.samples_s) / 1e12)
        ok, message = self.check(bufs, a, b)
        clock = (t.clock or {}).get("mhz") or []
        del bufs, pad, kernel
        return {
            "round": rnd,
            "pad_mib": pad_mib,
            "layout": name,
            "rates": rates,
            "valid": ok,
            "validation": message,
            "effective_clock_mhz": statistics.fmean(clock) if clock else None,
        }


def write_json(path: str, document: Dict[str, Any]) -> None:
    """Write the JSON document to path."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=1)


def main() -> int:
    """Measure every configuration and print the table; returns 0, 1 where an output was invalid, 2
    where the device has no such GEMM."""
    args, pads, reps = parse_args()
    from apple_roofline.devices import open_device

    n = args.n
    backend = open_device(args.device)
    info = dict(backend.info())
    placement = Placement(backend, args, reps)
    inputs = layouts(args.dtype, n)
    unit = "TOPS" if placement.p.in_dtype == "int8" else "TFLOP/s"
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"bench_gemm_placement-{stamp}.json")
    document: Dict[str, Any] = {"device": info, "dtype": args.dtype, "n": n, "unit": unit, "rows": []}
    rows: List[Dict[str, Any]] = document["rows"]
    for rnd, pad_mib, name in configurations(pads, list(inputs), args.rounds):
        row = placement.row(rnd, pad_mib, name, inputs[name])
        if row is None:
            return 2
        rows.append(row)
        print(
            f"round {rnd} pad {pad_mib} MiB {name}: {', '.join(f'{r:,.4g}' for r in row['rates'])} {unit}"
            + ("" if row["valid"] else f" INVALID: {row['validation']}"),
            flush=True,
        )
        write_json(path, document)
    lines = summarize([r for r in rows if r["valid"]])
    print(
        f"\n{info.get('name', args.device)} ({args.device}); {args.dtype} GEMM, N = {n}; "
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC\n"
    )
    print(table(lines, unit))
    write_json(path, {**document, "summary": lines})
    print(path)
    return 1 if any(not r["valid"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
