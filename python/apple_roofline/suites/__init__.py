"""The measurement suites of the roofline study (docs/design/extending.md, "Adding a suite").

Each suite is a folder here (``stream/``, ``sweep/``, ``peak/``, ``gemm/``, ``idiv/``, ``matrix/``,
``access/``, ``occupancy/``, ``dualissue/``, ``hierarchy/``) holding everything of it on the Python
side, registered by its ``spec.py``; :mod:`.registry` finds them. The modules beside the folders are
what several suites share: :mod:`.base` (kernels, cases, the Suite class), :mod:`.fma` and
:mod:`.chains` (the FMA chains of peak, sweep and dual issue), :mod:`.blocks`, :mod:`.fp8` and
:mod:`.views` (the rule suites' table and figure helpers)."""

from __future__ import annotations

from .base import Case, KernelDef, Suite, SuiteContext

__all__ = ["Suite", "SuiteContext", "Case", "KernelDef"]
