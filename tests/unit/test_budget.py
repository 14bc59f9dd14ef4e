"""Suite time budgets (roofline/run/budget.py) and the per-suite time records (study/timing.py):
parsing and its errors, the records' round trip, the report's table and the cut-short warning."""

from __future__ import annotations

import json

import pytest

from apple_roofline.errors import OptionError
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.budget import MAX_BUDGET_S, default_budgets, suite_budgets
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.study.files import ResultsError
from apple_roofline.study.timing import SuiteClock, SuiteTime, cut_warning, time_rows

SUITES = ("stream", "sweep", "peak", "gemm")


def test_defaults_cover_every_suite_and_quick_is_shorter() -> None:
    from apple_roofline.suites.registry import suite_names

    ALL = suite_names()
    SUITE_BUDGET_S, QUICK_BUDGET_S = default_budgets(), default_budgets(quick=True)

    assert set(SUITE_BUDGET_S) == set(ALL)
    assert all(0 < QUICK_BUDGET_S[s] < SUITE_BUDGET_S[s] <= MAX_BUDGET_S for s in ALL)
    assert suite_budgets(SUITES) == {s: SUITE_BUDGET_S[s] for s in SUITES}
    assert suite_budgets(SUITES, quick=True) == {s: QUICK_BUDGET_S[s] for s in SUITES}


def test_overrides_as_text_or_mapping_and_none() -> None:
    got = suite_budgets(SUITES, False, " GEMM=120 , sweep=7.5 ")
    assert got["gemm"] == 120 and got["sweep"] == 7.5 and got["stream"] == default_budgets()["stream"]
    assert suite_budgets(SUITES, False, {"peak": 3})["peak"] == 3.0
    assert suite_budgets(SUITES, True, "none") == {s: 0.0 for s in SUITES}


@pytest.mark.parametrize(
    "text,problem",
    [
        ("gemm", "is not SUITE=SECONDS"),
        ("gemm=abc", "is not a number of seconds"),
        ("gemm=nan", "is not a number"),
        ("gemm=0", "is out of range"),
        ("gemm=-1", "is out of range"),
        (f"gemm={MAX_BUDGET_S + 1}", "is out of range"),
        ("matrix=5", "is not a suite of this run"),
        (",", "names no suite"),
    ],
)
def test_bad_budgets_name_the_problem_and_the_range(text: str, problem: str) -> None:
    with pytest.raises(OptionError, match=problem) as info:
        suite_budgets(SUITES, False, text)
    assert info.value.option == "budget" and "SUITE=SECONDS" in info.value.valid and "3600" in info.value.valid


def test_suite_time_round_trips_and_old_files_read_without_it() -> None:
    t = SuiteTime("gemm", 12.5, 90.0, 70, False)
    assert SuiteTime.from_dict(json.loads(json.dumps(t.to_dict()))) == t
    with pytest.raises(ResultsError, match="suite_times.*non-negative"):
        SuiteTime.from_dict({**t.to_dict(), "seconds": -1.0}, where="suite_times[0]")
    with pytest.raises(ResultsError, match="cut"):
        SuiteTime.from_dict({k: v for k, v in t.to_dict().items() if k != "cut"}, where="suite_times[0]")


def test_run_keeps_its_suite_times(m5_run: Run) -> None:
    run = m5_run
    times = (SuiteTime("stream", 1.5, 30.0, 4, False), SuiteTime("gemm", 91.0, 90.0, 60, True))
    import dataclasses

    timed = dataclasses.replace(run, suite_times=times)
    again = Run.from_json(timed.to_json())
    assert again.suite_times == times
    old = timed.to_dict()
    del old["suite_times"]
    assert Run.from_dict(old).suite_times == ()
    md = to_markdown(timed)
    section = md.split("## Time per suite", 1)[1].split("##", 1)[0]
    assert "| gemm | 60 | 91.0 | 90 | cut short by its budget |" in section
    assert "| stream | 4 | 1.5 | 30 | complete |" in section and "| total | 64 | 92.5 |" in section
    assert "Cut short by its time budget: gemm" in section
    assert "## Time per suite" not in to_markdown(run)  # a run without records has no section


def test_cut_warning_and_rows() -> None:
    assert cut_warning(SuiteTime("peak", 1.0, 30.0, 3, False)) is None
    w = cut_warning(SuiteTime("peak", 31.0, 30.0, 3, True))
    assert w is not None and "peak" in w and "30 s" in w and "--budget peak=" in w
    assert time_rows([SuiteTime("peak", 1.0, 0.0, 3, False)]) == [("peak", "3", "1.0", "none", "complete")]


def test_clock_spends_only_a_budget() -> None:
    assert not SuiteClock("x", 0.0).spent()  # no budget
    clock = SuiteClock("x", 1e-9)
    assert clock.spent()
    rec = clock.record()
    assert rec.suite == "x" and rec.seconds >= 0 and rec.budget_s == 1e-9 and not rec.cut
    assert clock.cut_here() and clock.record().cut  # asked before a case: the suite is cut there
    unlimited = SuiteClock("y", 0.0)
    assert not unlimited.cut_here() and not unlimited.record().cut


# -- a suite cut by its budget makes the study partial everywhere it is shown (issue 29) -----------

CUT = SuiteTime("sweep", 61.0, 60.0, 9, True, 12, "sweep/scalar8/fp32 F=1 n=8")


def _cut(run: Run) -> Run:
    import dataclasses

    return dataclasses.replace(run, suite_times=(SuiteTime("stream", 1.5, 30.0, 4, False, 4), CUT))


