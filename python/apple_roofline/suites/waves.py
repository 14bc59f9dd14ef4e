"""Whole waves on GPUs, shared by the suites that size their launches in them (peak, idiv, matrix,
dualissue, hierarchy): where a compiled kernel reports ``wave_items`` (the work items the device runs
at once: on CUDA, SMs × resident blocks per SM × block size), a launch is rounded up to a whole
number of waves, at least :data:`MIN_WAVES`, so that no SM idles through a partial last wave
(the peak suite's docstring gives the H100 figures)."""

from __future__ import annotations

from typing import Any, Mapping, Tuple, Union

__all__ = ["MIN_WAVES", "wave_items"]

#: Fewest whole waves a launch sized in waves runs.
MIN_WAVES = 4


def wave_items(backend: Any, src: Tuple[str, str], constants: Mapping[str, Union[int, float]]) -> int:
    """The compiled kernel's ``wave_items`` (0 when unknown). A kernel that fails to compile or is
    unsupported, or whose BLOCK the device rejects (ValueError), reports 0 here; the runner meets the
    same error again and records it (skipped, or a rejected size when tuning)."""
    from .._native import _core

    try:
        return int(backend.compile(src[0], src[1], dict(constants)).wave_items)
    except (_core.BackendError, ValueError):
        return 0
