"""apple_roofline: measured roofline models of Apple Silicon, any CPU and NVIDIA GPUs.

Measures the ceilings of the machine it runs on — STREAM bandwidth, FMA compute peaks,
arithmetic-intensity sweeps and vendor GEMM — validates every timed kernel's output against NumPy,
and turns the results into a roofline model (ceilings, ridge points, attainable performance),
plots and reports. Methodology: docs/design/README.md and the Apple M5 GPU roofline analysis it cites.

Typical use::

    import apple_roofline as ar
    run = ar.run_roofline(ar.RunOptions(device="cpu", suites=["stream", "peak"]))
    model = ar.Roofline.from_run(run)
    print(model.ridge_points())
    p = ar.measure(lambda: a @ b, flops=2 * n**3, bytes=3 * n * n * 4)   # any callable -> Point
    ar.plot_roofline(model, points=[p])   # -> a matplotlib Figure

Layout (docs/design/overview.md, "Layout"): :mod:`.study` is the frame every kind of study shares (the
results-file header, its strict reader, atomic writes, the progress protocol); each kind of study is
a subpackage of the same shape — :mod:`.roofline` (the suites' run and the roofline model) and
:mod:`.dispatch` (dispatch latency) — with its model, runner, report and plot; :mod:`.theoretical`
holds the spec models; :mod:`.cli` the command line; :mod:`.suites` the kernel tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:  # imported on first use (``__getattr__``), so the command line starts quickly
    from .errors import OptionError
    from .roofline.model.facade import Roofline
    from .roofline.model.model import Point, derive_ceilings
    from .roofline.model.run import Run
    from .roofline.views.plot import plot_roofline
    from .study.files import ResultsError
    from .study.records import Ceiling, Measurement, Skipped
    from .user_kernels import flops_bytes
    from .user_kernels.embed import measure

__all__ = [
    "__version__",
    "BackendError",
    "CompileError",
    "DeviceError",
    "UnsupportedError",
    "Ceiling",
    "Measurement",
    "OptionError",
    "Point",
    "ResultsError",
    "Roofline",
    "Run",
    "RunInterrupted",
    "RunOptions",
    "Skipped",
    "derive_ceilings",
    "flops_bytes",
    "plot_roofline",
    "measure",
    "list_devices",
    "load_kernels",
    "load_results",
    "save_kernels",
    "run_dispatch",
    "run_roofline",
    "DispatchStudy",
]

_LAZY = {
    "flops_bytes": (".user_kernels.flops_bytes", ""),
    "measure": (".user_kernels.embed", None),
    "OptionError": (".errors", None),
    "Roofline": (".roofline.model.facade", None),
    "Point": (".roofline.model.model", None),
    "derive_ceilings": (".roofline.model.model", None),
    "Ceiling": (".study.records", None),
    "Measurement": (".study.records", None),
    "Skipped": (".study.records", None),
    "Run": (".roofline.model.run", None),
    "plot_roofline": (".roofline.views.plot", None),
    "ResultsError": (".study.files", None),
    "BackendError": ("._native", "_core"),
    "CompileError": ("._native", "_core"),
    "DeviceError": ("._native", "_core"),
    "UnsupportedError": ("._native", "_core"),
    "run_roofline": (".roofline.run.runner", None),
    "RunInterrupted": (".roofline.run.runner", None),
    "RunOptions": (".roofline.run.options", None),
    "list_devices": (".devices", None),
    "run_dispatch": (".dispatch.run.runner", None),
    "DispatchStudy": (".dispatch.model", None),
    "load_results": (".results", None),
    "load_kernels": (".user_kernels.load", None),
    "save_kernels": (".user_kernels.document", None),
}


def __getattr__(name: str) -> Any:
    """Import every public name on first use (a submodule where ``attr`` is ""), so that
    ``import apple_roofline`` (and so the command line's start) stays cheap and works for reading
    results without the extension."""
    if name not in _LAZY:
        raise AttributeError(f"module 'apple_roofline' has no attribute '{name}'")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = module if attr == "" else getattr(getattr(module, attr), name) if attr else getattr(module, name)
    globals()[name] = value
    return value
