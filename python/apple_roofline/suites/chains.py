"""Cases for FMA-chain kernels (used by the ``sweep`` and ``peak`` suites)."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .base import (
    Case,
    Constants,
    HostScratch,
    KernelDef,
    OutputCheck,
    check_tiled,
    fill,
    pattern,
    poison,
    rebindable,
)
from .fma import CHAIN_A, FmaKernel, tolerance

__all__ = ["chain_case", "chain_input", "chain_reference", "chain_references"]


def chain_input(dtype: str) -> np.ndarray:
    """One period of the input pattern of every FMA-chain case (tiled over the input buffer)."""
    return pattern(dtype, -0.5, 0.5, seed=7)


def chain_reference(fk: FmaKernel, F: int, dtype: str) -> Callable[[], np.ndarray]:
    """The NumPy reference of ``fk`` at F over one period of :func:`chain_input`, computed on first
    use and then kept: a case and every block size it is rebound to share one."""
    return chain_references(fk, [F], dtype)[F]


def chain_references(fk: FmaKernel, Fs: Sequence[int], dtype: str) -> Dict[int, Callable[[], np.ndarray]]:
    """:func:`chain_reference` at every F of ``Fs`` (non-negative), by F: the first use of any of them
    computes them all in one pass of max(Fs) iterations (:meth:`~.fma.FmaKernel.references`) and
    keeps them, so a sweep over F runs the chains once."""
    memo: Dict[int, np.ndarray] = {}

    def get(F: int) -> np.ndarray:
        if not memo:
            memo.update(fk.references(np.asarray(chain_input(dtype)), Fs, dtype))
        return memo[F]

    return {int(F): partial(get, int(F)) for F in Fs}


def chain_case(
    kdef: KernelDef,
    fk: FmaKernel,
    F: int,
    items: int,
    bufs: Tuple[Any, Any],
    src: Tuple[str, str],
    backend: Any,
    extra: dict,  # type: ignore[type-arg]
    constants: Optional[Mapping[str, Union[int, float]]] = None,
    reference: Optional[Callable[[], np.ndarray]] = None,
    fill_input: bool = True,
    scratch: Optional[HostScratch] = None,
) -> Case:
    """Write the input pattern, poison the output and describe one timed launch of ``items`` work
    items of ``fk`` at F iterations; the check compares every element with the NumPy reference
    (``reference``, else :func:`chain_reference`'s). The kernel is compiled with ``{"F": F}`` plus
    ``constants`` (the kernel table's, e.g. BLOCK); :meth:`Case.for_block` rebuilds it at another
    BLOCK on the same buffers, inputs and reference. ``fill_input`` False leaves ``bufs[0]`` as it
    is: the caller has already written :func:`chain_input` over at least these ``items`` (the sweep
    writes it once for all its cases; the kernels only read it). The check reads the output into
    ``scratch`` where given (a suite's reused host memory)."""
    dtype = kdef.dtype
    count = items * fk.elems_per_item
    if fill_input:
        fill(bufs[0], chain_input(dtype), count)
    poison(bufs[1], dtype, count)
    ref = reference or chain_reference(fk, F, dtype)
    rtol, atol = tolerance(dtype)

    check = OutputCheck.of_output(bufs[1], dtype, count, scratch, lambda got: check_tiled(got, ref(), rtol, atol))
    args = [bufs[0], bufs[1]] + ([CHAIN_A] if fk.takes_a else [])

    def plan(consts: Constants) -> Case:
        return Case(
            kernel=kdef,
            params={"F": F, "n": count, "working_set_bytes": fk.bytes_per_item(dtype) * items, **extra},
            launch=items,
            flops=fk.flops_per_item(F) * items,
            bytes=fk.bytes_per_item(dtype) * items,
            args=args,
            make_kernel=partial(backend.compile, src[0], src[1], {**consts, "F": F}),
            check=check,
            reset=partial(poison, bufs[1], dtype, count),
        )

    return rebindable(plan, dict(constants or {}))
