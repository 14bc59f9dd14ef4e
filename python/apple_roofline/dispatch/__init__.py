"""The dispatch-latency study: what one kernel launch costs, from native code, from Python and
through the peer libraries (docs/design/extending.md, "Adding a study").

* :mod:`.kernels` — the null and tiny kernels, and the check of the tiny kernel's output;
* :mod:`.model` — the results: :class:`LatencySeries`, :class:`Pairing`, :class:`PeerSkipped` and
  :class:`DispatchStudy` (a results file of kind ``"dispatch"``);
* :mod:`.paired` — the binding's cost from interleaved samples: :func:`paired_difference` and its
  confidence interval;
* :mod:`.run` — measuring a device (:func:`run_dispatch`), above the model and the peers;
* :mod:`.peers` — CuPy and PyTorch on CUDA, MLX and PyObjC on Metal, MLX on the CPU, one module each;
* :mod:`.report`, :mod:`.plot` — the views: tables, the binding's cost, the histograms;
* :mod:`.outputs` — the files a study is written as (:func:`write_study`).

Typical use::

    from apple_roofline.dispatch import run_dispatch, binding_cost, cost_text
    study = run_dispatch("cuda:0", reps=200, launches=100)
    study.save("dispatch.json")
    for cost in binding_cost(study):
        print(cost.kernel, cost.measure, cost_text(cost))

Importing this package never imports the native extension (only :func:`run_dispatch` does) nor
matplotlib (only :func:`plot_dispatch` does).
"""

from __future__ import annotations

from .kernels import FLOAT32_EXACT, KERNELS, TINY_BYTES, TINY_FLOATS, TINY_ITEMS, check_tiny_counts
from .model import CLOCKS, MEASURES, DispatchStudy, LatencySeries, Pairing, PeerSkipped
from .outputs import STUDY_FILES, write_study
from .paired import PairedDifference, pair_order, paired_difference
from .peers import PEERS, measure_peers
from .plot import plot_dispatch
from .report import (
    LATENCY_COLUMNS,
    LATENCY_CSV_COLUMNS,
    BindingCost,
    binding_cost,
    cost_text,
    format_dispatch,
    latency_table,
    step_medians,
)
from .run.runner import (
    DEFAULT_LAUNCHES,
    DEFAULT_REPS,
    DEFAULT_WARMUP,
    MAX_LAUNCHES,
    MAX_REPS,
    MAX_WARMUP,
    DispatchInterrupted,
    check_counts,
    run_dispatch,
)

__all__ = [
    "CLOCKS",
    "DEFAULT_LAUNCHES",
    "DEFAULT_REPS",
    "DEFAULT_WARMUP",
    "FLOAT32_EXACT",
    "KERNELS",
    "LATENCY_COLUMNS",
    "LATENCY_CSV_COLUMNS",
    "MAX_LAUNCHES",
    "MAX_REPS",
    "MAX_WARMUP",
    "MEASURES",
    "PEERS",
    "STUDY_FILES",
    "TINY_BYTES",
    "TINY_FLOATS",
    "TINY_ITEMS",
    "BindingCost",
    "DispatchInterrupted",
    "DispatchStudy",
    "LatencySeries",
    "PairedDifference",
    "Pairing",
    "PeerSkipped",
    "binding_cost",
    "check_counts",
    "check_tiny_counts",
    "cost_text",
    "format_dispatch",
    "latency_table",
    "measure_peers",
    "pair_order",
    "paired_difference",
    "plot_dispatch",
    "run_dispatch",
    "step_medians",
    "write_study",
]
