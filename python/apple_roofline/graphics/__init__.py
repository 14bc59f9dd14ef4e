"""The graphics study: the render-pass and texture paths of the GPU (kind ``"graphics"``).

* :mod:`.kernels` — the three suites as data (fill rate, tile memory, texture cache) and their NumPy
  references;
* :mod:`.model` — the results file, rates and texture cliffs;
* :mod:`.runner` — measuring a GPU (:func:`run_graphics`) through :mod:`.wgpu_device` (wgpu: Vulkan,
  Metal, D3D12; the ``graphics`` extra) or the native Metal render passes (:mod:`.native_device`);
* :mod:`.report`, :mod:`.plot`, :mod:`.outputs` — the views and the files written.

After the "Graphics Pipeline: TBDR Changes Everything" part of the Apple M5 GPU Roofline Analysis
(docs/design/graphics.md, "The graphics study").
"""

from __future__ import annotations

from .model import GraphicsStudy
from .runner import GraphicsInterrupted, run_graphics

__all__ = ["GraphicsStudy", "GraphicsInterrupted", "run_graphics"]
