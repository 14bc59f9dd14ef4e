"""Shader sources compiled at run time: ``shaders/cuda/*.cu`` (NVRTC), ``shaders/metal/*.metal`` and
``shaders/wgsl/*.wgsl`` (wgpu).

A suite's kernel table names a GPU kernel by file and entry, e.g. ``("stream.cu", "stream_triad_f32")``;
:func:`resolve` turns that into the source text the backend compiles. CPU kernels are built into
the extension and named by the file of ``native/cpu/`` that implements them (``("kernels.cpp",
"stream_triad_f32")``, ``("idiv.cpp", …)``, ``("rules.cpp", …)``, ``("hierarchy.cpp", …)``), and vendor
routines by library (``("blas", …)``, ``("cublas", …)``); those pass through unchanged.

A ``.cu`` file shares code through headers beside it (``#include "clock.cuh"``: the effective-clock
probe, docs/design/clocks.md, "Clocks"); NVRTC gets a string, not a folder, so :func:`shader_source` inlines them,
with ``#line`` directives so that compiler messages still name the file and line.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Tuple

__all__ = ["SHADER_SUFFIXES", "shader_dirs", "shader_path", "shader_source", "resolve"]

#: File suffixes of run-time-compiled sources, by backend folder.
SHADER_SUFFIXES = {".cu": "cuda", ".metal": "metal", ".wgsl": "wgsl"}

#: A CUDA source's include of a shared header beside it (``#include "clock.cuh"``), a whole line.
_CUDA_INCLUDE = re.compile(r'^[ \t]*#include[ \t]+"(\w+\.cuh)"[^\n]*$', re.MULTILINE)

_PKG = os.path.dirname(os.path.abspath(__file__))


def shader_dirs() -> Tuple[str, ...]:
    """Where shader folders are looked for: the installed package's ``shaders/`` (CMake installs it
    there), then the source tree's ``shaders/`` (editable installs and running from a checkout)."""
    return (os.path.join(_PKG, "shaders"), os.path.join(os.path.dirname(os.path.dirname(_PKG)), "shaders"))


def shader_path(name: str) -> str:
    """The path of shader file ``name`` (e.g. ``"fma.cu"``), in the folder of its backend.

    Raises:
        ValueError: ``name`` has no shader suffix (.cu, .metal, .wgsl) or contains a path separator.
        FileNotFoundError: the file is in none of :func:`shader_dirs` (a broken install).
    """
    suffix = os.path.splitext(name)[1]
    if suffix not in SHADER_SUFFIXES or os.path.basename(name) != name:
        raise ValueError(
            f"'{name}' is not a shader file name (valid: <name>.cu, <name>.metal or <name>.wgsl, no folders)"
        )
    tried = []
    for d in shader_dirs():
        p = os.path.join(d, SHADER_SUFFIXES[suffix], name)
        if os.path.isfile(p):
            return p
        tried.append(p)
    raise FileNotFoundError(f"shader '{name}' not found (looked in {', '.join(tried)}); reinstall the package")


@functools.lru_cache(maxsize=None)
def shader_source(name: str) -> str:
    """The text the backend compiles for shader file ``name`` (read once per process): the file,
    with a ``.cu`` file's ``#include "<header>.cuh"`` lines replaced by the header's text from the
    same folder (``#line`` directives keep compiler messages' file names and lines). Raises as
    :func:`shader_path`; FileNotFoundError also for a missing header."""
    path = shader_path(name)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not name.endswith(".cu"):
        return text
    folder = os.path.dirname(path)

    def inline(m: "re.Match[str]") -> str:
        header = os.path.join(folder, m.group(1))
        if not os.path.isfile(header):
            raise FileNotFoundError(f"shader '{name}' includes '{m.group(1)}', not found beside it ({header})")
        with open(header, encoding="utf-8") as f:
            body = f.read()
        line = text.count("\n", 0, m.start()) + 2  # the line after the include
        return f'#line 1 "{m.group(1)}"\n{body.rstrip()}\n#line {line} "{name}"'

    return _CUDA_INCLUDE.sub(inline, text)


def resolve(source: str, entry: str) -> Tuple[str, str]:
    """``(source, entry)`` as the backend's ``compile`` wants it: a shader file name becomes its text
    (:func:`shader_source`); anything else (a CPU kernel file such as ``"kernels.cpp"``, a vendor
    library name) is returned unchanged."""
    if os.path.splitext(source)[1] in SHADER_SUFFIXES:
        return shader_source(source), entry
    return source, entry
