"""The report tables of the optimization guide's rules: access patterns (``access``), threadgroup
memory and occupancy (``occupancy``), dual issue (``dualissue``); docs/design.md, "The access-pattern
rules", "Threadgroup memory and occupancy", "Dual issue".

Each builder takes a run and returns None when the run has no measurement of its suite, so a
section appears only in runs that measured it. Every ratio is of medians of valid measurements; an
invalid one is shown with ``**NO**`` and no ratio is formed with it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..suites.dualissue_kernels import DUAL_PAIRS
from ..text import DASH, sig_figs
from .records import Measurement
from .run import Run
from .tables import Table

__all__ = ["RULE_SECTIONS", "access_table", "access_rules", "occupancy_table", "dualissue_table", "dual_ratios", "GUIDE_OCCUPANCY",
           "guide_row", "DUAL_VERDICT_MAX", "DUAL_VERDICT_SUM", "dual_verdict"]

#: The optimization guide's "Occupancy Impact" table: threadgroup memory (KiB, upper bound of the
#: row) and its "approximate concurrent TGs per core".
GUIDE_OCCUPANCY: Tuple[Tuple[int, str], ...] = (
    (4, "high (limited by registers/threads)"), (8, "moderate"), (16, "reduced"), (32, "1 threadgroup per core"),
)
#: mixed / max(A, B) at or below this reads "issued together".
DUAL_VERDICT_MAX = 1.15
#: mixed / (A + B) at or above this reads "one at a time".
DUAL_VERDICT_SUM = 0.9


def _of_suite(run: Run, suite: str) -> List[Measurement]:
    return [m for m in run.measurements if m.suite == suite]


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    return f"{a / b:.3g}×" if a is not None and b else DASH


# ---- access ----------------------------------------------------------------------------------------

def _access_rates(ms: Sequence[Measurement]) -> Dict[Tuple[str, str, int], float]:
    """Valid GB/s by (level, kernel, stride)."""
    return {(str(m.params.get("level")), m.kernel, int(m.params.get("stride", 0))): m.gbps
            for m in ms if m.valid and m.gbps > 0}


def access_rules(run: Run) -> List[str]:
    """The rules' effects as sentences, per level: the vector loads over the scalar one at stride 1,
    and stride S over stride 1 for the scalar kernel (e.g. "dram: vec4 loads 1.9× scalar")."""
    rates = _access_rates(_of_suite(run, "access"))
    out: List[str] = []
    for level in dict.fromkeys(k[0] for k in rates):
        base = rates.get((level, "scalar", 1))
        if base is None:
            continue
        widths = [f"{k} loads {rates[(level, k, 1)] / base:.2f}× scalar"
                  for k in ("vec2", "vec4") if (level, k, 1) in rates]
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
    ms = _of_suite(run, "access")
    if not ms:
        return None
    rates = _access_rates(ms)
    rows: List[Tuple[str, ...]] = []
    for m in ms:
        level = str(m.params.get("level", DASH))
        stride = int(m.params.get("stride", 0))
        base = rates.get((level, "scalar", 1))
        rel = _ratio(m.gbps, base) if m.valid else DASH
        mib = int(m.params.get("array_bytes", 0)) / 2**20
        rows.append((level, f"{mib:g} MiB", m.kernel, str(stride), sig_figs(m.gbps) if m.valid else DASH, rel,
                     "yes" if m.valid else "**NO**"))
    notes = ("Effective GB/s = compulsory bytes (each element read once and written once) / median time. "
             "Stride S: adjacent work items read elements S apart, every element read once (a transposed "
             "read); widths are 32-bit words per load (scalar, vec2, vec4). × scalar = GB/s over the scalar "
             "kernel's at stride 1 of the same level.",) + tuple(access_rules(run))
    return Table(("Level", "Array", "Kernel", "Stride", "GB/s", "× scalar stride 1", "Valid"), tuple(rows),
                 "lrlrrrl", notes)


# ---- occupancy -------------------------------------------------------------------------------------

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
    ms = sorted(_of_suite(run, "occupancy"), key=lambda m: int(m.params.get("threadgroup_bytes", 0)))
    if not ms:
        return None
    base = next((m.gbps for m in ms if m.valid and int(m.params.get("threadgroup_bytes", -1)) == 0), None)
    rows = []
    for m in ms:
        tg = int(m.params.get("threadgroup_bytes", 0))
        rows.append((f"{tg / 1024:g}", guide_row(tg), str(m.params.get("resident_blocks_per_sm", DASH)),
                     str(m.params.get("max_threads_per_threadgroup", DASH)),
                     sig_figs(m.gbps) if m.valid else DASH, _ratio(m.gbps, base) if m.valid else DASH,
                     "yes" if m.valid else "**NO**"))
    block = next((m.params.get("block") for m in ms if "block" in m.params), DASH)
    notes = (f"The fixed kernel: a float4 copy over the run's array size whose threads pass elements to their "
             f"neighbours through threadgroup memory, {block} threads per threadgroup; the threadgroup declares "
             f"the bytes in the first column (0: no threadgroup memory, the neighbour read directly). The guide's "
             f"column is its approximate table (concurrent threadgroups per Apple GPU core); resident blocks per SM "
             f"is CUDA's occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor) for this build; Metal "
             f"reports no resident count, only the pipeline's maxTotalThreadsPerThreadgroup.",)
    return Table(("Threadgroup KiB", "Guide: concurrent TGs per core", "Resident blocks per SM",
                  "Max threads per TG", "GB/s", "× 0 KiB", "Valid"), tuple(rows), "llrrrrl", notes)


# ---- dual issue ------------------------------------------------------------------------------------

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
    :mod:`apple_roofline.suites.dualissue_kernels` says, while launches hold different numbers of
    work items), from valid measurements of the ``dualissue`` suite; pairs missing a kernel are left
    out."""
    t = {m.kernel: s for m in _of_suite(run, "dualissue") if m.valid for s in [_per_item_s(m)] if s is not None}
    return [(a, b, mix, t[a], t[b], t[mix]) for a, b, mix in DUAL_PAIRS if a in t and b in t and mix in t]


