"""The dual-issue figure (docs/design/rules.md, "Dual issue"): per pair, the median time per work item of
each kind alone, their sum and the mixed kernel, as bars: a mixed bar at the height of the taller
single one is dual issue, at the sum one at a time. None without a complete valid pair. Every marker
and bar carries the gid of its measurement (:func:`~apple_roofline.roofline.views.plot.measurement_gid`),
so the HTML report's hover text names it.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence

from ...figures import PALETTE, Figure, new_figure
from ...roofline.model.run import Run
from ...roofline.views.plot import measurement_gid
from ...roofline.views.rule_suites import figure_title, valid_indexed
from .table import DUALISSUE_SUITE, dual_ratios

__all__ = ["plot_dualissue"]


def plot_dualissue(run: Run) -> Optional[Figure]:
    """Bars per pair: A alone, B alone, A + B, mixed (ns per work item); None without a complete valid pair."""
    ratios = dual_ratios(run)
    if not ratios:
        return None
    gid: Dict[str, int] = {m.kernel: i for i, m in valid_indexed(run, DUALISSUE_SUITE)}
    fig = new_figure((3.2 + 2.6 * len(ratios), 4.4))
    ax = fig.subplots()
    labels = ("A alone", "B alone", "A + B", "mixed")
    width = 0.2
    for p, (a, b, mix, ta, tb, tm) in enumerate(ratios):
        values = (ta, tb, ta + tb, tm)
        names: Sequence[Optional[str]] = (a, b, None, mix)
        for k, (v, name) in enumerate(zip(values, names)):
            bar = ax.bar(
                p + (k - 1.5) * width,
                v * 1e9,
                width,
                color=PALETTE[k % len(PALETTE)],
                hatch="//" if name is None else None,
                alpha=0.55 if name is None else 1.0,
                label=labels[k] if p == 0 else None,
            )
            if name is not None and name in gid:
                bar[0].set_gid(measurement_gid(gid[name]))
        ax.text(
            p + 1.5 * width,
            tm * 1e9,
            f"/max {tm / max(ta, tb):.2f}\n/sum {tm / (ta + tb):.2f}",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    ax.set_xticks(range(len(ratios)))
    ax.set_xticklabels([f"{a.upper()} + {b.upper()}" for a, b, *_rest in ratios])
    ax.set_ylabel("median time per work item (ns)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.15)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(figure_title(run, "dual issue (mixed at max = together, at sum = one at a time)"), fontsize=11)
    return fig
