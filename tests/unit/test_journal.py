"""The journal every study keeps (study/journal.py; docs/design/files.md, "Journal and resume"): its file,
its reader (a truncated last line dropped, anything that is not this tool's journal refused), the
resume checks, keep() measuring only what the resumed journal lacks, and the results' ``resumed``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Mapping

import pytest

from apple_roofline.calls.model import CallsStudy
from apple_roofline.errors import OptionError
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.run.budget import suite_budgets
from apple_roofline.roofline.run.options import OPTION_FLAGS
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.files import ResultsError
from apple_roofline.study.journal import SUFFIX, Journal, JournalWriteError, journal_path, read_journal, record_key
from apple_roofline.study.markdown import provenance_lines
from journal_lines import journal_keys

DEVICE = {"backend": "cpu", "name": "Test CPU"}
OPTIONS = {"suites": ["stream"], "quick": True, "reps": 3}


def _begin(
    path: Path, journal: Journal, device: Mapping[str, Any] = DEVICE, options: Mapping[str, Any] = OPTIONS
) -> Journal:
    journal.begin(
        Run, created="2026-01-01T00:00:00+00:00", device=device, command=["apple-roofline", "run"], options=options
    )
    return journal


def _new(tmp_path: Path, records: int = 3) -> Path:
    path = journal_path(tmp_path, "run")
    j = _begin(path, Journal(path))
    for i in range(records):
        j.record(f"k{i}", {"value": i})
    j.close()
    return path


class Counter:
    """Measures by counting: each call returns the next integer as a record."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    def measure(self, key: str) -> Dict[str, Any]:
        self.calls.append(key)
        return {"value": 100 + len(self.calls)}


def _keep(j: Journal, counter: Counter, key: str) -> Dict[str, Any]:
    return j.keep(key, lambda: counter.measure(key), lambda d, src: dict(d), lambda r: r)


def test_path_and_key() -> None:
    assert journal_path("out", "dispatch") == Path("out") / f"dispatch{SUFFIX}"
    assert SUFFIX == ".journal.jsonl"
    assert record_key("stream/copy/fp32", params={"n": 4, "a": 1}) == 'stream/copy/fp32 {"a":1,"n":4}'
    assert record_key("blas", "4x64") == "blas 4x64"


def test_header_then_one_line_per_record(tmp_path: Path) -> None:
    path = _new(tmp_path, 3)
    lines = path.read_text().splitlines()
    assert len(lines) == 4
    head = json.loads(lines[0])
    assert head["kind"] == "roofline" and head["schema_version"] == Run.SCHEMA_VERSION
    assert head["tool"] == ToolInfo.current().to_dict()
    assert head["device"] == DEVICE and head["options"] == OPTIONS and head["complete"] is False
    assert "hostname" in head["host"]
    assert [json.loads(ln) for ln in lines[1:]] == [{"key": f"k{i}", "record": {"value": i}} for i in range(3)]
    got = read_journal(path, Run)
    assert list(got.records) == ["k0", "k1", "k2"] and got.records["k1"] == {"value": 1}
    assert got.dropped == "" and got.end == path.stat().st_size


def test_each_record_is_on_disk_before_record_returns(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "run")
    j = _begin(path, Journal(path))
    j.record("a", {"value": 1})
    # read through another file object while the journal is still open: nothing is buffered
    assert read_journal(path, Run).records == {"a": {"value": 1}}
    j.close()


