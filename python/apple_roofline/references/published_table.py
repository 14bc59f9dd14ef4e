"""A published reference beside runs: one table of its figures for the runs' chips, each with the
runs' own figure of the same kind and its ratio to the published one, and the source of each.

A run is beside the figures of its chip only (:func:`~.published.is_chip_of`). Where no run is of
a chip the reference has figures for, the figures are still listed, for reading, with a note that
they are for another chip and no run column: a ratio across chips would read as a verdict it is not.
"""

from __future__ import annotations

from typing import List, Sequence

from ..roofline.model.run import Run
from ..study.table import Table
from ..text import DASH, sig_figs
from .published import PublishedFigure, PublishedReference, is_chip_of

__all__ = ["published_table", "published_text", "run_cell"]


def published_text(value: float) -> str:
    """A published value as its source gives it, with thousands separators: ``3760.0`` ->
    ``"3,760"``, ``1.278`` -> ``"1.278"``."""
    return f"{int(value):,}" if value == int(value) else f"{value:,g}"


def run_cell(figure: PublishedFigure, run: Run) -> str:
    """The run's figure beside a published one: ``"3,849 (1.02×)"`` (its value and value /
    published), or ``—`` where the run is of another chip or has no such figure."""
    if not is_chip_of(figure.chip, run):
        return DASH
    value = figure.run_value(run)
    if value is None:
        return DASH
    shown = f"{int(value):,}" if value == int(value) else sig_figs(value)  # a count (cores) as a count
    return f"{shown} ({value / figure.value:.2f}×)" if figure.value else shown


def published_table(ref: PublishedReference, runs: Sequence[Run], tags: Sequence[str]) -> Table:
    """The reference's figures for the runs' chips (module docstring): Chip, Engine, Figure,
    Published (value), Unit, Basis, Set beside (what of a run it corresponds to), one column per run
    of those chips (:func:`run_cell`) and Where (the section or table of the source). The notes cite
    the source and say the figures are published, not measured here.

    Raises:
        ValueError: not one tag per run.
    """
    if len(tags) != len(runs):
        raise ValueError(f"{len(tags)} tags for {len(runs)} runs")
    matching = [(t, r) for t, r in zip(tags, runs) if ref.figures_for(r)]
    chips = {f.chip for _, r in matching for f in ref.figures_for(r)}
    notes: List[str] = [f"Source: {ref.source.citation()}." + (f" {ref.source.note}" if ref.source.note else "")]
    if matching:
        figures = [f for f in ref.figures if f.chip in chips]
        notes.append(
            "Published: what the source states (its own benchmark, a specification or an estimate), never "
            "measured by this tool. A run's column: its own figure of that kind (Set beside) and its ratio "
            "to the published one; — where it has none."
        )
    else:
        figures = list(ref.figures)
        devices = ", ".join(dict.fromkeys(f"{r.device_name} ({t})" for t, r in zip(tags, runs)))
        notes.append(
            f"{ref.name} publishes figures for {', '.join(ref.chips)}; the runs are of another chip "
            f"({devices}): its figures are listed for reading, set beside no run."
        )
    run_tags = [t for t, _ in matching]
    rows = tuple(
        (f.chip, f.engine, f.figure, published_text(f.value), f.unit, f.basis, f.counterpart() or DASH)
        + tuple(run_cell(f, r) for _, r in matching)
        + (f.where,)
        for f in figures
    )
    header = ("Chip", "Engine", "Figure", "Published", "Unit", "Basis", "Set beside") + tuple(run_tags) + ("Where",)
    return Table(header, rows, "lllrlll" + "r" * len(run_tags) + "l", tuple(notes))
