"""Validation of the gemm suite's products against NumPy float64 (docs/design/measurement.md,
"Validation"): :func:`check_gemm`, elementwise up to N = :data:`EXACT_CHECK_MAX_N` and by Freivalds'
test above it (its docstring gives the bounds); :func:`check_fp16_accumulation`, the norm-wise check
of an FP16 product that may have been accumulated in FP16; :func:`check_product`, a ladder's check
(both, for the libraries of :data:`UNDOCUMENTED_FP16_ACCUMULATOR`); and the output buffer's poison
(:func:`poison_output`) and decoding (:func:`output_values`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, MutableMapping, Optional, Tuple, TypeVar

import numpy as np

from ..base import EPS, fill_constant, poison
from ..blocks import CACHE_BLOCK_BYTES, map_row_blocks
from .precisions import GEMM_PRECISIONS, GemmPrecision, bf16_values, round_tf32

T = TypeVar("T")

__all__ = [
    "UNDOCUMENTED_FP16_ACCUMULATOR",
    "EXACT_CHECK_MAX_N",
    "check_gemm",
    "check_fp16_accumulation",
    "check_product",
    "poison_output",
    "output_values",
]

#: Libraries whose FP16 GEMM does not document its accumulator (MPSMatrixMultiplication.h and
#: bnns.h say nothing about it). Their fp16 results are checked against the FP32-accumulation
#: bound first and, failing that, against :func:`check_fp16_accumulation`'s bound; the validation
#: message says which one held.
UNDOCUMENTED_FP16_ACCUMULATOR = frozenset({"mps", "bnns"})
#: Norm-wise tolerance of an FP16-accumulated product, in units of u16·√K (see check_fp16_accumulation).
FP16_ACC_TAU = 4.0
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
_EPS64 = float(np.finfo(np.float64).eps)
_TINY64 = float(np.finfo(np.float64).tiny)
#: Poison values for outputs that cannot hold a float NaN (read back, they fail every check).
_BF16_NAN = 0x7FC0
_INT32_POISON = -(2**31)


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
    bound = _Bound(dtype, p, 2.0 * k * p.acc_eps + 2.0 * p.in_u + p.in_u * p.in_u, _bound_formula(p))
    if m <= EXACT_CHECK_MAX_N:
        return _check_elementwise(a, b, c, bound, memo)
    return _freivalds(a, b, c, bound, seed, memo)


@dataclass(frozen=True)
class _Bound:
    """The elementwise bound of one float check (:func:`check_gemm`'s docstring): the precision
    ``dtype`` and its entry ``p`` of :data:`GEMM_PRECISIONS`, ``rel`` the coefficient of |A||B| at
    the product's K (2·K·eps_acc + 2·u_in + u_in²) and ``formula`` the bound as text."""

    dtype: str
    p: GemmPrecision
    rel: float
    formula: str


def _check_elementwise(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, bound: _Bound, memo: Optional[MutableMapping[Any, Any]]
) -> Tuple[bool, str]:
    """The elementwise branch of :func:`check_gemm` (its docstring gives the bound), with the TF32
    signature for fp32; A·B, |A|·|B| and the signature products taken from ``memo`` where it holds
    them for these arrays (kept there otherwise)."""
    p, dtype, formula = bound.p, bound.dtype, bound.formula
    c64 = c.astype(np.float64)
    if not np.all(np.isfinite(c64)):
        return False, f"{int(np.count_nonzero(~np.isfinite(c64)))} of {c.size} elements of C are not finite"
    key = (id(a), id(b))  # the memo holds a and b alive beside it: ids are not reused meanwhile
    want, ab = _memoized(memo, (*key, "exact"), lambda: _exact_products(a, b))
    allowed = bound.rel * ab + p.out_eps * np.abs(want) + p.out_eta + _TINY64
    err = np.abs(c64 - want)
    bad = int(np.count_nonzero(err > allowed))
    worst = float(np.max(err / allowed))
    if bad:
        i, j = np.unravel_index(int(np.argmax(err / allowed)), err.shape)
        msg = (
            f"{bad} of {c.size} elements exceed the bound {formula} (worst {worst:.3g}× the bound, at "
            f"[{i}, {j}]: got {float(c64[i, j])!r}, want {float(want[i, j])!r})"
        )
        if p.out_eps and np.all(err <= allowed + LOW_PRECISION_SUM_HINT * p.out_eps * ab):
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


def _memoized_reference(
    memo: Optional[MutableMapping[Any, Any]],
    a: np.ndarray,
    b: np.ndarray,
    x: np.ndarray,
    seed: int,
    modes: Tuple[str, ...],
) -> _Reference:
    """:func:`_reference` of ``a``, ``b`` and the vectors ``x`` drawn from ``seed``: taken from ``memo``
    where it holds one for these arrays, this seed and at least these TF32 ``modes``; kept there
    otherwise."""
    key = (id(a), id(b), seed)  # the memo holds a and b alive beside it: ids are not reused meanwhile
    ref = memo.get(key) if memo is not None else None
    if not isinstance(ref, _Reference) or not set(modes) <= set(ref.modes):
        ref = _reference(a, b, x, modes)
        if memo is not None:
            memo[key] = ref
    return ref


def _freivalds(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    bound: _Bound,
    seed: int,
    memo: Optional[MutableMapping[Any, Any]] = None,
) -> Tuple[bool, str]:
    """The Freivalds branch of :func:`check_gemm` (its docstring gives the test and the bound), in
    passes over blocks of rows (:func:`~.blocks.map_row_blocks`: no N×N float64 copy, the blocks on
    several cores): C (finiteness, C·x, row sums and norms), then the inputs' side
    (:func:`_reference`, taken from ``memo`` where it holds one for these arrays, this seed and at
    least these TF32 modes; kept there otherwise)."""
    p, rel, formula = bound.p, bound.rel, bound.formula
    m, k = a.shape
    n = b.shape[1]
    x = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(n, FREIVALDS_VECTORS))
    modes = ("nearest", "zero") if bound.dtype == "fp32" else ()

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

    ref = _memoized_reference(memo, a, b, x, seed, modes)
    want, ab_rows = ref.want, ref.ab_rows
    worst_case = rel * ab_rows + p.out_eps * c_rows + n * p.out_eta
    row_norm = rel * ref.a_norms * ref.b_norm + p.out_eps * c_norms + p.out_eta * math.sqrt(n)
    allowed = (
        np.minimum(worst_case, FREIVALDS_LAMBDA * row_norm) + n * _EPS64 * c_rows + (k + n) * _EPS64 * ab_rows + _TINY64
    )
    err = np.abs(got - want)
    ratio = err / allowed[:, None]
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


