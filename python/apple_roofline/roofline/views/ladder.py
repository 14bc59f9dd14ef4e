"""The GEMM ladder check: a size that ran far below the size before it is a disturbed measurement.

A larger matrix product is never much slower per FLOP than a smaller one of the same kernel, so a
size that ran more than :data:`LADDER_DROP` times below the rate of the size before it was disturbed
(a noisy machine, BLAS thread wake-ups): it says nothing about the library. The point stays in the
run, as measured; the run warns about it (:func:`.runner.ladder_warnings`) and the roofline figure
draws it hollow (:mod:`.plot`).
"""

from __future__ import annotations

from typing import Dict, Sequence

from ...study.records import Measurement

__all__ = ["LADDER_DROP", "disturbed_gemms"]

#: A GEMM size this many times below the rate of the size before it is disturbed.
LADDER_DROP: float = 5.0


def disturbed_gemms(measurements: Sequence[Measurement]) -> Dict[int, int]:
    """Index of each disturbed GEMM measurement -> index of the size before it (both positions in
    ``measurements``). Each kernel and dtype is its own ladder, in the order measured; invalid
    measurements are not part of any ladder."""
    out: Dict[int, int] = {}
    prev: Dict[str, int] = {}
    for i, m in enumerate(measurements):
        if m.suite != "gemm" or not m.valid:
            continue
        key = f"{m.kernel}/{m.dtype}"  # each kernel's own ladder (library, tiled, host GEMMs)
        p = prev.get(key)
        if p is not None and m.gflops * LADDER_DROP < measurements[p].gflops:
            out[i] = p
        prev[key] = i
    return out
