"""The public :class:`Roofline`: the roofline model under the name a user imports (``ar.Roofline``).

The model (:class:`~.model.RooflineModel`: ceilings, ridge points, attainable, classify,
efficiency) never imports a view; the views take a model: the figure is
:func:`apple_roofline.roofline.views.plot.plot_roofline` (``ar.plot_roofline(model, points=[p])``), the
report :mod:`apple_roofline.roofline.views.report`.
"""

from __future__ import annotations

from .model import RooflineModel

__all__ = ["Roofline"]


class Roofline(RooflineModel):
    """A roofline model (see :class:`~.model.RooflineModel`); draw it with
    :func:`apple_roofline.roofline.views.plot.plot_roofline`."""
