"""The threadgroup-memory figure (docs/design/rules.md, "Threadgroup memory and occupancy"): GB/s against
the threadgroup memory each threadgroup declares, with CUDA's resident blocks per SM on a second
axis where the run recorded them and the sizes the guide's table names marked; from a run's valid
``occupancy`` measurements (None when it has none). Every marker carries the gid of its measurement
(:func:`~apple_roofline.roofline.views.plot.measurement_gid`), so the HTML report's hover text names it.
"""

from __future__ import annotations

from typing import Optional

from ...figures import PALETTE, THEORETICAL, Figure, new_figure
from ...roofline.model.run import Run
from ...roofline.views.plot import measurement_gid
from ...roofline.views.rule_suites import figure_title, valid_indexed
from .table import GUIDE_OCCUPANCY, OCCUPANCY_SUITE

__all__ = ["plot_occupancy"]


def plot_occupancy(run: Run) -> Optional[Figure]:
    """GB/s against threadgroup KiB; resident blocks per SM on a twin axis where recorded; None
    without valid occupancy points."""
    pts = sorted(valid_indexed(run, OCCUPANCY_SUITE), key=lambda im: int(im[1].params.get("threadgroup_bytes", 0)))
    if not pts:
        return None
    fig = new_figure((7.5, 4.4))
    ax = fig.subplots()
    for kib, text in GUIDE_OCCUPANCY:  # the guide's rows, as the sizes it names
        ax.axvline(kib, color="0.55", ls=THEORETICAL, lw=0.9)  # published: dashed, as in every figure
        ax.text(
            kib,
            0.02,
            f" {kib} KB: {text.split(' (')[0]}",
            transform=ax.get_xaxis_transform(),
            ha="left",
            va="bottom",
            fontsize=7,
            color="0.35",
            rotation=90,
        )
    xs = [int(m.params.get("threadgroup_bytes", 0)) / 1024 for _i, m in pts]
    ax.plot(xs, [m.gbps for _i, m in pts], "-", color=PALETTE[0], lw=1.5, label="GB/s")
    for (i, m), x in zip(pts, xs):
        ax.plot([x], [m.gbps], "o", color=PALETTE[0], ms=5, gid=measurement_gid(i))
    ax.set_xlabel("threadgroup memory per threadgroup (KiB); dashed: the guide's table")
    ax.set_ylabel("GB/s", color=PALETTE[0])
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    resident = [
        (x, int(m.params["resident_blocks_per_sm"]))
        for (_i, m), x in zip(pts, xs)
        if "resident_blocks_per_sm" in m.params
    ]
    if resident:
        ax2 = ax.twinx()
        ax2.step(
            [x for x, _r in resident],
            [r for _x, r in resident],
            where="post",
            color=PALETTE[1],
            lw=1.2,
            label="resident blocks per SM",
        )
        ax2.set_ylabel("resident blocks per SM (occupancy calculator)", color=PALETTE[1])
        ax2.set_ylim(bottom=0)
    fig.suptitle(figure_title(run, "throughput against threadgroup memory"), fontsize=11)
    return fig
