"""The dispatch study's kernels as its paths launch them, and its Python launch loops (shared by the
native backends' measures, :mod:`.runner`, and the WebGPU backend's, :mod:`.wgpu`).

* :class:`StudyKernel`: one of the study's kernels (:data:`~..kernels.KERNELS`) compiled on the
  device, its arguments, work items and the buffers that count its launches;
* :func:`python_throughput`, :func:`python_round_trip`: the ``python`` path's loops over the public
  :meth:`Kernel.launch` and :meth:`Backend.synchronize`, host clock, garbage collector paused;
* :data:`Step`: what one journaled step of the study gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..kernels import NULL_VALIDATION, TINY_FLOATS, check_launch_counts
from ..model import LatencySeries, Pairing, PeerSkipped
from ..peers.common import gc_paused

__all__ = ["Step", "StudyKernel", "python_throughput", "python_round_trip"]

#: What one step of the study gives: its series, what it could not measure, and the pairings of
#: its series (an interleaved step's one).
Step = Tuple[List[LatencySeries], List[PeerSkipped], List[Pairing]]


@dataclass
class StudyKernel:
    """One kernel as the study's paths launch it: the kernel, its arguments, its work items, its
    output (the tiny kernel's 4 KiB buffer; WebGPU's null kernel's float4; None for a kernel that
    writes nothing), the floats that output counts launches in, and the twin ``Kernel.timeline``
    runs."""

    name: str  # "null" | "tiny"
    kernel: Any
    args: Tuple[Any, ...]
    work_items: int
    output: Optional[Any]
    timeline_kernel: Any
    timeline_args: Tuple[Any, ...]
    python_output: Optional[Any] = None  # the python path's own buffer when interleaved
    floats: int = TINY_FLOATS

    @property
    def python_args(self) -> Tuple[Any, ...]:
        """The python path's arguments in an interleaved step: its own buffer, else the kernel's."""
        return (self.python_output,) if self.python_output is not None else self.args

    def reset(self) -> None:
        """Zero the outputs (nothing for a kernel that writes none)."""
        for out in (self.output, self.python_output):
            if out is not None:
                out.write(np.zeros(self.floats, dtype=np.float32))

    def check(self, launches: int, python: bool = False) -> Tuple[bool, str]:
        """Whether the output (the python path's own when ``python``) holds ``launches`` in each of
        its floats (always true for a kernel that writes none)."""
        out = self.python_output if python else self.output
        if out is None:
            return True, NULL_VALIDATION
        return check_launch_counts(out.read("float32", self.floats), launches, self.floats)


def python_throughput(
    kernel: Any, backend: Any, args: Sequence[Any], work_items: int, launches: int, reps: int
) -> List[float]:
    """Python's floor-plus-binding loop: ``reps`` samples of ``launches`` ``kernel.launch`` calls (of
    ``work_items`` work items) and one ``backend.synchronize()``; seconds per launch (host
    ``time.perf_counter_ns``).

    The loop calls the bound methods directly (no wrapper per launch, unlike the peers' loops), so
    that it times the binding and nothing else."""

    go, sync, clock = kernel.launch, backend.synchronize, time.perf_counter_ns
    a = tuple(args)
    out = []
    sync()
    with gc_paused():
        for _ in range(reps):
            t0 = clock()
            for _ in range(launches):
                go(a, work_items)
            sync()
            out.append((clock() - t0) * 1e-9 / launches)
    return out


def python_round_trip(kernel: Any, backend: Any, args: Sequence[Any], work_items: int, reps: int) -> List[float]:
    """``reps`` samples of one ``kernel.launch`` and one ``backend.synchronize()`` from Python; seconds
    each (:func:`python_throughput` with one launch per sample)."""
    return python_throughput(kernel, backend, args, work_items, 1, reps)
