"""Every ceiling name a run can hold, known before anything is measured, so that ``run --ceilings``
is checked before the first measurement (docs/design.md, "Exit codes").

A measured ceiling is named after the class its kernel sets (the stream, peak, GEMM and matrix
suites' tables) or the cache level the hierarchy suite's sweep shows; a theoretical one pairs with
a measured class or names a vendor GEMM precision. Which of them a run holds is known only once it
is measured (a GPU without FP64 GEMM has no "GEMM FP64"); a name in this list that the run lacks
is a warning after the run (:func:`~.outputs.write_run_files`), a name outside it an error before.
"""

from __future__ import annotations

from typing import List, Tuple

from ..suites.gemm import GEMM_PRECISIONS
from ..suites.matrix_kernels import APIS, PRECISIONS
from ..suites.peak import PEAK_VARIANTS, ceiling_class
from ..theoretical.caches import DRAM_LEVEL, SHARED_LEVEL
from ..theoretical.cuda import COMPUTE_CLASSES, GEMM_CLASSES
from .levels import level_ceiling_name

__all__ = ["CACHE_LEVELS", "STREAM_CLASSES", "known_ceiling_names"]

#: The cache levels the hierarchy suite names (:mod:`apple_roofline.theoretical.caches`): a GPU's
#: L1, L2 and shared memory (threadgroup memory), an Apple GPU's system-level cache, a CPU's L1d,
#: L2, L3 (L4 where Linux reports one), and DRAM.
CACHE_LEVELS: Tuple[str, ...] = ("L1", "L1d", "L2", "L3", "L4", "SLC", SHARED_LEVEL, DRAM_LEVEL)
#: The stream suite's classes: DRAM's, or the caches' when the arrays fit in them.
STREAM_CLASSES: Tuple[str, ...] = ("DRAM bandwidth", "Cache bandwidth")


def known_ceiling_names() -> List[str]:
    """Every ceiling name a run of any suite on any device can hold, each once: bandwidth first
    (the stream classes, then each cache level's), then compute (the peak classes, the theoretical
    compute classes, the GEMM classes, the CPU's GEMM classes, the matrix units' of every precision
    each instruction has)."""
    names = [*STREAM_CLASSES, *(level_ceiling_name(level) for level in CACHE_LEVELS)]
    names += [ceiling_class(dtype, variant) for dtype, variant in PEAK_VARIANTS] + list(COMPUTE_CLASSES)
    names += [p.ceiling_class for p in GEMM_PRECISIONS.values()] + list(GEMM_CLASSES)
    # the CPU's GEMMs beside a unified-memory GPU's: the precisions its libraries run
    names += [f"CPU {p.ceiling_class}" for p in GEMM_PRECISIONS.values() if "cpu" in p.libraries]
    names += [api.ceiling_class(p) for api in APIS for p in PRECISIONS if p.suffix not in api.missing]
    return list(dict.fromkeys(names))
