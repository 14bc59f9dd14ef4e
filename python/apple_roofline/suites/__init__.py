"""The measurement suites, by name (docs/design.md, "Adding a suite"): stream, sweep, peak, gemm,
hierarchy (the memory hierarchy's levels), matrix (matrix-unit tile products; a default run measures
one tile per precision and instruction, ``--suite matrix`` the sweep), and the opt-in idiv (integer
divide costs), access (stride and load width), occupancy (threadgroup memory) and dualissue (FP32
with FP16 or integer issue; none of these in :data:`DEFAULT_SUITES`)."""

from __future__ import annotations

from typing import Dict, Tuple, Type

from .base import Case, KernelDef, Suite, SuiteContext
from .access import AccessSuite
from .dualissue import DualIssueSuite
from .gemm import GemmSuite
from .hierarchy import HierarchySuite
from .idiv import IdivSuite
from .matrix import MatrixSuite
from .occupancy import OccupancySuite
from .peak import PeakSuite
from .stream import StreamSuite
from .sweep import SweepSuite

__all__ = ["SUITES", "DEFAULT_SUITES", "Suite", "SuiteContext", "Case", "KernelDef"]

#: Every suite, in the order a run measures them.
SUITES: Dict[str, Type[Suite]] = {
    "stream": StreamSuite,
    "sweep": SweepSuite,
    "peak": PeakSuite,
    "gemm": GemmSuite,
    "idiv": IdivSuite,
    "matrix": MatrixSuite,
    "access": AccessSuite,
    "occupancy": OccupancySuite,
    "dualissue": DualIssueSuite,
    "hierarchy": HierarchySuite,
}

#: The suites a run measures when none are named: every suite that sets the roofline's ceilings.
#: ``idiv`` sets none and is measured only when asked for (``--suite idiv``); ``matrix`` sets the
#: matrix-unit ceilings from one tile per precision and instruction there (the runner sets
#: :data:`~.matrix.SHAPES_OPTION`), its whole sweep only when asked for (``--suite matrix``);
#: ``access``, ``occupancy`` and ``dualissue`` measure the optimization guide's rules as ratios and set
#: no ceiling (``--suite access,occupancy,dualissue``). ``hierarchy`` runs in its quick form (a few
#: working sets per cache level, one ceiling each); named with ``--suite``, its full working-set sweep
#: (docs/design.md, "The memory hierarchy").
DEFAULT_SUITES: Tuple[str, ...] = ("stream", "sweep", "peak", "gemm", "matrix", "hierarchy")
