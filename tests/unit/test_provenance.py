"""The git revision in every results file comes from the project's own checkout only (docs/design/files.md,
"Results files"): a copy of the source inside another git repository (an unpacked sdist in a
monorepo, a vendored copy) records no revision, never the enclosing repository's commit. Both sides
of the rule: ``provenance.checkout_revision`` (Python) and cmake/git_revision.cmake (the build, run
here as a ``cmake -P`` script)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from apple_roofline.host import provenance

ROOT = Path(__file__).resolve().parents[2]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def _repo(path: Path) -> str:
    """A git repository at ``path`` with one commit; its HEAD."""
    path.mkdir(parents=True, exist_ok=True)
    _git(path, "init", "-q")
    (path / "README").write_text("x\n")
    _git(path, "add", "README")
    _git(path, "commit", "-q", "-m", "one")
    return _git(path, "rev-parse", "HEAD")


def _source_copy(path: Path) -> Path:
    """A copy of the parts of the source tree the rule looks at (not a checkout of its own)."""
    path.mkdir(parents=True)
    shutil.copy(ROOT / "CMakeLists.txt", path)
    shutil.copytree(ROOT / "cmake", path / "cmake")
    return path


@pytest.fixture
def trees(tmp_path: Path) -> Dict[str, Any]:
    outer_head = _repo(tmp_path / "monorepo")
    vendored = _source_copy(tmp_path / "monorepo" / "third_party" / "apple_roofline")
    own = _source_copy(tmp_path / "monorepo" / "checkout")
    own_head = _repo(own)  # a checkout of its own, nested in the other repository
    return {
        "outer": tmp_path / "monorepo",
        "outer_head": outer_head,
        "vendored": vendored,
        "own": own,
        "own_head": own_head,
        "plain": _source_copy(tmp_path / "plain"),
    }


@needs_git
def test_a_copy_inside_another_repository_has_no_revision(trees: Dict[str, Any]) -> None:
    assert provenance.checkout_revision(trees["vendored"]) is None  # not the monorepo's commit
    assert provenance.checkout_revision(trees["plain"]) is None  # in no repository at all
    assert provenance.checkout_revision(trees["outer"]) == trees["outer_head"]
    assert provenance.checkout_revision(trees["own"]) == trees["own_head"]
    (trees["own"] / "README").write_text("changed\n")  # a tracked file differs from the commit
    assert provenance.checkout_revision(trees["own"]) == trees["own_head"] + "-dirty"
    assert provenance.checkout_revision(trees["outer"] / "missing") is None


@needs_git
def test_a_source_tree_without_a_build_record_asks_its_own_checkout_only(
    trees: Dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "apple_roofline._build_info", None)  # never built: import fails
    monkeypatch.setattr(provenance, "SOURCE_DIR", str(trees["vendored"]))
    assert provenance.git_revision() is None
    monkeypatch.setattr(provenance, "SOURCE_DIR", str(trees["own"]))
    assert provenance.git_revision() == trees["own_head"]


def test_no_git_is_no_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the PATH
    assert provenance.checkout_revision(ROOT) is None


def _cmake_revision(source_dir: Path) -> Optional[str]:
    done = subprocess.run(
        ["cmake", f"-DSOURCE_DIR={source_dir}", "-P", str(ROOT / "cmake" / "git_revision.cmake")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines: List[str] = [ln for ln in done.stderr.splitlines() if ln.startswith("GIT_REVISION=")]
    assert len(lines) == 1, done.stderr
    return lines[0].split("=", 1)[1] or None


@needs_git
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_the_build_applies_the_same_rule(trees: Dict[str, Any]) -> None:
    """CMakeLists.txt writes _build_info.py from cmake/git_revision.cmake: run as a script, it gives
    what the Python rule gives for each tree."""
    assert 'ar_git_revision("${CMAKE_SOURCE_DIR}" AR_GIT_REVISION)' in (ROOT / "CMakeLists.txt").read_text()
    for name in ("vendored", "plain", "outer", "own"):
        assert _cmake_revision(trees[name]) == provenance.checkout_revision(trees[name]), name
    assert _cmake_revision(trees["vendored"]) is None and _cmake_revision(trees["own"]) == trees["own_head"]
