"""The memory hierarchy of a run: each kernel's bandwidth-against-working-set curve from the
``hierarchy`` suite's measurements, its plateaus, and the level ceilings they make (the cache-aware
roofline; docs/design/hierarchy.md, "The memory hierarchy").

Each hierarchy measurement records its working set (``working_set_bytes``), the documented level
that holds it (``level``, ``level_bytes``: named when the run was planned, from the device's cache
sizes) and the sweep it belongs to (``sweep``: ``full``, or ``levels`` for the default run's few
points per level). The documented levels of a curve are read back from those parameters, so the
plateaus are found again on reading from the measurements alone, as every measured ceiling is.
A point's rate is that of its best (shortest) sample, so that interference from other work on
the machine does not break a plateau. A plateau is a level only where its points tell it apart
(:mod:`.agreement`: they agree, it is faster than the plateau beyond it, DRAM's lie clear of the
caches); one that is not makes no ceiling and says why (:func:`level_warnings`). Each told-apart
plateau of the per-lane read kernel below DRAM becomes a bandwidth ceiling named
``"<level> bandwidth"`` with its working-set range (:attr:`~.records.Ceiling.working_set`); DRAM's
ceiling stays STREAM's.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from ...sizes import format_size
from ...study.records import WORKING_SET, Ceiling, Measurement, level_ceiling_name
from .agreement import settle
from .plateaus import DRAM, Level, Plateau, find_plateaus, level_groups

__all__ = [
    "HIERARCHY_SUITE",
    "LEVEL_KERNEL",
    "LevelCurve",
    "level_curves",
    "level_ceilings",
    "without_over_limit",
    "level_ceiling_name",
    "level_warnings",
    "min_points",
]

#: The suite whose measurements make the curves.
HIERARCHY_SUITE = "hierarchy"
#: The kernel whose plateaus become the level ceilings (per-lane reads; read-modify-write is shown
#: beside it, not made a ceiling).
LEVEL_KERNEL = "read"


@dataclass(frozen=True)
class LevelCurve:
    """One kernel's sweep: its valid points, the documented levels they name and the plateaus found.

    Attributes:
        kernel: the hierarchy kernel (``"read"``, ``"rmw"``).
        dtype: its data type label.
        points: (working set in bytes, GB/s at the best sample), smallest working set first: a
            machine shared with other work only ever slows samples down, and a 2-core CPU under load
            slowed a tenth to half of the median samples of a sweep by up to 20×, where the best sample
            kept the level's rate (docs/design/hierarchy.md, "The memory hierarchy").
        levels: the documented cache levels the points were planned against, smallest first.
        plateaus: :func:`~.plateaus.find_plateaus` of the points against the levels (runs of at
            least :func:`min_points`); for the default run's few points per level, one per level
            (:func:`~.plateaus.level_groups`); each settled by :func:`~.agreement.settle`.
        sweep: ``"full"`` or ``"levels"`` (the default run's few points per level).
        measurements: the measurements behind ``points``, in the same order.
        over_limit: those of them above the physical limit of the level they were planned in
            (:mod:`.limits`: a point planned beyond every cache that ran faster than the memory
            interface, from a cache): they shape the curve (its transitions and edges) but are no part
            of any plateau's rate (:func:`without_over_limit`), so they make no level.
    """

    kernel: str
    dtype: str
    points: Tuple[Tuple[int, float], ...]
    levels: Tuple[Level, ...]
    plateaus: Tuple[Plateau, ...]
    sweep: str
    measurements: Tuple[Measurement, ...]
    over_limit: Tuple[Measurement, ...] = ()


def min_points(points: Sequence[Tuple[int, float]]) -> int:
    """The fewest points a plateau of this sweep holds: three quarters of an octave's points, at
    least 2 (3 at the full sweep's 4 points per octave, 2 at ``--quick``'s 2), from the median
    spacing of the working sets."""
    ws = sorted({w for w, _g in points})
    ratios = sorted(b / a for a, b in zip(ws, ws[1:]))
    if not ratios or ratios[len(ratios) // 2] <= 1.0:
        return 2
    per_octave = 1.0 / math.log2(ratios[len(ratios) // 2])
    return max(2, round(0.75 * per_octave))


def level_curves(measurements: Sequence[Measurement]) -> List[LevelCurve]:
    """The curve of every hierarchy kernel with a working-set sweep among the valid
    ``measurements``, in the order their kernels first appear. Invalid measurements are left out."""
    groups: Dict[Tuple[str, str], List[Measurement]] = {}
    for m in measurements:
        if m.valid and m.suite == HIERARCHY_SUITE and WORKING_SET in m.params and "level" in m.params:
            groups.setdefault((m.kernel, m.dtype), []).append(m)
    out: List[LevelCurve] = []
    for (kernel, dtype), ms in groups.items():
        ms = sorted(ms, key=lambda m: int(m.params[WORKING_SET]))
        caps: Dict[str, int] = {}
        for m in ms:
            cap = int(m.params.get("level_bytes", 0) or 0)
            if m.params["level"] != DRAM and cap > 0:
                caps[str(m.params["level"])] = cap
        levels = tuple(sorted((Level(n, c) for n, c in caps.items()), key=lambda lv: lv.capacity))
        sweep = "levels" if any(m.params.get("sweep") == "levels" for m in ms) else "full"
        points = tuple((int(m.params[WORKING_SET]), m.best_gbps) for m in ms)
        found = (
            level_groups(points, levels)
            if sweep == "levels"
            else find_plateaus(points, levels, min_points=min_points(points))
        )
        over = tuple(m for m in ms if not m.usable)
        found = [q for q in (without_over_limit(p, ms) for p in found) if q is not None]
        # the levels from the usable points alone (an over-limit point is no octave partner either)
        usable = [(w, m) for w, m in zip((w for w, _g in points), ms) if m.usable]
        plateaus = settle(found, [(w, m.best_gbps) for w, m in usable], [m.cv for _w, m in usable], levels)
        out.append(LevelCurve(kernel, dtype, points, levels, tuple(plateaus), sweep, tuple(ms), over))
    return out


def without_over_limit(p: Plateau, measurements: Sequence[Measurement]) -> Optional[Plateau]:
    """Plateau ``p`` of the curve of ``measurements`` made of only its usable points
    (:attr:`~.records.Measurement.usable`: a point planned beyond every cache that ran faster than the
    memory interface is cache-resident, no DRAM figure, and makes no level): their median best-sample
    rate and working sets; ``p`` itself when all its points are usable; None when none is."""
    inside = [m for m in measurements if p.lo <= int(m.params[WORKING_SET]) <= p.hi]
    kept = [m for m in inside if m.usable]
    if len(kept) == len(inside):
        return p
    if not kept:
        return None
    ws = [int(m.params[WORKING_SET]) for m in kept]
    return dataclasses.replace(
        p,
        gbps=statistics.median(m.best_gbps for m in kept),
        lo=min(ws),
        hi=max(ws),
        points=len(kept),
        members=tuple(sorted(ws)),
    )


def level_ceilings(measurements: Sequence[Measurement]) -> List[Ceiling]:
    """The measured bandwidth ceiling of every cache level the read kernel's curve shows a plateau
    of and tells apart (DRAM's excepted), highest first. Each holds for the working sets from the end of the level
    before it (its edge, else its documented size; for the first, the plateau's first point) to
    its own edge, else its documented size."""
    out: List[Ceiling] = []
    for curve in level_curves(measurements):
        if curve.kernel != LEVEL_KERNEL:
            continue
        start: Optional[float] = None
        for p in curve.plateaus:
            # from where the level before ended (its edge, else its documented size) to this one's
            # edge, else its documented size (the default run's few points have no edges)
            lo = int(start) if start is not None else p.lo
            hi = int(p.edge) if p.edge is not None else (p.capacity or p.hi)
            start = p.edge if p.edge is not None else p.capacity
            if p.level == DRAM or not p.resolved:
                continue
            label = f"{HIERARCHY_SUITE}/{curve.kernel}/{curve.dtype}"
            edge = f", edge {format_size(int(p.edge))}" if p.edge is not None else ""
            out.append(
                Ceiling(
                    name=level_ceiling_name(p.level),
                    kind="bandwidth",
                    value=p.gbps,
                    unit="GB/s",
                    source="measured",
                    from_=(
                        f"{label}: plateau of {p.points} point{'s' if p.points != 1 else ''} at working sets "
                        f"{format_size(p.lo)} to {format_size(p.hi)}{edge} "
                        "(median over the points of each one's best sample)"
                    ),
                    working_set=(max(1, lo), max(max(1, lo), hi)),
                )
            )
    out.sort(key=lambda c: -c.value)
    return out


def level_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """One line for each level a hierarchy curve could not tell apart: ``"hierarchy/read/u32: the L3
    level could not be told apart: <why>"``."""
    return [
        f"{HIERARCHY_SUITE}/{c.kernel}/{c.dtype}: the {p.level} level could not be told apart: {p.unresolved}"
        for c in level_curves(measurements)
        for p in c.plateaus
        if not p.resolved
    ]
