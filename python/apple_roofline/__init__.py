"""apple_roofline: measured roofline models of Apple Silicon, any CPU and NVIDIA GPUs.

Measures the ceilings of the machine it runs on — STREAM bandwidth, FMA compute peaks,
arithmetic-intensity sweeps and vendor GEMM — validates every timed kernel's output against NumPy,
and turns the results into a roofline model (ceilings, ridge points, attainable performance),
plots and reports. Methodology: DESIGN.md and the M5 GPU roofline analysis it cites.

Typical use::

    import apple_roofline as ar
    run = ar.run_roofline("cpu", ["stream", "peak"])
    model = ar.Roofline.from_run(run)
    print(model.ridge_points())
    p = ar.measure(lambda: a @ b, flops=2 * n**3, bytes=3 * n * n * 4)   # any callable -> Point
    model.plot(points=[p])
"""

from __future__ import annotations

from typing import Any

from ._version import __version__
from .results import Ceiling, Measurement, ResultsError, Run, Skipped
from . import flops_bytes
from .embed import measure
from .roofline import Point, Roofline, derive_ceilings

__all__ = [
    "__version__",
    "BackendError",
    "CompileError",
    "DeviceError",
    "UnsupportedError",
    "Ceiling",
    "Measurement",
    "Point",
    "ResultsError",
    "Roofline",
    "Run",
    "RunInterrupted",
    "Skipped",
    "derive_ceilings",
    "flops_bytes",
    "measure",
    "list_devices",
    "run_roofline",
]

_LAZY = {
    "BackendError": ("._native", "_core"),
    "CompileError": ("._native", "_core"),
    "DeviceError": ("._native", "_core"),
    "UnsupportedError": ("._native", "_core"),
    "run_roofline": (".runner", None),
    "RunInterrupted": (".runner", None),
    "list_devices": (".devices", None),
}


def __getattr__(name: str) -> Any:
    """Import the native extension and the runner on first use, so that ``import apple_roofline``
    stays cheap and works for reading results without the extension."""
    if name not in _LAZY:
        raise AttributeError(f"module 'apple_roofline' has no attribute '{name}'")
    import importlib

    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name, __name__)
    value = getattr(getattr(module, attr), name) if attr else getattr(module, name)
    globals()[name] = value
    return value
