"""Each dot against the measured ceilings: the roof of its precision, its level's bandwidth, which
of them binds it, and the speedup left below that ceiling (docs/design/model.md, "Your kernels on the
roofline").

At intensity ``I`` a dot at level L in precision p can reach ``min(P, B_L × I)``: ``P`` the highest
measured compute ceiling of p (:func:`~apple_roofline.roofline.model.roofs.roof_for`; a vector one, not a
GEMM's, for a profiled kernel whose FLOPs are FMA-pipe instructions; the model's peak for a dot of
unknown precision), ``B_L`` the measured bandwidth of L (DRAM's for DRAM, the
hierarchy suite's ``"L2 bandwidth"`` for L2 ...). The smaller of the two binds the dot; the
speedup left is that attainable rate over the dot's own (:mod:`~apple_roofline.roofline.model.binding`, the
one verdict every view gives). A dot above every roof has no share and no speedup, and says why.
Where the run measured no ceiling of the dot's precision or level, nothing binds it and the placement
says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ..roofline.model.binding import Binding, compute_roof, judge
from ..roofline.model.model import RooflineModel
from ..study.records import Ceiling, level_ceiling_name
from .model import KernelDot, KernelSet

__all__ = ["Placement", "place", "level_bandwidth"]


@dataclass(frozen=True)
class Placement:
    """A dot on a roofline.

    Attributes:
        dot: the dot.
        share: its kernel's share of the file's kernel time (0 to 1).
        roof: the compute ceiling of its precision (GFLOP/s), or None.
        bandwidth: its level's measured bandwidth ceiling (GB/s), or None.
        judged: the one roof that binds it (:func:`~apple_roofline.roofline.model.binding.judge`), or None
            without both ceilings.
        note: why nothing binds it ("" when something does).
    """

    dot: KernelDot
    share: float
    roof: Optional[Ceiling]
    bandwidth: Optional[Ceiling]
    judged: Optional[Binding]
    note: str = ""

    @property
    def binding(self) -> Optional[Ceiling]:
        """The ceiling that gives the lower roof at its intensity, or None without both."""
        return self.judged.ceiling if self.judged is not None else None

    @property
    def attainable(self) -> Optional[float]:
        """``min(roof, bandwidth × intensity)`` in GFLOP/s, or None."""
        return self.judged.attainable if self.judged is not None else None

    @property
    def above(self) -> str:
        """Why the dot lies above every roof (then it has no share and no speedup), or ""."""
        return self.judged.above if self.judged is not None else ""

    @property
    def fraction(self) -> Optional[float]:
        """The dot's GFLOP/s over the attainable (a fraction, never above 1), or None (nothing binds
        it, or it lies above every roof: :attr:`above`)."""
        return self.judged.fraction if self.judged is not None else None

    @property
    def speedup(self) -> Optional[float]:
        """How many times faster the kernel could run below the ceiling that binds it
        (attainable / achieved, >= 1), or None (as :attr:`fraction`)."""
        fraction = self.fraction
        return 1.0 / fraction if fraction else None

    @property
    def bound(self) -> str:
        """``"<ceiling> (<bandwidth|compute>)"`` of the binding ceiling, or ``"-"``."""
        return f"{self.binding.name} ({self.binding.kind})" if self.binding is not None else "-"


def level_bandwidth(model: RooflineModel, level: str) -> Optional[Ceiling]:
    """The measured bandwidth ceiling of ``level``: DRAM's (the model's default bandwidth) for
    ``"DRAM"``, the level ceiling ``"<level> bandwidth"`` otherwise; None when not measured."""
    if level == "DRAM":
        return model.bandwidth("measured") if model.has("bandwidth", "measured") else None
    name = level_ceiling_name(level)
    return next(
        (c for c in model.ceilings if c.kind == "bandwidth" and c.source == "measured" and c.name == name), None
    )


def _missing(d: KernelDot, roof: Optional[Ceiling], bw: Optional[Ceiling]) -> str:
    missing = []
    if roof is None:
        missing.append(f"no measured {d.precision.upper() if d.precision else 'compute'} ceiling")
    if bw is None:
        missing.append(
            f"no measured {d.level} bandwidth ceiling"
            + ("" if d.level == "DRAM" else " (the hierarchy suite measures it)")
        )
    return "; ".join(missing)


def place(model: RooflineModel, kernels: KernelSet) -> List[Placement]:
    """Every dot of ``kernels`` on ``model``'s measured ceilings (module docstring), in the set's
    order. A profiled dot (bytes counted at its level) and a dot of a cache level are held to their
    level's roof alone; a measured DRAM dot (compulsory bytes) above the DRAM roof is judged against
    the cache level whose roof holds it."""
    shares = kernels.shares()
    out: List[Placement] = []
    for d in kernels.dots:
        roof = compute_roof(model.ceilings, "measured", precision=d.precision, pipe=d.pipe, fallback=False)
        bw = level_bandwidth(model, d.level)
        share = shares.get(d.kernel, 0.0)
        if roof is None or bw is None:
            out.append(Placement(d, share, roof, bw, None, _missing(d, roof, bw)))
            continue
        judged = judge(
            model.ceilings,
            "measured",
            gflops=d.gflops,
            intensity=d.intensity,
            compute=roof,
            working_set=d.working_set,
            level=d.level if d.source == "ncu" or d.level != "DRAM" else None,
        )
        out.append(Placement(d, share, roof, bw, judged))
    return out


def dot_gid(index: int) -> str:
    """The gid of ``placements[index]``'s marker."""
    return f"kernel:{index}"


def speedup_text(p: Placement, *, short: bool = False) -> str:
    """``"×2.3 left below L2 bandwidth"``, ``"at L2 bandwidth"``, ``"consistent with L2-resident data"``
    after either, why the dot lies above every roof (``short``: ``"above every roof"``, for a figure's
    label), or why nothing binds it."""
    if p.above:
        return "above every roof" if short else p.above
    if p.binding is None or p.speedup is None:
        return p.note or "not bound"
    reading = f"; {p.judged.reading}" if p.judged is not None and p.judged.reading else ""
    if p.speedup < 1.005:
        return f"at {p.binding.name}{reading}"
    return f"×{p.speedup:.3g} left below {p.binding.name}{reading}"
