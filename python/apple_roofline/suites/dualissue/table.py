"""The dual-issue section's table (docs/design/rules.md, "Dual issue"): each pair's medians per work item
alone and mixed, their ratios and the verdict.

Returns None when the run has no measurement of the suite, so its section appears only in runs
that measured it. Every ratio is of medians of valid measurements; an invalid one is shown with
``**NO**`` and no ratio is formed with it.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ...roofline.model.run import Run
from ...roofline.views.rule_suites import of_suite
from ...study.records import Measurement
from ...study.table import Table
from ...text import DASH, sig_figs
from .kernels import DUAL_PAIRS

__all__ = ["DUALISSUE_SUITE", "dualissue_table", "dual_ratios", "DUAL_VERDICT_MAX", "DUAL_VERDICT_SUM", "dual_verdict"]

#: The suite whose measurements the table shows.
DUALISSUE_SUITE = "dualissue"
#: mixed / max(A, B) at or below this reads "issued together".
DUAL_VERDICT_MAX = 1.15
#: mixed / (A + B) at or above this reads "one at a time".
DUAL_VERDICT_SUM = 0.9


def dual_verdict(vs_max: float, vs_sum: float) -> str:
    """What the two ratios say: "issued together" (mixed within DUAL_VERDICT_MAX of the slower
    alone), "one at a time" (mixed at least DUAL_VERDICT_SUM of the sum), else "partly overlapped"."""
    if vs_max <= DUAL_VERDICT_MAX:
        return "issued together"
    if vs_sum >= DUAL_VERDICT_SUM:
        return "one at a time"
    return "partly overlapped"


def _per_item_s(m: Measurement) -> Optional[float]:
    """Median seconds per work item (a launch's work items differ between kernels: whole waves of
    each kernel's own occupancy), or None without a work-item count."""
    n = m.params.get("n")
    return m.median_s / int(n) if isinstance(n, int) and n > 0 else None


def dual_ratios(run: Run) -> List[Tuple[str, str, str, float, float, float]]:
    """Per measured pair (A, B, mixed): the median seconds per work item of A alone, B alone and
    mixed (every kernel does the same operations per work item as the docstring of
    :mod:`apple_roofline.suites.dualissue.kernels` says, while launches hold different numbers of
    work items), from valid measurements of the ``dualissue`` suite; pairs missing a kernel are left
    out."""
    t = {m.kernel: s for m in of_suite(run, DUALISSUE_SUITE) if m.valid for s in [_per_item_s(m)] if s is not None}
    return [(a, b, mix, t[a], t[b], t[mix]) for a, b, mix in DUAL_PAIRS if a in t and b in t and mix in t]


def dualissue_table(run: Run) -> Optional[Table]:
    """Each pair's medians per work item and ratios: columns pair, A alone, B alone, mixed (ns per work
    item), mixed / (A + B), mixed / max(A, B), verdict; then every kernel's rates by name."""
    ms = of_suite(run, DUALISSUE_SUITE)
    if not ms:
        return None
    rows: List[Tuple[str, ...]] = []
    for a, b, mix, ta, tb, tm in dual_ratios(run):
        rows.append(
            (
                f"{a.upper()} + {b.upper()}",
                sig_figs(ta * 1e9),
                sig_figs(tb * 1e9),
                sig_figs(tm * 1e9),
                f"{tm / (ta + tb):.3g}",
                f"{tm / max(ta, tb):.3g}",
                dual_verdict(tm / max(ta, tb), tm / (ta + tb)),
            )
        )
    rates = []
    for m in ms:
        n = int(m.params.get("n", 0))
        parts = []
        for key, unit in (("fp32_flops", "FP32 GFLOP/s"), ("fp16_flops", "FP16 GFLOP/s"), ("int_ops", "INT32 Gop/s")):
            per = int(m.params.get(key, 0))
            if per and m.valid and m.median_s > 0:
                parts.append(f"{sig_figs(per * n / m.median_s / 1e9)} {unit}")
        rates.append(
            f"{m.kernel}: "
            + (", ".join(parts) if parts else ("invalid" if not m.valid else DASH))
            + ("" if m.valid else " (**NO**: " + m.validation + ")")
        )
    notes = (
        f"Eight independent chains of each kind per work item, F = {ms[0].params.get('F', DASH)} steps each; a "
        f"mixed kernel runs exactly the operations of its two kernels alone, interleaved, so times are compared per "
        f"work item (median time per launch / work items: launches are whole waves of each kernel's own "
        f"occupancy). mixed / max(A, B) near 1: "
        f"the core issues both kinds together; mixed / (A + B) near 1: one at a time. Verdict: issued together "
        f"at mixed / max ≤ {DUAL_VERDICT_MAX}, one at a time at mixed / sum ≥ {DUAL_VERDICT_SUM}, else partly "
        f"overlapped. FLOPs per lane (an FMA is 2); integer adds are counted as integer operations.",
        "Rates: " + "; ".join(rates) + ".",
    )
    return Table(
        (
            "Pair",
            "A alone (ns/item)",
            "B alone (ns/item)",
            "Mixed (ns/item)",
            "Mixed / (A + B)",
            "Mixed / max(A, B)",
            "Verdict",
        ),
        tuple(rows),
        "lrrrrrl",
        notes,
    )
