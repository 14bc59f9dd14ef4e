"""A real CPU run whose suites are cut by their time budget (docs/design/budgets.md, "Time budgets"): the
run is partial in its results file, the progress line, the report, ``compare`` and the figures that
lack the cases. The budget is made to run out after three cases of each suite (the clock's
``spent`` patched), so the cut is the same on any machine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("apple_roofline._native")

from apple_roofline.cli import app
from apple_roofline.roofline.model.run import Run
from apple_roofline.study.timing import SuiteClock

CASES = 3  # cases each suite measures before its budget "runs out"


def figure_note(svg: Path) -> str:
    """The note under a figure (:func:`apple_roofline.figures.add_note`): its lines, as the SVG's
    comments inside the note's group hold them, joined; "" when the figure has none."""
    group = re.search(r'<g id="figure-note">(.*?)\n  </g>', svg.read_text(), re.S)
    return " ".join(re.findall(r"<!-- (.*?) -->", group.group(1))) if group else ""


@pytest.fixture(scope="module")
def cut_run(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    out = tmp_path_factory.mktemp("cut") / "out"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SuiteClock, "spent", lambda self: self.budget_s > 0 and self.measured >= CASES)
        result = CliRunner().invoke(
            app,
            [
                "run",
                "--device",
                "cpu",
                "--suite",
                "stream,sweep",
                "--quick",
                "--reps",
                "2",
                "--array-bytes",
                "1MiB",
                "--budget",
                "stream=10,sweep=20",
                "--out",
                str(out),
            ],
        )
    return result, out


def test_results_file_says_partial_and_what_was_not_measured(cut_run: tuple) -> None:
    result, out = cut_run
    assert result.exit_code == 0, result.output
    d = json.loads((out / "run.json").read_text())
    assert d["complete"] is False and d["status"] == "cut by budget"
    stream, sweep = d["suite_times"]
    assert stream["cut"] and stream["measured"] == CASES and stream["planned"] == 4
    assert stream["stopped_before"].startswith("stream/triad/fp32")  # copy, scale, add measured; triad not
    assert sweep["cut"] and sweep["measured"] == CASES and sweep["planned"] > CASES
    run = Run.load(out / "run.json")
    assert run.complete and run.status == "cut by budget" and run.partial  # cut, not interrupted


def test_progress_line_counts_what_ran(cut_run: tuple) -> None:
    result, _ = cut_run
    assert "[stream] 3/4, cut short by its 10 s budget" in result.stderr
    assert "[stream] done" not in result.stderr and "[sweep] done" not in result.stderr
    assert "3 of 4 planned cases measured; not measured from stream/triad/fp32" in result.stderr  # the warning


def test_reports_and_figures_say_partial(cut_run: tuple) -> None:
    _, out = cut_run
    md = (out / "report.md").read_text()
    status = next(ln for ln in md.splitlines() if ln.startswith("| Status |"))
    assert "PARTIAL — cut by budget: stream cut by its 10 s budget (3 of 4 planned cases measured" in status
    assert "sweep cut by its 20 s budget" in status and "complete" not in status
    assert md.splitlines()[2].startswith("**PARTIAL — cut by budget")
    page = (out / "report.html").read_text()
    assert 'class="banner">PARTIAL — cut by budget' in page
    sweep = figure_note(out / "sweep.svg")
    assert sweep.startswith("PARTIAL, not every case drawn: sweep cut by its 20 s budget (3 of ")
    assert "stream" not in sweep
    roofline = figure_note(out / "roofline.svg")  # its ceilings come from every suite: both named
    assert "stream cut by its 10 s budget" in roofline and "sweep cut by its 20 s budget" in roofline


def test_compare_lists_the_run_as_partial(cut_run: tuple) -> None:
    _, out = cut_run
    result = CliRunner().invoke(app, ["compare", str(out / "run.json"), str(out / "run.json")])
    assert result.exit_code == 0, result.output
    runs = result.stdout.split("## Runs", 1)[1].split("##", 1)[0]
    rows = [ln for ln in runs.splitlines() if ln.startswith("| A ") or ln.startswith("| B ")]
    assert len(rows) == 2 and all("PARTIAL — cut by budget" in r and "| complete |" not in r for r in rows)


def test_a_run_that_was_not_cut_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--device",
            "cpu",
            "--suite",
            "stream",
            "--quick",
            "--reps",
            "2",
            "--array-bytes",
            "1MiB",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    d = json.loads((out / "run.json").read_text())
    assert d["complete"] is True and d["status"] == "complete" and not d["suite_times"][0]["cut"]
    assert "[stream] done" in result.stderr
    assert figure_note(out / "roofline.svg") == "" and 'id="figure-note"' not in (out / "roofline.svg").read_text()
