"""NumPy matmul sizes on a measured CPU roofline: the embedding API end to end.

    apple-roofline run --device cpu            # once: measures the CPU's ceilings -> out/run.json
    python examples/numpy_matmul.py [RUN.json] [--sizes 64,128,...] [-o FILE.png]

Times ``a @ b`` (float32, N×N) with :func:`apple_roofline.measure` for each N, checks its product
against NumPy float64 (:func:`~apple_roofline.suites.gemm.checks.check_gemm`: a size that fails is
reported, not placed, and the exit status is 1), counts its FLOPs and bytes with
:func:`apple_roofline.user_kernels.flops_bytes.matmul` (2N³ FLOPs, 3N²×4 bytes), prints each size's GFLOP/s,
intensity, the roof that binds it (``model.judge``), the share of it reached and the verdict, and
writes the roofline with the points on it (default: numpy_matmul.png beside RUN.json).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

import numpy as np

import apple_roofline as ar
from apple_roofline.figures import save_figure
from apple_roofline.suites.gemm.checks import check_gemm

DEFAULT_SIZES = (64, 128, 256, 512, 1024, 2048)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "run",
        nargs="?",
        default="out/run.json",
        metavar="RUN.json",
        help="a CPU run.json to draw the roofline from (default: out/run.json)",
    )
    parser.add_argument(
        "--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="comma-separated matrix sizes N (default: 64..2048)"
    )
    parser.add_argument("-o", "--output", help="plot file (.png, .svg or .pdf)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: expected comma-separated integers, e.g. 64,128,256")
    if not sizes or min(sizes) < 1:
        parser.error("--sizes: need at least one size, each >= 1")

    run_path = Path(args.run)
    if not run_path.exists():
        print(
            f"{run_path} not found: measure the CPU's roofline first with\n"
            f"    apple-roofline run --device cpu\n"
            f"(writes out/run.json), then pass its path.",
            file=sys.stderr,
        )
        return 1
    run = ar.Run.load(run_path)
    model = ar.Roofline.from_run(run)

    rng = np.random.default_rng(0)
    points = []
    failed = 0
    # a matmul runs on the matrix units (pipe "tensor": the GEMM ceilings of its precision), on arrays of
    # 3N² floats that may fit a cache (working_set: the level whose roof it is judged against)
    print(f"{'N':>6}  {'GFLOP/s':>9}  {'FLOP/B':>7}  {'bound by':>20}  {'attainable':>10}  {'share':>8}  verdict")
    for n in sizes:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        flops, nbytes = ar.flops_bytes.matmul(n, n, n, "fp32")
        p = ar.measure(
            lambda: a @ b, flops=flops, bytes=nbytes, name=f"matmul N={n}", reps=5, pipe="tensor", working_set=nbytes
        )
        ok, message = check_gemm(a, b, a @ b, "fp32")  # validated before its number is reported
        if not ok:
            print(f"{n:>6}  matmul N={n} failed validation: {message}; not placed", file=sys.stderr)
            failed += 1
            continue
        points.append(p)
        judged = model.judge(p)
        print(
            f"{n:>6}  {p.gflops:>9.1f}  {p.intensity:>7.2f}  {judged.ceiling.name:>20}  {judged.attainable:>10.1f}  "
            f"{judged.share_text:>8}  {judged.verdict}"
        )

    out = Path(args.output) if args.output else run_path.parent / "numpy_matmul.png"
    fig = ar.plot_roofline(model, points=points, title=f"NumPy float32 matmul on {run.device_name}")
    save_figure(fig, out)
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
