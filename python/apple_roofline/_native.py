"""Loads the native extension ``_core``.

On Linux the CPU GEMM suite links OpenBLAS from the ``scipy-openblas32`` wheel; that library is not
on the loader's search path, so it is loaded here (RTLD_GLOBAL) before the extension, whose
dependency on ``libscipy_openblas.so`` then resolves to it by soname.
"""

from __future__ import annotations

import ctypes
import os
import sys


def _preload_openblas() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import scipy_openblas32
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ImportError(
            "apple_roofline needs the scipy-openblas32 package on Linux: pip install scipy-openblas32"
        ) from exc
    path = os.path.join(scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(True))
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_preload_openblas()

from . import _core  # noqa: E402

__all__ = ["_core"]
