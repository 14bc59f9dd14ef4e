"""PyTorch and CuPy matmul sizes on a measured CUDA GPU roofline.

    python examples/torch_cupy_matmul.py [RUN.json] [--library torch|cupy|both] [--device cuda:N]
                                         [--sizes 256,512,...] [--dtypes fp32,fp16,bf16] [-o FILE.png]

Needs an NVIDIA GPU and PyTorch (with CUDA) and/or CuPy; exits 2 with a message when the library
asked for is missing (``--library both``, the default, uses whichever of the two is installed and
exits 2 only when neither is). The roofline is ``RUN.json`` (a CUDA run of
``apple-roofline run --device cuda``) or, without it, measured first with
:class:`~apple_roofline.roofline.run.runner.RooflineRunner` on ``--device`` (minutes; saved to ``--save-run``, default
out/cuda_run.json, to pass as ``RUN.json`` next time).

Times ``torch.matmul(a, b)`` (sync ``torch.cuda.synchronize(device)``) and ``cupy.matmul(a, b)``
(sync ``cupy.cuda.Device(N).synchronize()``) on N×N matrices (N = 256 … 8192 doubling; fp32 and
fp16, and bf16 for PyTorch: CuPy has no bfloat16) with :func:`apple_roofline.measure`;
:func:`apple_roofline.user_kernels.flops_bytes.matmul` counts 2N³ FLOPs and 3N² elements of traffic. fp32 is
whatever the library does by default: PyTorch uses TF32 tensor cores for it only when
``torch.backends.cuda.matmul.allow_tf32`` is set, CuPy only under ``CUPY_TF32=1``. Prints each
size's GFLOP/s, intensity, the roof that binds it, the share of it reached and the verdict, and
writes the roofline with the points on it (default: torch_cupy_matmul.png beside the run).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apple_roofline as ar
from apple_roofline.devices import parse_device
from apple_roofline.figures import save_figure
from apple_roofline.roofline.run.runner import RooflineRunner
from apple_roofline.suites.gemm.checks import check_gemm

DEFAULT_SIZES = (256, 512, 1024, 2048, 4096, 8192)
DEFAULT_DTYPES = ("fp32", "fp16")
#: dtype names (apple_roofline.user_kernels.flops_bytes) -> the library's dtype attribute (None: not supported).
TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
CUPY_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": None}
LIBRARIES = ("torch", "cupy")
NAMES = {"torch": "PyTorch", "cupy": "CuPy"}
EXIT_MISSING = 2  # the library (or its CUDA device) is missing
PLOT_SUFFIXES = (".png", ".svg", ".pdf")

#: (n, dtype) -> (the timed call, its sync, the check of its product against NumPy float64)
MatmulFactory = Callable[[int, str], tuple[Callable[[], Any], Callable[[], Any], Callable[[], tuple[bool, str]]]]


class _Progress:
    """Suite-level progress of a roofline run, on stderr."""

    def start(self, suite: str, total: int) -> None:
        print(f"  {suite}: {total} cases ...", file=sys.stderr, flush=True)

    def advance(self, description: str) -> None:
        return None

    def finish(self, suite: str, note: str = "") -> None:
        print(f"  {suite}: done" + (f" ({note})" if note else ""), file=sys.stderr, flush=True)


def _torch(index: int) -> tuple[MatmulFactory | None, str]:
    """A factory of (fn, sync) for torch.matmul on cuda:index, or (None, why not)."""
    try:
        import torch
    except ImportError as exc:
        return None, f"PyTorch is not installed ({exc}); pip install torch (a CUDA build)"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} has no CUDA device (torch.cuda.is_available() is False)"
    if index >= torch.cuda.device_count():
        return None, f"PyTorch sees {torch.cuda.device_count()} CUDA device(s); cuda:{index} is not one of them"
    device = torch.device(f"cuda:{index}")

    def make(n: int, dtype: str) -> tuple[Callable[[], Any], Callable[[], Any], Callable[[], tuple[bool, str]]]:
        dt = getattr(torch, TORCH_DTYPES[dtype])
        a = torch.randn(n, n, device=device, dtype=dt)
        b = torch.randn(n, n, device=device, dtype=dt)

        def check() -> tuple[bool, str]:
            host = [t.float().cpu().numpy() if dtype == "bf16" else t.cpu().numpy() for t in (a, b, torch.matmul(a, b))]
            return check_gemm(*host, dtype)

        return (lambda: torch.matmul(a, b)), (lambda: torch.cuda.synchronize(device)), check

    return make, ""


def _cupy(index: int) -> tuple[MatmulFactory | None, str]:
    """A factory of (fn, sync) for cupy.matmul on device index, or (None, why not)."""
    try:
        import cupy
    except ImportError as exc:
        return None, f"CuPy is not installed ({exc}); pip install cupy-cuda12x (or the wheel for your CUDA)"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - no driver, no device: CuPy raises its own CUDA errors
        return None, f"CuPy {cupy.__version__} finds no CUDA device ({type(exc).__name__}: {exc})"
    if index >= count:
        return None, f"CuPy sees {count} CUDA device(s); cuda:{index} is not one of them"
    device = cupy.cuda.Device(index)
    device.use()  # this thread's current device: arrays are made, and matmuls run, there

    def make(n: int, dtype: str) -> tuple[Callable[[], Any], Callable[[], Any], Callable[[], tuple[bool, str]]]:
        dt = getattr(cupy, str(CUPY_DTYPES[dtype]))
        a = cupy.random.standard_normal((n, n), dtype=cupy.float32).astype(dt)
        b = cupy.random.standard_normal((n, n), dtype=cupy.float32).astype(dt)

        def check() -> tuple[bool, str]:
            return check_gemm(cupy.asnumpy(a), cupy.asnumpy(b), cupy.asnumpy(cupy.matmul(a, b)), dtype)

        return (lambda: cupy.matmul(a, b)), device.synchronize, check

    return make, ""


def _parse_list(text: str, what: str, parser: argparse.ArgumentParser) -> list[str]:
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        parser.error(f"{what}: need at least one value")
    return items


def _build_parser() -> argparse.ArgumentParser:
    """The command line's options (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "run", nargs="?", metavar="RUN.json", help="a CUDA run.json to draw the roofline from (default: measure one)"
    )
    parser.add_argument(
        "--save-run", default="out/cuda_run.json", help="where a measured run is saved (default: out/cuda_run.json)"
    )
    parser.add_argument("--quick", action="store_true", help="a quick roofline run when measuring one")
    parser.add_argument(
        "--library",
        choices=("torch", "cupy", "both"),
        default="both",
        help="which library to time (default: both, i.e. whichever is installed)",
    )
    parser.add_argument("--device", default="cuda", help="the CUDA device: cuda or cuda:N (default: cuda:0)")
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated matrix sizes N (default: 256..8192 doubling)",
    )
    parser.add_argument(
        "--dtypes",
        default=",".join(DEFAULT_DTYPES),
        help="comma-separated dtypes (default: fp32,fp16; valid: fp32, fp16, bf16 (PyTorch only))",
    )
    parser.add_argument("--reps", type=int, default=5, help="samples per size (default: 5)")
    parser.add_argument("-o", "--output", help="plot file (.png, .svg or .pdf)")
    return parser


