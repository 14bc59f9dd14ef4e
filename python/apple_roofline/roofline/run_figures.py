"""The figures of one roofline run, each with the note of what it lacks when the run is partial.

The files (:mod:`.outputs`), the HTML report (:mod:`.html`) and ``plot`` draw a run's figures
through these, so a figure that lacks cases says so wherever it is shown
(:func:`~apple_roofline.study.markdown.figure_status`, docs/design.md, "Time budgets"): the roofline
names every suite cut by its budget (its ceilings and points come from all of them), the sweep,
hierarchy and rule figures their own suite.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from ..figures import Figure, add_note
from ..study.markdown import figure_status
from .hierarchy_plot import plot_hierarchy
from .levels import level_curves
from .model import Point, RooflineModel
from .plot import plot_roofline
from .rules_plot import RULE_FIGURES
from .run import Run
from .sweep_plot import plot_sweep, sweep_series

__all__ = ["roofline_figure", "sweep_figure", "hierarchy_figure", "rule_figures"]


def roofline_figure(run: Run, model: RooflineModel, *, ceilings: Union[str, Sequence[str]] = "default",
                    points: Sequence[Point] = ()) -> Figure:
    """The roofline of ``run`` (``model``: :func:`~.tables.model_of` of it) with ``ceilings`` and
    ``points`` (:func:`~.plot.plot_roofline`). Raises ValueError for an unknown ceiling name."""
    return add_note(plot_roofline(model, points=points, ceilings=ceilings), figure_status(run))


def _title(run: Run, model: Optional[RooflineModel]) -> str:
    return model.title if model is not None and model.title else run.device_name


def sweep_figure(run: Run, model: Optional[RooflineModel]) -> Optional[Figure]:
    """The arithmetic-intensity sweep (:func:`~.sweep_plot.plot_sweep`); None without valid sweep points."""
    if not sweep_series(run.measurements):
        return None
    return add_note(plot_sweep(run.measurements, ceilings=run.ceilings, title=_title(run, model)),
                    figure_status(run, ("sweep",)))


def hierarchy_figure(run: Run, model: Optional[RooflineModel]) -> Optional[Figure]:
    """Bandwidth against working set (:func:`~.hierarchy_plot.plot_hierarchy`); None without
    hierarchy points."""
    if not level_curves(run.measurements):
        return None
    return add_note(plot_hierarchy(run.measurements, ceilings=run.ceilings, title=_title(run, model)),
                    figure_status(run, ("hierarchy",)))


def rule_figures(run: Run) -> List[Tuple[str, Figure, str]]:
    """(stem, figure, caption) of each rule suite's figure the run has (:data:`~.rules_plot.RULE_FIGURES`;
    the stem is the suite's name)."""
    out: List[Tuple[str, Figure, str]] = []
    for stem, draw, caption in RULE_FIGURES:
        fig = draw(run)
        if fig is not None:
            out.append((stem, add_note(fig, figure_status(run, (stem,))), caption))
    return out
