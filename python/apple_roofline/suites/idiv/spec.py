"""The ``idiv`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from ..registry import Section, SuiteSpec, optional_tables
from .suite import IdivSuite
from .table import idiv_table

__all__ = ["SPEC"]

#: Opt-in (``--suite idiv``): it sets no ceiling.
SPEC = SuiteSpec(name="idiv", measure=IdivSuite, order=50, budget_s=60.0,
                 sections=(Section("Integer divide", optional_tables(idiv_table), order=10),))
