"""MLX matmul sizes on a measured Metal GPU roofline: the MLX matmul roofline article's sweep.

    python examples/mlx_matmul_sweep.py [RUN.json] [--sizes 256,512,...] [--dtypes fp32,fp16] [-o FILE.png]

Needs a Mac with Apple silicon and MLX (``pip install mlx``); exits 2 with a message otherwise.
The roofline is ``RUN.json`` (a Metal run of ``apple-roofline run --device metal``) or, without
it, measured first with :func:`apple_roofline.run_roofline` on ``metal`` (minutes; saved to
``--save-run``, default out/metal_run.json, to pass as ``RUN.json`` next time).

Times ``a @ b`` (N×N, N = 256 … 8192 doubling, fp32 and fp16) with :func:`apple_roofline.measure`:
each call builds the product and submits it (``mx.async_eval``; ``mx.eval`` where MLX has no
``async_eval``), and ``sync`` is ``mx.eval`` of the last product, so a sample is back-to-back
products followed by one wait. :func:`apple_roofline.flops_bytes.matmul` counts 2N³ FLOPs and
3N² elements of traffic. Prints each size's GFLOP/s, intensity, attainable ceiling, efficiency and
bound, and writes the roofline with the points on it (default: mlx_matmul.png beside the run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apple_roofline as ar
from apple_roofline.figures import save_figure

DEFAULT_SIZES = (256, 512, 1024, 2048, 4096, 8192)
DEFAULT_DTYPES = ("fp32", "fp16")
#: dtype names (apple_roofline.flops_bytes) -> MLX dtype attribute.
MLX_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
EXIT_MISSING = 2  # MLX or a Mac is missing
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


class _Progress:
    """Suite-level progress of a roofline run, on stderr."""

    def start(self, suite: str, total: int) -> None:
        print(f"  {suite}: {total} cases ...", file=sys.stderr, flush=True)

    def advance(self, description: str) -> None:
        return None

    def finish(self, suite: str) -> None:
        print(f"  {suite}: done", file=sys.stderr, flush=True)


def _load_mlx() -> Any:
    """``mlx.core`` on a Mac whose Metal device MLX can use, else None (a message is printed)."""
    try:
        import mlx.core as mx
    except ImportError as exc:
        print(
            f"MLX is not installed ({exc}): this example needs MLX on a Mac with Apple silicon\n    pip install mlx",
            file=sys.stderr,
        )
        return None
    if not mx.metal.is_available():  # False off macOS (MLX's Linux builds) and on Intel Macs
        print(
            f"MLX's Metal backend is not available here ({sys.platform}: mlx.core.metal.is_available() is "
            f"False): this example needs a Mac with Apple silicon",
            file=sys.stderr,
        )
        return None
    return mx


def _timed_matmul(mx: Any, a: Any, b: Any) -> tuple[Callable[[], None], Callable[[], None]]:
    """``(fn, sync)`` for apple_roofline.measure: fn submits ``a @ b``, sync waits for the last one."""
    submit = getattr(mx, "async_eval", None) or mx.eval
    last: list[Any] = []

    def fn() -> None:
        out = mx.matmul(a, b)
        submit(out)
        last[:] = [out]

    def sync() -> None:
        if last:
            mx.eval(last[0])

    return fn, sync


def _parse_list(text: str, what: str, parser: argparse.ArgumentParser) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        parser.error(f"{what}: need at least one value")
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "run", nargs="?", metavar="RUN.json", help="a Metal run.json to draw the roofline from (default: measure one)"
    )
    parser.add_argument(
        "--save-run", default="out/metal_run.json", help="where a measured run is saved (default: out/metal_run.json)"
    )
    parser.add_argument("--quick", action="store_true", help="a quick roofline run when measuring one")
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated matrix sizes N (default: 256..8192 doubling)",
    )
    parser.add_argument(
        "--dtypes",
        default=",".join(DEFAULT_DTYPES),
        help=f"comma-separated dtypes (default: fp32,fp16; valid: {', '.join(MLX_DTYPES)})",
    )
    parser.add_argument("--reps", type=int, default=5, help="samples per size (default: 5)")
    parser.add_argument("-o", "--output", help="plot file (.png, .svg or .pdf)")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in _parse_list(args.sizes, "--sizes", parser)]
    except ValueError:
        parser.error(f"--sizes {args.sizes!r}: expected comma-separated integers, e.g. 256,512,1024")
    if min(sizes) < 1:
        parser.error("--sizes: each size must be >= 1")
    dtypes = _parse_list(args.dtypes, "--dtypes", parser)
    for d in dtypes:
        if d not in MLX_DTYPES:
            parser.error(f"--dtypes: unknown dtype {d!r} (valid: {', '.join(MLX_DTYPES)})")
    if not 1 <= args.reps <= 10000:
        parser.error(f"--reps {args.reps} is out of range (valid: 1 to 10000)")
    if args.output and Path(args.output).suffix.lower() not in PLOT_SUFFIXES:
        parser.error(f"-o {args.output}: the plot must be one of {', '.join(PLOT_SUFFIXES)}")

    mx = _load_mlx()
    if mx is None:
        return EXIT_MISSING

    if args.run:
        run_path = Path(args.run)
        if not run_path.exists():
            print(
                f"{run_path} not found: measure the GPU's roofline with\n"
                f"    apple-roofline run --device metal\n"
                f"or leave out RUN.json to measure one here.",
                file=sys.stderr,
            )
            return 1
        try:
            run = ar.Run.load(run_path)
        except ar.ResultsError as exc:
            print(str(exc), file=sys.stderr)
            return 1
        if run.backend != "metal":
            print(
                f"{run_path} is a {run.backend} run ({run.device_name}); MLX runs on the Metal GPU: "
                f"pass a run of apple-roofline run --device metal",
                file=sys.stderr,
            )
            return 1
        plot_dir = run_path.parent
    else:
        print(
            "measuring the Metal GPU's roofline first (minutes; pass RUN.json to reuse one) ...",
            file=sys.stderr,
            flush=True,
        )
        try:
            run = ar.run_roofline(
                "metal",
                quick=args.quick,
                progress=_Progress(),
                command=("mlx_matmul_sweep.py", *(argv if argv is not None else sys.argv[1:])),
            )
        except (ImportError, RuntimeError, ValueError) as exc:  # no extension, no Metal backend, bad options
            print(f"cannot measure the Metal roofline: {exc}", file=sys.stderr)
            return 1
        save = Path(args.save_run)
        save.parent.mkdir(parents=True, exist_ok=True)
        run.save(save)
        print(f"wrote {save}")
        plot_dir = save.parent
    model = ar.Roofline.from_run(run)

    points = []
    print(f"{'dtype':>5}  {'N':>6}  {'GFLOP/s':>9}  {'FLOP/B':>7}  {'attainable':>10}  {'efficiency':>10}  bound")
    for dtype in dtypes:
        mx_dtype = getattr(mx, MLX_DTYPES[dtype])
        for n in sizes:
            a = mx.random.normal((n, n)).astype(mx_dtype)
            b = mx.random.normal((n, n)).astype(mx_dtype)
            mx.eval(a, b)
            fn, sync = _timed_matmul(mx, a, b)
            flops, nbytes = ar.flops_bytes.matmul(n, n, n, dtype)
            p = ar.measure(fn, flops=flops, bytes=nbytes, sync=sync, name=f"{dtype} N={n}", reps=args.reps, warmup=2)
            points.append(p)
            gemm = model.gemm_ceiling(dtype)  # its own precision, not the highest ceiling
            print(
                f"{dtype:>5}  {n:>6}  {p.gflops:>9.1f}  {p.intensity:>7.2f}  "
                f"{model.attainable(p.intensity, compute=gemm):>10.1f}  "
                f"{model.efficiency(p, compute=gemm):>10.1%}  {model.classify(p, compute=gemm)}"
            )

    out = Path(args.output) if args.output else plot_dir / "mlx_matmul.png"
    fig = model.plot(points=points, title=f"MLX matmul ({', '.join(dtypes)}) on {run.device_name}")
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
