"""The matmul shapes of the per-call cost study, and their limits (docs/design/studies.md, "The per-call cost study").

One call is C[B×N] = A[B×N]·W[N×N] in fp32 (row-major, no transpose): a batch of B vectors through
an N×N weight matrix, 2·B·N·N FLOPs (:func:`~apple_roofline.suites.gemm.precisions.gemm_flops` with M = B,
N = K = N). The grid runs from 1×64² to 256×2048²: B in :data:`BATCHES`, N in :data:`SIZES`;
``--quick`` measures :data:`QUICK_BATCHES` × :data:`QUICK_SIZES`.
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

from ..errors import OptionError, check_int

__all__ = [
    "BATCHES",
    "SIZES",
    "QUICK_BATCHES",
    "QUICK_SIZES",
    "MAX_BATCH",
    "MIN_SIZE",
    "MAX_SIZE",
    "SIZE_STEP",
    "check_batches",
    "check_sizes",
    "grid",
]

#: Rows B of A per call (the batch).
BATCHES: Tuple[int, ...] = (1, 4, 16, 64, 256)
#: N: A is B×N, W is N×N.
SIZES: Tuple[int, ...] = (64, 128, 256, 512, 1024, 2048)
#: The ``quick`` grid: both ends and the middle of each axis.
QUICK_BATCHES: Tuple[int, ...] = (1, 16, 256)
QUICK_SIZES: Tuple[int, ...] = (64, 256, 1024)
#: Limits: B 1 to MAX_BATCH; N a multiple of SIZE_STEP from MIN_SIZE to MAX_SIZE (the tiled kernel
#: computes 16×16 tiles, shaders/*/gemm.*).
MAX_BATCH = 256
MIN_SIZE = 16
MAX_SIZE = 2048
SIZE_STEP = 16


def _unique_sorted(values: Iterable[int]) -> List[int]:
    return sorted(set(values))


def check_batches(values: Sequence[object]) -> Tuple[int, ...]:
    """``values`` as batch sizes B, each 1 to :data:`MAX_BATCH`, sorted and without repeats.

    Raises:
        OptionError: (parameter ``batches``) a value that is not an integer or is out of range; or none.
    """
    if not values:
        raise OptionError("batches", "", f"1 to {MAX_BATCH}", problem="is empty", shown="(none)")
    return tuple(_unique_sorted(check_int(v, "batches", 1, MAX_BATCH) for v in values))


def check_sizes(values: Sequence[object]) -> Tuple[int, ...]:
    """``values`` as sizes N, each a multiple of :data:`SIZE_STEP` from :data:`MIN_SIZE` to
    :data:`MAX_SIZE`, sorted and without repeats.

    Raises:
        OptionError: (parameter ``sizes``) a value that is not an integer, out of range or not a
            multiple of 16; or none.
    """
    valid = f"multiples of {SIZE_STEP} from {MIN_SIZE} to {MAX_SIZE}"
    if not values:
        raise OptionError("sizes", "", valid, problem="is empty", shown="(none)")
    out = []
    for v in values:
        try:
            n = check_int(v, "sizes", MIN_SIZE, MAX_SIZE)
        except OptionError as exc:
            raise OptionError("sizes", v, valid, problem=exc.problem) from None
        if n % SIZE_STEP:
            raise OptionError("sizes", v, valid, problem=f"is not a multiple of {SIZE_STEP}")
        out.append(n)
    return tuple(_unique_sorted(out))


def grid(
    quick: bool = False, batches: Optional[Sequence[int]] = None, sizes: Optional[Sequence[int]] = None
) -> List[Tuple[int, int]]:
    """The (B, N) shapes to measure, in order of FLOPs per call (smallest first): ``batches`` ×
    ``sizes``, each defaulting to the full grid or, with ``quick``, the quick one.

    Raises:
        OptionError: as :func:`check_batches` and :func:`check_sizes`.
    """
    bs = check_batches(batches) if batches is not None else (QUICK_BATCHES if quick else BATCHES)
    ns = check_sizes(sizes) if sizes is not None else (QUICK_SIZES if quick else SIZES)
    return sorted(((b, n) for b in bs for n in ns), key=lambda s: (s[0] * s[1] * s[1], s[1]))