def test_truncated_last_line_is_dropped_with_a_warning_and_appending_resumes_after_it(tmp_path: Path) -> None:
    path = _new(tmp_path, 2)
    complete = path.stat().st_size
    with open(path, "a") as fh:
        fh.write('{"key": "k2", "record": {"val')  # the record in flight when the study died
    got = read_journal(path, Run)
    assert list(got.records) == ["k0", "k1"]
    assert "line 4 is truncated" in got.dropped and "dropped" in got.dropped
    assert got.end == complete
    j = _begin(path, Journal(resume=got))
    j.record("k2", {"value": 2})
    j.close()
    again = read_journal(path, Run)
    assert again.dropped == "" and list(again.records) == ["k0", "k1", "k2"]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "not an apple_roofline journal"),
        ('{"kind": "roofline"', "not an apple_roofline journal"),
        ("not json at all\n", "not an apple_roofline journal"),
        (
            '{"journal": 1, "tool": {"name": "other_tool", "version": "1", "git_revision": null}}\n',
            "not an apple_roofline journal",
        ),
        ('{"kind": "roofline", "schema_version": 1}\n', "not an apple_roofline journal"),  # a results file's start
    ],
)
def test_refuses_what_is_not_this_tools_journal(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "run.journal.jsonl"
    path.write_text(text)
    with pytest.raises(ResultsError, match=problem) as info:
        read_journal(path, Run)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_refuses_a_missing_journal_another_kind_and_a_bad_middle_line(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no such file"):
        read_journal(tmp_path / "run.journal.jsonl", Run)
    path = _new(tmp_path, 2)
    with pytest.raises(ResultsError, match="kind is 'roofline', not 'calls'"):
        read_journal(path, CallsStudy)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "garbage\n" + lines[2])
    with pytest.raises(ResultsError, match="line 2 is not JSON"):
        read_journal(path, Run)
    path.write_text(lines[0] + '{"key": 3, "record": {}}\n')
    with pytest.raises(ResultsError, match="line 2.key must be a string"):
        read_journal(path, Run)


def test_keep_measures_only_what_the_resumed_journal_lacks(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "run")
    first, counter = _begin(path, Journal(path)), Counter()
    assert [_keep(first, counter, k)["value"] for k in ("a", "b")] == [101, 102]
    first.close()
    assert first.resumed() is None and first.resumed_keys == []

    again, counter2 = _begin(path, Journal(resume=read_journal(path, Run))), Counter()
    values = [_keep(again, counter2, k)["value"] for k in ("a", "b", "c")]
    again.close()
    assert counter2.calls == ["c"]  # a and b kept, not measured again
    assert values == [101, 102, 101]
    assert again.resumed_keys == ["a", "b"]
    resumed = again.resumed()
    assert resumed is not None
    assert resumed["measurements"] == ["a", "b"] and resumed["device"] == DEVICE
    assert resumed["created"] == "2026-01-01T00:00:00+00:00" and "hostname" in resumed["host"]
    # each key on one line of the file: a, b kept (not written again), c appended; the reader would
    # merge a key written twice, so the lines are counted
    assert journal_keys(path) == ["a", "b", "c"]
    assert list(read_journal(path, Run).records) == ["a", "b", "c"]


def test_a_decision_is_kept_in_the_header_and_taken_from_it_on_resume(tmp_path: Path) -> None:
    """decided(): a new journal's header keeps what decide() gave; a resumed one returns the header's,
    without deciding again; one whose header holds no such key decides; a malformed one is refused."""
    path = journal_path(tmp_path, "run")
    first = _begin(path, Journal(path))
    assert first.decided("quick_plan", lambda: {"budgets_s": {"stream": 12.0}, "steps": ("a",)}) == {
        "budgets_s": {"stream": 12.0},
        "steps": ["a"],
    }
    first.record("k0", {"value": 0})
    first.close()
    assert json.loads(path.read_text().splitlines()[0])["quick_plan"] == {"budgets_s": {"stream": 12.0}, "steps": ["a"]}

    def again() -> Dict[str, Any]:
        raise AssertionError("decided again")

    resumed = _begin(path, Journal(resume=read_journal(path, Run)))
    assert resumed.decided("quick_plan", again) == {"budgets_s": {"stream": 12.0}, "steps": ["a"]}
    assert resumed.decided("other", lambda: {"n": 1}) == {"n": 1}
    resumed.close()
    lines = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps({**json.loads(lines[0]), "quick_plan": [1]}), *lines[1:]]) + "\n")
    with pytest.raises(ResultsError, match="line 1.quick_plan must be a JSON object"):
        _begin(path, Journal(resume=read_journal(path, Run))).decided("quick_plan", again)
    assert Journal().decided("quick_plan", lambda: {"n": 2}) == {"n": 2}  # no journal: only decides


