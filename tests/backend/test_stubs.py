"""The committed stub python/apple_roofline/_core.pyi matches the built extension (regenerate with
`python tools/gen-stubs.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_committed_stub_is_current(tmp_path: Path) -> None:
    pytest.importorskip("apple_roofline._native")
    pytest.importorskip("nanobind.stubgen")
    out = tmp_path / "_core.pyi"
    code = (
        "import sys, runpy, apple_roofline._native\n"
        f"sys.argv = ['stubgen', '-q', '-m', 'apple_roofline._core', '-o', {str(out)!r}]\n"
        "runpy.run_module('nanobind.stubgen', run_name='__main__')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    committed = (ROOT / "python" / "apple_roofline" / "_core.pyi").read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8") == committed, "stale _core.pyi: run python tools/gen-stubs.py"
