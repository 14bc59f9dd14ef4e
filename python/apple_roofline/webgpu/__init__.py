"""The WebGPU backend (``wgpu:N``): the compute suites through wgpu on Vulkan, Metal or D3D12
(docs/design/backends.md, "The WebGPU backend").

One folder, as each native backend is one folder of ``native/``: only this package (and the
graphics study's ``graphics/wgpu_device.py``) touches wgpu's types. :class:`WgpuBackend` presents
``_core.Backend``'s calls, so the suites, the runner and the results see one more backend.
"""

from __future__ import annotations

from .backend import NOT_REACHABLE, WgpuBackend, adapter_count

__all__ = ["WgpuBackend", "adapter_count", "NOT_REACHABLE"]
