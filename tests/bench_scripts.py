"""bench/'s scripts as modules, for the tests of their pure parts: ``load_bench("bench_clock")``
imports ``bench/bench_clock.py`` from its file (bench/ is not a package). Shared by tests/unit's
test_bench_*.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["BENCH", "load_bench"]

#: The repository's bench/ directory.
BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(stem: str) -> ModuleType:
    """``bench/<stem>.py`` executed as a module named ``stem``, registered in ``sys.modules`` (its
    dataclasses look their module up there). Raises FileNotFoundError where there is no such script."""
    spec = importlib.util.spec_from_file_location(stem, BENCH / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[stem] = mod
    spec.loader.exec_module(mod)
    return mod
