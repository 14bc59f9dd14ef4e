"""The two kernels of the dispatch-latency study, and the check of the tiny kernel's output.

* ``null``: one thread, no memory; it has no output, so a launch is checked only by the device
  reporting no error. On WebGPU (``shaders/wgsl/dispatch.wgsl``), which reports a failed dispatch to
  the device's error callbacks rather than to the call, its one invocation adds 1.0 to one float4
  (:data:`WGPU_NULL_BYTES`), so that it counts its launches as the tiny kernel does.
* ``tiny``: one threadgroup/block of :data:`TINY_ITEMS` threads, each adding 1.0 to one float4 of a
  :data:`TINY_BYTES` buffer (:data:`TINY_FLOATS` float32). On a zeroed buffer every float counts the
  launches made, so :func:`check_tiny_counts` catches a launch dropped or run twice
  (docs/design/measurement.md, "Validation").

The sources are ``shaders/cuda/dispatch.cu``, ``shaders/metal/dispatch.metal`` and
``shaders/wgsl/dispatch.wgsl`` (:data:`KERNEL_SOURCES`), and the CPU backend's built-in twins. Nothing
here imports the extension.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

__all__ = [
    "KERNELS",
    "KERNEL_SOURCES",
    "TINY_ITEMS",
    "TINY_BYTES",
    "TINY_FLOATS",
    "FLOAT32_EXACT",
    "NULL_VALIDATION",
    "WGPU_NULL_BYTES",
    "check_launch_counts",
    "check_tiny_counts",
]

#: The two kernels of the study.
KERNELS: Tuple[str, ...] = ("null", "tiny")
#: Where each backend's kernels come from: a file of ``shaders/`` compiled at run time, or the file of
#: ``native/cpu/`` that holds the extension's built-in CPU kernels. Its keys are the backends the study
#: runs on.
KERNEL_SOURCES: Dict[str, str] = {
    "cpu": "kernels.cpp",
    "cuda": "dispatch.cu",
    "metal": "dispatch.metal",
    "wgpu": "dispatch.wgsl",
}
#: Threads of the tiny kernel: one block/threadgroup, one float4 (16 B) each.
TINY_ITEMS = 256
#: The tiny kernel's buffer: 256 float4 = 4 KiB.
TINY_BYTES = TINY_ITEMS * 16
#: Floats the tiny kernel adds 1.0 to per launch.
TINY_FLOATS = TINY_BYTES // 4
#: float32 counts launches exactly up to 2^24; past it, x + 1.0 rounds back to x.
FLOAT32_EXACT = 1 << 24
#: The WebGPU null kernel's buffer: the one float4 its invocation counts launches in.
WGPU_NULL_BYTES = 16
#: The validation note of a null-kernel series.
NULL_VALIDATION = "no output (the null kernel touches no memory): every launch completed without a device error"


def check_tiny_counts(values: Any, count: int) -> Tuple[bool, str]:
    """Validate the ``tiny`` kernel's output after ``count`` launches on a zeroed buffer: every one of
    its :data:`TINY_FLOATS` float32 values must equal ``count`` (saturating at 2^24).

    Returns:
        ``(valid, message)``: what was checked, or the first float that differs and how many do.
    """
    return check_launch_counts(values, count, TINY_FLOATS)


def check_launch_counts(values: Any, count: int, floats: int) -> Tuple[bool, str]:
    """Validate a counting kernel's output after ``count`` launches on a zeroed buffer: each of its
    ``floats`` float32 values must equal ``count`` (saturating at 2^24). The tiny kernel counts in
    :data:`TINY_FLOATS`, WebGPU's null kernel in the 4 floats of :data:`WGPU_NULL_BYTES`.

    Returns:
        ``(valid, message)``: what was checked, or the first float that differs and how many do.
    """
    v = np.asarray(values, dtype=np.float32).ravel()
    if v.size != floats:
        return False, f"the output has {v.size} floats, not {floats}"
    expected = float(min(count, FLOAT32_EXACT))
    saturated = f" (float32 stops counting at 2^24 = {FLOAT32_EXACT})" if count > FLOAT32_EXACT else ""
    bad = np.flatnonzero(v != np.float32(expected))
    if bad.size == 0:
        return True, f"all {floats} floats == {int(expected)} after {count} launches{saturated}"
    i = int(bad[0])
    return False, (
        f"{bad.size} of {floats} floats != {int(expected)} after {count} launches{saturated} "
        f"(first: x[{i}] == {float(v[i]):.9g})"
    )
