"""What the graphics study says when the first pass of a study on an NVIDIA GPU through Vulkan
never finishes (docs/design/watchdog.md, "A GPU whose render passes never finish").

On NVIDIA's Vulkan driver (580.159.04, H200, 2026-11-27) two things leave a GPU unable to finish
any later render pass, in every later process, until the GPU is reset: a CUDA kernel that faulted on
it (an illegal address, in any process, even one that ended cleanly long before), and a process that
ended while its queue still ran a render pass (a shader that never ends, killed). nvidia-smi then
shows the GPU busy with no process on it once a pass is submitted; CUDA work on it still runs; the
other GPUs of the host are unaffected. The watchdog ends such a study; this module adds what the
user can do about it.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["WEDGED_GPU_HINT", "wedged_gpu_suspected"]

#: The sentence added to "the device stopped responding" when the study's first pass never ended on
#: an NVIDIA GPU through Vulkan.
WEDGED_GPU_HINT = (
    "on NVIDIA's Vulkan driver a GPU finishes no render pass after a CUDA kernel faulted on it (an illegal "
    "address, in any process) or after a process ended with a render pass still running on it (a killed "
    "study, a shader that never ends): every later process hangs the same way until the GPU is reset "
    "(nvidia-smi -r, with no process on it) or the host restarts; "
    'docs/design/watchdog.md, "A GPU whose render passes never finish"'
)


def wedged_gpu_suspected(info: Mapping[str, Any]) -> bool:
    """Whether a study on the device ``info`` describes (a graphics device's ``info``: its
    ``wgpu_backend`` and ``name``) whose first pass never finished may have met that state: an NVIDIA
    GPU through Vulkan."""
    return str(info.get("wgpu_backend", "")) == "Vulkan" and "NVIDIA" in str(info.get("name", "")).upper()
