"""Compatibility: figures moved into the studies' subpackages.

``apple_roofline.plot.save_figure`` (documented) lives in :mod:`apple_roofline.figures`; the
roofline figures in :mod:`apple_roofline.roofline.plot` (:func:`plot_roofline`, taking a roofline
model) and :mod:`apple_roofline.roofline.compare_plot`. New code imports from there.
"""

from __future__ import annotations

from .figures import save_figure
from .roofline.compare_plot import plot_compare
from .roofline.plot import plot_roofline

__all__ = ["save_figure", "plot_roofline", "plot_compare"]
