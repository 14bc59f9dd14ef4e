"""Every ceiling name a run can hold, known before anything is measured, so that ``run --ceilings``
is checked before the first measurement (docs/design/files.md, "Exit codes").

A measured ceiling is named after the class its kernel sets or a rule of its suite makes (each
suite's registration lists them: the stream, peak, GEMM and matrix suites' tables, the cache levels
the hierarchy suite's sweep shows); a theoretical one pairs with a measured class or names a vendor
GEMM precision. Which of them a run holds is known only once it
is measured (a GPU without FP64 GEMM has no "GEMM FP64"); a name in this list that the run lacks
is a warning after the run (:func:`~.outputs.write_run_files`), a name outside it an error before.
"""

from __future__ import annotations

from typing import List

from ...suites.registry import suite_ceiling_names
from ...theoretical.cuda import COMPUTE_CLASSES, GEMM_CLASSES

__all__ = ["known_ceiling_names"]


def known_ceiling_names() -> List[str]:
    """Every ceiling name a run of any suite on any device can hold, each once: the measured ones
    each suite can set (:func:`~apple_roofline.suites.registry.suite_ceiling_names`, in run order),
    then the theoretical compute and GEMM classes."""
    return list(dict.fromkeys([*suite_ceiling_names(), *COMPUTE_CLASSES, *GEMM_CLASSES]))
