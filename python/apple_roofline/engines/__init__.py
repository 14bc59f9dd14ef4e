"""The engines study: Core ML and the Neural Engine (kind ``"engines"``).

* :mod:`.kernels` — the matmul models as data (shapes, batches, precisions, compute units), their
  FLOPs and bytes, the sweep;
* :mod:`.models` — building the models with coremltools (the ``coreml`` extra) into a cache;
* :mod:`.predict` — timing Core ML predictions from Objective-C++ (native) and coremltools (Python),
  validated against NumPy; :func:`matmul_call_seconds` for per-call cost studies;
* :mod:`.model` — the results file; :mod:`.runner` — the sweep (:func:`run_engines` with its
  :class:`EnginesOptions`);
* :mod:`.report`, :mod:`.plot`, :mod:`.outputs` — the views and the files written.

After the "ANE: The Neural Engine", "INT8 Quantization" and "Core ML Overhead" parts of the Apple M5
GPU Roofline Analysis (docs/design/studies.md, "The engines study").
"""

from __future__ import annotations

from .model import EnginesStudy
from .predict import matmul_call_seconds
from .runner import EnginesInterrupted, EnginesOptions, run_engines

__all__ = ["EnginesStudy", "EnginesInterrupted", "EnginesOptions", "matmul_call_seconds", "run_engines"]
