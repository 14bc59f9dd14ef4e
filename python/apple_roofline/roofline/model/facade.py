"""The public :class:`Roofline`: the model with the one view it offers as a method, ``plot()``.

The model (:class:`~.model.RooflineModel`: ceilings, ridge points, attainable, classify,
efficiency) never imports a view; the views (:mod:`.plot`, :mod:`.report`) take a model. This class
adds the one view a user expects as a method, so that ``Roofline.from_run(run).plot(points=[p])``
works; it imports :mod:`.plot` only when :meth:`Roofline.plot` is called, so that the results model
(:class:`~.run.Run`, whose ``roofline()`` returns a :class:`Roofline`) never reaches a view at import.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .model import Point, RooflineModel

__all__ = ["Roofline"]


class Roofline(RooflineModel):
    """A roofline model (see :class:`~.model.RooflineModel` for everything but :meth:`plot`)."""

    def plot(
        self,
        points: Sequence[Point] = (),
        *,
        ax: Any = None,
        title: Optional[str] = None,
        ceilings: Union[str, Sequence[str]] = "default",
        kernels: Any = None,
    ) -> Any:
        """Draw this roofline with ``points`` (e.g. from :func:`apple_roofline.measure`) on it:
        :func:`~.plot.plot_roofline` of this model (its ceilings, and its measurements when it was
        made from a run). Zero-FLOP points cannot be placed on log axes and are left out.

        Args:
            points: your own workloads, drawn as labelled markers.
            ax: draw into these axes; default a new figure.
            title: default the model's title (``"<device> (<backend>) — <date>"`` for a run).
            ceilings: which ceilings to draw: ``"default"``, ``"all"`` or names
                (:func:`~.selection.select_ceilings`).
            kernels: a :class:`~apple_roofline.user_kernels.model.KernelSet` (from
                :func:`apple_roofline.load_kernels`: a kernels file or an Nsight Compute export), its
                dots drawn on this roofline's measured ceilings; or None.

        Returns:
            The :class:`matplotlib.figure.Figure` (save it with :func:`apple_roofline.figures.save_figure`).

        Raises:
            ValueError: an unknown ceiling name in ``ceilings``.
        """
        from ...user_kernels.place import place
        from ..views.plot import plot_roofline  # the view, imported on use (see the module docstring)

        placed = place(self, kernels) if kernels is not None else []
        return plot_roofline(self, points=points, ax=ax, title=title, ceilings=ceilings, kernels=placed)
