"""Whole CPU runs under a fault of the folder or the output (issue 46): two runs into one folder at
once, a stdout pipe whose reader leaves after one line, a stdout that is full."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.outputs import planned_files
from apple_roofline.study.folder_lock import LOCK_NAME

QUICK = ["run", "--device", "cpu", "--suite", "stream", "--quick", "--reps", "3", "--array-bytes", "1MiB"]


def command(*args: str) -> List[str]:
    return [sys.executable, "-m", "apple_roofline", *args]


def env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def assert_whole(out: Path) -> Run:
    run = Run.load(out / "run.json")
    assert run.complete and run.status == "complete" and not run.missing and run.valid_measurements
    for name in planned_files(run):
        assert (out / name).stat().st_size > 0, name
    return run


def test_a_second_run_into_a_folder_in_use_is_refused_and_the_first_stays_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = subprocess.Popen(
        command(*QUICK, "--sustain", "2", "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    deadline = time.monotonic() + 120
    while not (out / "run.journal.jsonl").exists():  # it has measured something
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    second = subprocess.run(command(*QUICK, "--out", str(out)), capture_output=True, text=True, env=env())
    assert first.poll() is None, "the first run ended before the second was refused: make it longer"
    assert second.returncode == 2, second.stderr
    lines = [ln for ln in second.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"is in use: process {first.pid} is writing a study there" in lines[0], lines
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert not (out / LOCK_NAME).exists()  # released as it ended
    run = assert_whole(out)
    journal = (out / "run.journal.jsonl").read_text().splitlines()
    assert len(journal) == len(run.measurements) + 1  # its header and one line per measurement, none of the second's
    resumed = subprocess.run(
        command(*QUICK, "--sustain", "2", "--resume", str(out)), capture_output=True, text=True, env=env()
    )
    assert resumed.returncode == 0, resumed.stderr
    assert_whole(out)


def test_a_pipe_that_closes_after_one_line_leaves_a_complete_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    line = shlex.join(command(*QUICK, "--out", str(out))) + " 2>&1 | head -n1"
    done = subprocess.run(["bash", "-c", line + "; exit ${PIPESTATUS[0]}"], capture_output=True, text=True, env=env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(done.stdout.splitlines()) == 1
    assert_whole(out)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_a_full_stdout_is_said_on_stderr_and_the_run_is_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            command(*QUICK, "--out", str(out)), stdout=full, stderr=subprocess.PIPE, text=True, env=env()
        )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lost = [ln for ln in done.stderr.splitlines() if ln.startswith("warning: stdout was lost")]
    assert lost == [
        "warning: stdout was lost (No space left on device): what this command prints there is dropped; "
        "it goes on measuring and writes its files"
    ]
    assert_whole(out)
