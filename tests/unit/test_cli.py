"""The ``apple-roofline`` command line (Typer CliRunner).

Bad input must exit 2 with one ``error:`` line on stderr that names the value,
and never a traceback. File commands run on synthetic runs built by the unit
conftest (no device). One end-to-end ``run`` on the CPU is skipped when the
native extension cannot be imported.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pytest
from typer.testing import CliRunner, Result

from apple_roofline._version import __version__
from apple_roofline.cli import app
from apple_roofline.cli.common import as_integer
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.budget import default_budgets
from apple_roofline.suites.registry import default_suites

runner = CliRunner()
# devices resolve against a registry of a CPU-only machine: the unit tier never calls the extension
pytestmark = pytest.mark.usefixtures("fake_registry")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def invoke(args: Sequence[str]) -> Result:
    return runner.invoke(app, list(args))


def assert_usage_error(result: Result, *needles: str) -> None:
    """Exit 2, exactly one non-empty stderr line starting 'error:' containing every needle, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: "), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.fixture
def saved_run(tmp_path: Path, m5_run: Run) -> Path:
    path = tmp_path / "a" / "run.json"
    path.parent.mkdir()
    m5_run.save(path)
    return path


@pytest.fixture
def saved_run_b(tmp_path: Path, m5_run_b: Run) -> Path:
    path = tmp_path / "b" / "run.json"
    path.parent.mkdir()
    m5_run_b.save(path)
    return path


# --------------------------------------------------------------------------
# help, version, module entry point


def test_no_args_shows_help() -> None:
    result = invoke([])
    assert "Usage" in result.output
    for cmd in ("devices", "run", "plot", "report", "compare"):
        assert cmd in result.output


