"""The memory-hierarchy table of a run's report (docs/design/hierarchy.md, "The memory hierarchy"): each
level's documented size, the plateau the working-set sweep found for it and the ceiling it makes.

Built from the run's ``hierarchy`` measurements (:mod:`.levels`) and its recorded cache facts
(``device.cache_levels``); None when the run measured no working set, so the section appears only
in runs that measured the suite. One row per plateau of each kernel, then the shared-memory ceiling:

- **documented**: the level's capacity in the sweep's terms (the sum of the cores' private caches on
  a CPU; one SM's L1 on a GPU), from the device's own report or the cited table;
- **working sets**: the plateau's smallest and largest measured working set; **edge**: where the
  curve crosses halfway (geometrically) between this plateau's rate and the next one's, to compare
  with the documented size; **points**: those its rate rests on (and how many it left out, by
  :mod:`.agreement`); **GB/s**: the median over those points of each point's best sample, or
  "could not be told apart" where its points do not make a level (the reason in the notes);
  **ceiling**: the roofline ceiling the read kernel's plateau makes.

A point above the physical limit of the level it was planned in (faster than the memory interface
beyond every cache: docs/design/limits.md, "Physical limits") is in no plateau: it has a row of its own,
its GB/s marked with the reason.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple

from ...roofline.model.limits import flagged_cell
from ...roofline.model.run import Run
from ...sizes import format_size
from ...study.records import Measurement, level_ceiling_name
from ...study.table import Table
from ...text import DASH, sig_figs
from .levels import LEVEL_KERNEL, LevelCurve, level_curves
from .plateaus import Plateau

__all__ = ["hierarchy_table"]


def _sources(device: Mapping[str, Any]) -> List[str]:
    facts = device.get("cache_levels")
    if not isinstance(facts, Mapping):
        return []
    out = [
        f"{lv.get('name')}: {format_size(int(lv.get('bytes', 0)))} ({lv.get('source')})"
        for lv in facts.get("levels", [])
        if isinstance(lv, Mapping)
    ]
    return out + [str(n) for n in facts.get("notes", [])]


def hierarchy_table(run: Run) -> Optional[Table]:
    """The section's table (module docstring), or None when the run has no hierarchy sweep."""
    curves = level_curves(run.measurements)
    shared = [m for m in run.measurements if m.suite == "hierarchy" and m.kernel == "shared"]
    if not curves and not shared:
        return None
    ceilings = {c.name: c for c in run.ceilings if c.is_level and c.source == "measured"}
    rows: List[Tuple[str, ...]] = []
    apart: List[str] = []
    for curve in curves:
        rows += [_plateau_row(curve.kernel, p, ceilings) for p in curve.plateaus]
        apart += [f"{curve.kernel} {p.level}: {p.unresolved}" for p in curve.plateaus if not p.resolved]
        rows += [_over_limit_row(curve.kernel, m) for m in curve.over_limit]
    rows += [_shared_row(m) for m in shared]
    header = ("Kernel", "Level", "Documented", "Working sets", "Points", "Edge", "GB/s (best)", "Ceiling")
    return Table(header, tuple(rows), "lllrrrrl", tuple(_notes(run, curves, apart)))


def _plateau_row(kernel: str, p: Plateau, ceilings: Mapping[str, Any]) -> Tuple[str, ...]:
    """A plateau's row: its level, documented size, working sets, points, edge, GB/s (or "could not
    be told apart") and the ceiling it made (``ceilings``: the run's measured level ceilings by name)."""
    made = p.resolved and kernel == LEVEL_KERNEL and level_ceiling_name(p.level) in ceilings
    used = str(p.points) if p.unresolved or not p.dropped else f"{p.points - p.dropped} of {p.points}"
    return (
        kernel,
        p.level,
        format_size(p.capacity) if p.capacity else DASH,
        f"{format_size(p.lo)} to {format_size(p.hi)}",
        used,
        format_size(int(p.edge)) if p.edge is not None else DASH,
        sig_figs(p.gbps) if p.resolved else "could not be told apart",
        level_ceiling_name(p.level) if made else DASH,
    )


def _over_limit_row(kernel: str, m: Measurement) -> Tuple[str, ...]:
    """The row of a point above its level's physical limit: in no level, its GB/s flagged."""
    ws = int(m.params.get("working_set_bytes", 0))
    return (
        kernel,
        f"{m.params.get('level', DASH)} (no level)",
        DASH,
        format_size(ws),
        "1",
        DASH,
        flagged_cell(m, sig_figs(m.best_gbps), "GB/s"),
        DASH,
    )


def _shared_row(m: Measurement) -> Tuple[str, ...]:
    """The shared-memory kernel's row (its tile's size, its GB/s and ceiling, or invalid)."""
    return (
        m.kernel,
        "Shared memory",
        DASH,
        format_size(int(m.params.get("working_set_bytes", 0))),
        "1",
        DASH,
        sig_figs(m.best_gbps) if m.valid else "**invalid**",
        "Shared memory bandwidth" if m.valid else DASH,
    )


def _notes(run: Run, curves: Sequence[LevelCurve], apart: Sequence[str]) -> List[str]:
    """The table's notes: how the levels are found (and what the default run's form and a flagged
    point mean, where they occur), how a level is set, those not told apart, the documented sizes."""
    form = {c.sweep for c in curves}
    notes = [
        "Bandwidth against working set (the cache-aware roofline): each plateau of the working-set "
        "sweep is named by the documented level whose size lies nearest its edge; the read kernel's "
        "plateaus below DRAM are the roofline's level ceilings (DRAM's stays STREAM's)."
        + (
            " The default run measures a few working sets inside each documented level "
            "(`--suite hierarchy` sweeps them all), so its plateaus are the levels' points and have no edge."
            if "levels" in form
            else ""
        )
        + (
            " A point marked ⚠ lies above the physical limit of the level it was planned in and makes no level "
            "(the reason follows its GB/s; the warnings give the limit)."
            if any(c.over_limit for c in curves)
            else ""
        )
    ]
    notes.append(
        "A level is set only from points that agree within their noise (its rate the median of "
        "those; Points says how many, of how many), faster than the level beyond it, DRAM's clear of "
        "the caches' reach."
    )
    notes += [f"Levels that could not be told apart (no rate, no ceiling): {'; '.join(apart)}."] if apart else []
    notes += [f"Documented sizes: {'; '.join(_sources(run.device))}."] if _sources(run.device) else []
    return notes
