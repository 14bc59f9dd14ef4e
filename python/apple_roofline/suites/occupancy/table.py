"""The threadgroup-memory section's table (docs/design/rules.md, "Threadgroup memory and occupancy"): the
fixed kernel's GB/s against the threadgroup memory it declares, beside the optimization guide's table.

Returns None when the run has no measurement of the suite, so its section appears only in runs
that measured it. Every ratio is of medians of valid measurements; an invalid one is shown with
``**NO**`` and no ratio is formed with it.
"""

from __future__ import annotations

from typing import Optional, Tuple

from ...roofline.model.run import Run
from ...roofline.views.rule_suites import of_suite, ratio_text
from ...study.table import Table
from ...text import DASH, sig_figs

__all__ = ["OCCUPANCY_SUITE", "occupancy_table", "GUIDE_OCCUPANCY", "guide_row"]

#: The suite whose measurements the table shows.
OCCUPANCY_SUITE = "occupancy"
#: The optimization guide's "Occupancy Impact" table: threadgroup memory (KiB, upper bound of the
#: row) and its "approximate concurrent TGs per core".
GUIDE_OCCUPANCY: Tuple[Tuple[int, str], ...] = (
    (4, "high (limited by registers/threads)"),
    (8, "moderate"),
    (16, "reduced"),
    (32, "1 threadgroup per core"),
)


def guide_row(tg_bytes: int) -> str:
    """The guide's "approximate concurrent TGs per core" for ``tg_bytes`` of threadgroup memory: its
    row where the guide has one (≤ 4, 8, 16, 32 KB), "between" the two rows around a size between
    them, and "beyond" above 32 KiB (Apple's maximum)."""
    if tg_bytes <= GUIDE_OCCUPANCY[0][0] << 10:
        return GUIDE_OCCUPANCY[0][1]
    for (lo, lo_text), (hi, hi_text) in zip(GUIDE_OCCUPANCY, GUIDE_OCCUPANCY[1:]):
        if tg_bytes == hi << 10:
            return hi_text
        if lo << 10 < tg_bytes < hi << 10:
            return f"between {lo_text.split(' (')[0]} ({lo} KB) and {hi_text} ({hi} KB)"
    return "beyond the guide's table (over Apple's 32 KiB)"


def occupancy_table(run: Run) -> Optional[Table]:
    """GB/s of the fixed kernel against its threadgroup memory, beside the guide's table and what the
    device says (CUDA: resident blocks per SM from the occupancy calculator; Metal: the pipeline's
    maxTotalThreadsPerThreadgroup). Columns: threadgroup KiB, the guide's concurrent TGs per core,
    resident blocks per SM, max threads per threadgroup, GB/s, × no threadgroup memory, valid."""
    ms = sorted(of_suite(run, OCCUPANCY_SUITE), key=lambda m: int(m.params.get("threadgroup_bytes", 0)))
    if not ms:
        return None
    base = next((m.gbps for m in ms if m.valid and int(m.params.get("threadgroup_bytes", -1)) == 0), None)
    rows = []
    for m in ms:
        tg = int(m.params.get("threadgroup_bytes", 0))
        rows.append(
            (
                f"{tg / 1024:g}",
                guide_row(tg),
                str(m.params.get("resident_blocks_per_sm", DASH)),
                str(m.params.get("max_threads_per_threadgroup", DASH)),
                sig_figs(m.gbps) if m.valid else DASH,
                ratio_text(m.gbps, base) if m.valid else DASH,
                "yes" if m.valid else "**NO**",
            )
        )
    block = next((m.params.get("block") for m in ms if "block" in m.params), DASH)
    notes = (
        f"The fixed kernel: a float4 copy over the run's array size whose threads pass elements to their "
        f"neighbours through threadgroup memory, {block} threads per threadgroup; the threadgroup declares "
        f"the bytes in the first column (0: no threadgroup memory, the neighbour read directly). The guide's "
        f"column is its approximate table (concurrent threadgroups per Apple GPU core); resident blocks per SM "
        f"is CUDA's occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor) for this build; Metal "
        f"reports no resident count, only the pipeline's maxTotalThreadsPerThreadgroup.",
    )
    return Table(
        (
            "Threadgroup KiB",
            "Guide: concurrent TGs per core",
            "Resident blocks per SM",
            "Max threads per TG",
            "GB/s",
            "× 0 KiB",
            "Valid",
        ),
        tuple(rows),
        "llrrrrl",
        notes,
    )
