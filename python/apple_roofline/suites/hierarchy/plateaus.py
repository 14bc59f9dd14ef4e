"""The plateaus of a bandwidth-against-working-set curve, named by the device's documented cache
sizes (docs/design/hierarchy.md, "The memory hierarchy").

A working-set sweep (the ``hierarchy`` suite) measures bandwidth at working sets from a few KiB to
several times the last-level cache. The curve is flat while the working set fits one level (a
*plateau*) and falls between levels. :func:`find_plateaus` finds the plateaus from the curve alone
and then names them: a plateau ends where the curve crosses halfway (geometrically) between its
bandwidth and the next plateau's (its *edge*), and it is named by the documented level whose
capacity lies nearest its edge; the last plateau, which has no edge, is DRAM when it lies beyond
every documented capacity. The documented sizes name the plateaus and never place them, so a
level the curve does not show (an L1 whose bandwidth equals the L2's) gets no plateau, and a
found edge can be compared with the documented size (within one step of the sweep on the CPU it
was developed on). Methodology: the cache-aware roofline (Ilic, Pratas and Sousa, "Cache-aware
Roofline model: Upgrading the loft", IEEE Computer Architecture Letters 13(1), 2014), whose
per-level ceilings come from such a sweep, as in the Empirical Roofline Toolkit.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = [
    "DRAM",
    "DRAM_SPAN",
    "Level",
    "Plateau",
    "TOLERANCE",
    "TRANSITION_SPAN",
    "find_plateaus",
    "level_groups",
    "nominal_level",
]

#: Working sets up to this factor above a level's capacity are the transition to the next level (on
#: an H100 the L1 hits of a read thin out from 256 KiB to 2 MiB): an unnamed run there is no plateau.
TRANSITION_SPAN = 8.0
#: The last run of a curve is DRAM when its largest working set exceeds every documented capacity by
#: this factor, even where it starts below the last one (see :func:`find_plateaus`).
DRAM_SPAN = 2.0
#: The name of the level beyond every cache (:data:`~apple_roofline.theoretical.caches.DRAM_LEVEL`).
DRAM = "DRAM"
#: A point belongs to the plateau being built while its bandwidth lies within this factor of the
#: plateau's median: 15 %, below the smallest step between two levels seen (an AMD EPYC's L2 at
#: 237 GB/s and L3 at 195 GB/s on two cores: 1.22×) and above the scatter of the best samples
#: within a level on a loaded machine (after the median-of-three filter, under 10 %).
TOLERANCE = 1.15


@dataclass(frozen=True)
class Level:
    """A documented level of the memory hierarchy: its name (``"L1d"``, ``"L2"``, ``"SLC"`` ...) and
    its capacity in bytes, in the sweep's terms (the working set that still fits it)."""

    name: str
    capacity: int


@dataclass(frozen=True)
class Plateau:
    """A flat stretch of the curve.

    Attributes:
        level: the documented level it is named by, or :data:`DRAM`.
        gbps: the median bandwidth of its points, GB/s.
        lo: its smallest working set, bytes.
        hi: its largest working set, bytes.
        edge: where the curve crosses halfway (geometrically) between this plateau's bandwidth and
            the next one's, bytes; None for the last plateau.
        points: how many measured points it holds.
        capacity: the documented capacity of :attr:`level`, bytes (None for DRAM).
        members: the working sets (bytes) of its points, ascending.
        dropped: how many of its points its rate leaves out (:mod:`.agreement`: they disagree
            with the others, or lie too near the caches to count as DRAM).
        unresolved: why the level could not be told apart (:mod:`.agreement`), or ``""`` where it
            was: an unresolved plateau makes no ceiling and its rate is not shown.
    """

    level: str
    gbps: float
    lo: int
    hi: int
    edge: Optional[float]
    points: int
    capacity: Optional[int]
    members: Tuple[int, ...] = ()
    dropped: int = 0
    unresolved: str = ""

    @property
    def resolved(self) -> bool:
        """Whether the level was told apart (:attr:`unresolved` is empty)."""
        return not self.unresolved


def nominal_level(working_set: int, levels: Sequence[Level]) -> Level:
    """The smallest of ``levels`` whose capacity holds ``working_set`` bytes, else a DRAM level
    (capacity 0). ``levels`` in any order."""
    for lv in sorted(levels, key=lambda x: x.capacity):
        if working_set <= lv.capacity:
            return lv
    return Level(DRAM, 0)


def level_groups(points: Sequence[Tuple[int, float]], levels: Sequence[Level]) -> List[Plateau]:
    """One plateau per documented level (and DRAM) that holds any of ``points`` (working set in
    bytes, GB/s): its points are those the level holds by the documented sizes (:func:`nominal_level`),
    its rate their median. For the default run's few points per level (``sweep=levels``), where one
    disturbed point of two cannot be told from a step of the curve; no edges."""
    groups: Dict[Level, List[Tuple[int, float]]] = {}
    for w, g in sorted(points):
        if g > 0 and w > 0:
            groups.setdefault(nominal_level(int(w), levels), []).append((int(w), float(g)))
    out = [
        Plateau(
            lv.name,
            statistics.median(g for _w, g in ps),
            ps[0][0],
            ps[-1][0],
            None,
            len(ps),
            lv.capacity if lv.name != DRAM else None,
            tuple(w for w, _g in ps),
        )
        for lv, ps in groups.items()
    ]
    return sorted(out, key=lambda p: p.lo)


