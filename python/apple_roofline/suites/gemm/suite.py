"""The ``gemm`` suite: vendor GEMM libraries on square N = 16, 32 … (docs/design/measurement.md,
"Counting FLOPs and bytes").

C[M×N] = A[M×K]·B[K×N], row-major, no transpose, alpha 1, beta 0, in six precisions
(:data:`GEMM_PRECISIONS`): fp64, fp32 (FP32 arithmetic, never TF32), tf32 (fp32 storage, inputs
rounded to TF32 by the library, FP32 accumulate), fp16 and bf16 (16-bit storage, FP32 accumulate, C
rounded once) and int8 (int8 A and B, exact int32 C; B is written transposed, N×K row-major, the
"TN" layout integer tensor-core GEMMs take, as torch._int_mm takes it — the product is the same
C = A·B). CPU: BLAS sgemm and dgemm (Accelerate on macOS,
OpenBLAS elsewhere) and, on macOS, FP16 through BNNSMatMul (the M5 article's AMX measurements);
CUDA: cuBLAS, all six; Metal: MetalPerformanceShaders fp32 and fp16. A backend without a precision
in its kernel table is skipped silently; one whose ``gemm`` raises ``UnsupportedError`` is recorded
as skipped.

Besides the vendor libraries, :data:`TILED_GEMM` is the M5 article's comparison: a plain 16×16
threadgroup-tiled MSL kernel (``shaders/metal/gemm.metal``, CUDA twin ``shaders/cuda/gemm.cu``),
fp32, never a ceiling ("the difference between portable GPU code and Apple-tuned kernels").

Counting: 2·M·N·K operations for every precision (one multiply and one add per term; for int8 these
are integer operations, reported in the same GFLOP/s column), and bytes (M·K + K·N) × input element
size + M·N × output element size (the MLX roofline article's formula, with C in its own format:
fp64 8/8, fp32 and tf32 4/4, fp16 and bf16 2/2, int8 1/4).

N doubles from 16 (--quick: N = 64, 256, 1024, 4096, :mod:`.sizes`) until the ladder has settled
(two quiet sizes agree within 3 %: :mod:`.settle`), the next size would exceed the time budget (a
launch of about ``max_launch_s``; --quick: less), the memory cap, or the last size (8192; --quick:
4096); the last size measured records why (docs/design/matrix.md, "The GEMM ladder"). Every product
is validated against NumPy, elementwise up to N = :data:`EXACT_CHECK_MAX_N` and by Freivalds' test
above it; see :func:`check_gemm` for the bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Mapping, MutableMapping, Optional, Sequence, Tuple, TypeVar

import numpy as np

from ...stats import summarize
from ...study.records import LADDER_PARAM
from ..base import (
    EPS,
    ITEMSIZE,
    NUMPY_DTYPE,
    Case,
    KernelDef,
    Suite,
    SuiteContext,
    fill_constant,
    poison,
    read,
)
from ..blocks import CACHE_BLOCK_BYTES, map_row_blocks
from .reuse import SharedDraws
from .settle import few_reps, settle_note
from .sizes import SIZES_OPTION, growth, ladder_sizes, most_sizes, next_size

T = TypeVar("T")

__all__ = [
    "GemmSuite",
    "GemmPrecision",
    "GEMM_PRECISIONS",
    "GEMM_DTYPES",
    "TILED_GEMM",
    "UNDOCUMENTED_FP16_ACCUMULATOR",
    "gemm_flops",
    "gemm_bytes",
    "check_fp16_accumulation",
    "gemm_kernel_def",
    "gemm_inputs",
    "uniform_pair64",
    "input_kind",
    "uniform_pair",
    "check_gemm",
    "round_tf32",
    "round_bf16",
    "bf16_bits",
    "bf16_values",
]


@dataclass(frozen=True)
class GemmPrecision:
    """One precision of the gemm suite: its kernel, storage formats and the terms of its bound.

    ``in_dtype`` / ``out_dtype`` are suite dtypes (keys of ``base.NUMPY_DTYPE`` and ``ITEMSIZE``) of
    the stored A and B, and of C. The bound terms (see :func:`check_gemm`): ``acc_eps``, the
    accumulator's machine epsilon (0: exact integer accumulation); ``in_u``, the relative error of
    the conversion the library applies to the inputs (0: none); ``out_eps``, the relative error
    allowed for rounding the accumulator to C's format once (0: C is the accumulator's format);
    ``out_eta``, the absolute error of that rounding in the subnormal range. ``libraries`` maps a
    backend to the library that has this precision there ("blas", "bnns", "cublas", "mps").
    """

    kernel: str
    ceiling_class: str
    in_dtype: str
    out_dtype: str
    acc_eps: float
    in_u: float = 0.0
    out_eps: float = 0.0
    out_eta: float = 0.0
    libraries: Mapping[str, str] = field(default_factory=dict)
    b_transposed: bool = False  # B is passed N×K (transposed), as the backend's gemm takes it


#: dtype -> precision, in measurement order (fp32 and fp64 first: the CPU's order is unchanged).
GEMM_PRECISIONS: Dict[str, GemmPrecision] = {
    "fp32": GemmPrecision(
        "sgemm", "GEMM FP32", "fp32", "fp32", EPS["fp32"], libraries={"cpu": "blas", "cuda": "cublas", "metal": "mps"}
    ),
    "fp64": GemmPrecision(
        "dgemm", "GEMM FP64", "fp64", "fp64", EPS["fp64"], libraries={"cpu": "blas", "cuda": "cublas"}
    ),
    # TF32 inputs: 10 explicit mantissa bits. Tensor cores may read only the top bits of an fp32
    # operand (round toward zero, relative error < 2^-10) or round to nearest (<= 2^-11): allow eps.
    "tf32": GemmPrecision(
        "tf32gemm", "GEMM TF32", "fp32", "fp32", EPS["fp32"], in_u=EPS["tf32"], libraries={"cuda": "cublas"}
    ),
    "fp16": GemmPrecision(
        "hgemm",
        "GEMM FP16",
        "fp16",
        "fp16",
        EPS["fp32"],
        out_eps=EPS["fp16"],
        out_eta=2.0**-25,  # half fp16's smallest subnormal, 2^-24
        libraries={"cpu": "bnns", "cuda": "cublas", "metal": "mps"},
    ),
    "bf16": GemmPrecision(
        "bf16gemm",
        "GEMM BF16",
        "bf16",
        "bf16",
        EPS["fp32"],
        out_eps=EPS["bf16"],
        out_eta=2.0**-134,  # half bf16's smallest subnormal, 2^-133
        libraries={"cuda": "cublas"},
    ),
    "int8": GemmPrecision("i8gemm", "GEMM INT8", "int8", "int32", 0.0, b_transposed=True, libraries={"cuda": "cublas"}),
}

#: Libraries whose FP16 GEMM does not document its accumulator (MPSMatrixMultiplication.h and
#: bnns.h say nothing about it). Their fp16 results are checked against the FP32-accumulation
#: bound first and, failing that, against :func:`check_fp16_accumulation`'s bound; the validation
#: message says which one held.
UNDOCUMENTED_FP16_ACCUMULATOR = frozenset({"mps", "bnns"})
#: Norm-wise tolerance of an FP16-accumulated product, in units of u16·√K (see check_fp16_accumulation).
FP16_ACC_TAU = 4.0

#: The M5 article's hand-written comparison kernel: 16×16 tiles in threadgroup (shared) memory,
#: one thread per element of C, fp32 accumulation. Arguments A, B, C, N; N·N work items in
#: threadgroups (blocks) of 256. Plotted beside the library GEMMs, never a ceiling.
TILED_GEMM = KernelDef(
    "gemm",
    "sgemm_tiled16",
    "fp32",
    {"metal": ("gemm.metal", "gemm_tiled16_f32"), "cuda": ("gemm.cu", "gemm_tiled16_f32")},
    constants={"metal": {"BLOCK": 256}, "cuda": {"BLOCK": 256}},
)
TILE = 16

#: dtype -> (kernel name, ceiling class).
GEMM_DTYPES: Dict[str, Tuple[str, str]] = {d: (p.kernel, p.ceiling_class) for d, p in GEMM_PRECISIONS.items()}
EXACT_CHECK_MAX_N = 512
#: Random ±1 vectors per Freivalds test, and the Hoeffding multiplier of its row bound: a correct
#: row fails one vector with probability at most 2·exp(-λ²/2) = 2.5e-14.
FREIVALDS_VECTORS = 4
#: The smallest bound on int8 Freivalds vectors' entries for which the test runs in float64 BLAS
#: (exact below 2^53); with a smaller one (N above about 11,700 for entries of ±127) it runs in int64.
#: A wrong C passes one vector with probability at most 1/(2·xmax + 1).
INT8_FREIVALDS_MIN_XMAX = 2**12
FREIVALDS_LAMBDA = 8.0
#: An "fp32" result whose error is this much (or more) of the TF32 input-rounding signature
#: (least-squares coefficient) was computed with TF32 inputs; a true FP32 result scores ~0.
TF32_SIGNATURE_MAX = 0.5
#: An fp16/bf16 failure whose errors all lie within this many eps_out·|A||B| is reported as
#: partial sums rounded to the output format (fp16 accumulation, or cuBLAS's reduced-precision
#: split-K reduction, which the "C rounded once" contract excludes).
LOW_PRECISION_SUM_HINT = 16
#: int8 inputs are drawn from [-INT8_MAX_ABS, INT8_MAX_ABS].
INT8_MAX_ABS = 127
_EPS64 = float(np.finfo(np.float64).eps)
_TINY64 = float(np.finfo(np.float64).tiny)
#: Poison values for outputs that cannot hold a float NaN (read back, they fail every check).
_BF16_NAN = 0x7FC0
_INT32_POISON = -(2**31)


def gemm_flops(m: int, n: int, k: int) -> int:
    """2·M·N·K: one multiply and one add per term of every dot product (integer operations for
    int8, counted the same way)."""
    return 2 * m * n * k


def gemm_bytes(m: int, n: int, k: int, dtype: str) -> int:
    """(M·K + K·N) × input element size + M·N × output element size: A and B read once, C written
    once (fp64 8/8, fp32 and tf32 4/4, fp16 and bf16 2/2, int8 1/4 bytes). Raises KeyError for a
    dtype not in :data:`GEMM_PRECISIONS`."""
    p = GEMM_PRECISIONS[dtype]
    return (m * k + k * n) * ITEMSIZE[p.in_dtype] + m * n * ITEMSIZE[p.out_dtype]


def gemm_kernel_def(dtype: str) -> KernelDef:
    """The kernel table entry of ``dtype``: ``(library, name)`` for every backend whose library has
    it (``GemmPrecision.libraries``: CPU BLAS fp32/fp64 and BNNS fp16, cuBLAS all six, MPS fp32/fp16).
    Raises KeyError for an unknown dtype."""
    p = GEMM_PRECISIONS[dtype]
    sources = {backend: (lib, p.kernel) for backend, lib in p.libraries.items()}
    return KernelDef("gemm", p.kernel, dtype, sources, ceiling_class=p.ceiling_class, ceiling_kind="compute")


# --- reduced-precision formats in NumPy --------------------------------------------------------


def round_tf32(x: np.ndarray, mode: str = "nearest") -> np.ndarray:
    """``x`` (any float array of finite values) rounded to TF32 (10 explicit mantissa bits), as
    float32: ``mode`` "nearest" (ties to even) or "zero" (the low 13 bits of the fp32 value
    dropped). Raises ValueError for another mode."""
    if mode not in ("nearest", "zero"):
        raise ValueError(f"unknown rounding mode {mode!r} (valid: nearest, zero)")
    bits = np.array(x, dtype=np.float32, order="C").view(np.uint32)  # a copy: rounded in place
    if mode == "nearest":  # finite values cannot carry out of 32 bits
        bits += np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))
    bits &= np.uint32(0xFFFFE000)
    out: np.ndarray = bits.view(np.float32)
    return out


def round_bf16(x: np.ndarray) -> np.ndarray:
    """``x`` (finite values) rounded to bfloat16, to nearest with ties to even, as float32."""
    bits = np.array(x, dtype=np.float32, order="C").view(np.uint32)
    bits += np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    bits &= np.uint32(0xFFFF0000)
    out: np.ndarray = bits.view(np.float32)
    return out


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """The bf16 bit patterns (uint16, the upper half of each float32) of ``x``; exact when ``x`` is
    representable in bf16 (else truncated: round with :func:`round_bf16` first)."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """float32 values of bf16 bit patterns (uint16), exact."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


