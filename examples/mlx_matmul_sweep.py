"""MLX matmul sizes on a measured roofline of the device MLX runs on: the MLX matmul roofline article's sweep.

    python examples/mlx_matmul_sweep.py [RUN.json] [--device gpu|cpu] [--sizes 256,512,...] [--dtypes fp32,fp16]
                                        [-o FILE.png] [--save-kernels FILE.json]

Needs MLX: on a Mac with Apple silicon (``pip install mlx``) it runs on the Metal GPU by default;
on Linux (``pip install "mlx[cpu]"``), or with ``--device cpu``, on MLX's CPU device. It exits 2
with a message when MLX, or the device asked for, is missing, and says which device it ran on. The
roofline is ``RUN.json`` (a run of ``apple-roofline run --device metal``, or ``--device cpu`` for
the CPU) or, without it, measured first with :class:`~apple_roofline.roofline.run.runner.RooflineRunner` on that backend
(minutes; saved to ``--save-run``, default out/metal_run.json or out/cpu_run.json, to pass as
``RUN.json`` next time).

Times ``mx.matmul(a, b, stream=device)`` (N×N, N = 256 … 8192 doubling, fp32 and fp16; bf16 too)
with :func:`apple_roofline.measure`: each call builds the product and submits it (``mx.async_eval``;
``mx.eval`` where MLX has no ``async_eval``), and ``sync`` is ``mx.eval`` of the last product, so a
sample is back-to-back products followed by one wait. The last product is then checked against
NumPy float64 (:func:`apple_roofline.suites.gemm.checks.check_gemm`: every element within the
accumulation bound up to N = 512, Freivalds' test above) before its number is printed; an invalid
product is reported and not placed (exit 1). :func:`apple_roofline.user_kernels.flops_bytes.matmul` counts 2N³
FLOPs and 3N² elements of traffic, and the point's working set (A, B and C) picks the memory level it
is judged at. Prints each size's GFLOP/s, intensity, and the model's verdict
(:meth:`~apple_roofline.roofline.model.model.RooflineModel.judge`: the one roof that binds it, the GEMM
ceiling of its precision where the run has one, its attainable rate there and the share reached; a
point above every roof is flagged and shows no share), and writes the roofline with the points on it
(default: mlx_matmul.png beside the run) and, with ``--save-kernels``, the points as a kernels file
for ``apple-roofline plot RUN.json --kernels FILE``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import apple_roofline as ar
from apple_roofline.dispatch.peers.mlx_peer import device_text
from apple_roofline.figures import save_figure
from apple_roofline.roofline.run.runner import RooflineRunner
from apple_roofline.suites.gemm.checks import check_gemm

DEFAULT_SIZES = (256, 512, 1024, 2048, 4096, 8192)
DEFAULT_DTYPES = ("fp32", "fp16")
#: dtype names (apple_roofline.user_kernels.flops_bytes) -> MLX dtype attribute.
MLX_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
#: --device -> the apple-roofline backend whose run it is placed on.
BACKENDS = {"gpu": "metal", "cpu": "cpu"}
EXIT_MISSING = 2  # MLX or the device asked for is missing
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


class _Progress:
    """Suite-level progress of a roofline run, on stderr."""

    def start(self, suite: str, total: int) -> None:
        print(f"  {suite}: {total} cases ...", file=sys.stderr, flush=True)

    def advance(self, description: str) -> None:
        return None

    def finish(self, suite: str, note: str = "") -> None:
        print(f"  {suite}: done" + (f" ({note})" if note else ""), file=sys.stderr, flush=True)


def _load_mlx() -> Any:
    """``mlx.core``, else None (a message is printed)."""
    try:
        import mlx.core as mx
    except ImportError as exc:
        print(
            f"MLX is not installed ({exc}): pip install mlx (a Mac with Apple silicon) or pip install "
            f'"mlx[cpu]" (Linux)',
            file=sys.stderr,
        )
        return None
    return mx


def _device(mx: Any, asked: str | None) -> tuple[str, str] | None:
    """``(kind, why)``: the MLX device to run on, ``"gpu"`` or ``"cpu"`` (``asked``, else the GPU where
    MLX has Metal and the CPU elsewhere), and why it is that one; None when the GPU was asked for and
    MLX has no Metal (a message is printed)."""
    metal = bool(mx.metal.is_available())  # False off macOS (MLX's Linux builds) and on Intel Macs
    if asked == "gpu" and not metal:
        print(
            f"MLX's Metal backend is not available here ({sys.platform}: mlx.core.metal.is_available() is "
            f"False): --device gpu needs a Mac with Apple silicon; --device cpu runs on MLX's CPU device",
            file=sys.stderr,
        )
        return None
    if asked:
        return asked, f"as --device {asked} asks"
    if metal:
        return "gpu", "the Metal GPU, MLX's default here"
    return "cpu", "the CPU, since mlx.core.metal.is_available() is False here"


def _timed_matmul(mx: Any, a: Any, b: Any, device: Any) -> tuple[Callable[[], None], Callable[[], None], list[Any]]:
    """``(fn, sync, last)`` for apple_roofline.measure: fn submits ``a @ b`` on ``device``, sync waits
    for the last one, ``last`` holds it."""
    submit = getattr(mx, "async_eval", None) or mx.eval
    last: list[Any] = []

    def fn() -> None:
        out = mx.matmul(a, b, stream=device)
        submit(out)
        last[:] = [out]

    def sync() -> None:
        if last:
            mx.eval(last[0])

    return fn, sync, last


def _host(mx: Any, x: Any, dtype: str) -> np.ndarray:
    """An MLX array's values as check_gemm takes them: float16/float32 as stored, bf16 decoded to float32."""
    return np.array(x.astype(mx.float32) if dtype == "bf16" else x, copy=True)


