"""Your kernels on the roofline figure (docs/design/model.md, "Your kernels on the roofline"); their
tables and hover text are :mod:`.tables`'.

On the figure each kernel has one colour; its dots (L1 ``^``, L2 ``s``, DRAM ``o``) are joined by a
thin line, as in the cache-aware roofline of Intel Advisor, and sized by the kernel's share of the
file's time (area in proportion); kernels that ran on another device than the run's
(:attr:`~.model.KernelDot.other_device`) add a legend entry saying so. The outermost dot of each
kernel is labelled with its name, the ceiling that binds it and the speedup left below it.
Artists carry the gids ``kernel:<i>`` (the dot of ``placements[i]``) and
``kernellabel:<kernel>``, on which :func:`.tables.kernel_tooltips` hangs text.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence, Tuple

from ...figures import PALETTE, Axes, mpl, text_color
from ...user_kernels.model import LEVELS
from ...user_kernels.place import Placement, dot_gid, speedup_text
from .axes import Scale
from .labels import Labels, point_label_offsets

__all__ = ["LEVEL_MARKERS", "draw_kernels", "dot_size", "short_name"]

#: The marker of each level's dots.
LEVEL_MARKERS: Dict[str, str] = {"L1": "^", "L2": "s", "DRAM": "o"}
_NAME_WIDTH = 40


def short_name(name: str, width: int = _NAME_WIDTH) -> str:
    """A kernel name cut to ``width`` characters (its argument list first: ``triad(float*, ...)`` ->
    ``triad(…)``)."""
    head = name.split("(")[0] + "(…)" if "(" in name and len(name) > width else name
    return head if len(head) <= width else head[: width - 1] + "…"


def dot_size(share: float) -> float:
    """A dot's marker size (points) for its kernel's time share: area in proportion, 5 to 18 points."""
    return 5.0 + 13.0 * math.sqrt(max(0.0, min(1.0, share)))


def _draw_kernel_dots(
    ax: Axes, scale: Scale, items: Sequence[Tuple[int, Placement]], labels: Labels, color: str
) -> None:
    """One kernel's dots (``(index, placement)``, its levels in order), joined by a dotted line where
    there are several, each sized by the kernel's time share."""
    if len(items) > 1:
        ax.plot(
            [p.dot.intensity for _i, p in items],
            [scale.y(p.dot.gflops) for _i, p in items],
            color=color,
            linewidth=0.9,
            linestyle=":",
            zorder=6,
            gid=f"kernelline:{items[0][1].dot.kernel}",
        )
    for i, p in items:
        size = dot_size(p.share)
        ax.plot(
            [p.dot.intensity],
            [scale.y(p.dot.gflops)],
            linestyle="none",
            marker=LEVEL_MARKERS[p.dot.level],
            markersize=size,
            color=color,
            markeredgecolor="black",
            markeredgewidth=0.5,
            alpha=0.9,
            zorder=7,
            gid=dot_gid(i),
        )
        labels.add_markers(ax, [p.dot.intensity], [scale.y(p.dot.gflops)], size)


def _label_kernel(ax: Axes, scale: Scale, outer: Placement, labels: Labels, color: str) -> None:
    """The label beside a kernel's outermost dot ``outer``: its name and the speedup left."""
    kernel = outer.dot.kernel
    ann = ax.annotate(
        f"{short_name(kernel, 28)}\n{speedup_text(outer, short=True)}",
        xy=(outer.dot.intensity, scale.y(outer.dot.gflops)),
        xytext=(7.0, -4.0),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=7.0,
        color=text_color(color),
        bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85),
        zorder=7,
        gid=f"kernellabel:{kernel}",
    )
    labels.add_free(ann, point_label_offsets(7.0), order=(2.0, 0.0))


def _level_entries(placements: Sequence[Placement]) -> Dict[str, Any]:
    """The legend's banner of kernels placed on another device's roofline, and an entry per level
    marker used."""
    Line2D = mpl("matplotlib.lines").Line2D
    handles: Dict[str, Any] = {}
    other = next((p.dot.other_device for p in placements if p.dot.other_device), None)
    if other is not None:
        handles[f"your kernels ran on {other}, not this run's device: these ceilings are not theirs"] = Line2D(
            [], [], linestyle="none", marker="x", markersize=7, color="#b2182b"
        )
    for level in LEVELS:
        if any(p.dot.level == level for p in placements):
            handles[f"your kernels at {level} (size: time share)"] = Line2D(
                [], [], linestyle="none", marker=LEVEL_MARKERS[level], markersize=7, color="#4d4d4d"
            )
    return handles


def draw_kernels(
    ax: Axes, scale: Scale, placements: Sequence[Placement], labels: Labels, colors: Sequence[str] = PALETTE
) -> Dict[str, Any]:
    """Draw ``placements`` into ``ax`` (module docstring) and return their legend entries (label ->
    handle): one per kernel, and one per level marker used."""
    Line2D = mpl("matplotlib.lines").Line2D
    handles: Dict[str, Any] = {}
    kernels: Dict[str, List[Tuple[int, Placement]]] = {}
    for i, p in enumerate(placements):
        kernels.setdefault(p.dot.kernel, []).append((i, p))
    for k, (kernel, items) in enumerate(kernels.items()):
        color = colors[k % len(colors)]
        items.sort(key=lambda it: LEVELS.index(it[1].dot.level))
        _draw_kernel_dots(ax, scale, items, labels, color)
        _i, outer = items[-1]
        _label_kernel(ax, scale, outer, labels, color)
        handles[f"{short_name(kernel)} ({outer.share:.0%} of time)"] = Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=7,
            color=color,
            markeredgecolor="black",
            markeredgewidth=0.5,
        )
    handles.update(_level_entries(placements))
    return handles
