"""Cases for FMA-chain kernels (used by the ``sweep`` and ``peak`` suites)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple, Union

import numpy as np

from .base import Case, KernelDef, check_tiled, fill, pattern, poison, read
from .fma import CHAIN_A, FmaKernel, tolerance


def chain_case(kdef: KernelDef, fk: FmaKernel, F: int, items: int, bufs: Tuple[Any, Any],
               src: Tuple[str, str], backend: Any, extra: dict,  # type: ignore[type-arg]
               constants: Optional[Mapping[str, Union[int, float]]] = None) -> Case:
    """Write the input pattern, poison the output and describe one timed launch of ``items`` work
    items of ``fk`` at F iterations; the check compares every element with the NumPy reference.
    The kernel is compiled with ``{"F": F}`` plus ``constants`` (the kernel table's, e.g. BLOCK)."""
    dtype = kdef.dtype
    count = items * fk.elems_per_item
    x = pattern(dtype, -0.5, 0.5, seed=7)
    fill(bufs[0], x, count)
    poison(bufs[1], dtype, count)
    rtol, atol = tolerance(dtype)

    def check() -> Tuple[bool, str]:
        ref = fk.reference(np.asarray(x), F, dtype)
        return check_tiled(read(bufs[1], dtype, count), ref, rtol, atol)

    args = [bufs[0], bufs[1]] + ([CHAIN_A] if fk.takes_a else [])
    return Case(
        kernel=kdef,
        params={"F": F, "n": count, "working_set_bytes": fk.bytes_per_item(dtype) * items, **extra},
        launch=items,
        flops=fk.flops_per_item(F) * items,
        bytes=fk.bytes_per_item(dtype) * items,
        args=args,
        make_kernel=lambda: backend.compile(src[0], src[1], {**(constants or {}), "F": F}),
        check=check,
    )
