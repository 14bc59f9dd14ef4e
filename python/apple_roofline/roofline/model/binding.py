"""The one roof that binds a point: every view's verdict on a measurement, a point or a kernel.

A kernel of arithmetic intensity ``I`` FLOP/byte can reach at most ``min(B_L * I, P)`` GFLOP/s
(Williams, Waterman and Patterson 2009), where ``P`` is the compute ceiling of its own kind and
``B_L`` the bandwidth of the memory level its working set lives in (the cache-aware roofline, Ilic,
Pratas and Sousa 2014). The ceiling that gives the minimum binds it; the share of the roof it
reaches is its GFLOP/s over that attainable rate. docs/design/model.md, "One roof per point", states the
rules; in short:

* ``P``: the ceiling of the class the kernel is judged against where the run has it (a peak kernel
  under its own, a sweep kernel under the vector or scalar ceiling its chains run on: the suite's
  :attr:`~apple_roofline.suites.registry.SuiteSpec.roof_class`), else the highest ceiling of its
  precision and pipe (:func:`~.roofs.roof_for`: an FMA kernel under the FMA pipes' ceiling, a matrix
  kernel under the matrix units'), else the source's highest.
* ``B_L``: the level whose working-set range holds the working set, where one is known; DRAM's
  otherwise. A point above that level's roof is judged against the next faster level whose roof
  holds it and reads "consistent with L2-resident data"; bytes counted at a level (a profiler's) are
  held to that level alone.
* Above every roof (its compute ceiling, or the fastest level's bandwidth) a point is flagged with
  what that means (FLOPs over-counted, bytes under-counted, time wrong) and shows no share: no share
  above 100 % reaches a user.

Each source (measured, theoretical) has its own roofs; a point is judged against one of them
(:func:`judged_source`: the measured roofs where the run has a measured compute ceiling and
bandwidth, else the theoretical ones), so every view names one binding roof.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from ...study.records import WORKING_SET, Ceiling, Measurement
from ...suites.registry import roof_class
from ...text import percent, sig_figs
from .roofs import precision_of_dtype, roof_for

__all__ = [
    "Binding",
    "DRAM",
    "SOURCES",
    "binding",
    "compute_roof",
    "dram_bandwidth",
    "judge",
    "judged_source",
    "level_name",
    "level_roofs",
]

#: The level of the bandwidth ceiling that is no cache level's.
DRAM = "DRAM"
#: The ceilings' sources.
SOURCES: Tuple[str, ...] = ("measured", "theoretical")
_MEMORY_BOUND = "memory-bound"
_COMPUTE_BOUND = "compute-bound"


@dataclass(frozen=True)
class Binding:
    """The roof over one point in one source.

    Attributes:
        source: ``"measured"`` or ``"theoretical"``: the roofs it was judged against.
        gflops: the point's GFLOP/s.
        intensity: its arithmetic intensity, FLOP/byte (> 0).
        compute: the compute ceiling of its kind (the roof's flat part).
        bandwidth: the bandwidth of the level it is judged at (the roof's slope), GB/s.
        level: that level's name (``"DRAM"``, ``"L2"``, ``"L1d"``, ``"Shared memory"`` ...).
        ceiling: the one of the two that gives the lower roof at ``intensity``.
        attainable: ``min(bandwidth * intensity, compute)`` in GFLOP/s.
        reading: ``""``, or what a level other than the expected one means
            (``"consistent with L2-resident data"``).
        above: ``""``, or why the point lies above every roof (then it has no share).
    """

    source: str
    gflops: float
    intensity: float
    compute: Ceiling
    bandwidth: Ceiling
    level: str
    ceiling: Ceiling
    attainable: float
    reading: str = ""
    above: str = ""

    @property
    def fraction(self) -> Optional[float]:
        """The point's GFLOP/s over ``attainable`` (1.0 = on the roof, never above), or None for a point
        above every roof (:attr:`above`)."""
        return None if self.above else self.gflops / self.attainable

    @property
    def bound(self) -> str:
        """``"memory-bound"`` where the bandwidth gives the lower roof, else ``"compute-bound"``."""
        return _MEMORY_BOUND if self.ceiling.kind == "bandwidth" else _COMPUTE_BOUND

    @property
    def share_text(self) -> str:
        """``"93.1 %"``, or ``"-"`` for a point above every roof."""
        fraction = self.fraction
        return percent(fraction) if fraction is not None else "-"

    @property
    def verdict(self) -> str:
        """``"memory-bound"``, ``"compute-bound; consistent with L2-resident data"`` or
        ``"above every roof: ..."``: the bound and what the level or the flag says."""
        if self.above:
            return self.above
        return self.bound + (f"; {self.reading}" if self.reading else "")

    @property
    def text(self) -> str:
        """``"bound by DRAM bandwidth (measured): 812 GFLOP/s here; reaches 93.1 %"``, with the reading
        after it, or the flag alone for a point above every roof."""
        if self.above:
            return self.above
        return (
            f"bound by {self.ceiling.name} ({self.source}): {sig_figs(self.attainable)} GFLOP/s here; "
            f"reaches {self.share_text}" + (f"; {self.reading}" if self.reading else "")
        )


def level_name(c: Ceiling) -> str:
    """The memory level of a bandwidth ceiling: ``"L2"`` for ``"L2 bandwidth"``; DRAM for one that is
    no cache level's."""
    if not c.is_level:
        return DRAM
    return c.name[: -len(" bandwidth")] if c.name.endswith(" bandwidth") else c.name


def dram_bandwidth(ceilings: Sequence[Ceiling], source: str) -> Optional[Ceiling]:
    """The highest bandwidth ceiling of ``source`` that is no cache level (DRAM's), else the measured
    one, else None."""
    for src in (source, "measured"):
        found = [c for c in ceilings if c.kind == "bandwidth" and c.source == src and not c.is_level]
        if found:
            return max(found, key=lambda c: c.value)
    return None


def level_roofs(ceilings: Sequence[Ceiling], source: str) -> List[Ceiling]:
    """The bandwidth roofs of ``source``, slowest first: DRAM's (:func:`dram_bandwidth`), then every
    cache level faster than it (a level no faster than DRAM cannot hold data DRAM's roof does not)."""
    dram = dram_bandwidth(ceilings, source)
    levels = [c for c in ceilings if c.kind == "bandwidth" and c.source == source and c.is_level]
    if dram is not None:
        levels = [c for c in levels if c.value > dram.value]
    return ([dram] if dram is not None else []) + sorted(levels, key=lambda c: c.value)


def compute_roof(
    ceilings: Sequence[Ceiling],
    source: str,
    *,
    ceiling_class: Optional[str] = None,
    precision: Optional[str] = None,
    pipe: Optional[str] = None,
    fallback: bool = True,
) -> Optional[Ceiling]:
    """The compute ceiling of ``source`` a kernel is judged against: the one named ``ceiling_class``
    where ``source`` has it; else the highest of ``precision`` (:func:`~.roofs.roof_for`; ``pipe``
    ``"fma"``: the FMA pipes' ceilings, ``"tensor"``: the matrix units' where the precision has one);
    else (a kernel of unknown precision, or with ``fallback`` one of a precision ``source`` has no
    ceiling of) the highest of ``source``; None where there is none."""
    compute = [c for c in ceilings if c.kind == "compute" and c.source == source]
    own = [c for c in compute if ceiling_class is not None and c.name == ceiling_class]
    if own:
        return own[0]
    if precision is not None:
        found = roof_for(compute, precision, source, scalar=pipe == "fma", matrix=pipe == "tensor")
        if found is not None or not fallback:
            return found
    return max(compute, key=lambda c: c.value) if compute else None


def _start_level(roofs: Sequence[Ceiling], working_set: Optional[float]) -> int:
    """The index in ``roofs`` of the level a point's data is expected in: the innermost level whose
    working-set range holds ``working_set``; DRAM's otherwise."""
    if working_set is not None:
        holding = [
            (c.working_set[1], i)
            for i, c in enumerate(roofs)
            if c.working_set is not None and c.working_set[0] <= working_set <= c.working_set[1]
        ]
        if holding:
            return min(holding)[1]
    return 0


def _named_level(ceilings: Sequence[Ceiling], source: str, level: str) -> List[Ceiling]:
    """The bandwidth ceiling of ``level`` in ``source`` (DRAM's, or ``"<level> bandwidth"``), as a list
    of at most one."""
    if level == DRAM:
        dram = dram_bandwidth(ceilings, source)
        return [dram] if dram is not None else []
    name = f"{level} bandwidth"
    return [c for c in ceilings if c.kind == "bandwidth" and c.source == source and c.name == name][:1]


def _above(gflops: float, intensity: float, compute: Ceiling, top: Ceiling, source: str) -> str:
    if gflops > compute.value:
        return (
            f"above every roof: {sig_figs(gflops)} GFLOP/s over the {source} {compute.name} ceiling "
            f"({sig_figs(compute.value)}): FLOPs over-counted, time wrong, or the ceiling under-measured"
        )
    where = "the only bandwidth this run has" if level_name(top) == DRAM else "its fastest level"
    return (
        f"above every roof: {sig_figs(gflops)} GFLOP/s over the {source} {top.name} roof "
        f"({sig_figs(top.value * intensity)} GFLOP/s at {sig_figs(intensity)} FLOP/B, {where}): "
        "bytes under-counted or time wrong"
    )


def judge(
    ceilings: Sequence[Ceiling],
    source: str,
    *,
    gflops: float,
    intensity: float,
    compute: Optional[Ceiling],
    working_set: Optional[float] = None,
    level: Optional[str] = None,
) -> Optional[Binding]:
    """The roof over a point of ``gflops`` GFLOP/s at ``intensity`` FLOP/byte in ``source`` (module
    docstring): ``compute`` (its kind's ceiling, :func:`compute_roof`) against the bandwidth of the
    level that holds ``working_set`` bytes (DRAM's when None), or of the named ``level`` alone (bytes
    counted there). None without a compute ceiling, without a bandwidth of the level, or for a point
    without FLOPs (``intensity`` <= 0: no place on the roofline).

    Raises:
        ValueError: an unknown ``source``.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be 'measured' or 'theoretical', not {source!r}")
    if level is not None:
        candidates = _named_level(ceilings, source, level)
    else:
        roofs = level_roofs(ceilings, source)
        candidates = roofs[_start_level(roofs, working_set) :]
    if compute is None or not candidates or not intensity > 0:
        return None
    for i, bw in enumerate(candidates):
        slope = bw.value * intensity
        attainable = min(slope, compute.value)
        if gflops <= attainable:
            bound = bw if slope < compute.value else compute
            reading = f"consistent with {level_name(bw)}-resident data" if i > 0 else ""
            name = level if level is not None else level_name(bw)
            return Binding(source, gflops, intensity, compute, bw, name, bound, attainable, reading)
    top = candidates[-1]
    slope = top.value * intensity
    bound = top if slope < compute.value else compute
    above = _above(gflops, intensity, compute, top, source)
    name = level if level is not None else level_name(top)
    return Binding(source, gflops, intensity, compute, top, name, bound, min(slope, compute.value), "", above)


def judged_source(ceilings: Sequence[Ceiling]) -> str:
    """The source a point is judged in: ``"measured"`` where ``ceilings`` have a measured compute ceiling
    and a measured bandwidth, else ``"theoretical"``."""
    kinds = {c.kind for c in ceilings if c.source == "measured"}
    return "measured" if {"compute", "bandwidth"} <= kinds else "theoretical"


def binding(m: Measurement, ceilings: Sequence[Ceiling], source: Optional[str] = None) -> Optional[Binding]:
    """The roof over measurement ``m`` among a run's ``ceilings`` in ``source`` (default
    :func:`judged_source`): its kind's compute ceiling (the class its suite judges it against,
    :func:`~apple_roofline.suites.registry.roof_class`, else its precision's) and the level of its
    working set (its ``working_set_bytes`` parameter; DRAM's without one); None as :func:`judge`.

    Raises:
        ValueError: an unknown ``source``.
    """
    src = source if source is not None else judged_source(ceilings)
    if src not in SOURCES:
        raise ValueError(f"source must be 'measured' or 'theoretical', not {src!r}")
    if m.flops <= 0:
        return None
    compute = compute_roof(ceilings, src, ceiling_class=roof_class(m), precision=precision_of_dtype(m.dtype))
    ws = m.params.get(WORKING_SET)
    working_set = float(ws) if isinstance(ws, (int, float)) and not isinstance(ws, bool) else None
    return judge(ceilings, src, gflops=m.gflops, intensity=m.intensity, compute=compute, working_set=working_set)
