"""The access-pattern section's table (docs/design/rules.md, "The access-pattern rules"): effective GB/s
by level, load width and stride, and the rules' effects as sentences.

Returns None when the run has no measurement of the suite, so its section appears only in runs
that measured it. Every ratio is of medians of valid measurements; an invalid one is shown with
``**NO**`` and no ratio is formed with it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ...roofline.model.run import Run
from ...roofline.views.rule_suites import of_suite, ratio_text
from ...study.records import Measurement
from ...study.table import Table
from ...text import DASH, sig_figs

__all__ = ["ACCESS_SUITE", "access_table", "access_rules"]

#: The suite whose measurements the table shows.
ACCESS_SUITE = "access"


def _access_rates(ms: Sequence[Measurement]) -> Dict[Tuple[str, str, int], float]:
    """Valid GB/s by (level, kernel, stride)."""
    return {
        (str(m.params.get("level")), m.kernel, int(m.params.get("stride", 0))): m.gbps
        for m in ms
        if m.valid and m.gbps > 0
    }


def access_rules(run: Run) -> List[str]:
    """The rules' effects as sentences, per level: the vector loads over the scalar one at stride 1,
    and stride S over stride 1 for the scalar kernel (e.g. "dram: vec4 loads 1.9× scalar")."""
    rates = _access_rates(of_suite(run, ACCESS_SUITE))
    out: List[str] = []
    for level in dict.fromkeys(k[0] for k in rates):
        base = rates.get((level, "scalar", 1))
        if base is None:
            continue
        widths = [
            f"{k} loads {rates[(level, k, 1)] / base:.2f}× scalar" for k in ("vec2", "vec4") if (level, k, 1) in rates
        ]
        strides = sorted(s for (lv, k, s) in rates if lv == level and k == "scalar" and s > 1)
        worst = strides[-1] if strides else None
        parts = widths[:]
        if worst is not None:
            parts.append(f"scalar stride {worst} reaches {rates[(level, 'scalar', worst)] / base:.3g}× stride 1")
        if parts:
            out.append(f"{level} ({sig_figs(base)} GB/s scalar, stride 1): " + "; ".join(parts) + ".")
    return out


def access_table(run: Run) -> Optional[Table]:
    """Effective GB/s of every access kernel by level and stride, and each over the scalar kernel at
    stride 1 of its level. Columns: level, array bytes, kernel, stride, GB/s, × scalar stride 1, valid."""
    ms = of_suite(run, ACCESS_SUITE)
    if not ms:
        return None
    rates = _access_rates(ms)
    rows: List[Tuple[str, ...]] = []
    for m in ms:
        level = str(m.params.get("level", DASH))
        stride = int(m.params.get("stride", 0))
        base = rates.get((level, "scalar", 1))
        rel = ratio_text(m.gbps, base) if m.valid else DASH
        mib = int(m.params.get("array_bytes", 0)) / 2**20
        rows.append(
            (
                level,
                f"{mib:g} MiB",
                m.kernel,
                str(stride),
                sig_figs(m.gbps) if m.valid else DASH,
                rel,
                "yes" if m.valid else "**NO**",
            )
        )
    notes = (
        "Effective GB/s = compulsory bytes (each element read once and written once) / median time. "
        "Stride S: adjacent work items read elements S apart, every element read once (a transposed "
        "read); widths are 32-bit words per load (scalar, vec2, vec4). × scalar = GB/s over the scalar "
        "kernel's at stride 1 of the same level.",
    ) + tuple(access_rules(run))
    return Table(
        ("Level", "Array", "Kernel", "Stride", "GB/s", "× scalar stride 1", "Valid"), tuple(rows), "lrlrrrl", notes
    )
