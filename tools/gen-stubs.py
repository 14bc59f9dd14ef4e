"""Regenerate python/apple_roofline/_core.pyi from the installed extension (nanobind.stubgen).

Run after changing the bindings:  python tools/gen-stubs.py
The extension is imported through apple_roofline._native first, which preloads the BLAS library.
"""

import os
import runpy
import sys

import apple_roofline._native  # noqa: F401  (preloads OpenBLAS on Linux, imports _core)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "apple_roofline", "_core.pyi")
sys.argv = ["nanobind.stubgen", "-m", "apple_roofline._core", "-o", os.path.normpath(out)]
runpy.run_module("nanobind.stubgen", run_name="__main__")
