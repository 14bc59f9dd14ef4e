"""Loads the native extension ``_core``.

On Linux the CPU GEMM suite links OpenBLAS from the ``scipy-openblas32`` wheel; that library is not
on the loader's search path, so it is loaded here (RTLD_GLOBAL) before the extension, whose
dependency on ``libscipy_openblas.so`` then resolves to it by soname.

The CUDA backend loads NVRTC and cuBLAS at run time (native/cuda/loader.cpp). Besides the toolkit
and the loader's path it looks in ``$APPLE_ROOFLINE_CUDA_LIBS``; unless the user set it, it is set
here to the library folders of pip-installed NVIDIA wheels (``nvidia-cuda-nvrtc``,
``nvidia-cublas``, as PyTorch and CuPy install them), so those are found too.
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


def _nvidia_wheel_lib_dirs() -> "list[str]":
    """``lib`` folders of installed ``nvidia.*`` wheels (``nvidia/cu13/lib``, ``nvidia/cublas/lib`` …)."""
    import importlib

    try:
        nvidia = importlib.import_module("nvidia")  # namespace package of NVIDIA's PyPI wheels
    except ImportError:
        return []
    dirs = []
    for root in getattr(nvidia, "__path__", []):
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        for name in names:
            lib = os.path.join(root, name, "lib")
            if os.path.isdir(lib):
                dirs.append(lib)
    return dirs


def _cuda_library_dirs() -> None:
    if sys.platform.startswith("linux") and "APPLE_ROOFLINE_CUDA_LIBS" not in os.environ:
        dirs = _nvidia_wheel_lib_dirs()
        if dirs:
            os.environ["APPLE_ROOFLINE_CUDA_LIBS"] = os.pathsep.join(dirs)


_preload_openblas()
_cuda_library_dirs()

from . import _core  # noqa: E402

__all__ = ["_core"]
