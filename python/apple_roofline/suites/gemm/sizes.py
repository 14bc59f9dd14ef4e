"""The sizes a GEMM ladder may run (docs/design/matrix.md, "The GEMM ladder").

A default run's ladder doubles N from 16 to :data:`MAX_N` (:data:`DEFAULT_SIZES`); a ``--quick``
run's steps N by 4 from 64 to 4096 (:data:`QUICK_SIZES`), which the runner passes as the suite
context's :data:`SIZES_OPTION`. A ladder ends before its last size where :mod:`.settle` or the time
budget say so; both predict the next size's launch from this one's, scaled by the FLOPs' ratio
(:func:`growth`: 8 for a doubling, 64 for a ×4 step). Where a ×4 step would not fit the time budget
but a doubling would, the ladder measures the doubling (:func:`next_size`), so a coarse ladder never
ends below where a doubling one would under the same budget (a CPU's BLAS, whose launches reach the
budget long before 4096).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from .precisions import TILE

__all__ = [
    "SIZES_OPTION",
    "MAX_N",
    "DEFAULT_SIZES",
    "QUICK_SIZES",
    "ladder_sizes",
    "growth",
    "next_size",
    "most_sizes",
]

#: ``SuiteContext.options`` key: the ladder's sizes (default :data:`DEFAULT_SIZES`).
SIZES_OPTION = "gemm_sizes"
#: The largest size a ladder runs.
MAX_N = 8192
#: A default run's ladder: N = 16, 32 … 8192.
DEFAULT_SIZES: Tuple[int, ...] = tuple(TILE << i for i in range((MAX_N // TILE).bit_length()))
#: A ``--quick`` run's ladder: fewer, coarser steps and no 8192 (its host work, drawing, writing
#: and checking the inputs, is about 4× 4096's).
QUICK_SIZES: Tuple[int, ...] = (64, 256, 1024, 4096)


def ladder_sizes(option: Any = None) -> Tuple[int, ...]:
    """The sizes of :data:`SIZES_OPTION`'s value ``option`` (None: :data:`DEFAULT_SIZES`), as a tuple.

    Raises ValueError for an empty sequence, or one that is not strictly increasing integer
    multiples of :data:`TILE` from :data:`TILE` to :data:`MAX_N`."""
    if option is None:
        return DEFAULT_SIZES
    sizes = tuple(option)
    valid = all(isinstance(n, int) and not isinstance(n, bool) and TILE <= n <= MAX_N and n % TILE == 0 for n in sizes)
    if not sizes or not valid or any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(
            f"GEMM sizes must be increasing multiples of {TILE} from {TILE} to {MAX_N}, not {list(sizes)!r}"
        )
    return sizes


def growth(n: int, n_next: int) -> float:
    """How many times longer a launch of size ``n_next`` is predicted to take than one of ``n``: the
    FLOPs' ratio (n_next / n)³ (8 for a doubling, 64 for a ×4 step). Raises ZeroDivisionError for
    ``n`` = 0."""
    return float((n_next / n) ** 3)


def next_size(sizes: Sequence[int], n: int, fastest_s: float, max_launch_s: float) -> Optional[int]:
    """The size a ladder of ``sizes`` measures after ``n`` (whose fastest launch took ``fastest_s``
    seconds), given a time budget of ``max_launch_s`` seconds per launch: the first of ``sizes``
    above ``n``, or 2·``n`` where that one's launch is predicted (:func:`growth`) over the budget
    and 2·``n`` lies below it (a doubling ladder would measure it); None past the last size. The
    caller still checks the returned size's prediction against the budget."""
    later = [m for m in sizes if m > n]
    if not later:
        return None
    if 2 * n < later[0] and fastest_s * growth(n, later[0]) > max_launch_s:
        return 2 * n
    return later[0]


def most_sizes(sizes: Sequence[int]) -> int:
    """The most sizes a ladder of ``sizes`` measures: each of them and the doublings
    :func:`next_size` may measure between two of them (7 for :data:`QUICK_SIZES`, 64 … 4096)."""
    out = set(sizes)
    for a, b in zip(sizes, sizes[1:]):
        n = 2 * a
        while n < b:
            out.add(n)
            n *= 2
    return len(out)