def _segments(ys: Sequence[float], tol: float) -> List[Tuple[int, int]]:
    """Runs [i, j) of consecutive log-bandwidths each within ``tol`` of the run's median so far."""
    out: List[Tuple[int, int]] = []
    start = 0
    for i in range(1, len(ys) + 1):
        if i == len(ys) or abs(ys[i] - statistics.median(ys[start:i])) > tol:
            out.append((start, i))
            start = i
    return out


def _edge(ws: Sequence[float], ys: Sequence[float], a: int, b: int, target: float) -> float:
    """The working set (log-interpolated) where the log-bandwidth first falls below ``target``
    between indices ``a`` (last point of a plateau) and ``b`` (first point of the next)."""
    for i in range(a, b):
        y0, y1 = ys[i], ys[i + 1]
        if (y0 - target) * (y1 - target) <= 0 and y0 != y1:
            f = (y0 - target) / (y0 - y1)
            return math.exp(math.log(ws[i]) + f * (math.log(ws[i + 1]) - math.log(ws[i])))
    return math.sqrt(ws[a] * ws[b])


def find_plateaus(
    points: Sequence[Tuple[int, float]], levels: Sequence[Level], *, tolerance: float = TOLERANCE, min_points: int = 2
) -> List[Plateau]:
    """The plateaus of a bandwidth curve, smallest working set first, each named by ``levels``.

    Args:
        points: (working set in bytes, GB/s) pairs, any order; non-positive rates are left out.
        levels: the documented cache levels (any order; :data:`DRAM` is implied beyond them).
        tolerance: a point joins the current plateau while its rate lies within this factor of the
            plateau's median (> 1).
        min_points: runs with fewer points are transitions between plateaus, not plateaus; a run at
            (a quick sweep measures one or two points per level: pass 1 there).

    Returns:
        The plateaus. Runs of points within ``tolerance`` are found on the median-of-three filtered curve (a
        single disturbed point neither breaks nor makes a plateau), adjacent runs of one rate merged. The last
        run is DRAM when its smallest working set exceeds every capacity, or its largest exceeds them by
        :data:`DRAM_SPAN` (no cache's plateau reaches that far: a run that does began in the transition to
        DRAM, as where a VM gets part of a host's L3, or shows a last cache as fast as DRAM, which then gets
        no plateau); the other runs beyond every capacity are the transition to it (a working set a little
        larger than the last cache still hits it in part). The others are named in order by the documented
        levels, each level at most once, by the assignment that puts every named run's edge nearest its
        level's capacity (:func:`_match`). A run left unnamed (the gradual transition between two levels, a
        disturbed stretch, a level the documentation does not list) is no plateau where it starts within
        :data:`TRANSITION_SPAN` of the capacity of the level below (the transition); else it joins the next
        named run, whose level holds it. A plateau's rate is the median of its points' measured rates.

    Raises:
        ValueError: ``tolerance`` not above 1, or ``min_points`` below 1.
    """
    if not tolerance > 1.0:
        raise ValueError(f"tolerance must be above 1, not {tolerance!r}")
    if min_points < 1:
        raise ValueError(f"min_points must be at least 1, not {min_points!r}")
    pts = sorted((int(w), float(g)) for w, g in points if g > 0 and w > 0)
    if not pts:
        return []
    ws = [float(w) for w, _g in pts]
    raw = [math.log(g) for _w, g in pts]
    # each point's rate as the median of itself and its neighbours: one disturbed point neither
    # breaks a plateau nor makes one; the plateaus' rates below are medians of the measured ones
    ys = [statistics.median(raw[max(0, i - 1) : i + 2]) if len(raw) >= 3 else raw[i] for i in range(len(raw))]
    merged = _runs(ys, math.log(tolerance), min_points)
    caches = sorted(levels, key=lambda lv: lv.capacity)
    edges = _edges(ws, ys, merged)
    out: List[Plateau] = []
    for name, cap, ks in _named_groups(pts, merged, edges, caches):
        members = [i for k in ks for i in range(*merged[k])]
        out.append(
            Plateau(
                name,
                math.exp(statistics.median(raw[i] for i in members)),
                pts[merged[ks[0]][0]][0],
                pts[merged[ks[-1]][1] - 1][0],
                edges[ks[-1]],
                len(members),
                cap,
                tuple(pts[i][0] for i in members),
            )
        )
    return out


