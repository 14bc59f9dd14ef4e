"""The ``hierarchy`` suite's entry in the registry (:mod:`apple_roofline.suites.registry`)."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Tuple

from ...study.records import WORKING_SET, Measurement, level_ceiling_name
from ...theoretical.caches import DRAM_LEVEL, SHARED_LEVEL, hierarchy_facts
from ..registry import LimitRule, Section, SuiteFigure, SuiteSpec, optional_tables
from .levels import level_ceilings, level_warnings
from .plot import hierarchy_figure
from .suite import SWEEP_OPTION, HierarchySuite
from .table import hierarchy_table
from .work import hierarchy_work

__all__ = ["SPEC", "CACHE_LEVELS"]


def _form(named: bool) -> Mapping[str, Any]:
    """The full working-set sweep when the suites are named, a few points per level in a default run
    (docs/design/hierarchy.md, "The memory hierarchy")."""
    return {SWEEP_OPTION: "full" if named else "levels"}


#: The cache levels the suite names (:mod:`apple_roofline.theoretical.caches`): a GPU's L1, L2 and
#: shared memory (threadgroup memory), an Apple GPU's system-level cache, a CPU's L1d, L2, L3 (L4
#: where Linux reports one), and DRAM.
CACHE_LEVELS: Tuple[str, ...] = ("L1", "L1d", "L2", "L3", "L4", "SLC", SHARED_LEVEL, DRAM_LEVEL)


def _ceiling_names() -> List[str]:
    """Each cache level's ceiling (:func:`.levels.level_ceiling_name`)."""
    return [level_ceiling_name(level) for level in CACHE_LEVELS]


def _facts(info: Mapping[str, Any]) -> Mapping[str, Any]:
    """The documented cache sizes the levels are named by, recorded as ``device.cache_levels``."""
    return {"cache_levels": hierarchy_facts(info)}


def _level(m: Measurement) -> Optional[str]:
    """The level a working-set point was planned at (``"L1"`` ... ``"DRAM"``), which the physical
    limits hold its figure against; None for the suite's other kernels."""
    level = m.params.get("level") if WORKING_SET in m.params else None
    return str(level) if level is not None else None


def _working_set_point(m: Measurement) -> bool:
    """A working-set point's figure is its best sample's GB/s, as its curve is drawn and its level found."""
    return WORKING_SET in m.params


def _every_measurement(_m: Measurement) -> bool:
    """The suite's samples are short by design: the timer's share is judged from the shortest."""
    return True


SPEC = SuiteSpec(
    name="hierarchy",
    measure=HierarchySuite,
    order=100,
    budget_s=90.0,
    default=True,
    summary="a few working sets per cache level by default, the whole working-set sweep when named",
    options=_form,
    device_facts=_facts,
    ceilings=level_ceilings,
    ceiling_names=_ceiling_names,
    warnings=level_warnings,
    limits=LimitRule(level=_level, best_figure=_working_set_point, shortest_sample=_every_measurement),
    work=hierarchy_work,
    sections=(
        Section(
            "Memory hierarchy",
            optional_tables(hierarchy_table),
            order=20,
            figure=SuiteFigure(
                "hierarchy",
                hierarchy_figure,
                "Bandwidth against working set: each kernel's points (best sample), its "
                "plateaus as bars over their working sets, the documented cache sizes as "
                "vertical lines.",
            ),
        ),
    ),
)
