"""A reference's sections of a comparison (``apple-roofline compare --reference NAME``): the
published figures beside the runs (:mod:`.published_table`), or the health check against a
measured reference run (:mod:`.health`)."""

from __future__ import annotations

from typing import List, Sequence, Tuple

from ..node.report import DEFAULT_OUTLIER_PCT
from ..roofline.model.run import Run
from ..study.table import Table
from .catalog import Reference
from .health import HealthFlag, health_table
from .published import PublishedReference
from .published_table import published_table

__all__ = ["reference_sections"]


def reference_sections(
    ref: Reference, runs: Sequence[Run], tags: Sequence[str], outlier_pct: float = DEFAULT_OUTLIER_PCT
) -> Tuple[List[Tuple[str, Table]], List[HealthFlag]]:
    """The comparison's sections for ``ref`` as (title, table), and the health check's flags
    (empty for published figures). ``runs`` and ``tags`` are the runs to set beside the reference
    (a run reference's own run left out).

    Raises:
        ValueError: not one tag per run; ``outlier_pct`` out of range.
    """
    if isinstance(ref, PublishedReference):
        return [(f"Published figures: {ref.name} (not measured by this tool)", published_table(ref, runs, tags))], []
    table, flags = health_table(ref, runs, tags, outlier_pct)
    return [(f"Health check against the reference {ref.name}", table)], flags
