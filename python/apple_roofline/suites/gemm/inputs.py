"""The gemm suite's operands: A and B for each precision at each size, drawn from a generator
seeded by N (docs/design/budgets.md, "Time budgets"). Floats are uniform in [−1, 1) rounded to the
storage format, from one float64 pair per size that every floating-point precision rounds
(:func:`uniform_pair64`, drawn a block of rows at a time on threads, bit for bit the serial draws:
:func:`uniform_pair`); int8 are integers in ±:data:`INT8_MAX_ABS`. :func:`gemm_inputs` gives the
values and the arrays written to the device; :func:`draw_kind` gives a ladder one size's
:class:`Drawn` inputs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Dict, Optional, Tuple

import numpy as np

from ..base import NUMPY_DTYPE
from ..blocks import map_row_blocks
from .precisions import GEMM_PRECISIONS

__all__ = [
    "INT8_MAX_ABS",
    "UNIFORM_KEEP_MAX_N",
    "Drawn",
    "gemm_inputs",
    "uniform_pair",
    "uniform_pair64",
    "input_kind",
    "draw_inputs",
    "draw_kind",
]

#: int8 inputs are drawn from [-INT8_MAX_ABS, INT8_MAX_ABS].
INT8_MAX_ABS = 127


def gemm_inputs(
    dtype: str, n: int, rng: np.random.Generator, uniform: Optional[Tuple[np.ndarray, np.ndarray]] = None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Square n×n inputs for ``dtype``: ``(a, b, a_stored, b_stored)``, the values (what
    :func:`~.checks.check_gemm` takes) and the arrays written to the device (C-contiguous). Floats are uniform
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
#: (:attr:`~.suite.GemmSuite.uniform`: two 4096² float64 arrays are 256 MiB; an 8192² pair, 1 GiB, is drawn
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
class Drawn:
    """One size's inputs (:func:`gemm_inputs`' four arrays) and the memo of their checks
    (:func:`~.checks.check_gemm`'s ``memo``), as the ladders that take them share them."""

    a: np.ndarray
    b: np.ndarray
    a_stored: np.ndarray
    b_stored: np.ndarray
    memo: Dict[Any, Any] = field(default_factory=dict)


def draw_inputs(dtype: str, n: int, uniform: Optional[Tuple[np.ndarray, np.ndarray]] = None) -> Drawn:
    """:func:`gemm_inputs` of ``dtype`` at size ``n``, seeded by ``n`` (or rounded from ``uniform``,
    :func:`uniform_pair64` ``(n)``), read-only (they may be shared by several ladders,
    :class:`~.reuse.SharedDraws`)."""
    arrays = gemm_inputs(dtype, n, np.random.default_rng(n), uniform)
    for x in arrays:
        x.flags.writeable = False
    return Drawn(*arrays)


def draw_kind(uniform: Dict[int, Tuple[np.ndarray, np.ndarray]], kind: str, n: int) -> Drawn:
    """``kind``'s inputs at size ``n``: a floating-point kind's rounded from ``uniform`` (the suite's
    :attr:`~.suite.GemmSuite.uniform`, drawn into it on first use) up to UNIFORM_KEEP_MAX_N, the same arrays
    as drawn (:func:`gemm_inputs`)."""
    if GEMM_PRECISIONS[kind].in_dtype == "int8" or n > UNIFORM_KEEP_MAX_N:
        return draw_inputs(kind, n)
    if n not in uniform:
        uniform[n] = uniform_pair64(n)
    return draw_inputs(kind, n, uniform[n])


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
