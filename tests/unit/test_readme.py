"""The README's promises: the test command is the one CI runs, the examples take the run file the way
it says (the examples run in tests/native), the files it lists are the ones a run writes."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci_command = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert "pytest" in ci_command
    assert ci_command in readme


EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_takes_the_run_file_as_its_argument(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """Issue 32: one convention, RUN.json as the first (optional) argument, as `plot RUN.json`; no
    example wants `--run` while another takes the file."""
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(ROOT / "examples" / name), run_name="__main__")
    assert exc.value.code == 0
    usage = " ".join(capsys.readouterr().out.split())
    assert re.search(r"^usage: \S+ (\[-h\] )?.*\[RUN\.json\]", usage), usage
    assert "--run " not in usage and "--run]" not in usage
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"python examples/{re.escape(name)} \[(RUN|out/run)\.json\]", readme), name


def test_readme_lists_every_file_a_run_writes() -> None:
    """Issue 32: the first command's outputs, every one (run.journal.jsonl and hierarchy.png/.svg
    included), and what `.[test]` installs, read from pyproject.toml."""
    from apple_roofline.roofline.views.outputs import RUN_FILES
    from apple_roofline.study.journal import journal_path
    from apple_roofline.suites import registry

    figures = [
        f"{sec.figure.stem}.{ext}"
        for s in registry.specs()
        if s.default
        for sec in s.sections
        if sec.figure is not None
        for ext in ("png", "svg")
    ]  # the default suites' figures

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    intro = " ".join(readme.split("## The two commands", 1)[1].split("```sh", 1)[0].split())
    for name in (*RUN_FILES, *figures, journal_path(".", "run").name):
        stem, _, ext = name.rpartition(".")
        assert f"`out/{name}`" in intro or (ext == "svg" and f"`out/{stem}.png`/`.svg`" in intro), name
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    test_extra = re.search(r"^test = \[(.*)\]\s*$", pyproject, re.M)  # one line; a package may carry [extras]
    assert test_extra is not None
    packages = [re.split(r"[<>=!~\[;]", p)[0] for p in re.findall(r'"([^"]*)"', test_extra.group(1))]
    assert "mlx" in packages and "clang-format" in packages
    said = " ".join(readme.split("`.[test]` adds", 1)[1].split("\n\n", 1)[0].split())
    for package in packages:
        assert package in said, package
    assert "minutes on a 2-core machine" in said
