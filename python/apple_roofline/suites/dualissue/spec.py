"""The ``dualissue`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import Section, SuiteFigure, SuiteSpec, optional_tables
from .plot import plot_dualissue
from .suite import DualIssueSuite
from .table import dualissue_table

__all__ = ["SPEC"]

#: Opt-in: it measures the guide's rules as ratios and sets no ceiling.
SPEC = SuiteSpec(name="dualissue", measure=DualIssueSuite, order=90, budget_s=30.0, sections=(
    Section("Dual issue", optional_tables(dualissue_table), order=60,
            figure=SuiteFigure("dualissue", plot_dualissue,
                               "Dual issue: each kind alone, their sum, and the mixed kernel.")),))
