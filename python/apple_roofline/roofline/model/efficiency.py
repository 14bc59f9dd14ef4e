"""Energy efficiency at the measured ceilings (docs/design/power.md, "Clocks and power"): the measurement
that set each measured ceiling (the best usable one of its class, as :func:`~.model.derive_ceilings`
chooses) and, where its timed samples had power, its watts and its GFLOP/s or GB/s per watt —
the efficiency table of the M5 article. Derived on reading, never stored; the plots' labels and the
``compare`` table read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from ...study.records import Measurement

__all__ = ["CeilingEfficiency", "ceiling_measurements", "ceiling_efficiency", "per_watt_text"]


@dataclass(frozen=True)
class CeilingEfficiency:
    """One measured ceiling's efficiency: ``name`` (its class), ``kind`` ("bandwidth" or
    "compute"), ``rate`` (GB/s or GFLOP/s, the median), ``unit``, ``watts`` (mean power over its
    timed samples) and ``per_watt`` (rate / watts, in ``unit`` per W)."""

    name: str
    kind: str
    rate: float
    unit: str
    watts: float
    per_watt: float


def ceiling_measurements(measurements: Sequence[Measurement]) -> Dict[str, Measurement]:
    """Class name -> the usable measurement (valid and within its physical limit) that sets its
    measured ceiling: the highest median GB/s (bandwidth classes) or GFLOP/s (compute classes), the
    first one on a tie."""
    best: Dict[str, Measurement] = {}
    for m in measurements:
        if not m.usable or m.ceiling_class is None or m.ceiling_kind is None:
            continue
        rate = m.gbps if m.ceiling_kind == "bandwidth" else m.gflops
        prev = best.get(m.ceiling_class)
        if prev is None or rate > (prev.gbps if m.ceiling_kind == "bandwidth" else prev.gflops):
            best[m.ceiling_class] = m
    return best


def ceiling_efficiency(measurements: Sequence[Measurement]) -> List[CeilingEfficiency]:
    """The efficiency of every measured ceiling whose measurement has power, bandwidths first, each
    kind by descending rate; empty when no ceiling's measurement had power."""
    out: List[CeilingEfficiency] = []
    for name, m in ceiling_measurements(measurements).items():
        w = m.power_w
        if w is None or w <= 0:
            continue
        bw = m.ceiling_kind == "bandwidth"
        rate = m.gbps if bw else m.gflops
        out.append(
            CeilingEfficiency(name, "bandwidth" if bw else "compute", rate, "GB/s" if bw else "GFLOP/s", w, rate / w)
        )
    out.sort(key=lambda e: (e.kind != "bandwidth", -e.rate))
    return out


def per_watt_text(e: Optional[CeilingEfficiency]) -> str:
    """``"12.3 GFLOP/s per W at 415 W"`` for a label; "" without one."""
    if e is None:
        return ""
    from ...text import sig_figs

    return f"{sig_figs(e.per_watt)} {e.unit} per W at {sig_figs(e.watts)} W"
