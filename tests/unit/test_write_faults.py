"""Nothing lost under a fault of the folder or the output (issue 46): one study per folder (its
lock), the write phase atomic as a whole (a signal between any two files), --out names that cannot
be a folder, --outlier-pct checked like every other number, and a stdout that fails.

The runner is faked (a synthetic run, no device); the lock's holder is a real second process.
"""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List, Sequence

import pytest
from typer.testing import CliRunner, Result

from apple_roofline.cli import app
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.outputs import planned_files
from apple_roofline.study.document import FILES_MISSING
from apple_roofline.study.folder_lock import LOCK_NAME
from apple_roofline.study.outputs import OutputFiles

pytestmark = pytest.mark.usefixtures("fake_registry")


def invoke(args: Sequence[str]) -> Result:
    return CliRunner().invoke(app, list(args))


def one_error(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def whole_run(m5_run: Run) -> Run:
    return dataclasses.replace(m5_run, measurements=tuple(m for m in m5_run.measurements if m.valid))


@pytest.fixture
def fake_runner(monkeypatch: pytest.MonkeyPatch, whole_run: Run) -> List[Any]:
    import apple_roofline.roofline.run.runner as runner_mod

    calls: List[Any] = []

    class FakeRunner:
        def __init__(self, *args: Any, **kw: Any) -> None:
            calls.append(args)

        def run(self) -> Run:
            return whole_run

    monkeypatch.setattr(runner_mod, "RooflineRunner", FakeRunner)
    return calls


# -- one study per folder ------------------------------------------------------------------

_HOLDER = """
import sys, time
from pathlib import Path
from apple_roofline.study.folder_lock import hold
hold(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Any]:
    """A second process that holds the lock of tmp_path/out."""
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_study_into_a_held_folder_is_refused_naming_the_holder(
    tmp_path: Path, held: Any, fake_runner: List[Any], whole_run: Run
) -> None:
    out = tmp_path / "out"
    whole_run.save(out / "run.json")
    before = (out / "run.json").read_bytes()
    for args in (
        ["run", "--device", "cpu", "--out", str(out)],
        ["run", "--device", "cpu", "--resume", str(out)],
        ["dispatch", "--device", "cpu", "--out", str(out)],
        ["tune", "--device", "cpu", "--out", str(out)],
        ["report", str(out)],
        ["plot", str(out / "run.json")],
    ):
        line = one_error(invoke(args))
        assert f"is in use: process {held.pid} is writing a study there" in line, (args, line)
    assert not fake_runner  # nothing measured
    assert (out / "run.json").read_bytes() == before and not (out / "roofline.png").exists()


def test_the_lock_is_released_when_a_run_ends_and_a_killed_holder_leaves_none(
    tmp_path: Path, held: Any, fake_runner: List[Any]
) -> None:
    out = tmp_path / "out"
    held.kill()
    held.wait()
    assert (out / LOCK_NAME).exists()  # a killed holder's file stays, its lock does not
    assert invoke(["run", "--device", "cpu", "--out", str(out)]).exit_code == 0
    assert not (out / LOCK_NAME).exists()
    assert invoke(["run", "--device", "cpu", "--out", str(out)]).exit_code == 0  # the same folder again


# -- the write phase, atomic as a whole ----------------------------------------------------


def _agrees_with_the_folder(out: Path, run: Run, planned: Sequence[str]) -> None:
    for name in planned:
        assert (name in run.missing) != (out / name).exists(), (name, run.missing)
    assert run.status == (FILES_MISSING if run.missing else "complete")


def test_a_signal_between_any_two_files_leaves_a_run_json_that_agrees_with_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_runner: List[Any], whole_run: Run
) -> None:
    planned = planned_files(whole_run)
    assert len(planned) >= 7  # run.json, the reports, the roofline and the sweep figures
    write = OutputFiles.write
    for k in range(len(planned) + 1):  # the signal before the k-th write (the last: run.json again)
        out = tmp_path / f"out{k}"
        count = [0]

        def cut(self: OutputFiles, name: str, save: Any, k: int = k, count: List[int] = count) -> None:
            if count[0] == k:
                raise KeyboardInterrupt
            count[0] += 1
            write(self, name, save)

        monkeypatch.setattr(OutputFiles, "write", cut)
        result = invoke(["run", "--device", "cpu", "--out", str(out)])
        monkeypatch.setattr(OutputFiles, "write", write)
        assert result.exit_code == 130, (k, result.output)
        run = Run.load(out / "run.json")
        _agrees_with_the_folder(out, run, planned)
        if k < len(planned):
            assert run.missing and not run.to_dict()["complete"], k
            assert len(run.missing) == len(planned) - max(k, 1), k  # the k files written before it are there
            (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("interrupted")]
            assert f"not written: {', '.join(run.missing)}" in line and f"apple-roofline report {out}" in line
        # the command it names makes them
        again = invoke(["report", str(out)])
        assert again.exit_code == 0, again.output
        remade = Run.load(out / "run.json")
        assert remade.missing == () and remade.status == "complete"
        _agrees_with_the_folder(out, remade, planned)


def test_a_new_run_removes_the_files_an_earlier_one_left_before_it_lists_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_runner: List[Any]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("an earlier run's report")
    (out / "hierarchy.png").write_text("an earlier run's figure")
    write = OutputFiles.write

    def cut(self: OutputFiles, name: str, save: Any) -> None:
        if name != "run.json":
            raise KeyboardInterrupt
        write(self, name, save)

    monkeypatch.setattr(OutputFiles, "write", cut)
    assert invoke(["run", "--device", "cpu", "--out", str(out)]).exit_code == 130
    run = Run.load(out / "run.json")
    assert "report.html" in run.missing and not (out / "report.html").exists()
    assert not (out / "hierarchy.png").exists()


def test_a_study_whose_files_are_missing_reads_back_and_is_checked(tmp_path: Path, whole_run: Run) -> None:
    from apple_roofline.study.files import ResultsError

    cut = dataclasses.replace(whole_run, missing=("report.html",))
    assert Run.from_json(cut.to_json()).missing == ("report.html",)
    d = cut.to_dict()
    assert d["complete"] is False and d["status"] == FILES_MISSING and d["missing_files"] == ["report.html"]
    with pytest.raises(ResultsError, match="status is 'files missing' but missing_files names no file"):
        Run.from_dict({**d, "missing_files": []})
    with pytest.raises(ResultsError, match="missing_files names 1 file"):
        Run.from_dict({**d, "complete": True, "status": "complete"})


# -- --out names that cannot be a folder -----------------------------------------------------


@pytest.mark.parametrize("command", ["run", "dispatch", "tune", "calls", "engines"])
@pytest.mark.parametrize(
    "name, needle",
    [("", "is empty"), ("x" * 300, "a name of 300 bytes"), ("a/" + "y" * 256 + "/b", "a name of 256 bytes")],
)
def test_out_names_that_cannot_be_a_folder_exit_2_before_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_runner: List[Any], command: str, name: str, needle: str
) -> None:
    monkeypatch.chdir(tmp_path)
    device = [] if command == "engines" else ["--device", "cpu"]  # engines plans its own devices
    line = one_error(invoke([command, *device, "--out", name]))
    assert line.startswith("error: --out ") and needle in line and "(valid: " in line
    assert not fake_runner and list(tmp_path.iterdir()) == []  # nothing measured, nothing written


# -- --outlier-pct -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, problem",
    [("abc", "is not a number"), ("nan", "is out of range"), ("-5", "is out of range"), ("inf", "is out of range")],
)
@pytest.mark.parametrize(
    "args",
    [
        ["run", "--device", "cpu"],
        ["run", "--device", "cuda:all"],
        ["dispatch", "--device", "cpu"],
        ["dispatch", "--device", "cuda:0,1"],
        ["compare", "a.json", "b.json"],
    ],
)
def test_outlier_pct_is_checked_with_or_without_a_device_list(
    tmp_path: Path, fake_runner: List[Any], args: List[str], value: str, problem: str
) -> None:
    out = [] if args[0] == "compare" else ["--out", str(tmp_path / "o")]
    line = one_error(invoke([*args, *out, "--outlier-pct", value]))
    assert line == f"error: --outlier-pct {value!r} {problem} (valid: a finite number of percent, 0 or more)"
    assert not fake_runner and not (tmp_path / "o").exists()


def test_outlier_pct_takes_a_finite_number_0_or_more() -> None:
    from apple_roofline.node.report import check_outlier_pct

    assert check_outlier_pct(" 2.5 ") == 2.5 and check_outlier_pct("0") == 0.0 and check_outlier_pct(7) == 7.0


# -- a stdout that fails -----------------------------------------------------------------------


class Failing(io.StringIO):
    def __init__(self, error: OSError) -> None:
        super().__init__()
        self.error = error

    def write(self, text: str) -> int:
        raise self.error

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


@pytest.mark.parametrize("error", [BrokenPipeError(32, "Broken pipe"), OSError(28, "No space left on device")])
def test_a_stdout_that_fails_is_dropped_and_said_once_on_stderr(
    monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    from apple_roofline.cli.streams import guarded_streams

    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", Failing(error))
    monkeypatch.setattr(sys, "stderr", err)
    with guarded_streams():
        import typer

        for _ in range(3):
            typer.echo("a summary line")
            print("another", flush=True)
        typer.echo("a progress line", err=True)
    lines = err.getvalue().splitlines()
    assert lines == [
        f"warning: stdout was lost ({error.strerror}): what this command prints there is dropped; "
        "it goes on measuring and writes its files",
        "a progress line",
    ]


def test_a_stderr_that_fails_is_dropped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline.cli.streams import guarded_streams

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", Failing(BrokenPipeError(32, "Broken pipe")))
    with guarded_streams():
        import typer

        typer.echo("progress", err=True)
        typer.echo("summary")
    assert out.getvalue() == "summary\n"
