"""Work over the rows of a large host array, a block of rows at a time, on a thread pool
(docs/design/measurement.md, "Validation").

Validating a large output needs float64 copies of it and of the inputs (Freivalds' test of an
8192×8192 GEMM reads three 64-Mi-element matrices). Converting a block of rows at a time keeps each
copy within the caches (about :data:`BLOCK_BYTES` of float64), never allocates an N×N float64
array, and lets the blocks run on several cores: NumPy releases the GIL in its element loops and
BLAS calls, so threads scale. Results come back in row order, so a reduction over them is the same
whatever the number of workers.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, List, Optional, TypeVar

from ..host.cpus import host_threads

__all__ = ["BLOCK_BYTES", "CACHE_BLOCK_BYTES", "MAX_WORKERS", "row_blocks", "map_row_blocks"]

T = TypeVar("T")

#: float64 bytes of one block of rows (the size of its converted copy).
BLOCK_BYTES = 8 << 20
#: A smaller block for passes that make several float64 temporaries of each block (the GEMM checks'
#: Freivalds passes: a converted copy, its absolute values, products): 1 MiB keeps them within a
#: core's L2, where 8 MiB blocks on eight threads spill the last-level cache (a 4096² FP32 check's
#: first pass took 0.13 s instead of 0.25 s on a 2-vCPU EPYC; docs/design/wall-time.md, "Where the time goes").
CACHE_BLOCK_BYTES = 1 << 20
#: The most threads a map uses (fewer where :func:`~apple_roofline.host.cpus.host_threads` allows fewer).
MAX_WORKERS = 8


def row_blocks(rows: int, cols: int, block_bytes: Optional[int] = None) -> List[slice]:
    """Slices covering ``rows`` rows of ``cols`` columns in order, each at most ``block_bytes``
    (default :data:`BLOCK_BYTES`) of float64 (at least one row). Raises ValueError for negative sizes."""
    if rows < 0 or cols < 0:
        raise ValueError(f"rows and cols must be non-negative, not {rows} and {cols}")
    step = max(1, (BLOCK_BYTES if block_bytes is None else block_bytes) // (8 * max(cols, 1)))
    return [slice(start, min(rows, start + step)) for start in range(0, rows, step)]


def map_row_blocks(fn: Callable[[slice], T], rows: int, cols: int, block_bytes: Optional[int] = None) -> List[T]:
    """``[fn(s) for s in row_blocks(rows, cols, block_bytes)]``, the calls spread over up to
    :data:`MAX_WORKERS` threads (at most :func:`~apple_roofline.host.cpus.host_threads`; one where that is
    1 or there is one block). An exception of ``fn`` propagates."""
    blocks = row_blocks(rows, cols, block_bytes)
    workers = min(MAX_WORKERS, host_threads(), len(blocks))
    if workers <= 1:
        return [fn(s) for s in blocks]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, blocks))
