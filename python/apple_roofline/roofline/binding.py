"""Which ceiling binds a measurement: the roof it sits under at its arithmetic intensity.

A kernel of intensity ``I`` FLOP/byte can reach at most ``min(B * I, P)`` GFLOP/s (Williams,
Waterman and Patterson 2009), where ``B`` is the DRAM bandwidth (the compulsory bytes of a
measurement are DRAM bytes, so DRAM's roof binds it, never a cache level's) and ``P`` the compute
ceiling of its own kind: the ceiling of its class where the run has one (a GEMM under its GEMM
ceiling, a peak kernel under its own), else the highest compute ceiling of its precision (an FP32
sweep under the best FP32 ceiling), else the highest of all. The ceiling that gives the minimum binds
it; the fraction is the measurement's GFLOP/s over that attainable rate. Each source (measured,
theoretical) has its own roof; a source without a DRAM bandwidth takes the measured one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ..text import percent, sig_figs
from .records import Ceiling, Measurement

__all__ = ["Binding", "binding", "dram_bandwidth"]


@dataclass(frozen=True)
class Binding:
    """The roof over one measurement in one source.

    Attributes:
        ceiling: the ceiling that binds it (a bandwidth: memory-bound; a compute ceiling: compute-bound).
        compute: the compute ceiling of its kind (the roof's flat part).
        bandwidth: the DRAM bandwidth (the roof's slope).
        attainable: ``min(bandwidth * intensity, compute)`` in GFLOP/s.
        fraction: the measurement's GFLOP/s / ``attainable`` (1.0 = on the roof).
    """

    ceiling: Ceiling
    compute: Ceiling
    bandwidth: Ceiling
    attainable: float
    fraction: float

    @property
    def text(self) -> str:
        """``"bound by DRAM bandwidth (measured): 812 GFLOP/s here; reaches 93 %"``."""
        return (f"bound by {self.ceiling.name} ({self.ceiling.source}): {sig_figs(self.attainable)} GFLOP/s here; "
                f"reaches {percent(self.fraction)}")


def dram_bandwidth(ceilings: Sequence[Ceiling], source: str) -> Optional[Ceiling]:
    """The highest bandwidth ceiling of ``source`` that is no cache level (DRAM's), else the measured
    one, else None."""
    for src in (source, "measured"):
        found = [c for c in ceilings if c.kind == "bandwidth" and c.source == src and not c.is_level]
        if found:
            return max(found, key=lambda c: c.value)
    return None


def _compute_of(m: Measurement, compute: Sequence[Ceiling]) -> Optional[Ceiling]:
    own = [c for c in compute if c.name == m.ceiling_class]
    dtype = m.dtype.upper()
    same = [c for c in compute if dtype in c.name.replace("→", " ").split()]
    for group in (own, same, list(compute)):
        if group:
            return max(group, key=lambda c: c.value)
    return None


def binding(m: Measurement, ceilings: Sequence[Ceiling], source: str) -> Optional[Binding]:
    """The roof over ``m`` in ``source`` (``"measured"`` or ``"theoretical"``), from ``ceilings``
    (a run's); None for a measurement without FLOPs (no intensity on the roofline) or where the
    source has no compute ceiling or no bandwidth is known.

    Raises:
        ValueError: an unknown ``source``.
    """
    if source not in ("measured", "theoretical"):
        raise ValueError(f"source must be 'measured' or 'theoretical', not {source!r}")
    compute = _compute_of(m, [c for c in ceilings if c.kind == "compute" and c.source == source])
    bandwidth = dram_bandwidth(ceilings, source)
    if m.flops <= 0 or compute is None or bandwidth is None:
        return None
    slope = bandwidth.value * m.intensity
    bound = bandwidth if slope < compute.value else compute
    attainable = min(slope, compute.value)
    return Binding(bound, compute, bandwidth, attainable, m.gflops / attainable)
