"""Suite time budgets (roofline/budget.py) and the per-suite time records (study/timing.py):
parsing and its errors, the records' round trip, the report's table and the cut-short warning."""

from __future__ import annotations

import json

import pytest

from apple_roofline.errors import OptionError
from apple_roofline.roofline.budget import MAX_BUDGET_S, default_budgets, suite_budgets
from apple_roofline.roofline.report import to_markdown
from apple_roofline.roofline.run import Run
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


@pytest.mark.parametrize("text,problem", [
    ("gemm", "is not SUITE=SECONDS"), ("gemm=abc", "is not a number of seconds"), ("gemm=nan", "is not a number"),
    ("gemm=0", "is out of range"), ("gemm=-1", "is out of range"), (f"gemm={MAX_BUDGET_S + 1}", "is out of range"),
    ("matrix=5", "is not a suite of this run"), (",", "names no suite"),
])
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
