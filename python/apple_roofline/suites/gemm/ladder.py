"""The GEMM ladder check: a size that ran far below the size before it is a disturbed measurement.

A larger matrix product is never much slower per FLOP than a smaller one of the same kernel, so a
size that ran more than :data:`LADDER_DROP` times below the rate of the size before it was disturbed
(a noisy machine, BLAS thread wake-ups): it says nothing about the library. The point stays in the
run, as measured; the run warns about it (:func:`ladder_warnings`, the suite's rule) and the
roofline figure draws it hollow (:data:`DISTURBED_SERIES`; both declared on the suite's
:class:`~apple_roofline.suites.registry.SuiteSpec`).
"""

from __future__ import annotations

from typing import Dict, List, Sequence

from ...roofline.run.case_loop import params_summary
from ...study.records import Measurement

__all__ = ["LADDER_DROP", "DISTURBED_SERIES", "disturbed_gemms", "ladder_warnings"]

#: A GEMM size this many times below the rate of the size before it is disturbed.
LADDER_DROP: float = 5.0
#: The legend series of the disturbed sizes in the roofline figure.
DISTURBED_SERIES = f"disturbed: > {LADDER_DROP:g}x below the size before"


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


def ladder_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One warning per disturbed GEMM size (:func:`disturbed_gemms`): one that ran more than
    :data:`LADDER_DROP` times below the rate of the size before it. The point stays in the run, as
    measured."""
    out: List[str] = []
    for i, p in disturbed_gemms(measurements).items():
        m, before = measurements[i], measurements[p]
        out.append(
            f"{m.label} {params_summary(m.params)} ran at {m.gflops:.3g} GFLOP/s, more than {LADDER_DROP:g}x below "
            f"{params_summary(before.params)} ({before.gflops:.3g} GFLOP/s): a disturbed measurement, not a ceiling"
        )
    return out
