"""The roofline study: a run of the suites on one device, its model, and the views of it.

Its sub-packages are layers, each importing only from those before it:

* :mod:`.model` — the roofline model (ceilings, ridge points, attainable, classify, efficiency, the
  physical limits, which ceilings a figure shows), a run as a results file (:mod:`.model.run`, kind
  ``"roofline"``) and the public :class:`Roofline` (:mod:`.model.facade`);
* :mod:`.run` — measuring a device with the suites (:func:`~.run.runner.run_roofline`);
* :mod:`.views` — the figures, the report, the HTML page and the files a run writes;
* :mod:`.compare` — runs side by side.

The records every study shares (measurements, ceilings, skipped kernels) are below every study, in
:mod:`apple_roofline.study.records`.

Methodology: Williams, Waterman and Patterson 2009 and the M5 GPU roofline analysis
(docs/design/model.md, "The roofline model and its views").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict

if TYPE_CHECKING:  # imported on first use (``__getattr__``), so that importing one module is cheap
    from ..study.records import CONVENTIONS, Ceiling, Measurement, Skipped
    from .compare.compare_plot import plot_compare
    from .model.facade import Roofline
    from .model.model import COMPUTE_BOUND, MEMORY_BOUND, Point, RidgeRow, RidgeTable, RooflineModel, derive_ceilings
    from .model.run import Run
    from .views.plot import plot_roofline

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
    "COMPUTE_BOUND": ".model.model",
    "CONVENTIONS": "..study.records",
    "MEMORY_BOUND": ".model.model",
    "Ceiling": "..study.records",
    "Measurement": "..study.records",
    "Point": ".model.model",
    "RidgeRow": ".model.model",
    "RidgeTable": ".model.model",
    "Roofline": ".model.facade",
    "RooflineModel": ".model.model",
    "Run": ".model.run",
    "Skipped": "..study.records",
    "derive_ceilings": ".model.model",
    "plot_compare": ".compare.compare_plot",
    "plot_roofline": ".views.plot",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use: a run's start imports only the modules that
    measuring needs, not the views (the plots, the comparison, the reports)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value
