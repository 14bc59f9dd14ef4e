"""The README's Python examples run, verbatim, against the real extension on this machine's CPU."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Python API\s+```python\n(.*?)```", readme, re.S)
    assert code, "README has no Python API example"
    monkeypatch.chdir(tmp_path)
    import apple_roofline.roofline.run.runner as runner

    real = runner.run_roofline

    def small(options):  # type: ignore[no-untyped-def]
        if options.array_bytes is None:  # keep the test fast; the example is otherwise verbatim
            options = dataclasses.replace(options, array_bytes=1 << 20)
        return real(options)

    monkeypatch.setattr(runner, "run_roofline", small)
    import apple_roofline

    monkeypatch.setattr(apple_roofline, "run_roofline", small, raising=False)
    exec(compile(code.group(1), "README.md", "exec"), {})
    assert (tmp_path / "run.json").exists()
    assert apple_roofline.Run.load(tmp_path / "run.json").complete