def test_no_journal_keeps_nothing_and_measures_everything(tmp_path: Path) -> None:
    j, counter = Journal(), Counter()
    j.begin(Run, created="x", device=DEVICE, command=[], options={})
    assert [_keep(j, counter, k)["value"] for k in ("a", "a")] == [101, 102]
    j.close()
    assert j.resumed() is None and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "device, options, problem, reason",
    [
        (
            {"backend": "cuda", "name": "NVIDIA H100"},
            OPTIONS,
            "holds a study of another device",
            "Test CPU (cpu) there, NVIDIA H100 (cuda) here",
        ),
        ({"backend": "cpu", "name": "Other CPU"}, OPTIONS, "holds a study of another device", "Other CPU (cpu) here"),
        (DEVICE, {**OPTIONS, "reps": 4}, "holds a study with other options", "reps 3 there, 4 here"),
        (
            DEVICE,
            {**OPTIONS, "suites": ["stream", "peak"]},
            "holds a study with other options",
            'suites ["stream"] there, ["stream", "peak"] here',
        ),
        (
            DEVICE,
            {k: v for k, v in OPTIONS.items() if k != "quick"},
            "holds a study with other options",
            "quick true there, null here",
        ),
    ],
)
def test_refuses_to_resume_onto_another_device_or_other_options(
    tmp_path: Path, device: Mapping[str, Any], options: Mapping[str, Any], problem: str, reason: str
) -> None:
    path = _new(tmp_path, 1)
    before = path.read_bytes()
    with pytest.raises(OptionError) as info:
        _begin(path, Journal(resume=read_journal(path, Run)), device, options)
    assert info.value.option == "resume"
    assert problem in str(info.value) and reason in str(info.value)
    assert path.read_bytes() == before  # nothing written


def _run_options(suites: List[str], quick: bool, budget: Any = None, **kw: Any) -> Dict[str, Any]:
    return {
        "suites": suites,
        "quick": quick,
        "reps": 10,
        "array_bytes": 1 << 26,
        "sustain_s": 0.0,
        "power_window": False,
        "budgets_s": suite_budgets(suites, quick, budget),
        "tune": None,
        **kw,
    }


@pytest.mark.parametrize(
    "then, now, reason",
    [
        # budgets_s differs too, but it follows from --quick: the flag the user left out is named (issue 32)
        (
            _run_options(["stream", "gemm"], True),
            _run_options(["stream", "gemm"], False),
            "it was started with --quick; add --quick",
        ),
        (
            _run_options(["stream", "gemm"], False),
            _run_options(["stream", "gemm"], True),
            "it was started without --quick; leave out --quick",
        ),
        (
            _run_options(["stream", "peak"], False),
            _run_options(["stream"], False),
            "it was started with --suite stream,peak; give --suite stream,peak",
        ),
        (
            _run_options(["stream"], False, reps=3),
            _run_options(["stream"], False),
            "it was started with --reps 3; give --reps 3",
        ),
        (
            _run_options(["stream", "gemm"], False, "gemm=120"),
            _run_options(["stream", "gemm"], False),
            "it was started with --budget gemm=120,stream=30; give --budget gemm=120,stream=30",
        ),
        (
            _run_options(["stream"], False, "none"),
            _run_options(["stream"], False),
            "it was started with --budget none; give --budget none",
        ),
        (
            _run_options(["stream"], False, sustain_s=2.5),
            _run_options(["stream"], False),
            "it was started with --sustain 2.5; give --sustain 2.5",
        ),
        (
            _run_options(["stream"], False, tune={"mode": "quick"}),
            _run_options(["stream"], False),
            'tune {"mode": "quick"} there, null here',
        ),  # no flag to name: the option and both values
    ],
)
def test_a_resumed_run_names_the_flag_it_was_started_with(
    tmp_path: Path, then: Dict[str, Any], now: Dict[str, Any], reason: str
) -> None:
    path = journal_path(tmp_path, "run")
    j = Journal(path)
    j.begin(Run, created="x", device=DEVICE, command=[], options=then, flags=OPTION_FLAGS)
    j.record("k", {"value": 1})
    j.close()
    with pytest.raises(OptionError) as info:
        Journal(resume=read_journal(path, Run)).begin(
            Run, created="y", device=DEVICE, command=[], options=now, flags=OPTION_FLAGS
        )
    assert info.value.problem == "holds a study with other options"
    assert info.value.reason == reason
    assert "budgets_s" not in str(info.value)


