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
def test_every_example_takes_the_run_file_as_its_argument(name: str, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: Any) -> None:
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
