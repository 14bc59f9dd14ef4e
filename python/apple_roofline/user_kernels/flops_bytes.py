"""FLOP and byte counts of common operations, for placing your own kernels on a roofline.

Each helper returns ``(flops, bytes)``: FLOPs counted per scalar operation (a fused multiply-add
is 2) and the minimum DRAM traffic (every input read once, every output written once), in bytes.
Pass them to :func:`apple_roofline.measure`. Real kernels may move more bytes (caches too small,
re-reads), so a point's intensity from these counts is the *algorithmic* intensity.

``dtype`` is a string — ``"fp16"``, ``"bf16"``, ``"fp32"``, ``"tf32"``, ``"fp64"``, ``"int8"`` —
or anything :func:`numpy.dtype` accepts (``np.float32``, ``"float16"``; bool, void, object and
string dtypes are rejected).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

# the suites are imported inside the functions, so that ``import apple_roofline`` stays cheap

__all__ = ["DTYPES", "matmul", "elementwise", "reduction", "itemsize"]

#: dtype names accepted as strings, with their element size in bytes.
DTYPES: Tuple[str, ...] = ("fp16", "bf16", "fp32", "tf32", "fp64", "int8")


def _size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer >= 0, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, not {value!r}")
    return int(value)


def _numpy_dtype(dtype: Any) -> "np.dtype[Any]":
    dt: "Optional[np.dtype[Any]]"
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "iufc":
        raise ValueError(
            f"unknown dtype {dtype!r} (valid: {', '.join(DTYPES)}, or a NumPy integer, float or complex dtype)"
        )
    return dt


def itemsize(dtype: Any) -> int:
    """Bytes per element of ``dtype`` (a name of :data:`DTYPES` or a NumPy dtype).

    Raises:
        ValueError: for an unknown dtype, naming the valid ones.
    """
    if isinstance(dtype, str) and dtype in DTYPES:
        from ..suites.base import ITEMSIZE

        return ITEMSIZE[dtype]
    return _numpy_dtype(dtype).itemsize


def matmul(m: int, n: int, k: int, dtype: Any = "fp32") -> Tuple[int, int]:
    """FLOPs and bytes of ``C[m×n] = A[m×k] @ B[k×n]``.

    ``flops = 2·m·n·k`` (a multiply and an add per term of every dot product);
    ``bytes = (m·k + k·n) × input size + m·n × output size`` — A and B read once, C written once,
    the formula of the MLX matmul roofline article (``2AB + 2BC + 2AC`` bytes in fp16). The output
    has the input's size except for ``"int8"``, whose products accumulate into int32 (as the gemm
    suite's :func:`~apple_roofline.suites.gemm.precisions.gemm_bytes`).

    Raises:
        ValueError: for a negative or non-integer size (naming it) or an unknown dtype.
    """
    from ..suites.gemm.precisions import GEMM_PRECISIONS, gemm_bytes, gemm_flops

    m, n, k = _size(m, "m"), _size(n, "n"), _size(k, "k")
    if isinstance(dtype, str) and dtype in GEMM_PRECISIONS:
        return gemm_flops(m, n, k), gemm_bytes(m, n, k, dtype)
    size = itemsize(dtype)
    return gemm_flops(m, n, k), (m * k + k * n + m * n) * size


def elementwise(
    n: int, inputs: int = 1, outputs: int = 1, flops_per_element: int = 1, dtype: Any = "fp32"
) -> Tuple[int, int]:
    """FLOPs and bytes of an elementwise operation over ``n`` elements.

    ``flops = n · flops_per_element``; ``bytes = n · (inputs + outputs) × itemsize``. E.g.
    ``y = a * x + y`` (fp32) is ``elementwise(n, inputs=2, outputs=1, flops_per_element=2)``:
    2 FLOPs per 12 bytes.

    Raises:
        ValueError: for a negative ``n``, ``inputs``, ``outputs`` or ``flops_per_element``
            (naming it) or an unknown dtype.
    """
    n = _size(n, "n")
    inputs, outputs = _size(inputs, "inputs"), _size(outputs, "outputs")
    fpe = _size(flops_per_element, "flops_per_element")
    return n * fpe, n * (inputs + outputs) * itemsize(dtype)


def reduction(n: int, dtype: Any = "fp32") -> Tuple[int, int]:
    """FLOPs and bytes of summing ``n`` elements to one: ``n - 1`` additions (0 for ``n <= 1``),
    ``n`` elements read and one written: ``(n + 1) × itemsize`` bytes.

    Raises:
        ValueError: for a negative ``n`` or an unknown dtype.
    """
    n = _size(n, "n")
    return max(n - 1, 0), (n + 1) * itemsize(dtype)
