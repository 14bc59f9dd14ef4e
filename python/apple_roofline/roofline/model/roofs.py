"""The right roof for a kernel: the compute ceiling of its own precision.

A kernel is judged against the ceiling of the precision it computes in, not the roofline's highest
one (which on a GPU with tensor cores is another precision's, and on a CPU may be FP16's): an FP32
NumPy matmul against an FP32 ceiling, an FP16 tensor-core GEMM against ``GEMM FP16``
(docs/design/model.md, "Your kernels on the roofline"). A ceiling's precision is the one its name
carries (``"FP32 vector"``, ``"GEMM FP16"``, ``"CPU GEMM FP32"``; a matrix unit's input type:
``"Matrix FP16→FP32 (wgmma)"`` is FP16's); a data type's is read from its name
(:func:`precision_of_dtype`).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from ...study.records import Ceiling

__all__ = ["PIPES", "PRECISIONS", "precision_of_dtype", "ceiling_precision", "is_matrix_unit", "roof_for"]

#: The precisions a kernel's work is counted in, as ceilings name them (lower case).
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
#: What does a kernel's work: the FMA pipes (``"fma"``: elementwise and FMA kernels, FADD/FMUL/FFMA
#: instructions) or the matrix units (``"tensor"``: GEMMs, tensor-core or AMX instructions).
PIPES = ("fma", "tensor")
_IN_NAME = re.compile(r"\b(FP64|FP32|TF32|FP16|BF16|FP8|INT8)\b")
#: Data-type names (as NumPy, PyTorch, CuPy and MLX print them) and their precision.
_DTYPE_NAMES = (
    ("bfloat16", "bf16"),
    ("float16", "fp16"),
    ("half", "fp16"),
    ("float32", "fp32"),
    ("float64", "fp64"),
    ("double", "fp64"),
    ("float8", "fp8"),
    ("int8", "int8"),
)


def precision_of_dtype(dtype: object) -> Optional[str]:
    """The precision (:data:`PRECISIONS`) of a data type: one of those names (``"fp32"``), or any
    object whose name or ``str`` names one (``numpy.float32``, ``np.dtype("float16")``,
    ``torch.bfloat16``, ``mlx.core.float32``, ``"float64"``); None for any other (integers
    other than int8, complex, bool, None)."""
    if dtype is None:
        return None
    text = str(getattr(dtype, "name", None) or dtype).lower().strip("'<>\" ")
    text = text.rsplit(".", 1)[-1].split("'")[0]
    if text in PRECISIONS:
        return text
    if text in ("float", "single"):  # torch.float, C's float
        return "fp32"
    for key, precision in _DTYPE_NAMES:
        if text.startswith(key):
            return precision
    return None


def ceiling_precision(name: str) -> Optional[str]:
    """The precision a ceiling's name carries (``"GEMM FP16"`` -> ``"fp16"``), or None. A matrix
    unit's (``"Matrix E4M3→FP32 (wgmma)"``) is its input type's, not its accumulator's: FP8's for
    E4M3 and E5M2."""
    upper = name.upper()
    if "→" in upper:  # "Matrix <in>→<acc> (<instruction>)"
        upper = upper.split("→", 1)[0].replace("E4M3", "FP8").replace("E5M2", "FP8")
    m = _IN_NAME.search(upper)
    return m.group(1).lower() if m else None


def is_matrix_unit(name: str) -> bool:
    """Whether a compute ceiling is a matrix unit's (a vendor GEMM's or the matrix suite's, which
    on a GPU are the tensor cores'), not the FMA pipes'."""
    upper = name.upper()
    return "GEMM" in upper or upper.startswith("MATRIX ")


def roof_for(
    ceilings: Sequence[Ceiling],
    precision: str,
    source: Optional[str] = None,
    *,
    scalar: bool = False,
    matrix: bool = False,
) -> Optional[Ceiling]:
    """The highest compute ceiling of ``precision`` among ``ceilings``: a measured one when there
    is one (or only of ``source`` when given), else a theoretical one; None when there is none.

    With ``scalar`` (work done by the FMA pipes, not the matrix units: a profiled kernel whose FLOPs
    are FFMA/HFMA/DFMA instructions), the matrix units' ceilings (:func:`is_matrix_unit`) are passed
    over where the precision has another (``FP16 vector`` for an HFMA kernel, not ``GEMM FP16``); with
    ``matrix`` (work done by the matrix units: a GEMM, a tensor-pipe kernel) only theirs are, where the
    precision has one (``GEMM FP32`` for an SGEMM, not ``FP32 vector``)."""
    for src in (source,) if source else ("measured", "theoretical"):
        found = [
            c for c in ceilings if c.kind == "compute" and c.source == src and ceiling_precision(c.name) == precision
        ]
        if scalar or matrix:
            found = [c for c in found if is_matrix_unit(c.name) == matrix] or found
        if found:
            return max(found, key=lambda c: c.value)
    return None
