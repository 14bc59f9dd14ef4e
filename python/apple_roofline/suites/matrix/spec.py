"""The ``matrix`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Any, Mapping

from ..registry import Section, SuiteSpec
from .suite import LARGEST, SHAPES_OPTION, SWEEP, MatrixSuite
from .table import matrix_tables

__all__ = ["SPEC"]


def _shapes(named: bool) -> Mapping[str, Any]:
    """A default run measures one tile per precision and instruction, a run that names its suites
    every tile shape (docs/design.md, "Matrix units")."""
    return {SHAPES_OPTION: SWEEP if named else LARGEST}


SPEC = SuiteSpec(name="matrix", measure=MatrixSuite, order=60, budget_s=120.0, default=True,
                 summary="one tile per precision and instruction by default, every tile shape when named",
                 options=_shapes, sections=(Section("Matrix units", matrix_tables, order=30),))