def dualissue_table(run: Run) -> Optional[Table]:
    """Each pair's medians per work item and ratios: columns pair, A alone, B alone, mixed (ns per work
    item), mixed / (A + B), mixed / max(A, B), verdict; then every kernel's rates by name."""
    ms = _of_suite(run, "dualissue")
    if not ms:
        return None
    rows: List[Tuple[str, ...]] = []
    for a, b, mix, ta, tb, tm in dual_ratios(run):
        rows.append((f"{a.upper()} + {b.upper()}", sig_figs(ta * 1e9), sig_figs(tb * 1e9), sig_figs(tm * 1e9),
                     f"{tm / (ta + tb):.3g}", f"{tm / max(ta, tb):.3g}", dual_verdict(tm / max(ta, tb), tm / (ta + tb))))
    rates = []
    for m in ms:
        n = int(m.params.get("n", 0))
        parts = []
        for key, unit in (("fp32_flops", "FP32 GFLOP/s"), ("fp16_flops", "FP16 GFLOP/s"), ("int_ops", "INT32 Gop/s")):
            per = int(m.params.get(key, 0))
            if per and m.valid and m.median_s > 0:
                parts.append(f"{sig_figs(per * n / m.median_s / 1e9)} {unit}")
        rates.append(f"{m.kernel}: " + (", ".join(parts) if parts else ("invalid" if not m.valid else DASH))
                     + ("" if m.valid else " (**NO**: " + m.validation + ")"))
    notes = (f"Eight independent chains of each kind per work item, F = {ms[0].params.get('F', DASH)} steps each; a "
             f"mixed kernel runs exactly the operations of its two kernels alone, interleaved, so times are compared per "
             f"work item (median time per launch / work items: launches are whole waves of each kernel's own "
             f"occupancy). mixed / max(A, B) near 1: "
             f"the core issues both kinds together; mixed / (A + B) near 1: one at a time. Verdict: issued together "
             f"at mixed / max ≤ {DUAL_VERDICT_MAX}, one at a time at mixed / sum ≥ {DUAL_VERDICT_SUM}, else partly "
             f"overlapped. FLOPs per lane (an FMA is 2); integer adds are counted as integer operations.",
             "Rates: " + "; ".join(rates) + ".")
    return Table(("Pair", "A alone (ns/item)", "B alone (ns/item)", "Mixed (ns/item)", "Mixed / (A + B)",
                  "Mixed / max(A, B)",
                  "Verdict"), tuple(rows), "lrrrrrl", notes)


#: (section title, table builder) of each rule, in report order: the Markdown and HTML reports
#: show each whose builder returns a table.
RULE_SECTIONS = (("Access patterns", access_table), ("Threadgroup memory and occupancy", occupancy_table),
                 ("Dual issue", dualissue_table))