@dataclass
class Options:
    """The checked command line: the parsed options, the matrix sizes N, the dtypes and the CUDA
    device's index."""

    args: argparse.Namespace
    sizes: list[int]
    dtypes: list[str]
    index: int


def _parse_sizes(text: str, parser: argparse.ArgumentParser) -> list[int]:
    try:
        sizes = [int(s) for s in _parse_list(text, "--sizes", parser)]
    except ValueError:
        parser.error(f"--sizes {text!r}: expected comma-separated integers, e.g. 256,512,1024")
    if min(sizes) < 1:
        parser.error("--sizes: each size must be >= 1")
    return sizes


def _parse_dtypes(text: str, parser: argparse.ArgumentParser) -> list[str]:
    dtypes = _parse_list(text, "--dtypes", parser)
    for d in dtypes:
        if d not in TORCH_DTYPES:
            parser.error(f"--dtypes: unknown dtype {d!r} (valid: {', '.join(TORCH_DTYPES)})")
    return dtypes


def _parse_index(device: str, parser: argparse.ArgumentParser) -> int:
    try:
        spec = parse_device(device)
    except ValueError as exc:
        parser.error(str(exc))
    if spec.backend != "cuda":
        parser.error(f"--device {device}: this example runs on a CUDA device (cuda or cuda:N)")
    return spec.index


