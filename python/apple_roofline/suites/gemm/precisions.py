"""The gemm suite's precisions (docs/design/measurement.md, "Counting FLOPs and bytes"): the table
:data:`GEMM_PRECISIONS`, each precision's kernel, storage formats, libraries and the terms of its
bound; the tiled comparison kernel :data:`TILED_GEMM`; the counting (:func:`gemm_flops`,
:func:`gemm_bytes`); and the reduced-precision formats in NumPy (:func:`round_tf32`,
:func:`round_bf16`, bf16 bit patterns).

C[M×N] = A[M×K]·B[K×N], row-major, no transpose, alpha 1, beta 0, in six precisions: fp64, fp32
(FP32 arithmetic, never TF32), tf32 (fp32 storage, inputs rounded to TF32 by the library, FP32
accumulate), fp16 and bf16 (16-bit storage, FP32 accumulate, C rounded once) and int8 (int8 A and B,
exact int32 C; B is written transposed, N×K row-major, the "TN" layout integer tensor-core GEMMs
take, as torch._int_mm takes it — the product is the same C = A·B).

:data:`TILED_GEMM` is the M5 article's comparison: a plain 16×16 threadgroup-tiled MSL kernel
(``shaders/metal/gemm.metal``, CUDA twin ``shaders/cuda/gemm.cu``), fp32, never a ceiling ("the
difference between portable GPU code and Apple-tuned kernels").

Counting: 2·M·N·K operations for every precision (one multiply and one add per term; for int8 these
are integer operations, reported in the same GFLOP/s column), and bytes (M·K + K·N) × input element
size + M·N × output element size (the MLX roofline article's formula, with C in its own format:
fp64 8/8, fp32 and tf32 4/4, fp16 and bf16 2/2, int8 1/4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Mapping, Tuple

import numpy as np

from ..base import EPS, ITEMSIZE, KernelDef

__all__ = [
    "GemmPrecision",
    "GEMM_PRECISIONS",
    "GEMM_DTYPES",
    "TILED_GEMM",
    "TILE",
    "gemm_flops",
    "gemm_bytes",
    "gemm_kernel_def",
    "round_tf32",
    "round_bf16",
    "bf16_bits",
    "bf16_values",
]


@dataclass(frozen=True)
class GemmPrecision:
    """One precision of the gemm suite: its kernel, storage formats and the terms of its bound.

    ``in_dtype`` / ``out_dtype`` are suite dtypes (keys of ``base.NUMPY_DTYPE`` and ``ITEMSIZE``) of
    the stored A and B, and of C. The bound terms (see :func:`~.checks.check_gemm`): ``acc_eps``, the
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


#: The M5 article's hand-written comparison kernel: 16×16 tiles in threadgroup (shared) memory,
#: one thread per element of C, fp32 accumulation. Arguments A, B, C, N; N·N work items in
#: threadgroups (blocks) of 256. Plotted beside the library GEMMs, never a ceiling; through WebGPU
#: (``shaders/wgsl/gemm.wgsl``, built without naga's runtime checks: every access is guarded) the
#: only GEMM a run measures, WebGPU reaching no vendor library.
TILED_GEMM = KernelDef(
    "gemm",
    "sgemm_tiled16",
    "fp32",
    {
        "metal": ("gemm.metal", "gemm_tiled16_f32"),
        "cuda": ("gemm.cu", "gemm_tiled16_f32"),
        "wgpu": ("gemm.wgsl", "gemm_tiled16_f32"),
    },
    constants={"metal": {"BLOCK": 256}, "cuda": {"BLOCK": 256}, "wgpu": {"BLOCK": 256, "AR_RUNTIME_CHECKS": 0}},
)
#: The edge of the tiled kernel's tiles (16: threadgroups of 16×16 = 256 threads).
TILE = 16

#: dtype -> (kernel name, ceiling class).
GEMM_DTYPES: Dict[str, Tuple[str, str]] = {d: (p.kernel, p.ceiling_class) for d, p in GEMM_PRECISIONS.items()}


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
