"""The style the repository enforces, with zero findings: ruff's lint (pycodestyle, pyflakes, isort's
order) and its formatter over the Python (pyproject.toml, [tool.ruff]), and clang-format over the C++,
Objective-C++, CUDA and Metal sources (.clang-format). The WGSL kernels have no formatter and are
not checked. Both tools come with the `test` extra; a test skips, naming the tool, where it is absent.

To fix what these report: ``ruff check --fix`` and ``ruff format`` over PYTHON_PATHS, and
``clang-format -i`` over the files native_sources() lists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_PATHS = ("python", "tests", "bench", "examples", "tools")
# (folder, file patterns) of the native sources clang-format checks; shaders/wgsl is left out
NATIVE_GLOBS = (
    ("native", ("**/*.h", "**/*.cpp", "**/*.mm")),
    ("shaders/cuda", ("*.cu", "*.cuh")),
    ("shaders/metal", ("*.metal",)),
)


def tool(name: str) -> Optional[str]:
    """The executable `name` installed beside this Python (the test extra's wheels), else on PATH."""
    scripts = sysconfig.get_path("scripts")
    for candidate in (os.path.join(scripts, name), os.path.join(scripts, name + ".exe")):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def native_sources() -> List[str]:
    """The C++, Objective-C++, CUDA and MSL files under NATIVE_GLOBS, relative to the root, sorted."""
    found = {p for folder, patterns in NATIVE_GLOBS for pattern in patterns for p in (ROOT / folder).glob(pattern)}
    return sorted(str(p.relative_to(ROOT)) for p in found if p.is_file())


def run(cmd: List[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


RUFF = tool("ruff")
CLANG_FORMAT = tool("clang-format")
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff not installed (pip install '.[test]')")
needs_clang_format = pytest.mark.skipif(
    CLANG_FORMAT is None, reason="clang-format not installed (pip install '.[test]')"
)


@needs_ruff
def test_ruff_check_finds_nothing() -> None:
    p = run([str(RUFF), "check", "--no-cache", "--output-format", "concise", *PYTHON_PATHS])
    assert p.returncode == 0, f"ruff check found problems:\n{p.stdout}{p.stderr}"


@needs_ruff
def test_ruff_format_changes_nothing() -> None:
    p = run([str(RUFF), "format", "--no-cache", "--check", *PYTHON_PATHS])
    assert p.returncode == 0, f"ruff format would change files (run ruff format):\n{p.stdout}{p.stderr}"


def test_native_sources_are_found() -> None:
    """The globs find every kind of native source, so the clang-format check below has files to read."""
    files = native_sources()
    for suffix in (".h", ".cpp", ".mm", ".cu", ".cuh", ".metal"):
        assert any(f.endswith(suffix) for f in files), suffix
    assert not any("wgsl" in f for f in files)


@needs_clang_format
def test_clang_format_changes_nothing() -> None:
    p = run([str(CLANG_FORMAT), "--dry-run", "--Werror", *native_sources()])
    assert p.returncode == 0 and not p.stderr, f"clang-format would change files (run clang-format -i):\n{p.stderr}"
