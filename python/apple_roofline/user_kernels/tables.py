"""Your kernels in the reports: the table of their dots, the kernels not placed, and the hover
text of each dot on the figure (docs/design/model.md, "Your kernels on the roofline")."""

from __future__ import annotations

from typing import Dict, Sequence

from ..study.table import Table
from ..text import sig_figs
from .model import KernelDot, KernelSet
from .place import Placement, dot_gid, speedup_text

__all__ = ["placements_table", "unplaced_table", "kernel_tooltips", "precision_text", "device_banner"]


def precision_text(dot: KernelDot) -> str:
    """The dot's precision, with the mix where its FLOPs come from several: ``"fp32"``, or
    ``"fp32 (76%; fp16 16%, fp64 8%)"`` (each precision's share of its FLOPs, largest first;
    shares under 0.5 % are left out); ``"-"`` when unknown."""
    if dot.precision is None:
        return "-"
    total = sum(dot.work.values())
    shares = sorted(((f / total, p) for p, f in dot.work.items() if total > 0 and f / total >= 0.005), reverse=True)
    if len(shares) < 2:
        return dot.precision
    mine = next((s for s, p in shares if p == dot.precision), 0.0)
    rest = ", ".join(f"{p} {s:.0%}" for s, p in shares if p != dot.precision)
    return f"{dot.precision} ({mine:.0%}; {rest})"


def device_banner(placements: Sequence[Placement]) -> str:
    """One sentence where the dots ran on another device than the run's (placed with
    ``--kernels-any-device``), else ``""``."""
    other = next((p.dot.other_device for p in placements if p.dot.other_device), None)
    if other is None:
        return ""
    return (
        f"These kernels ran on another device ({other}) than this run's: the ceilings are not their device's, "
        f"so the bounds and speedups are not theirs either."
    )


def placements_table(placements: Sequence[Placement]) -> Table:
    """The placed dots: kernel, level, precision, time share, FLOP/B, GFLOP/s, GB/s at the level,
    the roof of its precision, the ceiling that binds it, attainable GFLOP/s, the share of it
    reached and the speedup left."""
    rows = []
    for p in placements:
        d = p.dot
        rows.append(
            (
                d.kernel,
                d.level,
                precision_text(d),
                f"{p.share:.1%}",
                sig_figs(d.intensity),
                sig_figs(d.gflops),
                sig_figs(d.gbps),
                p.roof.name if p.roof else "-",
                p.bound if not p.above else "above every roof",
                sig_figs(p.attainable) if p.attainable else "-",
                f"{p.fraction:.0%}" if p.fraction is not None else "-",
                speedup_text(p),
            )
        )
    banner = device_banner(placements)
    notes = (
        "Each kernel's FLOPs, bytes at the level and time over all its launches; its roof is the highest "
        "measured compute ceiling of its precision, its bandwidth the level's measured ceiling; the lower of "
        "the two at its intensity binds it; a kernel whose FLOPs come from several precisions is judged by the "
        "precision of most of them (the others' shares beside it).",
    ) + ((banner,) if banner else ())
    return Table(
        (
            "kernel",
            "level",
            "precision",
            "time",
            "FLOP/B",
            "GFLOP/s",
            "GB/s",
            "roof",
            "bound by",
            "attainable GFLOP/s",
            "of attainable",
            "speedup left",
        ),
        tuple(rows),
        "llllrrrllrrl",
        notes,
    )


def unplaced_table(kernels: KernelSet) -> Table:
    """The kernels (or levels) that cannot be placed: kernel, level, why, the metric they lack."""
    rows = tuple((u.kernel, u.level or "all", u.reason, ", ".join(u.missing) or "-") for u in kernels.unplaced)
    return Table(("kernel", "level", "why it is not placed", "lacks"), rows, "llll")


def kernel_tooltips(placements: Sequence[Placement]) -> Dict[str, str]:
    """Hover text of every dot, by gid: kernel, level, precision, FLOPs, bytes, time, launches,
    intensity, GFLOP/s, GB/s, its roof, the ceiling that binds it and the speedup left, and the
    metrics it comes from."""
    tips: Dict[str, str] = {}
    for i, p in enumerate(placements):
        d = p.dot
        lines = [
            f"{d.kernel} at {d.level}" + (f" ({precision_text(d)})" if d.precision else ""),
            f"{sig_figs(d.flops)} FLOP, {sig_figs(d.bytes)} B, {sig_figs(d.seconds * 1e3)} ms over "
            f"{d.launches} launch{'es' if d.launches != 1 else ''} ({p.share:.1%} of the time)",
            f"{sig_figs(d.intensity)} FLOP/B, {sig_figs(d.gflops)} GFLOP/s, {sig_figs(d.gbps)} GB/s",
            f"roof: {p.roof.name if p.roof else '-'}; bound by {p.bound}: {speedup_text(p)}",
            f"from {d.source}: {', '.join(d.metrics)}",
        ] + ([f"ran on {d.other_device}, another device than this run's"] if d.other_device else [])
        tips[dot_gid(i)] = "\n".join(lines)
    return tips
