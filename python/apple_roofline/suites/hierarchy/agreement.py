"""Which plateaus of a working-set sweep are levels: points that agree, each level faster than the
one beyond it, DRAM clear of the caches (docs/design/hierarchy.md, "The memory hierarchy").

:func:`settle` takes the plateaus :mod:`.plateaus` found (or grouped) and keeps a level only where
its points tell it apart; else it marks the plateau :attr:`~.plateaus.Plateau.unresolved` with the
reason, and the plateau makes no ceiling and shows no rate:

* **Agreement.** A level's rate is the median of the points that lie within its tolerance of the
  median of all its points; more than half of them must (both of two). The tolerance follows the
  samples' own spread: the median coefficient of variation of the points' samples, at least
  :data:`FLOOR` and at most :data:`CAP` (the smallest step between two levels seen, so that a wider
  spread cannot merge two levels).
* **DRAM clear of the caches.** A point beyond every documented cache counts toward DRAM where the
  caches cannot have raised it by more than :data:`~apple_roofline.theoretical.caches.CACHE_INFLATION`:
  its working set is at least :func:`~apple_roofline.theoretical.caches.dram_start` of their total
  capacity, or it agrees within that same fraction with the point an octave below it, itself
  beyond every cache. The second test rests on the bytes a pass finds in the caches not growing with
  the working set (so under LRU and random replacement, and on the H200, whose L2 keeps C of
  every pass): then the fall of the curve over the octave below a point bounds what the caches
  still add to it, and a curve flat over that octave adds nothing measurable.
* **Order.** Each level's rate must exceed that of the plateau beyond it by more than
  :data:`MARGIN`; a level that does not cannot be told from the one beyond.

No level is held against another kernel's: ``rmw`` writes back each line it reads, so it counts
two lines' bytes per line fetched, and where each core's misses in flight limit the rate (a few
cores) it runs faster than ``read`` in DRAM (the 2-core development machine: rmw 23 to 34 GB/s
where read measured 10 to 14), and two measurements taken minutes apart on a shared machine
cannot bound each other.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Dict, List, Mapping, Sequence, Tuple

from ...sizes import format_size
from ...text import sig_figs
from ...theoretical.caches import CACHE_INFLATION, dram_start
from .plateaus import DRAM, TOLERANCE, Level, Plateau

__all__ = ["CAP", "FLOOR", "MARGIN", "level_tolerance", "settle"]

#: The smallest tolerance of a level (a fraction): the scatter of the best samples' rates within one
#: level, which the samples' CV may not show (a 2-vCPU Xeon guest's L1d read 420 to 533 GB/s over
#: ten points of one quick sweep, eight of them within 10 % of their median).
FLOOR = 0.10
#: The largest tolerance of a level (a fraction): :data:`~.plateaus.TOLERANCE`, below the smallest
#: step between two levels seen (1.22×).
CAP = TOLERANCE - 1.0
#: How much faster (a fraction) a level must be than the plateau beyond it: the smallest step between
#: two levels seen, a 2-core EPYC's L2 over its L3 for reads, measured 1.13 to 1.2x on a machine
#: shared with other work (single points of the default run), so the margin stays well below it.
MARGIN = 0.05


def level_tolerance(cvs: Sequence[float]) -> float:
    """The tolerance (a fraction) of a level whose points' samples have coefficients of variation
    ``cvs``: their median, clamped to [:data:`FLOOR`, :data:`CAP`] (:data:`FLOOR` for none)."""
    spread = statistics.median(cvs) if cvs else 0.0
    return min(CAP, max(FLOOR, spread))


def _within(a: float, b: float, tol: float) -> bool:
    return abs(math.log(a / b)) <= math.log1p(tol)


def _rates(ws: Sequence[int], rate: Mapping[int, float]) -> str:
    shown = ", ".join(f"{sig_figs(rate[w])} GB/s at {format_size(w)}" for w in ws[:4])
    return shown + (f" and {len(ws) - 4} more" if len(ws) > 4 else "")


def _dram_points(
    members: Sequence[int], rate: Mapping[int, float], beyond: Sequence[int], start: int, tol: float
) -> List[int]:
    """The members that count toward DRAM (module docstring): from ``start`` on, or within ``tol``
    of the point an octave below (``beyond``: the curve's working sets beyond every cache,
    ascending)."""
    out = []
    for w in members:
        below = [x for x in beyond if x <= w / 2]
        if w >= start or (below and _within(rate[w], rate[below[-1]], tol)):
            out.append(w)
    return out


def settle(
    plateaus: Sequence[Plateau],
    points: Sequence[Tuple[int, float]],
    spreads: Sequence[float],
    levels: Sequence[Level],
    *,
    inflation: float = CACHE_INFLATION,
) -> List[Plateau]:
    """The ``plateaus`` of one curve with their rates from agreeing points, or marked unresolved
    (module docstring).

    Args:
        plateaus: the curve's plateaus, smallest working set first.
        points: the curve's (working set in bytes, GB/s) pairs.
        spreads: each point's coefficient of variation of its samples (a fraction), in the order of
            ``points``.
        levels: the documented cache levels the points were planned against.
        inflation: what the caches may add to a point counted as DRAM (a fraction).

    Returns:
        The plateaus in the same order: resolved ones with ``gbps`` the median of their agreeing
        points and ``dropped`` the number left out; unresolved ones with their reason and their
        rate as found (for the next level's order test only).

    Raises:
        ValueError: ``spreads`` and ``points`` differ in length.
    """
    if len(spreads) != len(points):
        raise ValueError(f"{len(spreads)} spreads for {len(points)} points")
    rate: Dict[int, float] = {int(w): float(g) for w, g in points if g > 0 and w > 0}
    cv: Dict[int, float] = {int(w): float(s) for (w, _g), s in zip(points, spreads)}
    caps = [lv.capacity for lv in levels]
    top = max(caps, default=0)
    start = dram_start(sum(caps), inflation)
    beyond = sorted(w for w in rate if w > top)
    out: List[Plateau] = []
    for p in plateaus:
        members = [w for w in p.members if w in rate] if p.members else [w for w in sorted(rate) if p.lo <= w <= p.hi]
        tol = level_tolerance([cv.get(w, 0.0) for w in members])
        use = members
        why = ""
        if p.level == DRAM:
            use = _dram_points(members, rate, beyond, start, inflation)
            if not use:
                why = (
                    f"no point lies far enough beyond the caches ({format_size(sum(caps))} together) to rule out "
                    f"their hits: from {format_size(start)} they add at most {inflation:.0%}, and no point agrees "
                    f"within {inflation:.0%} with the point an octave below it ({_rates(members, rate)})"
                )
        kept = [w for w in use if _within(rate[w], statistics.median(rate[x] for x in use), tol)] if use else []
        if use and 2 * len(kept) <= len(use):
            why = f"its points disagree by more than {tol:.0%} from their median ({_rates(use, rate)})"
        if why or not kept:
            out.append(dataclasses.replace(p, unresolved=why or "no point"))
        else:
            out.append(
                dataclasses.replace(
                    p, gbps=statistics.median(rate[w] for w in kept), dropped=len(members) - len(kept), unresolved=""
                )
            )
    for k in range(len(out) - 2, -1, -1):
        p, nxt = out[k], out[k + 1]
        if p.resolved and not p.gbps > nxt.gbps * (1.0 + MARGIN):
            out[k] = dataclasses.replace(
                p,
                unresolved=(
                    f"not faster than {nxt.level} beyond it by more than {MARGIN:.0%} ({sig_figs(p.gbps)} against "
                    f"{sig_figs(nxt.gbps)} GB/s)"
                ),
            )
    return out
