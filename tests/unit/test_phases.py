"""The time outside the suites (study/timing.py's PhaseTime) and where it is shown, and the drawing
jobs that overlap the end phase (roofline/views/draw.py): the records' round trip (old files without them
still read), the time table's rows and the CLI's line, the end phase a run's files record, the
runner's start-up and between-suites phases, and the same files drawn on a pool of processes as in
one process, with a file that cannot be written named as before."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
from concurrent.futures import wait
from pathlib import Path
from typing import Any, List

import pytest

from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.views.draw import DrawPool, draw_jobs, drawing_pool, run_jobs
from apple_roofline.roofline.views.outputs import write_run_files, write_timed_run_files
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.study.files import ResultsError
from apple_roofline.study.timing import (
    BETWEEN,
    END,
    START_UP,
    PhaseTime,
    SuiteTime,
    process_start,
    read_phase_times,
    start_of,
    time_line,
    time_rows,
    wall_seconds,
)
from apple_roofline.telemetry import NullSampler
from apple_roofline.telemetry.starting import SamplerStart
from test_tuning import FakeBackend, fake  # noqa: F401  (tests/unit is on the path; the fake device)

TIMES = (SuiteTime("stream", 2.0, 10.0, 4, False, 4), SuiteTime("sweep", 3.5, 20.0, 12, False, 12))
PHASES = (
    PhaseTime(START_UP, 1.25, (("imports", 0.5), ("device", 0.25)), since="process start"),
    PhaseTime(BETWEEN, 0.25),
    PhaseTime(END, 2.0, (("run.json", 0.01),)),
)


def test_phase_times_round_trip_and_old_files_read_without_them(m5_run: Run) -> None:
    for p in PHASES:
        assert PhaseTime.from_dict(p.to_dict()) == p
    assert PHASES[0].to_dict() == {
        "phase": "start-up",
        "seconds": 1.25,
        "parts": {"imports": 0.5, "device": 0.25},
        "since": "process start",
    }
    timed = dataclasses.replace(m5_run, suite_times=TIMES, phase_times=PHASES)
    again = Run.from_json(timed.to_json())
    assert again.phase_times == PHASES
    old = json.loads(timed.to_json())
    del old["phase_times"]
    assert Run.from_dict(old).phase_times == () and Run.from_dict(old).suite_times == TIMES
    assert read_phase_times({}, "x.json") == ()


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"phase": "warm-up"}, r"phase_times\[0\]\.phase must be one of start-up, between suites, end, not 'warm-up'"),
        ({"seconds": -1.0}, r"phase_times\[0\].*seconds.*non-negative"),
        ({"parts": {"imports": -2}}, r"phase_times\[0\]\.parts.*imports.*non-negative"),
        ({"parts": [1]}, r"phase_times\[0\]\.parts must be an object"),
    ],
)
def test_a_bad_phase_names_the_field(change: dict, problem: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ResultsError, match=problem):
        read_phase_times({"phase_times": [{**PHASES[0].to_dict(), **change}]}, "run.json")


def test_rows_put_the_phases_around_the_suites_and_end_with_the_wall_time() -> None:
    rows = time_rows(TIMES, PHASES)
    assert [r[0] for r in rows] == [
        "start-up (from process start)",
        "stream",
        "sweep",
        "total",
        "between suites",
        "end",
        "wall",
    ]
    assert rows[-1][2] == "9.0" == f"{wall_seconds(TIMES, PHASES):.1f}"  # 1.25 + 2 + 3.5 + 0.25 + 2
    assert time_rows(TIMES) == [r for r in rows if r[0] in ("stream", "sweep", "total")]  # a file without phases
    assert time_line(TIMES, PHASES) == (
        "start-up (from process start) 1.2 s, stream 2.0 s, sweep 3.5 s; total 5.5 s; between suites 0.2 s; "
        "end 2.0 s; wall 9.0 s"
    )
    assert time_line(TIMES) == "stream 2.0 s, sweep 3.5 s; total 5.5 s"


def test_the_reports_table_shows_the_phases(m5_run: Run) -> None:
    shown = (*PHASES[:2], dataclasses.replace(PHASES[2], until="this report"))
    md = to_markdown(dataclasses.replace(m5_run, suite_times=TIMES, phase_times=shown))
    table = md.split("## Time per suite", 1)[1].split("\n## ", 1)[0]
    assert "| start-up (from process start) |  | 1.2 |" in table
    assert "| end (until this report) |  | 2.0 |" in table and "| wall |  | 9.0 |" in table
    assert "the results file holds it to the last file" in table
    plain = to_markdown(dataclasses.replace(m5_run, suite_times=TIMES))
    assert "| wall |" not in plain and "start-up" not in plain


def test_process_start_is_before_now() -> None:
    start, since = process_start()
    assert since in ("process start", "package import")
    assert start <= time.perf_counter()


def test_the_start_up_counts_from_the_interpreter_not_what_its_process_ran_before() -> None:
    """``bash -c "pip install . && apple-roofline run"`` (issue 45): bash exec's the tool into its own
    process, whose start (the OS's) is before the install; a process that waited that long before
    the package's import is not the interpreter's own, so the start-up counts from the import."""
    assert start_of(239.1, 0.3, 1000.0) == (1000.0, "package import")  # 239 s of pip before the import
    assert start_of(0.25, 0.2, 1000.0) == (999.75, "process start")  # an interpreter of its own process
    assert start_of(0.2, 0.4, 1000.0) == (999.8, "process start")  # threads' CPU above the age
    assert start_of(None, 0.2, 1000.0) == (1000.0, "package import")  # the OS tells no start
    assert start_of(-1.0, 0.2, 1000.0) == (1000.0, "package import")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the OS's process start is read on Linux")
def test_a_shell_that_waited_before_exec_ing_the_tool_is_not_its_start_up(tmp_path: Path) -> None:
    """The case as a shell runs it: a command before the tool (a 2-s sleep: no CPU, as the install
    is none of the process's own), then the tool exec'd into the shell's process."""
    code = (
        "from apple_roofline.study.timing import IMPORTED_AT, process_start; "
        "t, since = process_start(); print(since, t == IMPORTED_AT)"
    )
    shell = f"sleep 2; exec {sys.executable} -c '{code}'"
    out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["package", "import", "True"]


def test_timed_files_record_the_end_phase_last(tmp_path: Path, m5_run: Run) -> None:
    run = dataclasses.replace(m5_run, suite_times=TIMES, phase_times=PHASES[:2])  # 1.25 + 5.5 + 0.25 s
    origin = time.perf_counter() - wall_seconds(TIMES, PHASES[:2])
    final, written, problems = write_timed_run_files(run, tmp_path, origin)
    assert [p.name for p in written[:3]] == ["run.json", "report.md", "report.html"] and not problems
    (end,) = [p for p in final.phase_times if p.phase == END]
    assert end.until == "" and [name for name, _ in end.parts] == [
        "assemble",
        "run.json",
        "report.md",
        "report.html",
        "roofline",
        "sweep",
        "suite figures",
    ]
    assert Run.load(tmp_path / "run.json").phase_times == final.phase_times  # written again, with the end
    report = (tmp_path / "report.md").read_text()
    assert "| end (until this report) |" in report and "| wall |" in report
    assert "end (until this report)" in (tmp_path / "report.html").read_text()


def _normalized(path: Path) -> bytes:
    """A file with matplotlib's random SVG ids and Plotly's random div ids made equal."""
    data = path.read_bytes()
    if path.suffix in (".svg", ".html"):
        data = re.sub(rb"\b([pm])[0-9a-f]{10}\b", rb"\1ID", data)
        data = re.sub(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", b"UUID", data)
    return data


def test_a_pool_draws_the_same_files(tmp_path: Path, m5_run: Run) -> None:
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    serial.mkdir()
    pooled.mkdir()
    one = write_run_files(m5_run, serial)
    with DrawPool(2) as pool:
        assert pool.executor is not None  # Linux and macOS have a fork server
        two = write_run_files(m5_run, pooled, pool=pool)
    assert [p.name for p in one[0]] == [p.name for p in two[0]] and one[1] == two[1]
    for p in one[0]:
        assert _normalized(p) == _normalized(pooled / p.name), p.name


def test_the_roofline_split_in_two_jobs_writes_the_same_files(tmp_path: Path, m5_run: Run) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    whole = [j for j in draw_jobs()[1] if j.what.startswith("roofline")]
    split = [j for j in draw_jobs(split=True)[1] if j.what.startswith("roofline")]
    assert [j.what for j in whole] == ["roofline"] and [j.what for j in split] == ["roofline.png", "roofline.svg"]
    drawn_once = run_jobs(whole, m5_run, one, "default", None)
    drawn_twice = run_jobs(split, m5_run, two, "default", None)
    assert [p.name for p in drawn_once[0]] == [p.name for p in drawn_twice[0]] == ["roofline.png", "roofline.svg"]
    for p in drawn_once[0]:  # the SVG drawn from a figure that saved no PNG before is the same
        assert _normalized(p) == _normalized(two / p.name), p.name
    bare = dataclasses.replace(m5_run, ceilings=(), measurements=())
    problems = run_jobs(split, bare, tmp_path, "default", None)[1]
    assert len(problems) == 1 and problems[0].startswith("no roofline plot")  # said once, not per job


def test_report_html_shows_the_figures_the_figure_jobs_saved(
    tmp_path: Path, m5_run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apple_roofline.roofline.views import html

    def not_again(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("report.html drew a figure the figure jobs had saved")

    for name in ("roofline_figure", "suite_figure"):
        monkeypatch.setattr(html, name, not_again)
    reports, figures = draw_jobs()
    written = run_jobs((*reports, *figures), m5_run, tmp_path, "default", None)[0]
    page = (tmp_path / "report.html").read_text()
    assert tmp_path / "report.html" in written
    for p in written:
        if p.suffix == ".svg":  # the file's drawing, as the page shows it (its random ids included)
            ids = set(re.findall(r'id="(p[0-9a-f]{10})"', p.read_text()))
            assert ids and ids <= set(re.findall(r'id="(p[0-9a-f]{10})"', page)), p.name


@pytest.mark.parametrize("workers", [0, 2])
def test_a_file_that_cannot_be_written_is_named_as_before(tmp_path: Path, m5_run: Run, workers: int) -> None:
    (tmp_path / "roofline.png").mkdir()  # a directory where the figure goes
    with DrawPool(workers) as pool, pytest.raises(OSError, match=r"cannot write .*roofline\.png"):
        write_run_files(m5_run, tmp_path, pool=pool)
    assert (tmp_path / "report.html").exists()  # the other jobs ended and wrote theirs


def test_a_pool_warms_on_a_thread_and_its_process_runs() -> None:
    with DrawPool(1) as pool:
        ready = pool.warm()
        assert ready is not None and ready.result(timeout=120) is True
    assert DrawPool(0).warm() is None
    closed = DrawPool(1)
    started = closed.warm()
    closed.close()  # closed before or after the thread submitted: the future ends either way
    assert started is not None
    assert wait([started], timeout=120).done == {started}


def test_the_cpu_backend_draws_in_its_own_process() -> None:
    assert drawing_pool("cpu", cores=64).executor is None
    with drawing_pool("cuda", cores=2) as small:  # too few cores: drawn in-process
        assert small.executor is None


def test_a_sampler_started_on_a_thread_is_the_same_sampler() -> None:
    opened: List[Any] = []

    class Counting(NullSampler):
        def open(self) -> str:
            opened.append(1)
            return "nothing to read"

    for background in (False, True):
        s = Counting("x")
        start = SamplerStart(s, background)
        start.join()
        assert start.wait() is s and start.wait() is s
        assert s.reason == "nothing to read" and not s.active
    assert len(opened) == 2  # each opened once


def test_a_run_records_its_start_up_and_the_time_between_suites(
    fake: FakeBackend,  # noqa: F811 (pytest's fixture, imported from test_tuning above to be found)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from apple_roofline.devices import DeviceSpec
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions
    from apple_roofline.roofline.run.runner import RooflineRunner

    monkeypatch.setattr(runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(runner, "open_device", lambda spec: fake)
    fake.max_pipeline = 1024  # the stream table's CUDA block
    started = (time.perf_counter() - 1.0, "process start")  # as if the process had started 1 s ago
    options = RunOptions(device="cuda:0", suites="stream", reps=2, array_bytes=4096, telemetry=False)
    run = RooflineRunner(options, started=started).run()
    startup, between = run.phase_times
    assert (startup.phase, startup.since, between.phase) == (START_UP, "process start", BETWEEN)
    assert [name for name, _ in startup.parts] == ["imports", "device", "plan", "telemetry"]
    assert startup.seconds >= 1.0 and dict(startup.parts)["imports"] >= 1.0
    assert [t.suite for t in run.suite_times] == ["stream"]
    assert RooflineRunner(options).run().phase_times[0].since == "the runner's start"