def test_same_device_same_options_tuples_or_lists_resume(tmp_path: Path) -> None:
    """Options compare as JSON reads them back (a tuple equals the list written) and the device by
    backend and name only (other facts, as ``memory_bytes``, may differ): the journal is reopened
    and appended to, its header and records left as they were."""
    path = _new(tmp_path, 1)
    before = path.read_bytes()
    j = _begin(
        path, Journal(resume=read_journal(path, Run)), {**DEVICE, "memory_bytes": 1}, {**OPTIONS, "suites": ("stream",)}
    )
    assert path.read_bytes() == before  # beginning writes nothing
    assert j.stored("k0") == {"value": 0} and j.resumed_keys == ["k0"]
    j.record("k1", {"value": 1})
    j.close()
    assert path.read_bytes() == before + b'{"key":"k1","record":{"value":1}}\n'
    assert json.loads(before.splitlines()[0])["options"] == OPTIONS  # the first study's header, as written
    resumed = j.resumed()
    assert resumed is not None and resumed["measurements"] == ["k0"] and resumed["device"] == DEVICE
    with pytest.raises(OptionError, match=r'suites \["stream"\] there, \["peak"\] here'):
        _begin(path, Journal(resume=read_journal(path, Run)), DEVICE, {**OPTIONS, "suites": ("peak",)})


def test_a_record_that_is_not_finite_is_refused(tmp_path: Path) -> None:
    path = journal_path(tmp_path, "run")
    j = _begin(path, Journal(path))
    assert not path.exists()  # the header waits for the first record: nothing finished, no file
    with pytest.raises(ResultsError, match="cannot be written as JSON"):
        j.record("a", {"value": float("nan")})
    assert not path.exists()
    j.record("b", {"value": 1.5})
    j.close()
    assert read_journal(path, Run).records == {"b": {"value": 1.5}}


def test_resumed_round_trips_through_the_results_file_and_shows_in_the_report() -> None:
    resumed = {
        "created": "2026-01-01T00:00:00+00:00",
        "host": {"hostname": "lab-7"},
        "device": {"backend": "cpu", "name": "Test CPU"},
        "measurements": ["a", "b"],
    }
    run = Run(ToolInfo("apple_roofline", "0", None), "2026-01-02T00:00:00+00:00", {}, DEVICE, (), resumed=resumed)
    back = Run.from_json(run.to_json())
    assert back.resumed == resumed
    row = [ln for ln in provenance_lines(back) if ln.startswith("| Resumed")]
    assert row and "2 measurements kept from the journal of lab-7, Test CPU (cpu)" in row[0]
    assert Run.from_json(Run(ToolInfo("apple_roofline", "0", None), "x", {}, DEVICE, ()).to_json()).resumed is None
    bad = json.loads(run.to_json())
    bad["resumed"]["measurements"] = [1]
    with pytest.raises(ResultsError, match="resumed.measurements"):
        Run.from_dict(bad, source="run.json")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to fill a disk")
def test_a_full_disk_is_one_line_naming_the_journal() -> None:
    j = _begin(Path("/dev/full"), Journal("/dev/full"))
    with pytest.raises(JournalWriteError) as info:
        j.record("a", {"value": 1.0})  # the header goes with the first record
    assert info.value.strerror == "cannot write the journal /dev/full: No space left on device"
    j.close()
