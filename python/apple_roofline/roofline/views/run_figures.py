"""The figures of one roofline run, each with the note of what it lacks when the run is partial.

The files (:mod:`.outputs`), the HTML report (:mod:`.html`) and ``plot`` draw a run's figures
through these, so a figure that lacks cases says so wherever it is shown
(:func:`~apple_roofline.study.markdown.figure_status`, docs/design/budgets.md, "Time budgets"): the roofline
names every suite cut by its budget (its ceilings and points come from all of them), each suite's
figures (:mod:`apple_roofline.suites.registry`: the sweep's, the sections') their own suite.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from ...figures import Figure, add_note
from ...study.markdown import figure_status
from ...suites import registry
from ...suites.registry import SuiteFigure
from ...user_kernels.place import Placement
from ..model.model import Point, RooflineModel
from ..model.run import Run
from .plot import plot_roofline

__all__ = ["roofline_figure", "suite_figure", "suite_figures"]


def roofline_figure(
    run: Run,
    model: RooflineModel,
    *,
    ceilings: Union[str, Sequence[str]] = "default",
    points: Sequence[Point] = (),
    kernels: Sequence[Placement] = (),
) -> Figure:
    """The roofline of ``run`` (``model``: :func:`~.tables.model_of` of it) with ``ceilings``,
    ``points`` and your ``kernels``' dots (:func:`~.plot.plot_roofline`). Raises ValueError for an
    unknown ceiling name."""
    return add_note(plot_roofline(model, points=points, ceilings=ceilings, kernels=kernels), figure_status(run))


def suite_figure(run: Run, suite: str, figure: SuiteFigure) -> Optional[Figure]:
    """The figure of ``suite`` (:class:`~apple_roofline.suites.registry.SuiteFigure`: the sweep's, the
    hierarchy's, the rule suites') for ``run``, noted with what the run lacks of that suite; None when the run has
    nothing for it."""
    drawn = figure.draw(run)
    return add_note(drawn, figure_status(run, (suite,))) if drawn is not None else None


def suite_figures(run: Run) -> List[Tuple[str, Figure]]:
    """(file stem, figure) of every suite's figure the run has, in report order
    (:func:`~apple_roofline.suites.registry.figures`)."""
    out: List[Tuple[str, Figure]] = []
    for spec, figure in registry.figures():
        fig = suite_figure(run, spec.name, figure)
        if fig is not None:
            out.append((figure.stem, fig))
    return out
