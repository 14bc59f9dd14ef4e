"""The roofline study: a run of the suites on one device, its model, and the views of it.

* :mod:`.records` — measurements, ceilings, skipped kernels;
* :mod:`.model` — the roofline model (ceilings, ridge points, attainable, classify, efficiency);
* :mod:`.run` — a run as a results file (kind ``"roofline"``);
* :mod:`.runner` — measuring a device with the suites (:func:`run_roofline`);
* :mod:`.report`, :mod:`.plot`, :mod:`.sweep_plot`, :mod:`.html` — the views;
* :mod:`.facade` — the public :class:`Roofline`, the model with ``plot()``.

Methodology: Williams, Waterman and Patterson 2009 and the M5 GPU roofline analysis
(docs/design.md, "The roofline model and its views").
"""

from __future__ import annotations

from .compare_plot import plot_compare
from .facade import Roofline
from .model import COMPUTE_BOUND, MEMORY_BOUND, Point, RidgeRow, RidgeTable, RooflineModel, derive_ceilings
from .plot import plot_roofline
from .records import CONVENTIONS, Ceiling, Measurement, Skipped
from .run import Run

__all__ = [
    "COMPUTE_BOUND",
    "CONVENTIONS",
    "MEMORY_BOUND",
    "Ceiling",
    "Measurement",
    "Point",
    "RidgeRow",
    "RidgeTable",
    "Roofline",
    "RooflineModel",
    "Run",
    "Skipped",
    "derive_ceilings",
    "plot_compare",
    "plot_roofline",
]
