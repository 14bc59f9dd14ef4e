"""The ``gemm`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import List

from ...study.records import Measurement
from ..registry import PointMarker, SuiteSpec
from .ladder import DISTURBED_SERIES, disturbed_gemms, ladder_warnings
from .precisions import GEMM_PRECISIONS
from .sizes import QUICK_SIZES, SIZES_OPTION
from .suite import GemmSuite


def _ceiling_names() -> List[str]:
    """Each precision's vendor GEMM, and the CPU's beside a unified-memory GPU's (the precisions its
    libraries run)."""
    names = [p.ceiling_class for p in GEMM_PRECISIONS.values()]
    return names + [f"CPU {p.ceiling_class}" for p in GEMM_PRECISIONS.values() if "cpu" in p.libraries]


def _compare_class(m: Measurement) -> str:
    """The tiled comparison kernel sets no ceiling: it is drawn beside the vendor GEMM of its dtype."""
    return f"GEMM {m.dtype.upper()}"


__all__ = ["SPEC"]

SPEC = SuiteSpec(
    name="gemm",
    measure=GemmSuite,
    order=40,
    budget_s=90.0,
    default=True,
    ceiling_names=_ceiling_names,
    warnings=ladder_warnings,
    # the vendor GEMMs' sizes, each in the colour of the ceiling its precision sets
    marker=PointMarker(
        "vendor GEMM, N = 16 … (colour = its ceiling)",
        "o",
        6.0,
        by_class=True,
        not_drawn="vendor GEMM of a ceiling not drawn",
    ),
    compare_class=_compare_class,
    disturbed=disturbed_gemms,
    disturbed_series=DISTURBED_SERIES,
    quick_options={SIZES_OPTION: QUICK_SIZES},  # coarser, to 4096 (docs/design/matrix.md, "The GEMM ladder")
)
