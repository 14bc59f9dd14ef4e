"""The ``occupancy`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import Section, SuiteFigure, SuiteSpec, optional_tables
from .plot import plot_occupancy
from .suite import OccupancySuite
from .table import occupancy_table

__all__ = ["SPEC"]

#: Opt-in: it measures the guide's rules as ratios and sets no ceiling.
SPEC = SuiteSpec(name="occupancy", measure=OccupancySuite, order=80, budget_s=60.0, sections=(
    Section("Threadgroup memory and occupancy", optional_tables(occupancy_table), order=50,
            figure=SuiteFigure("occupancy", plot_occupancy,
                               "Throughput of the fixed kernel against its threadgroup memory; the sizes the "
                               "guide's occupancy table names dashed (published).")),))