def _parse_list(text: str, what: str, parser: argparse.ArgumentParser) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        parser.error(f"{what}: need at least one value")
    return items


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "run",
        nargs="?",
        metavar="RUN.json",
        help="a run.json of the device to draw the roofline from (default: measure one)",
    )
    parser.add_argument(
        "--device",
        choices=tuple(BACKENDS),
        help="MLX's device (default: gpu where MLX has Metal, else cpu); the run must be of its backend (metal, cpu)",
    )
    parser.add_argument(
        "--save-run", help="where a measured run is saved (default: out/metal_run.json, or out/cpu_run.json)"
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
    parser.add_argument("--save-kernels", metavar="FILE.json", help="also write the points as a kernels file")
    return parser


def _load_run(path: Path, backend: str) -> Any:
    """The run at ``path`` if it is one of ``backend``, else None (a message is printed)."""
    if not path.exists():
        print(
            f"{path} not found: measure the roofline with\n    apple-roofline run --device {backend}\n"
            f"or leave out RUN.json to measure one here.",
            file=sys.stderr,
        )
        return None
    try:
        run = ar.Run.load(path)
    except ar.ResultsError as exc:
        print(str(exc), file=sys.stderr)
        return None
    if run.backend != backend:
        print(
            f"{path} is a {run.backend} run ({run.device_name}); MLX runs here on the {backend} backend's device: "
            f"pass a run of apple-roofline run --device {backend}",
            file=sys.stderr,
        )
        return None
    return run


def _measure_run(backend: str, args: argparse.Namespace, argv: list[str] | None) -> tuple[Any, Path] | None:
    """A run of ``backend`` measured here and saved (``--save-run``), or None (a message is printed)."""
    print(f"measuring the {backend} roofline first (minutes; pass RUN.json to reuse one) ...", file=sys.stderr)
    try:
        run = RooflineRunner(
            ar.RunOptions(
                device=backend,
                quick=args.quick,
                command=("mlx_matmul_sweep.py", *(argv if argv is not None else sys.argv[1:])),
            ),
            progress=_Progress(),
        ).run()
    except (ImportError, RuntimeError, ValueError) as exc:  # no extension, no such backend, bad options
        print(f"cannot measure the {backend} roofline: {exc}", file=sys.stderr)
        return None
    save = Path(args.save_run or f"out/{backend}_run.json")
    save.parent.mkdir(parents=True, exist_ok=True)
    run.save(save)
    print(f"wrote {save}")
    return run, save


@dataclass
class Options:
    """The checked command line: the parsed options, the matrix sizes N and the dtypes."""

    args: argparse.Namespace
    sizes: list[int]
    dtypes: list[str]


def _parse_sizes(text: str, parser: argparse.ArgumentParser) -> list[int]:
    try:
        sizes = [int(s) for s in _parse_list(text, "--sizes", parser)]
    except ValueError:
        parser.error(f"--sizes {text!r}: expected comma-separated integers, e.g. 256,512,1024")
    if min(sizes) < 1:
        parser.error("--sizes: each size must be >= 1")
    return sizes


def parse_options(argv: list[str] | None) -> Options:
    """The command line, checked; exits with a usage error (status 2) on a bad value."""
    parser = _parser()
    args = parser.parse_args(argv)
    sizes = _parse_sizes(args.sizes, parser)
    dtypes = _parse_list(args.dtypes, "--dtypes", parser)
    for d in dtypes:
        if d not in MLX_DTYPES:
            parser.error(f"--dtypes: unknown dtype {d!r} (valid: {', '.join(MLX_DTYPES)})")
    if not 1 <= args.reps <= 10000:
        parser.error(f"--reps {args.reps} is out of range (valid: 1 to 10000)")
    if args.output and Path(args.output).suffix.lower() not in PLOT_SUFFIXES:
        parser.error(f"-o {args.output}: the plot must be one of {', '.join(PLOT_SUFFIXES)}")
    return Options(args, sizes, dtypes)


def open_device(asked: str | None) -> tuple[Any, Any, str] | None:
    """``(mx, device, backend)``: ``mlx.core``, the MLX device to run on (see :func:`_device`) and the
    apple-roofline backend of its runs; printed first. None where MLX or the device asked for is
    missing (a message is printed)."""
    mx = _load_mlx()
    chosen = _device(mx, asked) if mx is not None else None
    if mx is None or chosen is None:
        return None
    kind, why = chosen
    device, backend = mx.Device(getattr(mx, kind), 0), BACKENDS[kind]
    print(f"MLX {getattr(mx, '__version__', '(version unknown)')} on {device_text(mx, device)}: {why}")
    return mx, device, backend


def run_and_folder(backend: str, args: argparse.Namespace, argv: list[str] | None) -> tuple[Any, Path] | None:
    """The run to place the points on (``RUN.json``, else measured here) and the folder the plot goes
    to by default (the run's); None where there is no usable run (a message is printed)."""
    if args.run:
        run = _load_run(Path(args.run), backend)
        return None if run is None else (run, Path(args.run).parent)
    measured = _measure_run(backend, args, argv)
    return None if measured is None else (measured[0], measured[1].parent)


def _measure_size(mx: Any, device: Any, dtype: str, n: int, reps: int) -> tuple[Any, bool, str]:
    """Time ``a @ b`` of N×N random inputs in dtype on device: ``(point, ok, message)``, ok and message
    from checking the last product against NumPy float64."""
    mx_dtype = getattr(mx, MLX_DTYPES[dtype])
    ka, kb = mx.random.split(mx.random.key(n))
    a = mx.random.normal((n, n), dtype=mx_dtype, key=ka, stream=device)
    b = mx.random.normal((n, n), dtype=mx_dtype, key=kb, stream=device)
    mx.eval(a, b)
    fn, sync, last = _timed_matmul(mx, a, b, device)
    flops, nbytes = ar.flops_bytes.matmul(n, n, n, dtype)
    p = ar.measure(
        fn,
        flops=flops,
        bytes=nbytes,
        sync=sync,
        name=f"{dtype} N={n}",
        reps=reps,
        warmup=2,
        dtype=dtype,
        pipe="tensor",  # a matmul: judged against the GEMM ceiling of its precision
        working_set=nbytes,  # A, B and C: the memory level they fit in sets the bandwidth
    )
    ok, message = check_gemm(_host(mx, a, dtype), _host(mx, b, dtype), _host(mx, last[0], dtype), dtype)
    return p, ok, message


def measure_points(mx: Any, device: Any, model: Any, opts: Options) -> tuple[list[Any], int]:
    """Every dtype × size measured, checked and judged against the model, a table row each on stdout:
    the valid points and the count of invalid products (not placed)."""
    points, invalid = [], 0
    print(
        f"{'dtype':>5}  {'N':>6}  {'GFLOP/s':>9}  {'FLOP/B':>7}  {'attainable':>10}  {'efficiency':>10}  roof: verdict"
    )
    for dtype in opts.dtypes:
        for n in opts.sizes:
            p, ok, message = _measure_size(mx, device, dtype, n, opts.args.reps)
            if not ok:
                invalid += 1
                print(f"{dtype:>5}  {n:>6}  invalid, not placed: {message}")
                continue
            points.append(p)
            v = model.judge(p)  # the one roof that binds it; no share above 100 %
            share = "-" if v.fraction is None else f"{v.fraction:.1%}"
            roof = "" if v.above else f"{v.ceiling.name}: "  # a flag names the roof it lies above
            print(
                f"{dtype:>5}  {n:>6}  {p.gflops:>9.1f}  {p.intensity:>7.2f}  {v.attainable:>10.1f}  {share:>10}  "
                f"{roof}{v.verdict}"
            )
            print(f"{'':>15}valid: {message}")
    return points, invalid


def main(argv: list[str] | None = None) -> int:
    """Run the example (argv: the command line without the program name); returns 0, 1 on an invalid
    product or an unusable run, EXIT_MISSING where MLX or its device is missing."""
    opts = parse_options(argv)
    args = opts.args
    opened = open_device(args.device)
    if opened is None:
        return EXIT_MISSING
    mx, device, backend = opened
    found = run_and_folder(backend, args, argv)
    if found is None:
        return 1
    run, plot_dir = found
    model = ar.Roofline.from_run(run)
    print(f"roofline: {model.title}")
    points, invalid = measure_points(mx, device, model, opts)

    if points:
        out = Path(args.output) if args.output else plot_dir / "mlx_matmul.png"
        fig = ar.plot_roofline(
            model, points=points, title=f"MLX matmul ({', '.join(opts.dtypes)}) on {run.device_name} ({device})"
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        save_figure(fig, out)
        print(f"wrote {out}")
        if args.save_kernels:
            ar.save_kernels(args.save_kernels, points, device=run.device)
            print(f"wrote {args.save_kernels}")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
