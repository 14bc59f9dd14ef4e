"""The tuning study's figure: throughput against block size, one panel per suite, one line per
kernel, each relative to its own best (kernels of one suite differ by orders of magnitude), the best
size of each marked with a star and rejected sizes with a cross at the bottom."""

from __future__ import annotations

from typing import Dict, List

from ..figures import PALETTE, Figure, mpl, new_figure
from .model import TuneStudy, rate

__all__ = ["plot_tune"]


def plot_tune(study: TuneStudy) -> Figure:
    """The figure (module docstring): x the block size (threads, log2 axis), y the throughput at the
    median time as a fraction of the kernel's best.

    Raises:
        ValueError: the study has no valid point to draw.
    """
    best = study.best()
    if not best:
        raise ValueError("the tuning study has no valid point to plot")
    suites: Dict[str, List[str]] = {}
    for kernel in study.kernels():
        if kernel in best:
            suites.setdefault(kernel.split("/", 1)[0], []).append(kernel)
    fig = new_figure((7.0, 3.2 * len(suites)))
    axes = fig.subplots(len(suites), 1, squeeze=False)[:, 0]
    ticker = mpl("matplotlib.ticker")
    for ax, (suite, kernels) in zip(axes, suites.items()):
        for i, kernel in enumerate(kernels):
            color = PALETTE[i % len(PALETTE)]
            top = rate(best[kernel])
            pts = [m for m in study.points(kernel) if m.valid]
            ax.plot(
                [int(m.params["block"]) for m in pts],
                [rate(m) / top for m in pts],
                "-o",
                ms=3,
                lw=1.2,
                color=color,
                label=f"{kernel.split('/', 1)[1]} (best {best[kernel].params['block']})",
            )
            ax.plot([int(best[kernel].params["block"])], [1.0], "*", ms=12, color=color, mec="black", mew=0.6)
            rej = [x.block for x in study.rejected if x.label == kernel]
            if rej:
                ax.plot(rej, [0.0] * len(rej), "x", color=color)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ticker.ScalarFormatter())
        ax.set_ylim(0.0, 1.08)
        ax.set_ylabel("throughput / best")
        ax.set_title(f"{suite}: throughput against block size, {study.device_name}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2, loc="lower right")
    axes[-1].set_xlabel("threads per block / threadgroup")
    fig.tight_layout()
    return fig
