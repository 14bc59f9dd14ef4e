"""The measurement suites, by name (docs/design.md, "Adding a suite"): stream, sweep, peak, gemm."""

from __future__ import annotations

from typing import Dict, Type

from .base import Case, KernelDef, Suite, SuiteContext
from .gemm import GemmSuite
from .peak import PeakSuite
from .stream import StreamSuite
from .sweep import SweepSuite

__all__ = ["SUITES", "Suite", "SuiteContext", "Case", "KernelDef"]

#: Every suite, in the order a run measures them.
SUITES: Dict[str, Type[Suite]] = {
    "stream": StreamSuite,
    "sweep": SweepSuite,
    "peak": PeakSuite,
    "gemm": GemmSuite,
}