def check_product(
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    dtype: str,
    library: str = "",
    memo: Optional[MutableMapping[Any, Any]] = None,
) -> Tuple[bool, str]:
    """A ladder's check of C = A·B (arrays and ``memo`` as for :func:`check_gemm`): :func:`check_gemm`
    and, for an fp16 product of a ``library`` in :data:`UNDOCUMENTED_FP16_ACCUMULATOR` ("" for the
    tiled kernel) that fails it, :func:`check_fp16_accumulation`. Returns ``(ok, message)``, the
    message saying which bound held, or why neither did."""
    ok, msg = check_gemm(a, b, c, dtype, memo=memo)
    if not ok and dtype == "fp16" and library in UNDOCUMENTED_FP16_ACCUMULATOR:
        ok16, msg16 = check_fp16_accumulation(a, b, c)
        if ok16:
            return True, (
                f"{msg16}; not within the FP32-accumulation bound ({msg}): {library} accumulates this FP16 GEMM in FP16"
            )
        msg += f"; nor as an FP16-accumulated product: {msg16}"
    return ok, msg


def poison_output(buf: Any, dtype: str, count: int) -> None:
    """Fill C (``buf``, a backend buffer of ``count`` elements in ``dtype``'s output format) so that
    an unwritten element fails the check: NaN (bf16: its bit pattern) or, for int32, −2^31 (outside
    every int8 product's range)."""
    out = GEMM_PRECISIONS[dtype].out_dtype
    if out == "bf16":
        fill_constant(buf, "uint16", _BF16_NAN, count)
    elif out == "int32":
        fill_constant(buf, "int32", _INT32_POISON, count)
    else:
        poison(buf, out, count)


def output_values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """C as read from the device (its storage dtype) -> its values (bf16 decoded to float32)."""
    return bf16_values(raw) if GEMM_PRECISIONS[dtype].out_dtype == "bf16" else raw
