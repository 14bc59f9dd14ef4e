"""Cases for FMA-chain kernels (used by the ``sweep`` and ``peak`` suites)."""

from __future__ import annotations

from dataclasses import dataclass, field
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

__all__ = ["ChainKernel", "chain_case", "chain_input", "chain_reference", "chain_references", "check_chain"]


def chain_input(dtype: str) -> np.ndarray:
    """One period of the input pattern of every FMA-chain case (tiled over the input buffer)."""
    return pattern(dtype, -0.5, 0.5, seed=7)


def chain_reference(fk: FmaKernel, F: int, dtype: str, fused: bool = True) -> Callable[[], np.ndarray]:
    """The NumPy reference of ``fk`` at F over one period of :func:`chain_input`, computed on first
    use and then kept: a case and every block size it is rebound to share one. ``fused`` False: the
    trajectory with every FMA rounded twice (:meth:`~.fma.FmaKernel.references`)."""
    return chain_references(fk, [F], dtype, fused)[F]


def chain_references(
    fk: FmaKernel, Fs: Sequence[int], dtype: str, fused: bool = True
) -> Dict[int, Callable[[], np.ndarray]]:
    """:func:`chain_reference` at every F of ``Fs`` (non-negative), by F: the first use of any of them
    computes them all in one pass of max(Fs) iterations (:meth:`~.fma.FmaKernel.references`) and
    keeps them, so a sweep over F runs the chains once."""
    memo: Dict[int, np.ndarray] = {}

    def get(F: int) -> np.ndarray:
        if not memo:
            memo.update(fk.references(np.asarray(chain_input(dtype)), Fs, dtype, fused=fused))
        return memo[F]

    return {int(F): partial(get, int(F)) for F in Fs}


def _may_round_twice(backend: Any) -> bool:
    """Whether the backend says its FMA may round twice (its info's ``fma_may_round_twice``)."""
    info = getattr(backend, "info", None)
    return bool(callable(info) and info().get("fma_may_round_twice"))


def check_chain(
    got: np.ndarray, fused: np.ndarray, unfused: Optional[np.ndarray], rtol: float, atol: float
) -> Tuple[bool, str]:
    """Check an FMA-chain output against the fused reference ``fused`` (one period, tiled:
    :func:`~.base.check_tiled`) or, where given, element by element against either it or the
    trajectory of twice-rounded FMAs, ``unfused``: each element within tolerance of one of them."""
    ok, msg = check_tiled(got, fused, rtol, atol)
    if ok or unfused is None:
        return ok, msg
    p, bad, only_unfused, first = len(fused), 0, 0, -1
    chunk = p * 64
    tf = np.resize(fused, min(chunk, got.size)).astype(np.float64)
    tu = np.resize(unfused, min(chunk, got.size)).astype(np.float64)
    for start in range(0, got.size, chunk):
        g = got[start : start + chunk].astype(np.float64)
        f, u = tf[: g.size], tu[: g.size]
        near_f = np.abs(g - f) <= atol + rtol * np.abs(f)
        near_u = np.abs(g - u) <= atol + rtol * np.abs(u)
        wrong = ~(near_f | near_u)
        only_unfused += int(np.count_nonzero(near_u & ~near_f))
        if first < 0 and wrong.any():
            first = start + int(np.argmax(wrong))
        bad += int(np.count_nonzero(wrong))
    if not bad:
        return True, (
            f"{got.size} elements match the fused or the unfused NumPy reference ({only_unfused} the unfused one "
            f"alone: this device's fma rounds twice), rtol {rtol:.2g}, atol {atol:.2g}"
        )
    i = first
    return False, (
        f"{bad} of {got.size} elements match neither the fused nor the unfused NumPy reference; first at {i}: "
        f"got {got[i]!r}, want {fused[i % p]!r} or {unfused[i % p]!r} (tol {atol:.2g} + {rtol:.2g}·|want|)"
    )


@dataclass(frozen=True)
class ChainKernel:
    """An FMA-chain kernel as a suite builds it: its kernel-table entry ``kdef``, the FMA kernel
    ``fk``, its resolved source ``src`` (file or text, entry point), the backend that compiles and
    runs it, and the kernel table's constants on that backend (e.g. BLOCK; F is the case's)."""

    kdef: KernelDef
    fk: FmaKernel
    src: Tuple[str, str]
    backend: Any
    constants: Mapping[str, Union[int, float]] = field(default_factory=dict)


def chain_case(
    kernel: ChainKernel,
    F: int,
    items: int,
    bufs: Tuple[Any, Any],
    extra: Optional[Mapping[str, Any]] = None,
    reference: Optional[Callable[[], np.ndarray]] = None,
    fill_input: bool = True,
    scratch: Optional[HostScratch] = None,
) -> Case:
    """Write the input pattern, poison the output and describe one timed launch of ``items`` work
    items of ``kernel`` at F iterations; ``extra`` joins the case's parameters. The check compares
    every element with the NumPy reference (``reference``, else :func:`chain_reference`'s). The
    kernel is compiled with ``{"F": F}`` plus ``kernel.constants``; :meth:`Case.for_block` rebuilds
    it at another BLOCK on the same buffers, inputs and reference. ``fill_input`` False leaves
    ``bufs[0]`` as it is: the caller has already written :func:`chain_input` over at least these
    ``items`` (the sweep writes it once for all its cases; the kernels only read it). The check reads
    the output into ``scratch`` where given (a suite's reused host memory)."""
    kdef, fk, src, backend = kernel.kdef, kernel.fk, kernel.src, kernel.backend
    dtype = kdef.dtype
    count = items * fk.elems_per_item
    if fill_input:
        fill(bufs[0], chain_input(dtype), count)
    poison(bufs[1], dtype, count)
    ref = reference or chain_reference(fk, F, dtype)
    # WGSL's fma has the accuracy of a multiply and an add: a WebGPU device may round twice (lavapipe
    # does), so its output may follow the unfused trajectory instead (docs/design/backends.md, "The WebGPU backend")
    unfused = chain_reference(fk, F, dtype, fused=False) if _may_round_twice(backend) else None
    rtol, atol = tolerance(dtype)

    def compare(got: np.ndarray) -> Tuple[bool, str]:
        return check_chain(got, ref(), unfused() if unfused is not None else None, rtol, atol)

    check = OutputCheck.of_output(bufs[1], dtype, count, scratch, compare)
    args = [bufs[0], bufs[1]] + ([CHAIN_A] if fk.takes_a else [])

    def plan(consts: Constants) -> Case:
        return Case(
            kernel=kdef,
            params={"F": F, "n": count, "working_set_bytes": fk.bytes_per_item(dtype) * items, **(extra or {})},
            work_items=items,
            flops=fk.flops_per_item(F) * items,
            bytes=fk.bytes_per_item(dtype) * items,
            args=args,
            make_kernel=partial(backend.compile, src[0], src[1], {**consts, "F": F}),
            check=check,
            reset=partial(poison, bufs[1], dtype, count),
        )

    return rebindable(plan, dict(kernel.constants))
