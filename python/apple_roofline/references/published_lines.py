"""A published reference's figures as ceilings to draw beside runs (``apple-roofline compare RUN
--reference NAME -o FILE``; docs/design/extending.md, "References"): the figures that are a roof — set beside
a run's ceiling (``compare_to.ceiling``) in GB/s or GFLOP/s — one line per ceiling they are set
beside, labelled published.

Which figures: those of the runs' chips for the engine each run measured
(:data:`~.published.ENGINE_BACKENDS`: a Metal or WebGPU run's GPU figures, a CPU run's CPU (AMX) ones); where no
run is of a chip the reference covers and it covers one chip, every roof figure of that chip, for
reading beside runs of another device (each line names the chip and engine); else none. Several
figures set beside one ceiling (the four STREAM kernels beside DRAM bandwidth) draw the highest, as a
run's ceiling is its best kernel's.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from ..roofline.compare.compare import PublishedLine
from ..roofline.model.run import Run
from ..study.records import CEILING_KINDS
from .published import ENGINE_BACKENDS, PublishedFigure, PublishedReference
from .published_table import published_text

__all__ = ["published_lines"]

_KIND_OF_UNIT = {unit: kind for kind, unit in CEILING_KINDS.items()}


def _roof(f: PublishedFigure) -> bool:
    return f.ceiling is not None and f.unit in _KIND_OF_UNIT and f.value > 0


def _chosen(ref: PublishedReference, runs: Sequence[Run]) -> List[PublishedFigure]:
    """The figures to draw (module docstring), in the reference's order."""
    mine = [f for r in runs for f in ref.figures_for(r) if _roof(f) and r.backend in ENGINE_BACKENDS.get(f.engine, ())]
    if mine:
        return list(dict.fromkeys(mine))
    if not any(ref.figures_for(r) for r in runs) and len(ref.chips) == 1:
        return [f for f in ref.figures if _roof(f)]
    return []


def published_lines(ref: PublishedReference, runs: Sequence[Run]) -> Tuple[PublishedLine, ...]:
    """The lines of ``ref`` to draw beside ``runs`` (module docstring), one per (chip, engine,
    ceiling, source), the highest figure of each; empty where none applies."""
    best: Dict[Tuple[str, str, str, str], PublishedFigure] = {}
    for f in _chosen(ref, runs):
        assert f.ceiling is not None
        key = (f.chip, f.engine, f.ceiling, f.ceiling_source)
        if key not in best or f.value > best[key].value:
            best[key] = f
    lines = []
    for key, f in best.items():
        chip, engine, name, source = key
        several = sum(1 for g in ref.figures if (g.chip, g.engine, g.ceiling, g.ceiling_source) == key)
        note = (
            f"published by {ref.name}, not measured by this tool: {f.figure} {published_text(f.value)} {f.unit} "
            f"({f.basis}; {f.where})"
            + (f", the highest of {several} figures set beside {name}" if several > 1 else "")
            + f"\nsource: {ref.source.citation()}"
        )
        lines.append(PublishedLine(name, _KIND_OF_UNIT[f.unit], f.value, source, f"{chip} {engine}", note))
    return tuple(lines)
