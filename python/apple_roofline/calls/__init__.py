"""The per-call cost study: time per call against FLOPs per call of one matmul through every path
the machine has, each path a fixed overhead plus a rate (docs/design/studies.md, "The per-call cost study").

* :mod:`.shapes` — the grid of shapes C[B×N] = A[B×N]·W[N×N] and its limits;
* :mod:`.paths` — the registry of paths (``blas``, ``cublas``, ``mps``, ``kernel``, Core ML);
* :mod:`.fit` — t(F) = t0 + F/R fitted per path, and the crossovers of pairs of paths;
* :mod:`.model` — :class:`CallMeasurement` and :class:`CallsStudy` (results files of kind ``"calls"``);
* :mod:`.runner` — measuring a device (:func:`run_calls` with its :class:`CallsOptions`);
* :mod:`.report`, :mod:`.plot`, :mod:`.outputs` — the tables, the figure, the files.

Typical use::

    from apple_roofline.calls import CallsOptions, run_calls
    study = run_calls("cuda:0", CallsOptions(quick=True))
    for fit in study.fits():
        print(fit.path, fit.t0_s, fit.rate)

Importing this package never imports the native extension (only :func:`run_calls` does) nor
matplotlib (only :func:`plot_calls` does).
"""

from __future__ import annotations

from .fit import CallFit, Crossover, crossover, crossovers, fit_call_cost
from .model import CallMeasurement, CallPathInfo, CallsStudy, PathSkipped
from .outputs import CALLS_FILES, write_calls
from .paths import PATHS, CallPath, PreparedCall, check_paths
from .plot import plot_calls
from .report import crossover_table, fit_table, format_calls, shape_table
from .runner import CallsInterrupted, CallsOptions, run_calls
from .shapes import BATCHES, QUICK_BATCHES, QUICK_SIZES, SIZES, check_batches, check_sizes, grid

__all__ = [
    "BATCHES",
    "CALLS_FILES",
    "PATHS",
    "QUICK_BATCHES",
    "QUICK_SIZES",
    "SIZES",
    "CallFit",
    "CallMeasurement",
    "CallPath",
    "CallPathInfo",
    "CallsInterrupted",
    "CallsOptions",
    "CallsStudy",
    "Crossover",
    "PathSkipped",
    "PreparedCall",
    "check_batches",
    "check_paths",
    "check_sizes",
    "crossover",
    "crossover_table",
    "crossovers",
    "fit_call_cost",
    "fit_table",
    "format_calls",
    "grid",
    "plot_calls",
    "run_calls",
    "shape_table",
    "write_calls",
]
