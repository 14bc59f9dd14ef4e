"""The roofline study: a run of the suites on one device, its model, and the views of it.

* :mod:`apple_roofline.study.records` — measurements, ceilings, skipped kernels (shared by every study);
* :mod:`.model` — the roofline model (ceilings, ridge points, attainable, classify, efficiency);
* :mod:`.run` — a run as a results file (kind ``"roofline"``);
* :mod:`.runner` — measuring a device with the suites (:func:`run_roofline`);
* :mod:`.report`, :mod:`.plot`, :mod:`.sweep_plot`, :mod:`.html` — the views;
* :mod:`.facade` — the public :class:`Roofline`, the model with ``plot()``.

Methodology: Williams, Waterman and Patterson 2009 and the M5 GPU roofline analysis
(docs/design/model.md, "The roofline model and its views").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict

if TYPE_CHECKING:  # imported on first use (``__getattr__``), so that importing one module is cheap
    from ..study.records import CONVENTIONS, Ceiling, Measurement, Skipped
    from .compare_plot import plot_compare
    from .facade import Roofline
    from .model import COMPUTE_BOUND, MEMORY_BOUND, Point, RidgeRow, RidgeTable, RooflineModel, derive_ceilings
    from .plot import plot_roofline
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

#: Where each public name lives (module relative to this package).
_HOME: Dict[str, str] = {
    "COMPUTE_BOUND": ".model",
    "CONVENTIONS": "..study.records",
    "MEMORY_BOUND": ".model",
    "Ceiling": "..study.records",
    "Measurement": "..study.records",
    "Point": ".model",
    "RidgeRow": ".model",
    "RidgeTable": ".model",
    "Roofline": ".facade",
    "RooflineModel": ".model",
    "Run": ".run",
    "Skipped": "..study.records",
    "derive_ceilings": ".model",
    "plot_compare": ".compare_plot",
    "plot_roofline": ".plot",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use: a run's start imports only the modules that
    measuring needs, not the views (the plots, the comparison, the reports)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value
