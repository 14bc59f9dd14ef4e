"""The figures of the optimization guide's rules (docs/design.md, "The access-pattern rules",
"Threadgroup memory and occupancy", "Dual issue"), one per suite, each drawn from a run's valid
measurements of that suite (None when it has none):

* ``access``: effective GB/s against stride (log 2 axis), one line per load width, one panel per
  level (DRAM, cache);
* ``occupancy``: GB/s against the threadgroup memory each threadgroup declares, with CUDA's resident
  blocks per SM on a second axis where the run recorded them and the sizes the guide's table names
  marked;
* ``dualissue``: per pair, the median time per work item of each kind alone, their sum and the mixed kernel,
  as bars: a mixed bar at the height of the taller single one is dual issue, at the sum one at a time.

Every marker and bar carries the gid of its measurement (:func:`.plot.measurement_gid`), so the
HTML report's hover text names it.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from ..figures import PALETTE, THEORETICAL, Figure, new_figure
from .plot import measurement_gid
from .records import Measurement
from .rules_tables import GUIDE_OCCUPANCY, dual_ratios
from .run import Run

__all__ = ["plot_access", "plot_occupancy", "plot_dualissue", "RULE_FIGURES"]


def _indexed(run: Run, suite: str) -> List[Tuple[int, Measurement]]:
    return [(i, m) for i, m in enumerate(run.measurements) if m.suite == suite and m.valid]


def _title(run: Run, what: str) -> str:
    return f"{run.device_name}: {what}"


def plot_access(run: Run) -> Optional[Figure]:
    """GB/s against stride per load width, a panel per level; None without valid access points."""
    pts = _indexed(run, "access")
    if not pts:
        return None
    levels = list(dict.fromkeys(str(m.params.get("level")) for _i, m in pts))
    fig = new_figure((5.2 * len(levels), 4.4))
    axes = fig.subplots(1, len(levels), squeeze=False)[0]
    kernels = list(dict.fromkeys(m.kernel for _i, m in pts))
    for ax, level in zip(axes, levels):
        for c, kernel in enumerate(kernels):
            line = sorted(((int(m.params.get("stride", 0)), m.gbps, i) for i, m in pts
                           if m.kernel == kernel and m.params.get("level") == level))
            if not line:
                continue
            ax.plot([s for s, _g, _i in line], [g for _s, g, _i in line], "-", color=PALETTE[c % len(PALETTE)],
                    label=kernel, lw=1.5)
            for s, g, i in line:
                ax.plot([s], [g], "o", color=PALETTE[c % len(PALETTE)], ms=5, gid=measurement_gid(i))
        mib = next((int(m.params.get("array_bytes", 0)) / 2**20 for _i, m in pts if m.params.get("level") == level), 0)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("stride (elements of the load width)")
        ax.set_ylabel("effective GB/s")
        ax.set_title(f"{level}: two arrays of {mib:g} MiB", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, title="load width", title_fontsize=8)
    fig.suptitle(_title(run, "bandwidth against stride and load width"), fontsize=11)
    return fig


def plot_occupancy(run: Run) -> Optional[Figure]:
    """GB/s against threadgroup KiB; resident blocks per SM on a twin axis where recorded; None
    without valid occupancy points."""
    pts = sorted(_indexed(run, "occupancy"), key=lambda im: int(im[1].params.get("threadgroup_bytes", 0)))
    if not pts:
        return None
    fig = new_figure((7.5, 4.4))
    ax = fig.subplots()
    for kib, text in GUIDE_OCCUPANCY:  # the guide's rows, as the sizes it names
        ax.axvline(kib, color="0.55", ls=THEORETICAL, lw=0.9)  # published: dashed, as in every figure
        ax.text(kib, 0.02, f" {kib} KB: {text.split(' (')[0]}", transform=ax.get_xaxis_transform(), ha="left",
                va="bottom", fontsize=7, color="0.35", rotation=90)
    xs = [int(m.params.get("threadgroup_bytes", 0)) / 1024 for _i, m in pts]
    ax.plot(xs, [m.gbps for _i, m in pts], "-", color=PALETTE[0], lw=1.5, label="GB/s")
    for (i, m), x in zip(pts, xs):
        ax.plot([x], [m.gbps], "o", color=PALETTE[0], ms=5, gid=measurement_gid(i))
    ax.set_xlabel("threadgroup memory per threadgroup (KiB); dashed: the guide's table")
    ax.set_ylabel("GB/s", color=PALETTE[0])
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    resident = [(x, int(m.params["resident_blocks_per_sm"])) for (_i, m), x in zip(pts, xs)
                if "resident_blocks_per_sm" in m.params]
    if resident:
        ax2 = ax.twinx()
        ax2.step([x for x, _r in resident], [r for _x, r in resident], where="post", color=PALETTE[1], lw=1.2,
                 label="resident blocks per SM")
        ax2.set_ylabel("resident blocks per SM (occupancy calculator)", color=PALETTE[1])
        ax2.set_ylim(bottom=0)
    fig.suptitle(_title(run, "throughput against threadgroup memory"), fontsize=11)
    return fig


def plot_dualissue(run: Run) -> Optional[Figure]:
    """Bars per pair: A alone, B alone, A + B, mixed (ns per work item); None without a complete valid pair."""
    ratios = dual_ratios(run)
    if not ratios:
        return None
    gid: Dict[str, int] = {m.kernel: i for i, m in _indexed(run, "dualissue")}
    fig = new_figure((3.2 + 2.6 * len(ratios), 4.4))
    ax = fig.subplots()
    labels = ("A alone", "B alone", "A + B", "mixed")
    width = 0.2
    for p, (a, b, mix, ta, tb, tm) in enumerate(ratios):
        values = (ta, tb, ta + tb, tm)
        names: Sequence[Optional[str]] = (a, b, None, mix)
        for k, (v, name) in enumerate(zip(values, names)):
            bar = ax.bar(p + (k - 1.5) * width, v * 1e9, width, color=PALETTE[k % len(PALETTE)],
                         hatch="//" if name is None else None, alpha=0.55 if name is None else 1.0,
                         label=labels[k] if p == 0 else None)
            if name is not None and name in gid:
                bar[0].set_gid(measurement_gid(gid[name]))
        ax.text(p + 1.5 * width, tm * 1e9, f"/max {tm / max(ta, tb):.2f}\n/sum {tm / (ta + tb):.2f}", ha="center",
                va="bottom", fontsize=7)
    ax.set_xticks(range(len(ratios)))
    ax.set_xticklabels([f"{a.upper()} + {b.upper()}" for a, b, *_rest in ratios])
    ax.set_ylabel("median time per work item (ns)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.15)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(_title(run, "dual issue (mixed at max = together, at sum = one at a time)"), fontsize=11)
    return fig


#: (file stem, figure builder, HTML caption) of each rule's figure, in report order.
RULE_FIGURES: Tuple[Tuple[str, Callable[[Run], Optional[Figure]], str], ...] = (
    ("access", plot_access, "Effective bandwidth against stride, one line per load width, per working set."),
    ("occupancy", plot_occupancy, "Throughput of the fixed kernel against its threadgroup memory; the sizes the "
                                  "guide's occupancy table names dashed (published)."),
    ("dualissue", plot_dualissue, "Dual issue: each kind alone, their sum, and the mixed kernel."),
)