def test_clock_records_the_plan_and_the_case_it_stopped_before() -> None:
    clock = SuiteClock("sweep", 1e-9, planned=12)
    assert clock.cut_here("sweep/scalar8/fp32 F=1 n=8")
    rec = clock.record()
    assert rec.cut and rec.planned == 12 and rec.stopped_before == "sweep/scalar8/fp32 F=1 n=8"
    assert clock.progress_note() == "cut short by its 1e-09 s budget"
    assert SuiteClock("x", 0.0, planned=3).progress_note() == ""
    assert SuiteTime.from_dict(json.loads(json.dumps(CUT.to_dict()))) == CUT
    assert "stopped_before" not in SuiteTime("x", 1.0, 2.0, 3, False, 3).to_dict()


def test_a_cut_suite_makes_the_run_partial_in_its_file(m5_run: Run) -> None:
    from apple_roofline.study.document import COMPLETE, CUT_BY_BUDGET, INTERRUPTED_STATUS

    assert m5_run.status == COMPLETE and not m5_run.partial and m5_run.to_dict()["status"] == "complete"
    cut = _cut(m5_run)
    assert cut.status == CUT_BY_BUDGET and cut.partial and cut.budget_cuts() == (CUT,)
    d = json.loads(cut.to_json())
    assert d["complete"] is False and d["status"] == "cut by budget"
    assert d["suite_times"][1] == {
        "suite": "sweep",
        "seconds": 61.0,
        "budget_s": 60.0,
        "measured": 9,
        "cut": True,
        "planned": 12,
        "stopped_before": "sweep/scalar8/fp32 F=1 n=8",
    }
    again = Run.from_json(cut.to_json())
    assert again.complete and again.status == CUT_BY_BUDGET  # cut, not interrupted: the field round-trips
    import dataclasses

    stopped = dataclasses.replace(cut, complete=False)
    assert stopped.status == INTERRUPTED_STATUS and Run.from_json(stopped.to_json()).status == INTERRUPTED_STATUS
    old = {k: v for k, v in stopped.to_dict().items() if k != "status"}  # a file from before "status"
    assert Run.from_dict(old).status == INTERRUPTED_STATUS


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"status": "half done"}, "status 'half done' is not a study status"),
        ({"status": "complete", "complete": False}, "complete is false but status"),
    ],
)
def test_a_status_that_is_none_or_disagrees_is_a_bad_file(m5_run: Run, change: dict, problem: str) -> None:
    with pytest.raises(ResultsError, match=problem):
        Run.from_dict({**m5_run.to_dict(), **change}, source="run.json")


def test_reports_say_partial_and_name_what_was_not_measured(m5_run: Run) -> None:
    from apple_roofline.roofline.views.html import to_html
    from apple_roofline.study.markdown import figure_status, status_text

    cut = _cut(m5_run)
    words = (
        "PARTIAL — cut by budget: sweep cut by its 60 s budget (9 of 12 planned cases measured; not measured "
        "from sweep/scalar8/fp32 F=1 n=8 on)"
    )
    assert status_text(cut) == words and status_text(m5_run) == "complete"
    md = to_markdown(cut)
    assert md.splitlines()[2] == f"**{words}.**"
    assert f"| Status | {words} |" in md
    page = to_html(cut)
    assert f'class="banner">{words}.' in page and f"<tr><td>Status</td><td>{words}</td></tr>" in page
    assert figure_status(cut, ("sweep",)) == f"PARTIAL, not every case drawn: {words.split(': ', 1)[1]}."
    assert figure_status(cut, ("hierarchy",)) is None and figure_status(m5_run) is None


def test_progress_line_says_the_steps_done_and_why_it_ended() -> None:
    import typer
    from typer.testing import CliRunner

    from apple_roofline.cli.progress import CliProgress

    app = typer.Typer()

    @app.command()
    def main() -> None:
        with CliProgress(rich=False) as p:
            for stage, note in (("stream", "cut short by its 10 s budget"), ("peak", "")):
                p.start(stage, 4)
                for _ in range(3 if note else 4):
                    p.advance("x")
                p.finish(stage, note)

    err = CliRunner().invoke(app, []).stderr.splitlines()
    assert "[stream] 3/4, cut short by its 10 s budget" in err and "[stream] done" not in err
    assert err[-1] == "[peak] done: 4 steps"


def test_figures_of_a_cut_run_say_what_they_lack(tmp_path, m5_run: Run) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from apple_roofline.cli import app
    from apple_roofline.figures import NOTE_GID
    from apple_roofline.roofline.views.outputs import write_run_files

    cut = _cut(m5_run)
    write_run_files(cut, tmp_path)
    assert f'id="{NOTE_GID}"' in (tmp_path / "sweep.svg").read_text()  # the sweep lacks scalar8
    assert f'id="{NOTE_GID}"' in (tmp_path / "roofline.svg").read_text()
    whole = tmp_path / "whole"
    whole.mkdir()
    write_run_files(m5_run, whole)
    assert NOTE_GID not in (whole / "sweep.svg").read_text() + (whole / "roofline.svg").read_text()
    cut.save(tmp_path / "cut.json")
    result = CliRunner().invoke(app, ["plot", str(tmp_path / "cut.json"), "-o", str(tmp_path / "p.svg")])
    assert result.exit_code == 0, result.output
    assert f'id="{NOTE_GID}"' in (tmp_path / "p.svg").read_text()
    svg = (tmp_path / "p.svg").read_text()
    note = svg.split(f'id="{NOTE_GID}"', 1)[1]
    assert "<!-- PARTIAL, not every case drawn: sweep cut by its 60 s budget" in note
