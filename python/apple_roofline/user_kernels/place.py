"""Each dot against the measured ceilings: the roof of its precision, its level's bandwidth, which
of them binds it, and the speedup left below that ceiling (docs/design.md, "Your kernels on the
roofline").

At intensity ``I`` a dot at level L in precision p can reach ``min(P, B_L × I)``: ``P`` the highest
measured compute ceiling of p (:func:`~apple_roofline.roofline.roofs.roof_for`; a vector one, not a
GEMM's, for a profiled kernel whose FLOPs are FMA-pipe instructions; the model's peak for a dot of
unknown precision), ``B_L`` the measured bandwidth of L (DRAM's for DRAM, the
hierarchy suite's ``"L2 bandwidth"`` for L2 ...). The smaller of the two binds the dot; the
speedup left is that attainable rate over the dot's own. Where the run measured no ceiling of the
dot's precision or level, nothing binds it and the placement says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

from ..suites.hierarchy.levels import level_ceiling_name
from ..roofline.model import RooflineModel
from ..roofline.records import Ceiling
from ..roofline.roofs import roof_for
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
        binding: the one of the two that bounds it at its intensity, or None without both.
        attainable: ``min(roof, bandwidth × intensity)`` in GFLOP/s, or None.
        note: why nothing binds it ("" when something does).
    """

    dot: KernelDot
    share: float
    roof: Optional[Ceiling]
    bandwidth: Optional[Ceiling]
    binding: Optional[Ceiling]
    attainable: Optional[float]
    note: str = ""

    @property
    def fraction(self) -> Optional[float]:
        """The dot's GFLOP/s over the attainable (a fraction; above 1 for a dot above the
        measured ceiling), or None."""
        return self.dot.gflops / self.attainable if self.attainable else None

    @property
    def speedup(self) -> Optional[float]:
        """How many times faster the kernel could run below the ceiling that binds it
        (attainable / achieved; below 1 for a dot above it), or None."""
        return self.attainable / self.dot.gflops if self.attainable else None

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
    return next((c for c in model.ceilings if c.kind == "bandwidth" and c.source == "measured" and c.name == name), None)


def place(model: RooflineModel, kernels: KernelSet) -> List[Placement]:
    """Every dot of ``kernels`` on ``model``'s measured ceilings (module docstring), in the set's
    order."""
    shares = kernels.shares()
    out: List[Placement] = []
    for d in kernels.dots:
        if d.precision is not None:
            roof = roof_for(model.ceilings, d.precision, "measured", scalar=d.pipe == "fma")
        else:
            roof = model.peak("measured") if model.has("compute", "measured") else None
        bw = level_bandwidth(model, d.level)
        missing = []
        if roof is None:
            missing.append(f"no measured {d.precision.upper() if d.precision else 'compute'} ceiling")
        if bw is None:
            missing.append(f"no measured {d.level} bandwidth ceiling" + ("" if d.level == "DRAM" else
                                                                          " (the hierarchy suite measures it)"))
        if roof is None or bw is None:
            out.append(Placement(d, shares.get(d.kernel, 0.0), roof, bw, None, None, "; ".join(missing)))
            continue
        memory = bw.value * d.intensity
        binding = bw if memory < roof.value else roof
        out.append(Placement(d, shares.get(d.kernel, 0.0), roof, bw, binding, min(memory, roof.value)))
    return out