def parse_options(argv: list[str] | None) -> Options:
    """The command line, checked; exits with a usage error (status 2) on a bad value."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    sizes = _parse_sizes(args.sizes, parser)
    dtypes = _parse_dtypes(args.dtypes, parser)
    index = _parse_index(args.device, parser)
    if not 1 <= args.reps <= 10000:
        parser.error(f"--reps {args.reps} is out of range (valid: 1 to 10000)")
    if args.output and Path(args.output).suffix.lower() not in PLOT_SUFFIXES:
        parser.error(f"-o {args.output}: the plot must be one of {', '.join(PLOT_SUFFIXES)}")
    return Options(args, sizes, dtypes, index)


def open_libraries(library: str, index: int) -> dict[str, MatmulFactory] | None:
    """The matmul factories of the libraries asked for (``library``: torch, cupy or both) on
    cuda:index, or None (with the reasons on stderr) where the one asked for, or both, are missing."""
    wanted = LIBRARIES if library == "both" else (library,)
    openers = {"torch": _torch, "cupy": _cupy}
    libraries: dict[str, MatmulFactory] = {}
    missing: list[str] = []
    for lib in wanted:
        factory, why = openers[lib](index)
        if factory is None:
            missing.append(why)
        else:
            libraries[lib] = factory
    if not libraries or (library != "both" and missing):
        need = "PyTorch (with CUDA) or CuPy" if library == "both" else NAMES[library]
        print("\n".join(missing) + f"\nthis example needs {need} on an NVIDIA GPU", file=sys.stderr)
        return None
    for why in missing:
        print(f"note: {why}; timing {', '.join(NAMES[lib] for lib in libraries)} only", file=sys.stderr)
    return libraries


def load_run(run_path: Path, index: int) -> ar.Run | None:
    """The CUDA run in run_path, or None (with the reason on stderr) where it is missing, unreadable
    or of another backend."""
    if not run_path.exists():
        print(
            f"{run_path} not found: measure the GPU's roofline with\n"
            f"    apple-roofline run --device cuda:{index}\n"
            f"or leave out RUN.json to measure one here.",
            file=sys.stderr,
        )
        return None
    try:
        run: ar.Run = ar.Run.load(run_path)
    except ar.ResultsError as exc:
        print(str(exc), file=sys.stderr)
        return None
    if run.backend != "cuda":
        print(
            f"{run_path} is a {run.backend} run ({run.device_name}); PyTorch and CuPy run on a CUDA GPU: "
            f"pass a run of apple-roofline run --device cuda",
            file=sys.stderr,
        )
        return None
    return run


def measure_run(opts: Options, argv: list[str] | None) -> ar.Run | None:
    """Measure cuda:index's roofline (minutes) and save it to ``--save-run``; None (with the reason
    on stderr) where it cannot be measured."""
    print(
        f"measuring the roofline of cuda:{opts.index} first (minutes; pass RUN.json to reuse one) ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        run = RooflineRunner(
            ar.RunOptions(
                device=f"cuda:{opts.index}",
                quick=opts.args.quick,
                command=("torch_cupy_matmul.py", *(argv if argv is not None else sys.argv[1:])),
            ),
            progress=_Progress(),
        ).run()
    except (ImportError, RuntimeError, ValueError) as exc:  # no extension, no CUDA backend, bad options
        print(f"cannot measure the CUDA roofline: {exc}", file=sys.stderr)
        return None
    save = Path(opts.args.save_run)
    save.parent.mkdir(parents=True, exist_ok=True)
    run.save(save)
    print(f"wrote {save}")
    return run


def _measure_one(make: MatmulFactory, lib: str, dtype: str, n: int, reps: int) -> ar.Point | None:
    """Time lib's N×N matmul in dtype and check its product; None (reported on stderr) where the
    check fails."""
    fn, sync, check = make(n, dtype)
    flops, nbytes = ar.flops_bytes.matmul(n, n, n, dtype)
    p = ar.measure(
        fn,
        flops=flops,
        bytes=nbytes,
        sync=sync,
        name=f"{lib} {dtype} N={n}",
        reps=reps,
        warmup=2,
        dtype=dtype,
        pipe="tensor",  # a matmul: judged against the GEMM ceilings of its precision
        working_set=nbytes,
    )
    ok, message = check()  # validated before its number is reported
    if not ok:
        print(f"{lib} {dtype} N={n} failed validation: {message}; not placed", file=sys.stderr)
        return None
    return p


def measure_points(
    model: ar.Roofline, libraries: dict[str, MatmulFactory], opts: Options
) -> tuple[list[ar.Point], int]:
    """Every library × dtype × size measured and judged against the model, a table row each on
    stdout: the validated points and the count of those that failed validation."""
    points = []
    failed = 0
    print(
        f"{'library':>7}  {'dtype':>5}  {'N':>6}  {'GFLOP/s':>9}  {'FLOP/B':>7}  {'bound by':>20}  {'attainable':>10}  "
        f"{'share':>8}  verdict"
    )
    for lib, make in libraries.items():
        for dtype in opts.dtypes:
            if lib == "cupy" and CUPY_DTYPES[dtype] is None:
                print(f"note: CuPy has no {dtype}; skipped", file=sys.stderr)
                continue
            for n in opts.sizes:
                p = _measure_one(make, lib, dtype, n, opts.args.reps)
                if p is None:
                    failed += 1
                    continue
                points.append(p)
                judged = model.judge(p)
                print(
                    f"{lib:>7}  {dtype:>5}  {n:>6}  {p.gflops:>9.1f}  {p.intensity:>7.2f}  "
                    f"{judged.ceiling.name:>20}  {judged.attainable:>10.1f}  {judged.share_text:>8}  {judged.verdict}"
                )
    return points, failed


def main(argv: list[str] | None = None) -> int:
    """Run the example (argv: the command line without the program name); returns 0, 1 on a failed
    validation or an unusable run, EXIT_MISSING where the library asked for is missing."""
    opts = parse_options(argv)
    libraries = open_libraries(opts.args.library, opts.index)
    if libraries is None:
        return EXIT_MISSING
    if opts.args.run:
        run = load_run(Path(opts.args.run), opts.index)
        plot_dir = Path(opts.args.run).parent
    else:
        run = measure_run(opts, argv)
        plot_dir = Path(opts.args.save_run).parent
    if run is None:
        return 1
    model = ar.Roofline.from_run(run)
    points, failed = measure_points(model, libraries, opts)
    if not points:
        print("nothing was measured (CuPy has no bf16: add fp32 or fp16 to --dtypes)", file=sys.stderr)
        return 1

    out = Path(opts.args.output) if opts.args.output else plot_dir / "torch_cupy_matmul.png"
    names = " and ".join(NAMES[lib] for lib in libraries)
    title = f"{names} matmul ({', '.join(opts.dtypes)}) on {run.device_name}"
    fig = ar.plot_roofline(model, points=points, title=title)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out)
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
