"""Compatibility module: the dispatch-latency study lives in :mod:`apple_roofline.latency`.

``apple_roofline.dispatch.run_dispatch`` is a documented path and keeps working; new code imports
from :mod:`apple_roofline.latency` (the runner is :mod:`apple_roofline.latency.runner`).
"""

from __future__ import annotations

from .latency.kernels import TINY_BYTES, TINY_ITEMS
from .latency.runner import (
    DEFAULT_LAUNCHES,
    DEFAULT_REPS,
    DEFAULT_WARMUP,
    MAX_LAUNCHES,
    MAX_REPS,
    DispatchInterrupted,
    python_round_trip,
    python_throughput,
    run_dispatch,
    timeline_series,
)

__all__ = [
    "DEFAULT_REPS",
    "DEFAULT_LAUNCHES",
    "DEFAULT_WARMUP",
    "MAX_REPS",
    "MAX_LAUNCHES",
    "TINY_ITEMS",
    "TINY_BYTES",
    "DispatchInterrupted",
    "run_dispatch",
    "python_throughput",
    "python_round_trip",
    "timeline_series",
]
