"""docs/cluster.md's Slurm recipe, as far as this machine allows: the per-task command line, taken
from the page, run by bash for two tasks with SLURM_LOCALID set (on the CPU: the test puts ``cpu``
where the page has ``cuda:$SLURM_LOCALID``, there being no GPU here), then the page's gathering
step over what they wrote."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from apple_roofline.roofline.model.run import Run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cluster.md"
#: A quick CPU run of one suite, in ROOFLINE_ARGS as the page's script sets it.
QUICK = "--suite stream --quick --reps 2 --array-bytes 8MiB"


def block(marker: str) -> str:
    """The command of the ```bash block after ``<!-- marker -->`` on the page."""
    m = re.search(rf"<!-- {marker} -->\s*```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert m is not None, f"docs/cluster.md has no <!-- {marker} --> bash block"
    return m.group(1).strip()


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    """PATH with an ``apple-roofline`` that is this checkout's CLI, and RESULTS / ROOFLINE_ARGS."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "apple-roofline"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m apple_roofline "$@"\n')
    shim.chmod(0o755)
    return dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        PYTHONPATH=os.pathsep.join(sys.path),
        RESULTS=str(tmp_path / "results"),
        ROOFLINE_ARGS=QUICK,
    )


def test_the_per_task_command_is_the_scripts() -> None:
    task = block("per-task")
    assert '--device "cuda:$SLURM_LOCALID"' in task and '"$RESULTS/$(hostname -s)/cuda$SLURM_LOCALID"' in task
    script = PAGE.read_text(encoding="utf-8").split("```bash\n#!/bin/bash", 1)[1].split("```", 1)[0]
    m = re.search(r"srun .*bash -c \\\n\s+'(.*?)'\n", script)
    assert m is not None and m.group(1) == task  # the batch script's srun runs exactly this line


def test_two_tasks_then_gather(env: Dict[str, str], tmp_path: Path) -> None:
    task = block("per-task").replace('"cuda:$SLURM_LOCALID"', "cpu")  # no GPU here: the CPU
    for local_id in ("0", "1"):
        r = subprocess.run(
            ["bash", "-c", task], env=dict(env, SLURM_LOCALID=local_id), capture_output=True, text=True, timeout=300
        )
        assert r.returncode == 0, r.stderr[-2000:]
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
    runs = [tmp_path / "results" / host / f"cuda{i}" / "run.json" for i in (0, 1)]
    for path in runs:
        run = Run.load(path)
        assert run.complete and run.backend == "cpu" and run.valid_measurements
    r = subprocess.run(["bash", "-c", block("gather")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    md = (tmp_path / "results" / "compare.md").read_text()
    assert "Baseline: the median." in md
    for tag, folder in (("A", "cuda0"), ("B", "cuda1")):  # each task's run, named by its folder
        assert re.search(rf"\| {tag} \| [^|]+ \(cpu\) — \d{{4}}-\d\d-\d\d \| {folder} \|", md), md
    page = (tmp_path / "results" / "compare.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="run-A"' in page and 'id="run-B"' in page