def _runs(ys: Sequence[float], tol: float, min_points: int) -> List[Tuple[int, int]]:
    """The runs [a, b) of at least ``min_points`` points of the filtered log-bandwidths ``ys``
    (:func:`_segments`), neighbours of one bandwidth (within ``tol``) merged: a transition point
    between two halves of one plateau does not split it."""
    merged: List[Tuple[int, int]] = []
    for r in (r for r in _segments(ys, tol) if r[1] - r[0] >= min_points):
        if (
            merged
            and abs(statistics.median(ys[r[0] : r[1]]) - statistics.median(ys[merged[-1][0] : merged[-1][1]])) <= tol
        ):
            merged[-1] = (merged[-1][0], r[1])
        else:
            merged.append(r)
    return merged


def _edges(ws: Sequence[float], ys: Sequence[float], merged: Sequence[Tuple[int, int]]) -> List[Optional[float]]:
    """Each run's edge (:func:`_edge`: where the curve crosses halfway to the next run's rate), bytes;
    None for the last run."""
    edges: List[Optional[float]] = []
    for k, (a, b) in enumerate(merged):
        if k + 1 < len(merged):
            nxt = merged[k + 1]
            edges.append(
                _edge(ws, ys, b - 1, nxt[0], (statistics.median(ys[a:b]) + statistics.median(ys[nxt[0] : nxt[1]])) / 2)
            )
        else:
            edges.append(None)
    return edges


def _named_groups(
    pts: Sequence[Tuple[int, float]],
    merged: Sequence[Tuple[int, int]],
    edges: Sequence[Optional[float]],
    caches: Sequence[Level],
) -> List[Tuple[str, Optional[int], List[int]]]:
    """The runs grouped into plateaus (:func:`find_plateaus`' rules): (level, capacity or None for
    DRAM, run indices), smallest working set first. ``caches`` ascending by capacity."""
    top = caches[-1].capacity if caches else 0
    # the last run reaching past every cache by DRAM_SPAN is DRAM wherever it starts (see above)
    last_is_dram = bool(merged) and pts[merged[-1][1] - 1][0] > DRAM_SPAN * top
    in_cache = [
        k for k, (a, _b) in enumerate(merged) if pts[a][0] <= top and not (last_is_dram and k == len(merged) - 1)
    ]
    match = _match([(pts[merged[k][0]][0], edges[k]) for k in in_cache], caches)
    groups: List[Tuple[str, Optional[int], List[int]]] = []  # (level, capacity, run indices)
    pending: List[int] = []
    for pos, k in enumerate(in_cache):
        j = match[pos]
        if j is None:
            pending.append(k)
            continue
        # unnamed runs before a named one: the transition from the level below when they start
        # within TRANSITION_SPAN of its capacity (no plateau), else part of this level
        below = groups[-1][1] if groups else None
        joined = [r for r in pending if below is None or pts[merged[r][0]][0] > TRANSITION_SPAN * below]
        groups.append((caches[j].name, caches[j].capacity, joined + [k]))
        pending = []
    beyond = [k for k in range(len(merged)) if k not in in_cache]
    if beyond:  # the last run is DRAM; runs before it beyond the caches are the transition to it
        groups.append((DRAM, None, beyond[-1:]))
    return groups


#: What leaving a plateau unnamed costs in :func:`_match`, in octaves between an edge and a capacity:
#: a plateau is named by a level whose capacity lies within two octaves of its edge rather than left
#: out, and left out when naming it would push a better match off.
_SKIP_OCTAVES = 2.0


def _match(runs: Sequence[Tuple[int, Optional[float]]], caches: Sequence[Level]) -> List[Optional[int]]:
    """For each run (smallest working set, edge), the index of the cache level it is named by, or
    None: the order-preserving assignment (each level at most once) that minimises the sum of
    |log2(edge / capacity)| over named runs plus :data:`_SKIP_OCTAVES` per run left unnamed (a level
    left unused costs nothing: the curve may not show it). A run is named only by a level that holds
    its smallest working set; the last run, which has no edge, costs nothing to name."""
    inf = float("inf")
    m, k = len(runs), len(caches)

    def cost(i: int, j: int) -> float:
        lo, edge = runs[i]
        if lo > caches[j].capacity:
            return inf
        return 0.0 if edge is None else abs(math.log2(edge / caches[j].capacity))

    best = [[inf] * (k + 1) for _ in range(m + 1)]
    step: List[List[Tuple[int, int, Optional[int]]]] = [[(0, 0, None)] * (k + 1) for _ in range(m + 1)]
    for j in range(k + 1):
        best[0][j] = 0.0
    for i in range(1, m + 1):
        for j in range(k + 1):
            options: List[Tuple[float, Tuple[int, int, Optional[int]]]] = [
                (best[i - 1][j] + _SKIP_OCTAVES, (i - 1, j, None))
            ]
            if j > 0:
                options.append((best[i][j - 1], (i, j - 1, None)))
                options.append((best[i - 1][j - 1] + cost(i - 1, j - 1), (i - 1, j - 1, j - 1)))
            best[i][j], step[i][j] = min(options, key=lambda o: o[0])
    out: List[Optional[int]] = [None] * m
    i, j = m, k
    while i > 0:
        pi, pj, level = step[i][j]
        if pi == i - 1:
            out[i - 1] = level
        i, j = pi, pj
    return out
