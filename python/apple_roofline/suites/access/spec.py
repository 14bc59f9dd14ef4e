"""The ``access`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import Section, SuiteFigure, SuiteSpec, optional_tables
from .plot import plot_access
from .suite import AccessSuite
from .table import access_table

__all__ = ["SPEC"]

#: Opt-in: it measures the guide's rules as ratios and sets no ceiling.
SPEC = SuiteSpec(name="access", measure=AccessSuite, order=70, budget_s=120.0, sections=(
    Section("Access patterns", optional_tables(access_table), order=40,
            figure=SuiteFigure("access", plot_access,
                               "Effective bandwidth against stride, one line per load width, per working set.")),))
