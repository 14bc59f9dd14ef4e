"""The host CPUs this process may use, and the limit its own thread pools honour.

A run that shares its host with others (``run --device cuda:all`` starts one process per GPU and
gives each a share of the cores: :mod:`apple_roofline.node`) is limited in two ways: on Linux by its
CPU affinity, which the native CPU backend's thread pool and clock probe read (``usable_cpus`` in
native/cpu/thread_pool.cpp), and by :data:`THREADS_ENV`, which the Python-side pools (the
validation's row blocks, :mod:`apple_roofline.suites.blocks`; the kernels' parallel compiles,
:func:`apple_roofline.suites.base.prebuild`) read through :func:`host_threads`. BLAS and OpenMP
pools read their own variables (:data:`POOL_ENVS`), set by the parent before the child starts.
"""

from __future__ import annotations

import os
from typing import List, Tuple

__all__ = ["THREADS_ENV", "POOL_ENVS", "usable_cpus", "host_threads"]

#: The most threads this process's own pools may use (a positive integer); unset: every usable CPU.
THREADS_ENV = "APPLE_ROOFLINE_HOST_THREADS"
#: The thread-count variables of the libraries' own pools (OpenMP, OpenBLAS, MKL, Accelerate's vecLib).
POOL_ENVS: Tuple[str, ...] = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def usable_cpus() -> List[int]:
    """The CPUs this process may run on: its affinity on Linux, else every CPU (numbered 0 ...)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is not None:
        return sorted(getaffinity(0))
    return list(range(os.cpu_count() or 1))


def host_threads() -> int:
    """The most threads this process's own pools use: :data:`THREADS_ENV` where it holds a positive
    integer (a malformed value is ignored), at most the usable CPUs; at least 1."""
    cpus = len(usable_cpus())
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return max(1, min(int(raw), cpus))
    return max(1, cpus)
