"""What ``pip install .`` installs (pyproject.toml): the README's first command gives the page a user
opens first, report.html, with its interactive figure (issue 45: Plotly was an extra, so that page
was the static one), and every ``apple_roofline[EXTRA]`` a message or a doc names is an extra that
exists."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")


def _project() -> Dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project: Dict[str, Any] = tomllib.load(f)["project"]
    return project


def test_plotly_is_a_dependency_so_the_first_page_is_interactive() -> None:
    deps = {re.split(r"[<>=~!; \[]", d, maxsplit=1)[0].lower(): d for d in _project()["dependencies"]}
    assert "plotly" in deps and ";" not in deps["plotly"]  # on every platform
    assert "interactive" not in _project()["optional-dependencies"]  # no extra left for what is installed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```sh\n(.*?)\n```", readme, re.S)
    assert first is not None and "pip install . &&" in first.group(1) and "apple-roofline run" in first.group(1)


def test_every_extra_named_exists() -> None:
    extras = set(_project()["optional-dependencies"])
    named = set()
    for path in [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "python").rglob("*.py")]:
        named |= {(m, path.name) for m in re.findall(r"apple_roofline\[([a-z0-9_-]+)\]", path.read_text("utf-8"))}
    missing = sorted(f"{extra} ({where})" for extra, where in named if extra not in extras)
    assert named and not missing, missing
