"""The ``gemm`` suite: vendor GEMM libraries on square N = 16, 32 … (DESIGN.md §4).

C = A·B, row-major, alpha 1, beta 0. FLOPs 2·M·N·K; bytes (M·K + K·N + M·N) × element size (the MLX
roofline article's formula). CPU: BLAS sgemm and dgemm (Accelerate on macOS, OpenBLAS elsewhere).
N doubles from 16 until the next size would exceed the time budget (a launch of about
``max_launch_s``; --quick: less), the memory cap, or 8192. Each product is checked against NumPy:
exactly (in float64, with a Higham-style bound K·eps·(|A|·|B|)) up to N = 512, and above that by
Freivalds' test, C·x against A·(B·x) for a random x, which costs O(N²) and catches any wrong
element larger than the bound with probability 1.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, Tuple

import numpy as np

from .base import EPS, ITEMSIZE, NUMPY_DTYPE, Case, KernelDef, Suite, poison, read

__all__ = ["GemmSuite", "GEMM_DTYPES", "gemm_flops", "gemm_bytes"]

#: dtype -> (kernel name, ceiling class).
GEMM_DTYPES: Dict[str, Tuple[str, str]] = {"fp32": ("sgemm", "GEMM FP32"), "fp64": ("dgemm", "GEMM FP64")}
MAX_N = 8192
EXACT_CHECK_MAX_N = 512


def gemm_flops(m: int, n: int, k: int) -> int:
    """2·M·N·K: one multiply and one add per term of every dot product."""
    return 2 * m * n * k


def gemm_bytes(m: int, n: int, k: int, dtype: str) -> int:
    """(M·K + K·N + M·N) × element size: A and B read once, C written once."""
    return (m * k + k * n + m * n) * ITEMSIZE[dtype]


def check_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: str, seed: int = 11) -> Tuple[bool, str]:
    """Validate C = A·B (all 2-D, float dtypes). Returns (ok, message)."""
    k = a.shape[1]
    eps = EPS[dtype]
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    if not np.all(np.isfinite(c64)):
        return False, f"{int(np.count_nonzero(~np.isfinite(c64)))} non-finite elements in C"
    if a.shape[0] <= EXACT_CHECK_MAX_N:
        want = a64 @ b64
        bound = 2.0 * k * eps * (np.abs(a64) @ np.abs(b64)) + np.finfo(np.float64).tiny
        err = np.abs(c64 - want)
        bad = int(np.count_nonzero(err > bound))
        worst = float(np.max(err / bound))
        if bad:
            return False, f"{bad} of {c.size} elements exceed K·eps·(|A||B|) (worst {worst:.3g}× the bound)"
        return True, f"all {c.size} elements match NumPy float64 (worst {worst:.3g} of the bound)"
    x = np.random.default_rng(seed).uniform(-1.0, 1.0, (b.shape[1], 2))
    got = c64 @ x
    want = a64 @ (b64 @ x)
    bound = 2.0 * k * eps * (np.abs(a64) @ (np.abs(b64) @ np.abs(x))) + c.shape[1] * np.finfo(np.float64).eps * (np.abs(c64) @ np.abs(x))
    err = np.abs(got - want)
    worst = float(np.max(err / bound))
    if worst > 1.0:
        return False, f"Freivalds check failed: C·x differs from A·(B·x) by {worst:.3g}× the bound"
    return True, f"Freivalds check (2 random vectors) passed: worst {worst:.3g} of the bound"


class GemmSuite(Suite):
    """Vendor GEMM (the backend's ``gemm`` routine) for every precision of GEMM_DTYPES, on square
    sizes doubling from 16 while the next size fits the time budget and memory."""

    name = "gemm"

    def total(self) -> int:
        return len(GEMM_DTYPES) * 10

    def cases(self) -> Iterator[Case]:
        backend = self.ctx.backend
        max_launch_s = float(self.ctx.options.get("gemm_max_launch_s", 0.25))
        mem = int(self.ctx.info.get("memory_bytes", 0) or 0)
        for dtype, (name, cclass) in GEMM_DTYPES.items():
            kdef = KernelDef("gemm", name, dtype, {"cpu": ("blas", name)}, ceiling_class=cclass, ceiling_kind="compute")
            if self.source(kdef) is None:
                continue
            N = 16
            self.last = None
            while N <= MAX_N:
                es = ITEMSIZE[dtype]
                if mem and 3 * N * N * es * 4 > mem:
                    break
                rng = np.random.default_rng(N)
                a = rng.uniform(-1.0, 1.0, (N, N)).astype(NUMPY_DTYPE[dtype])
                b = rng.uniform(-1.0, 1.0, (N, N)).astype(NUMPY_DTYPE[dtype])
                bufs = [backend.alloc(N * N * es) for _ in range(3)]
                bufs[0].write(a.ravel())
                bufs[1].write(b.ravel())
                poison(bufs[2], dtype, N * N)

                def check(a: Any = a, b: Any = b, cbuf: Any = bufs[2], N: int = N, dtype: str = dtype) -> Tuple[bool, str]:
                    c = read(cbuf, dtype, N * N).reshape(N, N)
                    return check_gemm(a, b, c, dtype)

                yield Case(
                    kernel=kdef,
                    params={"m": N, "n": N, "k": N},
                    launch=1,
                    flops=gemm_flops(N, N, N),
                    bytes=gemm_bytes(N, N, N, dtype),
                    args=bufs,
                    make_kernel=partial(backend.gemm, dtype, N, N, N),
                    check=check,
                )
                # The next size costs about 8x this one; predict from the best sample, so one
                # disturbed size (a noisy neighbour, a BLAS thread wake-up) does not end the ladder.
                last: Any = self.last
                if last is None or not last.valid or last.min_s * 8 > max_launch_s:
                    break
                N *= 2
