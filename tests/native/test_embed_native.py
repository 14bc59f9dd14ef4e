"""The embedding API against a real CPU run: the README's model and the NumPy example."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

import apple_roofline as ar

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_numpy_matmul_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    run = ar.run_roofline(
        ar.RunOptions(device="cpu", quick=True, suites=("stream", "peak"), array_bytes=1 << 20, reps=3)
    )
    run_json = tmp_path / "run.json"
    run.save(run_json)
    out = tmp_path / "mm.png"
    monkeypatch.setattr(sys, "argv", ["numpy_matmul.py", str(run_json), "--sizes", "32,64", "-o", str(out)])
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(str(EXAMPLES / "numpy_matmul.py"), run_name="__main__")
    assert exc.value.code == 0
    assert out.exists() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    lines = [ln for ln in text.splitlines() if ln.strip().split(" ")[0] in ("32", "64")]
    assert len(lines) == 2 and all("-bound" in ln for ln in lines)


def test_run_roofline_is_the_models_roofline(tmp_path: Any) -> None:
    """``Run.roofline()`` is ``Roofline.from_run(run)``: same ceilings, and it plots points."""
    from apple_roofline.roofline import Roofline

    run = ar.run_roofline(
        ar.RunOptions(device="cpu", quick=True, suites=("stream", "peak"), reps=3, array_bytes=1 << 20)
    )
    model = run.roofline()
    assert isinstance(model, Roofline)
    assert model.ridge_points() == Roofline.from_run(run).ridge_points()
