"""The ``matrix`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Any, List, Mapping

from ..registry import LimitRule, Section, SuiteSpec
from .kernels import APIS, PRECISIONS, pipe_class
from .suite import LARGEST, SHAPES_OPTION, SWEEP, MatrixSuite
from .table import matrix_tables

__all__ = ["SPEC"]


def _shapes(named: bool) -> Mapping[str, Any]:
    """A default run measures one tile per precision and instruction, a run that names its suites
    every tile shape (docs/design/matrix.md, "Matrix units")."""
    return {SHAPES_OPTION: SWEEP if named else LARGEST}


def _ceiling_names() -> List[str]:
    """The matrix units' class of every precision each instruction has."""
    return [api.ceiling_class(p) for api in APIS for p in PRECISIONS if p.suffix not in api.missing]


SPEC = SuiteSpec(
    name="matrix",
    measure=MatrixSuite,
    order=110,
    budget_s=120.0,
    default=True,
    summary="one tile per precision and instruction by default, every tile shape when named",
    options=_shapes,
    ceiling_names=_ceiling_names,
    limits=LimitRule(pipe_class=pipe_class),
    sections=(Section("Matrix units", matrix_tables, order=30),),
)
