"""The access-pattern figure (docs/design/rules.md, "The access-pattern rules"): effective GB/s against
stride (log 2 axis), one line per load width, one panel per level (DRAM, cache), from a run's valid
``access`` measurements (None when it has none). Every marker carries the gid of its measurement
(:func:`~apple_roofline.roofline.views.plot.measurement_gid`), so the HTML report's hover text names it.
"""

from __future__ import annotations

from typing import Optional

from ...figures import PALETTE, Figure, new_figure
from ...roofline.model.run import Run
from ...roofline.views.plot import measurement_gid
from ...roofline.views.rule_suites import figure_title, valid_indexed
from .table import ACCESS_SUITE

__all__ = ["plot_access"]


def plot_access(run: Run) -> Optional[Figure]:
    """GB/s against stride per load width, a panel per level; None without valid access points."""
    pts = valid_indexed(run, ACCESS_SUITE)
    if not pts:
        return None
    levels = list(dict.fromkeys(str(m.params.get("level")) for _i, m in pts))
    fig = new_figure((5.2 * len(levels), 4.4))
    axes = fig.subplots(1, len(levels), squeeze=False)[0]
    kernels = list(dict.fromkeys(m.kernel for _i, m in pts))
    for ax, level in zip(axes, levels):
        for c, kernel in enumerate(kernels):
            line = sorted(
                (
                    (int(m.params.get("stride", 0)), m.gbps, i)
                    for i, m in pts
                    if m.kernel == kernel and m.params.get("level") == level
                )
            )
            if not line:
                continue
            ax.plot(
                [s for s, _g, _i in line],
                [g for _s, g, _i in line],
                "-",
                color=PALETTE[c % len(PALETTE)],
                label=kernel,
                lw=1.5,
            )
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
    fig.suptitle(figure_title(run, "bandwidth against stride and load width"), fontsize=11)
    return fig