# --- validation --------------------------------------------------------------------------------


def _pow2(x: float) -> str:
    e = math.log2(x)
    return f"2^{round(e)}" if e == round(e) else f"{x:.3g}"


def _bound_formula(p: GemmPrecision) -> str:
    """The elementwise bound of ``p`` as text, e.g. "(2·K·2^-23)·|A||B| + 2^-10·|C| + 2^-25"."""
    rel = f"2·K·{_pow2(p.acc_eps)}" + (f" + 2·{_pow2(p.in_u)} + {_pow2(p.in_u * p.in_u)}" if p.in_u else "")
    terms = [f"({rel})·|A||B|"]
    if p.out_eps:
        terms.append(f"{_pow2(p.out_eps)}·|C|")
    if p.out_eta:
        terms.append(_pow2(p.out_eta))
    return " + ".join(terms)


def _tf32_signature(r: np.ndarray, signatures: Tuple[np.ndarray, ...]) -> float:
    """The largest least-squares coefficient of ``r`` on each signature (0 where it is zero)."""
    best = 0.0
    for d in signatures:
        dd = float(np.vdot(d, d))
        if dd > 0.0:
            best = max(best, float(np.vdot(r, d)) / dd)
    return best


def _exact_products(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """A·B and |A|·|B| in float64 (the exact check's reference and the scale of its bound)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a64 @ b64, np.abs(a64) @ np.abs(b64)


def _memoized(memo: Optional[MutableMapping[Any, Any]], key: Any, compute: Callable[[], T]) -> T:
    """``memo[key]``, computed (and kept there) where ``memo`` lacks it; ``compute()`` where no memo."""
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    value: T = memo[key]
    return value


def check_gemm(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    dtype: str,
    seed: int = 11,
    memo: Optional[MutableMapping[Any, Any]] = None,
) -> Tuple[bool, str]:
    """Validate a device's C = A·B in precision ``dtype`` (a key of :data:`GEMM_PRECISIONS`).

    ``a`` (M×K), ``b`` (K×N) are the inputs' values as the device stored them and ``c`` (M×N) the
    output's values: float16/float32/float64 arrays (bf16 decoded to float32 with
    :func:`bf16_values`), or int8 inputs and an int32 (or int64) output for "int8". Returns
    ``(ok, message)``; never raises for well-shaped arrays (KeyError for an unknown dtype).
    ``memo``, a mapping kept beside ``a`` and ``b`` (left unchanged between calls), keeps the inputs'
    side of Freivalds' test (A·(B·x), the row sums and norms, the TF32-rounded products) and of the
    exact check (A·B, |A|·|B|, the TF32 signature products), which do not depend on C: a later check
    of the same arrays with the same seed (the fp32, tf32 and tiled products of one pair) reuses
    them, with the same result as computing them again.

    **Bound** (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1 and §3.5):
    an inner product of length K evaluated in any order with unit roundoff u = eps/2 satisfies
    |s − ŝ| ≤ γ_K Σ|a_k||b_k|, γ_K = K·u/(1 − K·u), so a computed product obeys
    |C − Ĉ| ≤ γ_K |A||B|. Each element must satisfy

        |Ĉ − C| ≤ (2·K·eps_acc + 2·u_in + u_in²)·(|A||B|) + eps_out·|C| + η_out

    with C the exact product (NumPy, float64):

    - 2·K·eps_acc = 4·K·u: γ_K of the accumulator (fp64 for fp64, fp32 for fp32/tf32/fp16/bf16)
      with a factor 4 of room for the float64 reference's own γ_K, for accumulators that truncate
      (tensor cores align addends by truncation: error unit eps, not u) and for any blocked or
      split-K order (those have γ_{K/s+s} ≤ γ_K).
    - 2·u_in + u_in² (tf32 only, u_in = 2^-10): A' = A + ΔA with |ΔA| ≤ u_in|A|, likewise B, so
      |A'B' − AB| ≤ (2u_in + u_in²)|A||B|. 2^-10 covers round-toward-zero (only the top mantissa
      bits read) as well as round-to-nearest (2^-11).
    - eps_out·|C| + η_out (fp16, bf16): C is rounded once from the fp32 accumulator,
      |fl(x) − x| ≤ u_out|x| + η_out (η_out half the smallest subnormal); eps_out = 2·u_out leaves
      room for |x| ≠ |C| (second order).
    - int8: exact. The float64 reference is exact (every partial sum is an integer below 2^53).

    Per precision: fp64 2K·2^-52·|A||B|; fp32 2K·2^-23·|A||B|; tf32 (2K·2^-23 + 2^-9 + 2^-20)·|A||B|;
    fp16 2K·2^-23·|A||B| + 2^-10·|C| + 2^-25; bf16 2K·2^-23·|A||B| + 2^-7·|C| + 2^-134; int8 C = A·B.

    **Up to M = EXACT_CHECK_MAX_N** every element is checked against that bound (int8: equality).

    **Above**, Freivalds' test with FREIVALDS_VECTORS random x ∈ {−1, +1}^N: r = Ĉx − A(Bx) in
    float64, O(N²). With E = Ĉ − C and β its elementwise bound, row i of r is Σ_j E_ij x_j plus the
    float64 evaluation errors (≤ N·eps64·(|Ĉ|·1) + (K+N)·eps64·(|A||B|·1)). For a correct result
    |Σ_j E_ij x_j| ≤ min(Σ_j β_ij, λ·‖β_i‖₂): the first always, the second by Hoeffding's
    inequality with probability ≥ 1 − 2·exp(−λ²/2) over x alone (λ = FREIVALDS_LAMBDA = 8), whatever
    the device's errors; ‖β_i‖₂ ≤ (2K·eps_acc + …)·‖a_i‖₂·‖B‖_F + eps_out·‖ĉ_i‖₂ + η_out·√N
    (Cauchy–Schwarz; |Ĉ| stands in for |C|). It catches an error pattern whose r exceeds that: a
    transposed operand or a wrong tile at every N ≤ 8192, a single element off by more than about
    λ·‖β_i‖₂ (≈ λ·√N times its own bound). int8: x has integer entries in [−xmax, xmax], xmax the
    largest bound (at most 2^16) that keeps every partial sum an integer below 2^53, so float64 BLAS
    computes r exactly (int64 where that bound would fall below INT8_FREIVALDS_MIN_XMAX), and r must
    be exactly 0; a wrong C passes one vector with probability ≤ 1/(2·xmax + 1) (at N = 8192 with
    |A|, |B| ≤ 127, xmax = 8,322: below 2^-14 a vector, 2^-56 for the four).

    **fp32 only**, the TF32 signature: the error is regressed on D = Ã·B̃ − A·B (Ã, B̃ the inputs
    rounded to TF32, to nearest and toward zero; for Freivalds on D·x). A TF32 result scores ≈ 1, an
    FP32 one ≈ 0 (its error is ~100× smaller and unrelated); ≥ TF32_SIGNATURE_MAX fails. The bound
    alone separates TF32 from FP32 only up to N ≈ 256 (TF32's error grows like √K, the bound like
    K²); the signature does so at every N.
    """
    p = GEMM_PRECISIONS[dtype]
    if p.acc_eps == 0.0:
        return _check_exact_int(a, b, c, seed)
    m, k = a.shape
    rel = 2.0 * k * p.acc_eps + 2.0 * p.in_u + p.in_u * p.in_u
    formula = _bound_formula(p)
    if m <= EXACT_CHECK_MAX_N:
        c64 = c.astype(np.float64)
        if not np.all(np.isfinite(c64)):
            return False, f"{int(np.count_nonzero(~np.isfinite(c64)))} of {c.size} elements of C are not finite"
        key = (id(a), id(b))  # the memo holds a and b alive beside it: ids are not reused meanwhile
        want, ab = _memoized(memo, (*key, "exact"), lambda: _exact_products(a, b))
        bound = rel * ab + p.out_eps * np.abs(want) + p.out_eta + _TINY64
        err = np.abs(c64 - want)
        bad = int(np.count_nonzero(err > bound))
        worst = float(np.max(err / bound))
        if bad:
            i, j = np.unravel_index(int(np.argmax(err / bound)), err.shape)
            msg = (
                f"{bad} of {c.size} elements exceed the bound {formula} (worst {worst:.3g}× the bound, at "
                f"[{i}, {j}]: got {float(c64[i, j])!r}, want {float(want[i, j])!r})"
            )
            if p.out_eps and np.all(err <= bound + LOW_PRECISION_SUM_HINT * p.out_eps * ab):
                msg += (
                    f"; every error is within {LOW_PRECISION_SUM_HINT}·{dtype} eps·|A||B|: partial sums were "
                    f"rounded to {dtype} (accumulation, or a split-K reduction, in {dtype})"
                )
            return False, msg
        if dtype == "fp32":
            signatures = _memoized(
                memo,
                (*key, "tf32 signatures"),
                lambda: tuple(
                    round_tf32(a, mode).astype(np.float64) @ round_tf32(b, mode).astype(np.float64) - want
                    for mode in ("nearest", "zero")
                ),
            )
            sig = _tf32_signature(c64 - want, signatures)
            if sig >= TF32_SIGNATURE_MAX:
                return False, (
                    f"C carries the TF32 input-rounding signature ({sig:.2f} of it): the library "
                    "computed this FP32 GEMM with TF32 inputs"
                )
        return True, f"all {c.size} elements within {formula} of NumPy float64 (worst {worst:.3g} of the bound)"
    return _freivalds(a, b, c, p, dtype, rel, formula, seed, memo)


@dataclass(frozen=True)
class _Reference:
    """The inputs' side of Freivalds' test (:func:`_reference`): A·(B·x) (M×FREIVALDS_VECTORS),
    (|A||B|)·1 and A's row norms (M), ‖B‖_F, and for each TF32 rounding mode of ``modes`` the
    TF32-rounded A·(B·x)."""

    want: np.ndarray
    ab_rows: np.ndarray
    a_norms: np.ndarray
    b_norm: float
    modes: Tuple[str, ...]
    tf32_want: Tuple[np.ndarray, ...]


def _reference(a: np.ndarray, b: np.ndarray, x: np.ndarray, modes: Tuple[str, ...]) -> _Reference:
    """Two passes over blocks of rows (:func:`~.blocks.map_row_blocks`): B (B·x, row sums of |B|,
    ‖B‖_F, the TF32-rounded B·x for each of ``modes``), then A (A·(B·x), |A|·(|B|·1), row norms, the
    TF32-rounded products)."""
    m, k = a.shape
    n = b.shape[1]

    def b_rows_pass(rows: slice) -> Tuple[np.ndarray, np.ndarray, float, Tuple[np.ndarray, ...]]:
        blk = b[rows].astype(np.float64)
        return (
            blk @ x,
            np.abs(blk).sum(axis=1),
            float(np.einsum("ij,ij->", blk, blk)),
            tuple(round_tf32(b[rows], mode).astype(np.float64) @ x for mode in modes),
        )

    bp = map_row_blocks(b_rows_pass, k, n, CACHE_BLOCK_BYTES)
    bx = np.concatenate([r[0] for r in bp])
    b_abs_rows = np.concatenate([r[1] for r in bp])
    b_norm = math.sqrt(sum(r[2] for r in bp))
    tbx = [np.concatenate([r[3][j] for r in bp]) for j in range(len(modes))]

    def a_rows_pass(rows: slice) -> Tuple[np.ndarray, np.ndarray, np.ndarray, Tuple[np.ndarray, ...]]:
        blk = a[rows].astype(np.float64)
        return (
            blk @ bx,
            np.abs(blk) @ b_abs_rows,
            np.sqrt(np.einsum("ij,ij->i", blk, blk)),
            tuple(round_tf32(a[rows], mode).astype(np.float64) @ tbx[j] for j, mode in enumerate(modes)),
        )

    ap = map_row_blocks(a_rows_pass, m, k, CACHE_BLOCK_BYTES)
    return _Reference(
        want=np.concatenate([r[0] for r in ap]),
        ab_rows=np.concatenate([r[1] for r in ap]),  # (|A||B|)·1, O(N²)
        a_norms=np.concatenate([r[2] for r in ap]),
        b_norm=b_norm,
        modes=modes,
        tf32_want=tuple(np.concatenate([r[3][j] for r in ap]) for j in range(len(modes))),
    )


def _freivalds(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    p: GemmPrecision,
    dtype: str,
    rel: float,
    formula: str,
    seed: int,
    memo: Optional[MutableMapping[Any, Any]] = None,
) -> Tuple[bool, str]:
    """The Freivalds branch of :func:`check_gemm` (its docstring gives the test and the bound), in
    passes over blocks of rows (:func:`~.blocks.map_row_blocks`: no N×N float64 copy, the blocks on
    several cores): C (finiteness, C·x, row sums and norms), then the inputs' side
    (:func:`_reference`, taken from ``memo`` where it holds one for these arrays, this seed and at
    least these TF32 modes; kept there otherwise)."""
    m, k = a.shape
    n = b.shape[1]
    x = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(n, FREIVALDS_VECTORS))
    modes = ("nearest", "zero") if dtype == "fp32" else ()

    def c_rows_pass(rows: slice) -> Tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        blk = c[rows].astype(np.float64)
        abs_rows = np.abs(blk).sum(axis=1)  # NaN or ±inf where its row holds one: counted only then
        nonfinite = 0 if np.isfinite(abs_rows).all() else int(np.count_nonzero(~np.isfinite(blk)))
        return nonfinite, blk @ x, abs_rows, np.sqrt(np.einsum("ij,ij->i", blk, blk))

    cp = map_row_blocks(c_rows_pass, m, n, CACHE_BLOCK_BYTES)
    nonfinite = sum(r[0] for r in cp)
    if nonfinite:
        return False, f"{nonfinite} of {c.size} elements of C are not finite"
    got = np.concatenate([r[1] for r in cp])
    c_rows = np.concatenate([r[2] for r in cp])
    c_norms = np.concatenate([r[3] for r in cp])

    key = (id(a), id(b), seed)  # the memo holds a and b alive beside it: ids are not reused meanwhile
    ref = memo.get(key) if memo is not None else None
    if not isinstance(ref, _Reference) or not set(modes) <= set(ref.modes):
        ref = _reference(a, b, x, modes)
        if memo is not None:
            memo[key] = ref
    want, ab_rows = ref.want, ref.ab_rows
    worst_case = rel * ab_rows + p.out_eps * c_rows + n * p.out_eta
    row_norm = rel * ref.a_norms * ref.b_norm + p.out_eps * c_norms + p.out_eta * math.sqrt(n)
    bound = (
        np.minimum(worst_case, FREIVALDS_LAMBDA * row_norm) + n * _EPS64 * c_rows + (k + n) * _EPS64 * ab_rows + _TINY64
    )
    err = np.abs(got - want)
    ratio = err / bound[:, None]
    worst = float(np.max(ratio))
    if worst > 1.0:
        bad = int(np.count_nonzero(np.any(ratio > 1.0, axis=1)))
        return False, (
            f"Freivalds check failed: C·x differs from A·(B·x) by {worst:.3g}× the bound in "
            f"{bad} of {m} rows (element bound {formula})"
        )
    if modes:
        tf32_want = dict(zip(ref.modes, ref.tf32_want))
        sig = _tf32_signature(got - want, tuple(tf32_want[mode] - want for mode in modes))
        if sig >= TF32_SIGNATURE_MAX:
            return False, (
                f"C carries the TF32 input-rounding signature ({sig:.2f} of it, Freivalds): the "
                "library computed this FP32 GEMM with TF32 inputs"
            )
    return True, (
        f"Freivalds check ({FREIVALDS_VECTORS} random ±1 vectors) passed: worst {worst:.3g} of the "
        f"bound (element bound {formula})"
    )


def _check_exact_int(a: np.ndarray, b: np.ndarray, c: np.ndarray, seed: int) -> Tuple[bool, str]:
    """int8 × int8 → int32: C must equal A·B exactly (elementwise, or Freivalds with integer x). Above
    EXACT_CHECK_MAX_N the int64 copies are made a block of rows at a time (:func:`~.blocks.
    map_row_blocks`), of B's columns where B is a transposed (Fortran-ordered) view."""
    m, k = a.shape
    n = b.shape[1]
    amax, bmax = (max(abs(int(np.max(x, initial=0))), abs(int(np.min(x, initial=0)))) for x in (a, b))
    limit = amax * bmax * k
    if m <= EXACT_CHECK_MAX_N:
        a64, b64, c64 = (np.asarray(x).astype(np.int64) for x in (a, b, c))
        out = int(np.count_nonzero(np.abs(c64) > limit))
        if out:
            return False, _outside(out, c.size, limit)
        if limit < 2**53:  # float64 BLAS is exact: every partial sum is an integer below 2^53
            want = np.rint(a64.astype(np.float64) @ b64.astype(np.float64)).astype(np.int64)
        else:
            want = a64 @ b64
        wrong = c64 != want
        bad = int(np.count_nonzero(wrong))
        if bad:
            i, j = np.unravel_index(int(np.argmax(wrong)), wrong.shape)
            return (
                False,
                f"{bad} of {c.size} elements differ from A·B "
                f"(first at [{i}, {j}]: got {int(c64[i, j])}, want {int(want[i, j])})",
            )
        return True, f"all {c.size} elements equal the exact integer product"
    # |x| ≤ xmax bounds every partial sum of C·x and A·(B·x) by limit·n·xmax (limit = max|A|·max|B|·K): below 2^53 they
    # are integers float64 holds exactly (so BLAS computes them exactly, in any order), else below
    # 2^62 in int64 (NumPy's integer product, much slower)
    reach = limit * max(n, 1)
    exact64 = (2**53) // max(1, reach)
    acc = np.float64 if exact64 >= INT8_FREIVALDS_MIN_XMAX else np.int64
    xmax = max(1, min(2**16, exact64 if acc is np.float64 else (2**62) // max(1, reach)))
    x = np.random.default_rng(seed).integers(-xmax, xmax + 1, size=(n, FREIVALDS_VECTORS), dtype=np.int64).astype(acc)

    def c_pass(rows: slice) -> Tuple[int, np.ndarray]:
        blk = c[rows].astype(acc)
        return int(np.count_nonzero(np.abs(blk) > limit)), blk @ x

    cp = map_row_blocks(c_pass, m, n, CACHE_BLOCK_BYTES)
    out = sum(r[0] for r in cp)
    if out:
        return False, _outside(out, c.size, limit)
    got = np.concatenate([r[1] for r in cp])
    if b.flags.f_contiguous and not b.flags.c_contiguous:  # B = Bᵀᵀ: blocks of B's columns
        bt = b.T
        bx = sum(map_row_blocks(lambda cols: bt[cols].astype(acc).T @ x[cols], n, k, CACHE_BLOCK_BYTES))
    else:
        bx = np.concatenate(map_row_blocks(lambda rows: b[rows].astype(acc) @ x, k, n, CACHE_BLOCK_BYTES))
    want = np.concatenate(map_row_blocks(lambda rows: a[rows].astype(acc) @ bx, m, k, CACHE_BLOCK_BYTES))
    bad = int(np.count_nonzero(np.any(got != want, axis=1)))
    if bad:
        return False, f"Freivalds check failed: C·x ≠ A·(B·x) exactly in {bad} of {m} rows"
    return True, f"Freivalds check ({FREIVALDS_VECTORS} random integer vectors) passed: C·x = A·(B·x) exactly"


def _outside(count: int, size: int, limit: int) -> str:
    """The message for ``count`` of ``size`` int8-product elements outside ±``limit``."""
    return (
        f"{count} of {size} elements of C lie outside ±max|A|·max|B|·K = ±{limit} "
        "(never written, overflowed or garbage)"
    )


def check_fp16_accumulation(a: np.ndarray, b: np.ndarray, c: np.ndarray, seed: int = 11) -> Tuple[bool, str]:
    """Norm-wise check of an FP16 product C = A·B that may have been accumulated in FP16.

    ``a`` (M×K), ``b`` (K×N), ``c`` (M×N) as for :func:`check_gemm`. Returns ``(ok, message)``.

    Accumulating K terms in fp16 (unit roundoff u = 2^-11) makes the elementwise worst-case bound
    (K·u·|A||B|) larger than C itself at large K, so a worst-case check would pass garbage. Instead,
    with Higham and Mary's probabilistic model (*A New Approach to Probabilistic Rounding Error
    Analysis*, SIAM J. Sci. Comput. 41(5), 2019: rounding errors independent, mean zero, |δ| ≤ u),
    the error of a recursive sum is Σ_k δ_k·s_k (s_k the partial sums), of variance ≤ u²·Σ_k s_k².
    The suite's inputs are independent and uniform in [−1, 1), so s_k is a random walk with
    E s_k² = k/9 and E C_ij² = K/9; hence ‖Ĉ − C‖_F / ‖C‖_F ≲ u·√(K/2), smaller still for blocked
    or pairwise orders. The check accepts a relative Frobenius error up to FP16_ACC_TAU·u·√K (about
    5× that, which also covers rounding C to fp16). A transposed or missing operand, a wrong tile or
    an unwritten C gives a relative error near 1 or more; the largest tolerance, at K = 8192, is 0.18.
    Above EXACT_CHECK_MAX_N the norms are estimated from Freivalds products with random ±1 vectors
    (E‖E·x‖² = ‖E‖_F²).
    """
    m, k = a.shape
    n = b.shape[1]
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    if not np.all(np.isfinite(c64)):
        return False, f"{int(np.count_nonzero(~np.isfinite(c64)))} of {c.size} elements of C are not finite"
    tol = FP16_ACC_TAU * (EPS["fp16"] / 2.0) * math.sqrt(k)
    if m <= EXACT_CHECK_MAX_N:
        want = a64 @ b64
        err, ref = float(np.linalg.norm(c64 - want)), float(np.linalg.norm(want))
        how = "‖Ĉ − C‖_F / ‖C‖_F"
    else:
        x = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(n, FREIVALDS_VECTORS))
        want_x = a64 @ (b64 @ x)
        err, ref = float(np.linalg.norm(c64 @ x - want_x)), float(np.linalg.norm(want_x))
        how = f"‖(Ĉ − C)x‖ / ‖Cx‖ ({FREIVALDS_VECTORS} random ±1 vectors)"
    ratio = err / max(ref, _TINY64)
    bound = f"{FP16_ACC_TAU:g}·2^-11·√K = {tol:.3g}"
    if ratio > tol:
        return False, f"{how} = {ratio:.3g} exceeds the FP16-accumulation tolerance {bound}"
    return True, f"{how} = {ratio:.3g} within the FP16-accumulation tolerance {bound}"


# --- the suite ---------------------------------------------------------------------------------


def gemm_inputs(
    dtype: str, n: int, rng: np.random.Generator, uniform: Optional[Tuple[np.ndarray, np.ndarray]] = None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Square n×n inputs for ``dtype``: ``(a, b, a_stored, b_stored)``, the values (what
    :func:`check_gemm` takes) and the arrays written to the device (C-contiguous). Floats are uniform
    in [−1, 1) rounded to the storage format (bf16: the low 16 bits of float32 values cleared, so
    exact); tf32 inputs are full fp32 values (the library rounds them); int8 are integers in
    ±INT8_MAX_ABS, with B stored transposed (``b_stored`` is N×K, ``b`` its transposed view: the
    layout the backend takes, drawn so rather than transposed afterwards).

    ``uniform``, for a floating-point ``dtype``: ``uniform_pair(rng, n, np.float64)`` drawn before
    (:func:`uniform_pair64`), whose values are rounded to the storage format instead of drawing them
    again from ``rng`` (which is then not used): the same arrays bit for bit, since a draw rounds the
    same float64 values on assignment as a cast does. Read-only arrays of it are shared, not copied
    (fp64)."""
    p = GEMM_PRECISIONS[dtype]
    if p.in_dtype == "int8":
        ai = rng.integers(-INT8_MAX_ABS, INT8_MAX_ABS + 1, (n, n), dtype=np.int8)
        bi = rng.integers(-INT8_MAX_ABS, INT8_MAX_ABS + 1, (n, n), dtype=np.int8)
        return (ai, bi.T, ai, bi) if p.b_transposed else (ai, bi, ai, bi)

    def pair(dt: Any) -> Tuple[np.ndarray, np.ndarray]:
        if uniform is None:
            return uniform_pair(rng, n, dt)
        return uniform[0].astype(dt, copy=False), uniform[1].astype(dt, copy=False)

    if p.in_dtype == "bf16":
        pair32 = pair(np.float32)
        out = []
        for x in pair32:  # truncated in place to bf16 (values exact), and the bit patterns
            bits = x.view(np.uint32)
            bits &= np.uint32(0xFFFF0000)
            out.append((bits >> np.uint32(16)).astype(np.uint16))
        return pair32[0], pair32[1], out[0], out[1]
    a, b = pair(np.dtype(NUMPY_DTYPE[p.in_dtype]))
    return a, b, a, b


#: The largest size whose float64 values the suite keeps for every floating-point precision
#: (:attr:`GemmSuite.uniform`: two 4096² float64 arrays are 256 MiB; an 8192² pair, 1 GiB, is drawn
#: per precision instead).
UNIFORM_KEEP_MAX_N = 4096


def uniform_pair64(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """The float64 values every floating-point precision's inputs at size ``n`` are rounded from
    (:func:`gemm_inputs`' ``uniform``): :func:`uniform_pair` of the generator seeded by ``n``, as
    the suite seeds it, read-only."""
    a, b = uniform_pair(np.random.default_rng(n), n, np.float64)
    a.flags.writeable = b.flags.writeable = False
    return a, b


def input_kind(dtype: str) -> str:
    """The first precision of :data:`GEMM_PRECISIONS` whose inputs :func:`gemm_inputs` draws as it
    draws ``dtype``'s (the same storage format and layout): "fp32" for "tf32", else ``dtype``.
    Raises KeyError for an unknown dtype."""
    p = GEMM_PRECISIONS[dtype]
    return next(d for d, q in GEMM_PRECISIONS.items() if (q.in_dtype, q.b_transposed) == (p.in_dtype, p.b_transposed))


@dataclass(frozen=True)
class _Drawn:
    """One size's inputs (:func:`gemm_inputs`' four arrays) and the memo of their checks
    (:func:`check_gemm`'s ``memo``), as the ladders that take them share them."""

    a: np.ndarray
    b: np.ndarray
    a_stored: np.ndarray
    b_stored: np.ndarray
    memo: Dict[Any, Any] = field(default_factory=dict)


def _draw_inputs(dtype: str, n: int, uniform: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> _Drawn:
    """:func:`gemm_inputs` of ``dtype`` at size ``n``, seeded by ``n`` (or rounded from ``uniform``,
    :func:`uniform_pair64` ``(n)``), read-only (they may be shared by several ladders,
    :class:`~.reuse.SharedDraws`)."""
    arrays = gemm_inputs(dtype, n, np.random.default_rng(n), uniform)
    for x in arrays:
        x.flags.writeable = False
    return _Drawn(*arrays)


def _draw_kind(uniform: Dict[int, Tuple[np.ndarray, np.ndarray]], kind: str, n: int) -> _Drawn:
    """``kind``'s inputs at size ``n``: a floating-point kind's rounded from ``uniform`` (the suite's
    :attr:`GemmSuite.uniform`, drawn into it on first use) up to UNIFORM_KEEP_MAX_N, the same arrays
    as drawn (:func:`gemm_inputs`)."""
    if GEMM_PRECISIONS[kind].in_dtype == "int8" or n > UNIFORM_KEEP_MAX_N:
        return _draw_inputs(kind, n)
    if n not in uniform:
        uniform[n] = uniform_pair64(n)
    return _draw_inputs(kind, n, uniform[n])


def uniform_pair(rng: np.random.Generator, n: int, dtype: Any) -> Tuple[np.ndarray, np.ndarray]:
    """Two n×n arrays of ``dtype``: the values of two consecutive ``rng.uniform(-1.0, 1.0, (n, n))``
    draws cast to ``dtype``, drawn a block of rows at a time on the thread pool
    (:func:`~.blocks.map_row_blocks`). Each block draws from a copy of ``rng``'s bit generator
    advanced to the block's first value (``advance``, PCG64's jump ahead), so the values are the
    serial draws' bit for bit whatever the number of threads; ``rng`` is left advanced past both, as
    after the serial draws. A bit generator without ``advance`` draws serially. An 8192×8192 pair
    took about 1 s serially on an H100's host (docs/design/budgets.md, "Time budgets")."""
    bitgen = rng.bit_generator
    if not hasattr(bitgen, "advance"):
        return (rng.uniform(-1.0, 1.0, (n, n)).astype(dtype), rng.uniform(-1.0, 1.0, (n, n)).astype(dtype))
    state = bitgen.state

    def draw(first: int, out: np.ndarray, rows: slice) -> None:
        block_gen = type(bitgen)()
        block_gen.state = state
        block_gen.advance(first + rows.start * n)  # type: ignore[attr-defined]  # checked above
        out[rows] = np.random.Generator(block_gen).uniform(-1.0, 1.0, (rows.stop - rows.start, n))

    pair = (np.empty((n, n), dtype), np.empty((n, n), dtype))
    for i, out in enumerate(pair):
        map_row_blocks(partial(draw, i * n * n, out), n, n)
    bitgen.advance(2 * n * n)
    return pair


def _poison_output(buf: Any, dtype: str, count: int) -> None:
    """Fill C so that an unwritten element fails the check: NaN (bf16: its bit pattern) or, for
    int32, −2^31 (outside every int8 product's range)."""
    out = GEMM_PRECISIONS[dtype].out_dtype
    if out == "bf16":
        fill_constant(buf, "uint16", _BF16_NAN, count)
    elif out == "int32":
        fill_constant(buf, "int32", _INT32_POISON, count)
    else:
        poison(buf, out, count)


def _output_values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """C as read from the device (its storage dtype) -> its values (bf16 decoded to float32)."""
    return bf16_values(raw) if GEMM_PRECISIONS[dtype].out_dtype == "bf16" else raw


class GemmSuite(Suite):
    """Vendor GEMM (the backend's ``gemm`` routine) for every precision of GEMM_PRECISIONS that the
    backend's kernel table names, then the tiled comparison kernel where the backend has it, on
    square sizes doubling from 16 (the context's :data:`~.sizes.SIZES_OPTION`: others, as a
    ``--quick`` run's) until the ladder settles (:mod:`.settle`) or the next size would not fit the
    time budget or memory (device memory ≥ 4× the three matrices).

    Raises ValueError (when built) for a :data:`~.sizes.SIZES_OPTION` that :func:`~.sizes.ladder_sizes`
    refuses."""

    name = "gemm"
    adaptive = True  # the ladder's next size follows from the last size's measurement

    def __init__(self, ctx: SuiteContext) -> None:
        super().__init__(ctx)
        self.scratch = ctx.scratch  # every check reads C into it (docs/design/budgets.md, "Time budgets")
        self.sizes = ladder_sizes(ctx.options.get(SIZES_OPTION))
        #: each ladder's inputs, drawn once for the ladders that take the same (:meth:`cases` sets it)
        self.inputs: SharedDraws[str, _Drawn] = SharedDraws(_draw_inputs, ())
        #: the float64 values of each size up to UNIFORM_KEEP_MAX_N, which every floating-point
        #: precision's inputs are rounded from (:func:`uniform_pair64`): drawn once for all of them
        self.uniform: Dict[int, Tuple[np.ndarray, np.ndarray]] = {}

    def _host_ladders(self) -> bool:
        """Whether the CPU's library GEMMs run too (:meth:`_host_gemm`: a GPU sharing the host's memory)."""
        return self.ctx.backend_name != "cpu" and bool(self.ctx.info.get("unified_memory"))

    def ladder_dtypes(self) -> List[str]:
        """The dtype of each ladder :meth:`cases` runs, in order: each library precision the
        backend has, "fp32" for the tiled kernel where it has it, then the CPU's library
        precisions beside a unified-memory GPU."""
        out = [d for d in GEMM_PRECISIONS if self.source(gemm_kernel_def(d)) is not None]
        if self.source(TILED_GEMM) is not None:
            out.append(TILED_GEMM.dtype)
        if self._host_ladders():
            out += [d for d, p in GEMM_PRECISIONS.items() if "cpu" in p.libraries]
        return out

    def total(self) -> int:
        return len(self.ladder_dtypes()) * most_sizes(self.sizes)

    def cases(self) -> Iterator[Case]:
        """Every ladder's cases (:meth:`ladder_dtypes` gives their order); inputs that several
        ladders take are drawn once (:attr:`inputs`) and released when the cases end."""
        # a function of the uniform values, not a bound method: the suite and its draws hold no
        # reference cycle, so the suite is released as its cases end (docs/design/measurement.md, "Measurement")
        self.inputs = SharedDraws(partial(_draw_kind, self.uniform), [input_kind(d) for d in self.ladder_dtypes()])
        try:
            yield from self._ladders()
        finally:
            self.inputs.clear()
            self.uniform.clear()

    def _ladders(self) -> Iterator[Case]:
        backend = self.ctx.backend
        for dtype, p in GEMM_PRECISIONS.items():
            kdef = gemm_kernel_def(dtype)
            if self.source(kdef) is None:
                continue
            library = kdef.sources[self.ctx.backend_name][0]
            yield from self._ladder(kdef, dtype, library, lambda N, dtype=dtype: partial(backend.gemm, dtype, N, N, N))
        src = self.source(TILED_GEMM)
        if src is not None:
            consts = self.constants(TILED_GEMM)
            yield from self._ladder(
                TILED_GEMM, "fp32", "", lambda N: partial(backend.compile, src[0], src[1], consts), compiled=True
            )
        yield from self._host_gemm()

    def _host_gemm(self) -> Iterator[Case]:
        """On a GPU that shares the host's memory (``info["unified_memory"]``: Apple silicon), the
        CPU's library GEMMs too — on Apple silicon Accelerate's sgemm/dgemm and BNNS FP16 run on the
        AMX matrix units (the M5 article measures them beside the GPU) — as ``cpu_<kernel>`` with the
        ceiling classes "CPU GEMM <dtype>", timed on the CPU backend with its own buffers."""
        if not self._host_ladders():
            return
        host = self.ctx.options.get("host_backend")
        if host is None:
            from ..._native import _core

            host = _core.Backend("cpu", 0)
        for dtype, p in GEMM_PRECISIONS.items():
            lib = p.libraries.get("cpu")
            if lib is None:
                continue
            kdef = KernelDef(
                "gemm",
                f"cpu_{p.kernel}",
                dtype,
                {self.ctx.backend_name: (lib, p.kernel)},
                ceiling_class=f"CPU {p.ceiling_class}",
                ceiling_kind="compute",
            )
            yield from self._ladder(
                kdef, dtype, lib, lambda N, dtype=dtype: partial(host.gemm, dtype, N, N, N), backend=host
            )

    def _ladder(
        self, kdef: KernelDef, dtype: str, library: str, make: Any, compiled: bool = False, backend: Any = None
    ) -> Iterator[Case]:
        """Cases of one kernel at the ladder's sizes (:attr:`sizes`: N = 16, 32 … by default):
        ``make(N)`` gives the case's ``make_kernel``; a
        ``compiled`` kernel takes (A, B, C, N) and N·N work items, a library routine (A, B, C) and 1.
        Buffers come from ``backend`` (default: the suite's). The ladder ends where the size's
        :data:`~apple_roofline.study.records.LADDER_PARAM` says why (:meth:`_end_note`), at an invalid
        size, or where the next launch is predicted over the budget (a journal's measurement from before
        that parameter)."""
        backend = self.ctx.backend if backend is None else backend
        p = GEMM_PRECISIONS[dtype]
        max_launch_s = float(self.ctx.options.get("gemm_max_launch_s", 0.25))
        mem = int(self.ctx.info.get("memory_bytes", 0) or 0)
        before: Any = None  # the valid measurement of the size before
        kind = input_kind(dtype)
        self.inputs.start(kind)
        N, n_before = self.sizes[0], 0
        while True:
            if mem and gemm_bytes(N, N, N, dtype) * 4 > mem:
                break
            drawn = self.inputs.get(kind, N)
            a_st, b_st = drawn.a_stored, drawn.b_stored
            bufs = [
                backend.alloc(N * N * ITEMSIZE[p.in_dtype]),
                backend.alloc(N * N * ITEMSIZE[p.in_dtype]),
                backend.alloc(N * N * ITEMSIZE[p.out_dtype]),
            ]
            bufs[0].write(a_st.ravel())
            # int8: the backend takes B transposed (core/backend.h: the tensor cores' layout), and
            # gemm_inputs already gives it so.
            bufs[1].write(b_st.ravel())
            _poison_output(bufs[2], dtype, N * N)

            def check(
                drawn: _Drawn = drawn, cbuf: Any = bufs[2], N: int = N, dtype: str = dtype, out: str = p.out_dtype
            ) -> Tuple[bool, str]:
                a, b = drawn.a, drawn.b
                c = _output_values(read(cbuf, out, N * N, self.scratch), dtype).reshape(N, N)
                ok, msg = check_gemm(a, b, c, dtype, memo=drawn.memo)
                if not ok and dtype == "fp16" and library in UNDOCUMENTED_FP16_ACCUMULATOR:
                    ok16, msg16 = check_fp16_accumulation(a, b, c)
                    if ok16:
                        return True, (
                            f"{msg16}; not within the FP32-accumulation bound ({msg}): {library} "
                            "accumulates this FP16 GEMM in FP16"
                        )
                    msg += f"; nor as an FP16-accumulated product: {msg16}"
                return ok, msg

            self.last = None  # set by record(); stays None when the case was skipped
            yield Case(
                kernel=kdef,
                params={"m": N, "n": N, "k": N},
                launch=N * N if compiled else 1,
                flops=gemm_flops(N, N, N),
                bytes=gemm_bytes(N, N, N, dtype),
                args=[*bufs, N] if compiled else bufs,
                make_kernel=make(N),
                check=check,
                reset=partial(_poison_output, bufs[2], dtype, N * N),
                few_reps=None if before is None else few_reps(before.min_s, before.cv, growth(n_before, N)),
                note=partial(self._end_note, self.sizes, N, n_before, dtype, before, max_launch_s, mem),
            )
            last: Any = self.last
            # The next size costs about growth (8 for a doubling) times this one; predicted from
            # the best sample, so one disturbed size (a noisy neighbour, a BLAS thread wake-up)
            # does not end the ladder.
            if last is None or not last.valid or LADDER_PARAM in last.params:
                break
            nxt = next_size(self.sizes, N, last.min_s, max_launch_s)
            if nxt is None or last.min_s * growth(N, nxt) > max_launch_s:
                break
            before, n_before, N = last, N, nxt
        self.inputs.end(kind)

    @staticmethod
    def _end_note(
        sizes: Sequence[int],
        N: int,
        n_before: int,
        dtype: str,
        before: Any,
        max_launch_s: float,
        mem: int,
        samples_s: Sequence[float],
    ) -> Dict[str, Any]:
        """``{LADDER_PARAM: why}`` where a ladder of ``sizes`` ends at size ``N`` (whose valid
        measurement has ``samples_s``, seconds per launch; ``before`` the Measurement of the size
        before, ``n_before``, or None), else ``{}``: settled (:func:`~.settle.settle_note`), N the
        ladder's last size, the next size's launch (:func:`~.sizes.next_size`) predicted (this one's
        fastest times :func:`~.sizes.growth`, 8 for a doubling) over ``max_launch_s``, or the next
        size's matrices (4× their bytes) over the device memory ``mem`` (0: unknown)."""
        s = summarize(samples_s)
        n_next = next_size(sizes, N, s.min, max_launch_s)
        why = None
        if before is not None:
            rate = gemm_flops(N, N, N) / s.median / 1e9
            grow = growth(N, n_next if n_next is not None else 2 * N)
            why = settle_note(n_before, before.gflops, before.cv, N, rate, s.cv, s.min, grow)
        if why is None and n_next is None:
            why = "largest size"
        if why is None and n_next is not None and growth(N, n_next) * s.min > max_launch_s:
            why = f"time budget: next launch predicted {growth(N, n_next) * s.min:.3g} s > {max_launch_s:g} s"
        if why is None and mem and n_next is not None and gemm_bytes(n_next, n_next, n_next, dtype) * 4 > mem:
            why = f"memory: {n_next} needs over a quarter of {mem} bytes"
        return {} if why is None else {LADDER_PARAM: why}
