"""The on-disk cache of compiled kernels (docs/design/backends.md, "The kernel cache"), as a run reports it.

The cache itself is native (``native/core/kernel_cache.h``): NVRTC's output on CUDA, each compute
pipeline's binary archive on Metal, kept under ``$APPLE_ROOFLINE_CACHE`` (``off``: none), else
``$XDG_CACHE_HOME/apple_roofline``, else ``~/.cache/apple_roofline`` (macOS:
``~/Library/Caches/apple_roofline``). Its counts and warnings are per process.
"""

from __future__ import annotations

from typing import Any, Dict, List

__all__ = ["cache_stats", "CacheWarnings"]


def cache_stats() -> Dict[str, Any]:
    """This process's kernel-cache state: ``dir`` (the entries' folder now; "" when there is none),
    ``why`` (why not), and since the process started ``hits``, ``misses``, ``rebuilt`` (entries found
    corrupt or stale and compiled again), ``compiles`` (kernels compiled), ``stored`` (entries
    written) and ``warnings`` (one line each, at most 64)."""
    from ._native import _core

    return dict(_core.kernel_cache_stats())


def _warnings() -> List[str]:
    try:
        from ._native import _core
    except ImportError:  # no native module (the unit tier's fake backends): nothing was compiled
        return []
    return [str(w) for w in _core.kernel_cache_stats()["warnings"]]


class CacheWarnings:
    """The cache's warnings raised from construction on (a corrupt entry rebuilt, a folder that
    cannot be written), for a run to report with its own."""

    def __init__(self) -> None:
        self._seen = len(_warnings())

    def new(self) -> List[str]:
        """The warnings raised since construction, in order."""
        return _warnings()[self._seen :]