@pytest.mark.parametrize("cmd", ["devices", "run", "plot", "report", "compare"])
def test_command_help(cmd: str) -> None:
    result = invoke([cmd, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_run_help_lists_options() -> None:
    result = invoke(["run", "--help"])
    for opt in ("--device", "--suite", "--quick", "--reps", "--array-bytes", "--out"):
        assert opt in result.output


COMMANDS = ("devices", "run", "plot", "report", "compare", "dispatch", "graphics", "calls", "engines", "tune")


@pytest.mark.parametrize("cmd", [(), *((c,) for c in COMMANDS)])
def test_help_shows_metavars_a_person_reads(cmd: Tuple[str, ...]) -> None:
    """Issue 32: no Python-type placeholders in any help, no braces around a required argument; a
    flag shows no value at all; an option that takes one names it."""
    result = invoke([*cmd, "--help"])
    assert result.exit_code == 0, result.output
    for placeholder in ("<bool>", "<str>", "<path>", "<int>", "<float>", "<list[", "{RUN.json", "RUN.json...}"):
        assert placeholder not in result.output, (placeholder, result.output)
    lines = {ln.split()[1]: ln for ln in result.output.splitlines() if ln.startswith("│ --")}
    assert lines["--help"].split()[2:5] == ["Show", "this", "message"]  # nothing between the flag and its help
    if cmd == ("run",):
        assert lines["--quick"].split()[2] == "A" and lines["--out"].split()[3] == "DIR"
        assert lines["--suite"].split()[3] == "SUITE,..."
    if cmd == ("plot",):
        assert "Usage: apple-roofline plot [OPTIONS] RUN.json Draw" in " ".join(result.output.split())


@pytest.mark.parametrize("width", [60, 80, 120, 300])
def test_devices_table_fits_the_terminal_and_wraps_the_reason(width: int) -> None:
    """Issue 32: the table was about 300 characters wide; now no line passes the terminal's width and
    the long CUDA reason wraps within its column, every word of it kept."""
    from apple_roofline.cli.devices import devices_table

    reason = (
        "CUDA driver (libcuda.so.1) not available: libcuda.so.1: cannot open shared object file: No such "
        "file or directory; libcuda.so: cannot open shared object file: No such file or directory"
    )
    rows = [
        ["cpu", "yes", "1", "AMD EPYC", "threads=2, isa=avx512, vector_bits=512, memory=23.5 GiB", ""],
        ["cuda", "yes", "0", "-", "-", reason],
    ]
    lines = devices_table(rows, width).splitlines()
    assert lines[0].split() == ["backend", "compiled", "devices", "name", "figures", "reason"]
    assert max(len(ln) for ln in lines) <= width
    column = lines[0].index("reason")
    cuda = next(i for i, ln in enumerate(lines) if ln.startswith("cuda"))
    text = " ".join(ln[column:].strip() for ln in lines[cuda:] if len(ln) > column)
    assert text.replace(" ", "") == reason.replace(" ", "")  # wrapped (or folded), nothing lost
    if width >= 300:
        assert lines[cuda].endswith(reason)  # room for it: one line


def test_version_is_a_flag() -> None:
    result = invoke(["--help"])
    line = next(ln for ln in result.output.splitlines() if "--version" in ln)
    assert line.split()[1:4] == ["--version", "Print", "the"], line


def test_budget_help_and_error_name_every_suite_with_its_default() -> None:
    """One source (each suite's registration, through roofline/run/budget.py default_budgets): the help
    lists every suite's default, the error of a run every suite of that run with its default."""
    result = invoke(["run", "--help"])
    text = " ".join(result.output.replace("│", " ").split())
    assert "Default seconds: " + ", ".join(f"{k} {v:g}" for k, v in default_budgets().items()) + " (a third" in text
    assert f"hierarchy {default_budgets()['hierarchy']:g}" in text and f"idiv {default_budgets()['idiv']:g}" in text
    bad = invoke(["run", "--budget", "gemm=abc"])
    assert_usage_error(
        bad,
        "--budget 'gemm=abc' is not a number of seconds",
        "this run's suites (default seconds): "
        + ", ".join(f"{k} {default_budgets()[k]:g}" for k in default_suites())
        + ")",
    )
    quick = invoke(["run", "--quick", "--suite", "stream,idiv", "--budget", "gemm=1"])
    assert_usage_error(quick, "--budget 'gemm' is not a suite of this run", "stream 10, idiv 20)")


def test_version() -> None:
    result = invoke(["--version"])
    assert result.exit_code == 0
    assert __version__ in result.stdout


def test_python_dash_m(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "apple_roofline", "--version"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert __version__ in proc.stdout


def test_unknown_command_exits_2() -> None:
    result = invoke(["frobnicate"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------
# devices


# --------------------------------------------------------------------------
# run: bad options exit 2 before measuring


@pytest.mark.parametrize(
    "args, needles",
    [
        (["--reps", "0"], ["--reps", "0", "1 to 10000"]),
        (["--reps", "-1"], ["--reps", "-1", "1 to 10000"]),
        (["--reps", "10001"], ["--reps", "10001", "1 to 10000"]),
        (["--array-bytes", "-5MiB"], ["--array-bytes", "-5MiB", "valid"]),
        (["--array-bytes", "lots"], ["--array-bytes", "lots", "valid"]),
        (["--array-bytes", "0"], ["--array-bytes", "0", "valid"]),
        (["--device", "gpu:7"], ["--device", "gpu:7", "valid"]),
        (["--device", "cuda:x"], ["--device", "cuda:x", "valid"]),
    ],
)
def test_run_bad_options(tmp_path: Path, args: List[str], needles: List[str]) -> None:
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--suite", "stream", *args, "--out", str(out)])
    assert_usage_error(result, *needles)
    assert not out.exists()  # nothing measured, nothing written


def test_run_reps_not_a_number(tmp_path: Path) -> None:
    result = invoke(["run", "--reps", "many", "--out", str(tmp_path / "out")])
    assert_usage_error(result, "--reps 'many' is not an integer (valid: 1 to 10000)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["abc", "1.5", "1e3", "", "0x10", "7 reps"])
def test_run_reps_not_an_integer_is_one_line(tmp_path: Path, value: str) -> None:
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--suite", "stream", "--reps", value, "--out", str(out)])
    assert_usage_error(result, f"--reps {value!r} is not an integer", "(valid: 1 to 10000)")
    assert "Usage:" not in result.output and "╭" not in result.output  # no Click/Rich error box
    assert not out.exists()


def test_run_reps_help_names_range() -> None:
    result = invoke(["run", "--help"])
    assert "1 to 10000" in " ".join(result.output.replace("│", " ").split())


def test_quick_help_says_what_quick_does() -> None:
    result = invoke(["run", "--help"])
    text = " ".join(result.output.replace("│", " ").split())
    assert "smaller arrays" not in text
    for needle in (
        "F = 1, 4, 16",
        "1024",
        "sweep launch budget",
        "GEMM size ladder",
        "warm-up",
        "Array sizes are not changed",
    ):
        assert needle in text, needle


def test_run_unknown_suite(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--suite", "stream,foo", "--out", str(out)])
    assert_usage_error(result, "foo")
    assert not out.exists()


def test_run_device_not_available(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cuda:99", "--suite", "stream", "--out", str(out)])
    assert_usage_error(result, "cuda:99", "valid", "cpu")
    assert not out.exists()


def test_run_array_larger_than_memory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--suite", "stream", "--array-bytes", "1e30GiB", "--out", str(out)])
    assert_usage_error(result)
    assert not (out / "run.json").exists()


def test_run_out_is_a_file(tmp_path: Path) -> None:
    out = tmp_path / "file.txt"
    out.write_text("x")
    result = invoke(["run", "--device", "cpu", "--suite", "stream", "--out", str(out)])
    assert_usage_error(result, str(out))


# --------------------------------------------------------------------------
# plot / report / compare on bad files


def bad_file(tmp_path: Path, kind: str, m5_run: Run) -> Path:
    path = tmp_path / f"{kind}.json"
    if kind == "missing":
        return path
    if kind == "empty":
        path.write_text("")
    elif kind == "truncated":
        text = m5_run.to_json()
        path.write_text(text[: len(text) // 2])
    elif kind == "schema99":
        d = m5_run.to_dict()
        d["schema_version"] = 99
        path.write_text(json.dumps(d))
    elif kind == "notjson":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return path


BAD_KINDS = ["missing", "empty", "truncated", "schema99", "notjson"]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_report_bad_file(tmp_path: Path, m5_run: Run, kind: str) -> None:
    path = bad_file(tmp_path, kind, m5_run)
    result = invoke(["report", str(path)])
    assert_usage_error(result, str(path))
    if kind == "schema99":
        assert "99" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_plot_bad_file(tmp_path: Path, m5_run: Run, kind: str) -> None:
    path = bad_file(tmp_path, kind, m5_run)
    result = invoke(["plot", str(path), "-o", str(tmp_path / "fig.png")])
    assert_usage_error(result, str(path))
    assert not (tmp_path / "fig.png").exists()


@pytest.mark.parametrize("kind", BAD_KINDS)
@pytest.mark.parametrize("position", [0, 1])
def test_compare_bad_file(tmp_path: Path, m5_run: Run, saved_run: Path, kind: str, position: int) -> None:
    bad = bad_file(tmp_path, kind, m5_run)
    args = [str(bad), str(saved_run)] if position == 0 else [str(saved_run), str(bad)]
    result = invoke(["compare", *args])
    assert_usage_error(result, str(bad))


def test_report_bad_format(saved_run: Path) -> None:
    result = invoke(["report", str(saved_run), "--format", "xml"])
    assert_usage_error(result, "xml", "md, csv, json")


@pytest.mark.parametrize("name", ["fig.txt", "fig"])
def test_plot_bad_suffix(tmp_path: Path, saved_run: Path, name: str) -> None:
    target = tmp_path / name
    result = invoke(["plot", str(saved_run), "-o", str(target)])
    assert_usage_error(result, name, ".png")
    assert not target.exists()


@pytest.mark.parametrize("cmd", ["plot", "compare"])
def test_output_dir_missing_names_target(tmp_path: Path, saved_run: Path, saved_run_b: Path, cmd: str) -> None:
    target = tmp_path / "nonexist" / "x.png"
    args = [str(saved_run)] if cmd == "plot" else [str(saved_run), str(saved_run_b)]
    result = invoke([cmd, *args, "-o", str(target)])
    assert_usage_error(result, str(target), "does not exist")
    assert ".tmp" not in result.stderr
    assert not target.parent.exists()


def test_plot_output_parent_is_a_file(tmp_path: Path, saved_run: Path) -> None:
    parent = tmp_path / "file.txt"
    parent.write_text("x")
    target = parent / "x.png"
    result = invoke(["plot", str(saved_run), "-o", str(target)])
    assert_usage_error(result, str(target), "not a directory")


def test_plot_output_dir_not_writable(tmp_path: Path, saved_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    real_access = os.access
    locked = tmp_path / "locked"
    locked.mkdir()

    def access(path: Any, mode: int, **kw: Any) -> bool:
        if Path(path) == locked and mode & os.W_OK:
            return False
        return real_access(path, mode, **kw)

    monkeypatch.setattr(os, "access", access)  # works as root too
    target = locked / "x.png"
    result = invoke(["plot", str(saved_run), "-o", str(target)])
    assert_usage_error(result, str(target), "not writable")
    assert not target.exists()


def test_plot_write_failure_names_target(tmp_path: Path, saved_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import apple_roofline.cli.common as plot_mod

    target = tmp_path / "x.png"

    def failing_save(fig: Any, path: Any) -> None:
        tmp = Path(path).parent / f".{Path(path).name}.arb9c2c4.tmp"
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))

    monkeypatch.setattr(plot_mod, "save_figure", failing_save)
    result = invoke(["plot", str(saved_run), "-o", str(target)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert lines == [f"error: cannot write {target}: No space left on device"], lines


def test_compare_bad_suffix(tmp_path: Path, saved_run: Path, saved_run_b: Path) -> None:
    result = invoke(["compare", str(saved_run), str(saved_run_b), "-o", str(tmp_path / "cmp.gif")])
    assert_usage_error(result, "cmp.gif", ".png")


# --------------------------------------------------------------------------
# report / plot / compare on synthetic runs


def test_report_markdown(saved_run: Path, m5_run: Run) -> None:
    from apple_roofline.roofline.views.report import to_markdown

    result = invoke(["report", str(saved_run), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert result.stdout.rstrip("\n") == to_markdown(Run.load(saved_run)).rstrip("\n")
    assert m5_run.device_name in result.stdout


def test_report_default_is_markdown(saved_run: Path) -> None:
    default = invoke(["report", str(saved_run)])
    md = invoke(["report", str(saved_run), "--format", "md"])
    assert default.exit_code == 0
    assert default.stdout == md.stdout


def test_report_csv(saved_run: Path, m5_run: Run) -> None:
    import csv
    import io

    result = invoke(["report", str(saved_run), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0][:3] == ["suite", "kernel", "dtype"]
    assert len(rows) - 1 == len(m5_run.measurements)


def test_report_json_round_trips(saved_run: Path, m5_run: Run) -> None:
    result = invoke(["report", str(saved_run), "--format", "json"])
    assert result.exit_code == 0, result.output
    back = Run.from_json(result.stdout, source="stdout")
    assert back.to_dict() == m5_run.to_dict()


def test_plot_default_beside_run(saved_run: Path) -> None:
    result = invoke(["plot", str(saved_run)])
    assert result.exit_code == 0, result.output
    png = saved_run.parent / "roofline.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert str(png) in result.stdout


@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_plot_suffix_picks_format(tmp_path: Path, saved_run: Path, suffix: str, magic: bytes) -> None:
    target = tmp_path / f"fig{suffix}"
    result = invoke(["plot", str(saved_run), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes().startswith(magic)


def test_compare_prints_markdown(saved_run: Path, saved_run_b: Path) -> None:
    from apple_roofline.roofline.compare.compare import Comparison, compare_markdown

    result = invoke(["compare", str(saved_run), str(saved_run_b)])
    assert result.exit_code == 0, result.output
    expected = compare_markdown(Comparison((Run.load(saved_run), Run.load(saved_run_b)), ("a", "b")))
    assert result.stdout.rstrip("\n") == expected.rstrip("\n")
    assert "Apple M5" in result.stdout and "Apple M4" in result.stdout


def test_compare_writes_png(tmp_path: Path, saved_run: Path, saved_run_b: Path) -> None:
    target = tmp_path / "out.png"
    result = invoke(["compare", str(saved_run), str(saved_run_b), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == PNG_MAGIC


def test_plot_run_without_ceilings_exits_1(tmp_path: Path, m5_run: Run) -> None:
    invalid = tuple(dataclasses.replace(m, valid=False) for m in m5_run.measurements[:3])
    path = tmp_path / "run.json"
    dataclasses.replace(m5_run, measurements=invalid, ceilings=()).save(path)
    target = tmp_path / "fig.png"
    result = invoke(["plot", str(path), "-o", str(target)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert lines == [f"error: {path} has no ceilings to draw (it holds 3 measurements, none valid for a ceiling)"], (
        lines
    )
    assert not target.exists()
    assert result.stdout == ""


@pytest.mark.parametrize("theoretical", [False, True])
def test_plot_of_a_file_without_measurements_is_a_bad_file(tmp_path: Path, m5_run: Run, theoretical: bool) -> None:
    """Exit 2 (a bad results file), not 1: with or without the theoretical ceilings it could draw."""
    kept = tuple(c for c in m5_run.ceilings if c.source == "theoretical") if theoretical else ()
    path = tmp_path / "run.json"
    dataclasses.replace(m5_run, measurements=(), ceilings=kept).save(path)
    target = tmp_path / "fig.png"
    result = invoke(["plot", str(path), "-o", str(target)])
    assert_usage_error(result, f"{path} holds no measurements: nothing to plot")
    assert not target.exists() and result.stdout == ""


# --------------------------------------------------------------------------
# run: interruption and invalid measurements (runner monkeypatched)


def _patch_runner(monkeypatch: pytest.MonkeyPatch, behaviour: Any) -> Any:
    import apple_roofline.roofline.run.runner as runner_mod

    calls: List[Dict[str, Any]] = []

    class FakeRunner:
        def __init__(self, options: Any, **kw: Any) -> None:
            fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
            calls.append({**fields, **kw})
            self.progress = kw.get("progress")

        def run(self) -> Run:
            progress = self.progress
            if progress is not None:
                progress.start("stream", 2)
                progress.advance("copy")
                progress.advance("triad")
                progress.finish("stream")
            return behaviour(runner_mod)  # type: ignore[no-any-return]

    monkeypatch.setattr(runner_mod, "RooflineRunner", FakeRunner)
    return calls


def test_ctrl_c_names_the_command_that_resumes_the_run_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run
) -> None:
    """Issue 45: Ctrl-C during ``run --quick``, once a measurement is in the journal: the one next
    step, ``apple-roofline run --quick --resume DIR`` with the real folder, comes first."""
    import apple_roofline.roofline.run.runner as runner_mod

    partial = dataclasses.replace(m5_run, complete=False)

    class Interrupted:
        def __init__(self, options: Any, **kw: Any) -> None:
            self.journal = kw["journal"]

        def run(self) -> Run:
            self.journal.path.write_text("{}\n")  # a measurement kept before the Ctrl-C
            raise runner_mod.RunInterrupted(partial)

    monkeypatch.setattr(runner_mod, "RooflineRunner", Interrupted)
    out = tmp_path / "my results"
    argv = ["apple-roofline", "run", "--quick", "--device", "cpu", "-o", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    result = invoke(argv[1:])
    assert result.exit_code == 130, result.output
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("interrupted")]
    assert line.startswith(f"interrupted: continue with: apple-roofline run --quick --device cpu --resume '{out}'; ")
    assert f"partial results written to {out / 'run.json'}" in line


def test_the_resume_command_replaces_the_output_directory() -> None:
    from apple_roofline.cli.common import resume_command

    for given in (["--out", "x"], ["-o", "x"], ["--out=x"], ["-ox"], ["--resume", "x"], ["--resume=x"], []):
        argv = ["apple-roofline", "run", *given, "--quick", "--reps", "3"]
        assert resume_command(argv, Path("d")) == "apple-roofline run --quick --reps 3 --resume d", given
    assert resume_command(["python", "-m", "apple_roofline", "tune"], Path("a b")) == (
        "python -m apple_roofline tune --resume 'a b'"
    )


def test_run_interrupted_writes_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    partial = dataclasses.replace(m5_run, complete=False)

    def interrupt(runner_mod: Any) -> Run:
        raise runner_mod.RunInterrupted(partial)

    calls = _patch_runner(monkeypatch, interrupt)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--suite", "stream,peak", "--reps", "3", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert "Traceback" not in result.output
    assert f"interrupted: partial results written to {out}" in result.stderr
    loaded = Run.load(out / "run.json")
    assert loaded.complete is False
    assert not (out / "report.md").exists()  # only the results file: its views come from report and plot
    assert calls and str(calls[0]["device"]) == "cpu"
    assert tuple(calls[0]["suites"]) == ("stream", "peak")
    assert calls[0]["reps"] == 3


def test_run_power_window_is_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    calls = _patch_runner(monkeypatch, lambda _m: m5_run)
    invoke(["run", "--device", "cpu", "--power-window", "--out", str(tmp_path / "o")])
    assert calls[0]["power_window"] is True


def test_run_passes_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    calls = _patch_runner(monkeypatch, lambda _m: m5_run)
    out = tmp_path / "nested" / "out"
    args = [
        "run",
        "--device",
        "cpu",
        "--suite",
        "stream",
        "--quick",
        "--reps",
        "7",
        "--array-bytes",
        "8MiB",
        "--out",
        str(out),
    ]
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/apple-roofline", *args])
    result = invoke(args)
    # the synthetic run holds one invalid measurement: files written, exit 1
    assert result.exit_code == 1, result.output
    assert calls[0]["quick"] is True
    assert calls[0]["reps"] == 7
    assert calls[0]["array_bytes"] == 8 * 1024 * 1024
    assert calls[0]["power_window"] is False  # never slowed unless asked
    assert "--reps" in calls[0]["command"] and "7" in calls[0]["command"]
    for name in ("run.json", "report.md", "roofline.png", "roofline.svg"):
        assert (out / name).exists(), name
    assert "vec4_indep8" in result.stderr  # the invalid measurement is named
    err_lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(err_lines) == 1
    assert "DRAM bandwidth" in result.stdout  # summary table of ceilings
    assert "ridge point" in result.stdout


@pytest.mark.parametrize(
    "argv0, prefix",
    [
        ("/usr/local/bin/apple-roofline", ["apple-roofline"]),
        ("apple-roofline", ["apple-roofline"]),
        (
            "/opt/venv/lib/python3.11/site-packages/apple_roofline/__main__.py",
            [Path(sys.executable).name, "-m", "apple_roofline"],
        ),
    ],
)
def test_run_command_is_the_real_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run, argv0: str, prefix: List[str]
) -> None:
    calls = _patch_runner(monkeypatch, lambda _m: m5_run)
    out = tmp_path / "out"
    # as typed: short options, a suite list in the user's order, no --reps; nothing normalised or added
    args = ["run", "-d", "cpu", "-s", "peak,stream", "-o", str(out)]
    monkeypatch.setattr(sys, "argv", [argv0, *args])
    invoke(args)
    assert list(calls[0]["command"]) == [*prefix, *args]


def _summary_run(m5_run: Run, *, measured: str, theoretical: Sequence[str]) -> Run:
    """m5_run keeping the measured ceilings of kinds in ``measured`` and theoretical ones of ``theoretical``."""
    keep = tuple(
        c
        for c in m5_run.ceilings
        if (c.source == "measured" and c.kind in measured) or (c.source == "theoretical" and c.kind in theoretical)
    )
    ms = tuple(m for m in m5_run.measurements if m.valid)
    return dataclasses.replace(m5_run, measurements=ms, ceilings=keep)


def test_run_summary_ridges_fall_back_to_theoretical_compute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run
) -> None:
    # --suite stream: a measured bandwidth, theoretical compute ceilings only
    stream_only = _summary_run(m5_run, measured="bandwidth", theoretical=["bandwidth", "compute"])
    _patch_runner(monkeypatch, lambda _m: stream_only)
    result = invoke(["run", "--device", "cpu", "--suite", "stream", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ridge points of theoretical compute ceilings against the measured DRAM bandwidth (122 GB/s)" in out
    assert "no compute ceiling was measured" in out
    # 4096 / 122 and 8192 / 122, labelled theoretical
    assert "FP32 scalar ILP (theoretical)  33.6 FLOP/byte" in out
    assert "FP16 scalar ILP (theoretical)  67.1 FLOP/byte" in out


def test_run_summary_measured_ridges_unlabelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    full = _summary_run(m5_run, measured="bandwidth compute", theoretical=["bandwidth", "compute"])
    _patch_runner(monkeypatch, lambda _m: full)
    result = invoke(["run", "--device", "cpu", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "ridge point" in result.stdout
    assert "(theoretical)" not in result.stdout.split("ridge point", 1)[1]
    assert "FP32 vector" in result.stdout and "6.68 FLOP/byte" in result.stdout  # 815 / 122


@pytest.mark.parametrize(
    "measured, theoretical, why",
    [
        ("bandwidth", [], "no compute ceiling"),
        (
            "",
            [],
            "no bandwidth ceiling (measured by the stream and hierarchy suites; no theoretical one is known "
            "for this device) and no compute",
        ),
        ("compute", ["compute"], "no bandwidth ceiling"),
    ],
)
def test_run_summary_says_why_no_ridge_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run, measured: str, theoretical: List[str], why: str
) -> None:
    r = _summary_run(m5_run, measured=measured, theoretical=theoretical)
    _patch_runner(monkeypatch, lambda _m: r)
    result = invoke(["run", "--device", "cpu", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith("no ridge points:")]
    assert len(lines) == 1 and why in lines[0], result.stdout
    assert "FLOP/byte" not in result.stdout
    # the figure's warning names the same missing kind, not "none valid for a ceiling" (issue 32)
    plot_lines = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: no roofline plot:")]
    assert len(plot_lines) == 1 and "none valid" not in plot_lines[0], result.stderr
    if not measured:
        assert plot_lines[0].endswith("none of which sets a ceiling)"), plot_lines
    else:
        kinds = sorted({c.kind for c in r.ceilings})
        assert plot_lines[0] == (
            f"warning: no roofline plot: the run has {why.split(' (')[0]} (measured by the "
            f"{'stream and hierarchy' if why.startswith('no bandwidth') else 'peak and gemm'} "
            f"suites; no theoretical one is known for this device) to draw its "
            f"{len(r.ceilings)} {' and '.join(kinds)} ceiling{'s' if len(r.ceilings) > 1 else ''} "
            "against"
        ), plot_lines


def test_run_without_ceilings_writes_no_empty_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run
) -> None:
    r = _summary_run(m5_run, measured="", theoretical=[])
    _patch_runner(monkeypatch, lambda _m: r)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "run.json").exists() and (out / "report.md").exists()
    assert not (out / "roofline.png").exists() and not (out / "roofline.svg").exists()
    assert "warning: no roofline plot: the run has no ceilings to draw" in result.stderr


def test_run_write_failure_names_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    import errno

    import apple_roofline.roofline.views.outputs as results_mod

    ok = dataclasses.replace(m5_run, measurements=tuple(m for m in m5_run.measurements if m.valid))
    _patch_runner(monkeypatch, lambda _m: ok)
    out = tmp_path / "out"

    def failing_write(path: Any, text: str) -> None:
        raise OSError(errno.EACCES, "Permission denied", str(Path(path).parent / f".{Path(path).name}.x1y2z3.tmp"))

    monkeypatch.setattr(results_mod, "write_text_atomic", failing_write)
    result = invoke(["run", "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert lines == [f"error: cannot write {out / 'run.json'}: Permission denied"], result.stderr
    assert ".tmp" not in result.stderr


def test_run_all_valid_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    def all_valid(_m: Any) -> Run:
        return dataclasses.replace(m5_run, measurements=tuple(m for m in m5_run.measurements if m.valid))

    _patch_runner(monkeypatch, all_valid)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "error:" not in result.stderr
    for name in ("run.json", "report.md", "report.html", "roofline.png", "roofline.svg", "sweep.png", "sweep.svg"):
        assert str(out / name) in result.stdout and (out / name).stat().st_size > 1000, name
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_run_ceilings_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    ok = dataclasses.replace(m5_run, measurements=tuple(m for m in m5_run.measurements if m.valid))
    _patch_runner(monkeypatch, lambda _m: ok)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--ceilings", "FP32 vector,DRAM bandwidth", "--out", str(out)])
    assert result.exit_code == 0, result.output
    svg = (out / "roofline.svg").read_text()
    assert 'id="ceiling:measured:compute:FP32 vector"' in svg
    assert 'id="ceiling:measured:compute:FP32 scalar ILP"' not in svg
    result = invoke(["run", "--device", "cpu", "--ceilings", ",", "--out", str(tmp_path / "o2")])
    assert_usage_error(result, "--ceilings", "valid: default, all")
    # a name a run can hold but this one lacks (known only after measuring): a warning, nothing lost
    result = invoke(["run", "--device", "cpu", "--ceilings", "GEMM INT8", "--out", str(tmp_path / "o3")])
    assert result.exit_code == 0, result.output
    assert "warning: ceilings: no ceiling named 'GEMM INT8'" in result.stderr and "default ceilings" in result.stderr
    assert 'id="ceiling:measured:compute:FP32 scalar ILP"' in (tmp_path / "o3" / "roofline.svg").read_text()


@pytest.mark.parametrize("name", ["nosuch", "FP99"])
def test_run_rejects_an_unknown_ceiling_before_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run, name: str
) -> None:
    calls = _patch_runner(monkeypatch, lambda _m: m5_run)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--ceilings", f"FP32 vector,{name}", "--out", str(out)])
    assert_usage_error(
        result,
        f"--ceilings {name!r} is not a ceiling name (valid: default, all, or names separated "
        "by commas of: DRAM bandwidth, ",
        "FP32 vector",
        "GEMM FP64",
        "Matrix FP16→FP32 (wgmma)",
    )
    assert calls == [] and not out.exists()  # nothing measured, no folder made


def test_run_and_plot_check_ceilings_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, saved_run: Path, m5_run: Run
) -> None:
    """The same check and message for both (issue 32), each against the names it can know: every name
    a run can hold before `run` measures, the run's own in `plot`."""
    _patch_runner(monkeypatch, lambda _m: m5_run)
    run_err = invoke(["run", "--device", "cpu", "--ceilings", "FP99", "--out", str(tmp_path / "o")]).stderr
    plot_err = invoke(["plot", str(saved_run), "--ceilings", "FP99", "-o", str(tmp_path / "p.png")]).stderr
    prefix = "error: --ceilings 'FP99' is not a ceiling name (valid: default, all, or names separated by commas of: "
    assert run_err.startswith(prefix) and plot_err.startswith(prefix)
    assert "Matrix FP16→FP32 (wgmma)" in run_err and "Matrix FP16→FP32 (wgmma)" not in plot_err


def test_plot_ceilings(tmp_path: Path, saved_run: Path) -> None:
    out = tmp_path / "all.svg"
    result = invoke(["plot", str(saved_run), "--ceilings", "all", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().count('id="ceiling:') == 9
    result = invoke(["plot", str(saved_run), "--ceilings", "FP99", "-o", str(out)])
    assert_usage_error(
        result,
        "--ceilings 'FP99' is not a ceiling name (valid: default, all, or names separated by "
        "commas of: DRAM bandwidth, FP16 scalar ILP, FP16 vector",
    )


def test_report_html(saved_run: Path) -> None:
    result = invoke(["report", str(saved_run), "--format", "html"])
    assert result.exit_code == 0, result.output
    static = re.sub(r"<script.*?</script>", "", result.stdout, flags=re.S)  # plotly.js, where installed, has "<svg"
    assert result.stdout.startswith("<!DOCTYPE html>") and static.count("<svg") == 2


def test_report_html_of_a_dispatch_study(tmp_path: Path, m5_run: Run) -> None:
    from apple_roofline.dispatch.model import DispatchStudy, LatencySeries

    study = DispatchStudy(
        tool=m5_run.tool,
        created=m5_run.created,
        host={},
        device={"backend": "cpu", "name": "x"},
        command=(),
        params={},
        series=(LatencySeries("null", "round_trip", "native", "host", (1e-5,)),),
    )
    path = tmp_path / "dispatch.json"
    study.save(path)
    assert_usage_error(invoke(["report", str(path), "--format", "html"]), "--format html is for roofline runs")
    result = invoke(["report", str(path), "--format", "md"])
    assert result.exit_code == 0 and result.stdout.startswith("# Dispatch latency: x (cpu)")


def test_dispatch_options_are_the_librarys(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert_usage_error(
        invoke(["dispatch", "--reps", "0", "--out", str(out)]), "--reps 0 is out of range (valid: 1 to 100000)"
    )
    assert_usage_error(invoke(["dispatch", "--launches", "x", "--out", str(out)]), "--launches 'x' is not an integer")
    assert_usage_error(
        invoke(["dispatch", "--device", "cuda:0", "--out", str(out)]),
        "--device 'cuda:0' is not available: libcuda.so.1 not found (valid: cpu)",
    )
    assert not out.exists()


# --------------------------------------------------------------------------
# one real end-to-end run on the CPU


# --------------------------------------------------------------------------
# plot --point


def test_plot_points_table_and_figure(tmp_path: Path, saved_run: Path) -> None:
    out = tmp_path / "pts.svg"
    result = invoke(
        [
            "plot",
            str(saved_run),
            "-o",
            str(out),
            "--point",
            "mem:1e9:1e9:0.02",  # 1 FLOP/B, 50 GFLOP/s: under the 122 GB/s roof
            "--point",
            "my:gemm:4e12:4e10:8.0",
        ]
    )  # 100 FLOP/B, 500 GFLOP/s; name with a colon
    assert result.exit_code == 0, result.output
    assert out.exists()
    svg = out.read_text()
    assert "point:mem" in svg and "point:my:gemm" in svg
    lines = result.stdout.splitlines()
    assert "bound by" in lines[0] and "attainable" in lines[0] and "share" in lines[0]
    mem = next(ln for ln in lines if ln.startswith("mem "))
    assert "memory-bound" in mem and " 50 " in f" {mem} " and "41.0 %" in mem  # 50 / 122
    gemm = next(ln for ln in lines if ln.startswith("my:gemm"))
    assert "compute-bound" in gemm and " 500 " in f" {gemm} " and " 100 " in f" {gemm} "


@pytest.mark.parametrize(
    "value, needles",
    [
        ("nocolons", ["NAME:FLOPS:BYTES:SECONDS"]),
        ("k:1:2", ["NAME:FLOPS:BYTES:SECONDS"]),
        (":1:2:3", ["NAME:FLOPS:BYTES:SECONDS"]),
        ("k:x:2:3", ["FLOPS", ">= 0"]),
        ("k:-1:2:3", ["FLOPS", ">= 0"]),
        ("k:1:0:3", ["BYTES", "> 0"]),
        ("k:1:2:0", ["SECONDS", "> 0"]),
        ("k:1:2:nan", ["SECONDS"]),
        ("k:1:inf:1", ["BYTES"]),
    ],
)
def test_plot_bad_point(tmp_path: Path, saved_run: Path, value: str, needles: List[str]) -> None:
    out = tmp_path / "x.png"
    result = invoke(["plot", str(saved_run), "-o", str(out), "--point", value])
    assert_usage_error(result, *needles)
    assert not out.exists()


def test_plot_zero_flop_point(tmp_path: Path, saved_run: Path) -> None:
    result = invoke(["plot", str(saved_run), "-o", str(tmp_path / "z.png"), "--point", "copy:0:1e9:0.01"])
    assert result.exit_code == 0, result.output
    assert "no FLOPs" in result.stdout


@pytest.mark.parametrize(
    "text, want",
    [("10", 10), (" +12 ", 12), ("-3", -3), ("1e3", "1e3"), ("++5", "++5"), ("\u00b2", "\u00b2"), ("", "")],
)
def test_numeric_options_become_ints_or_stay_text_for_the_library_to_reject(text: str, want: object) -> None:
    assert as_integer(text) == want and type(as_integer(text)) is type(want)


@pytest.mark.parametrize("value", ["++5", "\u00b2"])
def test_dispatch_rejects_odd_counts_in_one_line(value: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["dispatch", "--reps", value, "--out", str(tmp_path / "d")])
    assert result.exit_code == 2
    assert result.output.count("error:") == 1 and "--reps" in result.output


def test_run_sustain_is_passed_and_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run) -> None:
    calls = _patch_runner(monkeypatch, lambda _m: m5_run)
    invoke(["run", "--device", "cpu", "--sustain", "2.5", "--out", str(tmp_path / "o")])
    assert calls[0]["sustain_s"] == 2.5
    for bad, problem in (
        ("61", "is out of range"),
        ("-1", "is out of range"),
        ("soon", "is not a number"),
        ("nan", "is out of range"),
    ):
        result = invoke(["run", "--device", "cpu", "--sustain", bad, "--out", str(tmp_path / "x")])
        assert result.exit_code == 2, result.output
        assert f"--sustain '{bad}' {problem} (valid: 0 to 60 seconds)" in result.stderr, result.stderr
        assert not (tmp_path / "x").exists()


def test_run_summary_shows_the_phases_and_the_wall_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, m5_run: Run
) -> None:
    from apple_roofline.study.timing import BETWEEN, START_UP, PhaseTime, SuiteTime

    times = (SuiteTime("stream", 2.0, 10.0, 4, False, 4),)
    phases = (PhaseTime(START_UP, 1.0, since="process start"), PhaseTime(BETWEEN, 0.5))
    ok = dataclasses.replace(
        m5_run, measurements=tuple(m for m in m5_run.measurements if m.valid), suite_times=times, phase_times=phases
    )
    _patch_runner(monkeypatch, lambda _m: ok)
    out = tmp_path / "out"
    result = invoke(["run", "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith("time per suite: ")]
    assert line.startswith("time per suite: start-up (from process start) 1.0 s, stream 2.0 s; total 2.0 s; ")
    assert "; between suites 0.5 s; end " in line and "; wall " in line
    saved = Run.load(out / "run.json").phase_times
    assert [p.phase for p in saved] == ["start-up", "between suites", "end"] and not saved[-1].until
    assert "| end (until this report) |" in (out / "report.md").read_text()
