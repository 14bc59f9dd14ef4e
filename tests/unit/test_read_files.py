"""Files read like a database reads them (issue 46, rows 3, 4, 5, 6 and 11; docs/design/files.md, "Results
files"): every file the tool reads is a regular file no larger than the cap of its kind, else it is
refused before it is read (a FIFO never blocks, /dev/zero is never read); a key given twice in a JSON
object, a measurement given twice in a run, a journal record of another measurement than its key and
a rate beyond any device are one line naming the place, exit 2; a byte-order mark is read past.

A FIFO is opened by a regression, which then blocks for good: those cases run the CLI in a
subprocess with a timeout, so that such a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from typer.testing import CliRunner

from apple_roofline.cli.app import app
from apple_roofline.results import load_results
from apple_roofline.roofline.model.run import Run
from apple_roofline.study import ResultsError
from apple_roofline.study.files import JOURNAL_CAP, KERNELS_CAP, NCU_CAP, RESULTS_CAP, read_capped
from apple_roofline.study.journal import Journal, journal_path, read_journal, record_key
from apple_roofline.study.records import CONDITION_PARAMS, Measurement
from apple_roofline.tuning import TuneStudy
from apple_roofline.user_kernels.load import load_kernels

DATA = Path(__file__).parent / "data"
RUN = DATA / "run_epyc_2vcpu.json"
H200 = DATA / "run_h200_default.json"
TUNE = DATA / "tune_synthetic.json"
KERNELS = DATA / "kernels_synthetic.json"
NCU = DATA / "ncu_h200_roofline_raw.csv"
cli = CliRunner()

#: Each input file and a command that reads it: (name, the command with {} for the file, where the
#: file goes: "" as given, or the folder's journal for --resume, the message's prefix).
INPUTS: List[Tuple[str, List[str], str]] = [
    ("run.json (report)", ["report", "{}"], ""),
    ("run.json (plot)", ["plot", "{}", "-o", "{out}/x.png"], ""),
    ("run.json (compare)", ["compare", str(RUN), "{}"], ""),
    ("--kernels", ["report", str(H200), "--kernels", "{}"], "--kernels: "),
    ("--tune-file", ["run", "--tune", "--tune-file", "{}", "-o", "{out}/r"], "--tune-file: "),
    ("journal (--resume)", ["run", "--device", "cpu", "--resume", "{dir}"], "--resume: "),
]


def _place(tmp_path: Path, how: str, journal: bool) -> Tuple[Path, Path]:
    """A special file ``how`` ("fifo", "zero", "urandom"), at ``DIR/run.journal.jsonl`` when
    ``journal``: (the file, its folder)."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = journal_path(folder, "run") if journal else folder / "input.json"
    if how == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(f"/dev/{how}")
    return path, folder


def _args(command: List[str], path: Path, folder: Path, tmp_path: Path) -> List[str]:
    return [a.replace("{}", str(path)).replace("{dir}", str(folder)).replace("{out}", str(tmp_path)) for a in command]


WHAT = {"fifo": "is a FIFO (named pipe)", "zero": "links to /dev/zero, a character device"}
WHAT["urandom"] = "links to /dev/urandom, a character device"


@pytest.mark.parametrize("name, command, prefix", INPUTS, ids=[i[0] for i in INPUTS])
def test_a_fifo_as_any_input_is_refused_without_blocking(
    tmp_path: Path, name: str, command: List[str], prefix: str
) -> None:
    """Row 3: a FIFO hung the reader (no writer ever comes); now it is refused before it is opened.
    The timeout bounds a regression, it asserts no time."""
    path, folder = _place(tmp_path, "fifo", journal="--resume" in command)
    args = _args(command, path, folder, tmp_path)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "apple_roofline", *args], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: a FIFO blocked the reader")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"error: {prefix}{path}: {WHAT['fifo']}, not a "), done.stderr
    assert done.stderr.rstrip().endswith("(valid: a regular file)"), done.stderr


@pytest.mark.parametrize("how", ["zero", "urandom"])
@pytest.mark.parametrize("name, command, prefix", INPUTS, ids=[i[0] for i in INPUTS])
def test_a_link_to_a_device_as_any_input_is_refused_unread(
    tmp_path: Path, fake_registry: None, how: str, name: str, command: List[str], prefix: str
) -> None:
    """Row 3: a link to /dev/zero was read until memory ran out (a MemoryError traceback); now it is
    one line saying what the link leads to, exit 2."""
    path, folder = _place(tmp_path, how, journal="--resume" in command)
    result = cli.invoke(app, _args(command, path, folder, tmp_path))
    assert result.exit_code == 2, (name, result.output, result.exception)
    assert result.output == f"error: {prefix}{path}: {WHAT[how]}, not a " + result.output.split(", not a ", 1)[1]
    assert result.output.endswith("(valid: a regular file)\n") and result.output.count("\n") == 1, result.output


@pytest.mark.parametrize(
    "read, cap, what",
    [
        (lambda p: load_results(p), RESULTS_CAP, "results file"),
        (lambda p: TuneStudy.load(p), RESULTS_CAP, "results file"),
        (lambda p: read_journal(p, Run), JOURNAL_CAP, "journal"),
        (lambda p: load_kernels(p), NCU_CAP, "kernels file or Nsight Compute export"),
    ],
    ids=["run.json", "tune file", "journal", "kernels"],
)
def test_a_file_over_its_cap_is_refused_naming_its_size_and_the_cap(
    tmp_path: Path, read: Any, cap: int, what: str
) -> None:
    """A sparse file one byte over the cap (no disk used): refused before it is read."""
    path = tmp_path / "big"
    with open(path, "wb") as f:
        f.truncate(cap + 1)
    with pytest.raises(ResultsError) as e:
        read(path)
    size = f"{cap + 1:,} bytes"
    assert str(e.value).startswith(f"{path}: {size} (") and f"is larger than a {what} can be" in str(e.value)
    assert str(e.value).endswith(f"(valid: at most {cap:,} bytes, {cap // 2**20} MiB)"), str(e.value)


def test_a_kernels_json_file_has_the_kernels_cap(tmp_path: Path) -> None:
    """A kernels file is JSON, capped as a results file is, below the Nsight Compute export's cap."""
    assert KERNELS_CAP < NCU_CAP
    path = tmp_path / "k.json"
    with open(path, "wb") as f:
        f.write(b"{")
        f.truncate(KERNELS_CAP + 1)
    with pytest.raises(ResultsError, match=rf"is larger than a kernels file can be \(valid: at most {KERNELS_CAP:,}"):
        load_kernels(path)


def test_a_directory_and_a_missing_file_keep_their_words(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=r": is a directory, not a results file \(valid: a regular file\)$"):
        read_capped(tmp_path)
    with pytest.raises(ResultsError, match=r": no such file$"):
        read_capped(tmp_path / "none.json")
    (tmp_path / "dangling").symlink_to(tmp_path / "none.json")
    with pytest.raises(ResultsError, match=r": no such file$"):
        read_capped(tmp_path / "dangling")


# -- duplicates: a key twice in an object, a measurement twice in a run ---------------------------


def test_a_key_given_twice_is_named_with_its_place(tmp_path: Path) -> None:
    """json.loads keeps the last of two equal keys silently: a second ``median_s`` would replace the
    first unseen. Every JSON file is read refusing it, naming the object."""
    raw = RUN.read_text()
    at = raw.index('"median_s": ', raw.index('"measurements"'))
    path = tmp_path / "run.json"
    path.write_text(raw[:at] + '"median_s": 1.0, ' + raw[at:])
    want = f'error: {path}: measurements[0] holds the key "median_s" twice (valid: each key once in an object)\n'
    for command in (["report", str(path)], ["plot", str(path), "-o", str(tmp_path / "x.png")]):
        result = cli.invoke(app, command)
        assert (result.exit_code, result.output) == (2, want), command


def _doubled(path: Path, source: Path, index: int, faster: float) -> Dict[str, Any]:
    """``source`` with a second copy of its measurement ``index``, its samples ``faster`` times as
    fast (its stored statistics recomputed), written to ``path``."""
    d = json.loads(source.read_text())
    m = Measurement.from_dict(d["measurements"][index])
    copy = dataclasses.replace(m, samples_s=tuple(s / faster for s in m.samples_s))
    d["measurements"].append(copy.to_dict())
    path.write_text(json.dumps(d))
    return d


def test_a_measurement_given_twice_is_refused_naming_both(tmp_path: Path) -> None:
    """Row 4: the run's STREAM scale given twice, the copy at 10x its bandwidth, set the DRAM ceiling
    at 550 GB/s instead of 55 (exit 0); now the second is named with the first, exit 2."""
    path = tmp_path / "run.json"
    d = _doubled(path, RUN, 1, 10.0)
    last = len(d["measurements"]) - 1
    key = record_key("stream/scale/fp32", params={"n": 33554432, "array_bytes": 134217728, "q": 3.0})
    want = (
        f"error: {path}: measurements[{last}] repeats measurements[1], {key} (valid: each measurement once, "
        "by its kernel and parameters)\n"
    )
    for command in (["report", str(path)], ["plot", str(path), "-o", str(tmp_path / "x.png")]):
        result = cli.invoke(app, command)
        assert (result.exit_code, result.output) == (2, want), command


def test_a_measurement_under_other_clocks_is_the_same_measurement(tmp_path: Path) -> None:
    """What it was measured at (the clocks and power sampled, the timer) does not make another
    measurement: the copy with another power reading is refused too."""
    d = json.loads(H200.read_text())
    first = next(i for i, m in enumerate(d["measurements"]) if "power_w" in m["params"])
    copy = json.loads(json.dumps(d["measurements"][first]))
    copy["params"]["power_w"] = copy["params"]["power_w"] + 50
    d["measurements"].append(copy)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(d))
    last = len(d["measurements"]) - 1
    with pytest.raises(ResultsError, match=rf"measurements\[{last}\] repeats measurements\[{first}\]"):
        load_results(path)


def test_a_tune_file_with_a_measurement_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tune.json"
    d = _doubled(path, TUNE, 0, 2.0)
    with pytest.raises(ResultsError, match=rf"measurements\[{len(d['measurements']) - 1}\] repeats measurements\[0\]"):
        TuneStudy.load(path)
    result = cli.invoke(app, ["run", "--tune", "--tune-file", str(path), "-o", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: --tune-file: {path}: measurements["), result.output


# -- the journal: each record the measurement of its key --------------------------------------------


def _journal(tmp_path: Path, records: List[Tuple[str, Dict[str, Any]]]) -> Path:
    """A roofline run's journal in ``tmp_path`` holding ``records`` (key, record) in order."""
    j = Journal(journal_path(tmp_path, "run"))
    j.begin(Run, created="2025-01-01T00:00:00Z", device={"backend": "cpu", "name": "CPU"}, command=["x"], options={})
    for key, record in records:
        j.record(key, record)
    j.close()
    assert j.path is not None
    return j.path


def _key(m: Dict[str, Any]) -> str:
    """The journal's key of a run.json measurement, as the case loop makes it (its case's parameters)."""
    case = {k: v for k, v in m["params"].items() if k not in CONDITION_PARAMS}
    return record_key(f"{m['suite']}/{m['kernel']}/{m['dtype']}", params=case)


def test_a_journal_record_of_another_measurement_is_refused_naming_its_line(tmp_path: Path) -> None:
    """Row 5: the record under stream/copy's key held vec4's measurement; resumed, the run said
    complete but lacked stream/copy and had the vec4 point twice. Now the line is named, exit 2."""
    ms = json.loads(RUN.read_text())["measurements"]
    path = _journal(tmp_path, [(_key(ms[0]), ms[0]), (_key(ms[1]), ms[4])])
    with pytest.raises(ResultsError) as e:
        read_journal(path, Run)
    assert str(e.value).startswith(f"{path}: line 3.record holds sweep/vec4/fp32 {{"), str(e.value)
    assert str(e.value).endswith(f"not the measurement of its key {_key(ms[1])!r} (valid: the key's own)")
    (tmp_path / "ok").mkdir()
    whole = read_journal(_journal(tmp_path / "ok", [(_key(m), m) for m in ms]), Run)  # the run's own: read
    assert len(whole.records) == len(ms)


def test_a_journal_record_with_other_parameters_is_refused(tmp_path: Path) -> None:
    """The same kernel at another size is another measurement: sweep vec4 F=2 under F=1's key."""
    ms = json.loads(RUN.read_text())["measurements"]
    path = _journal(tmp_path, [(_key(ms[4]), ms[5])])
    with pytest.raises(ResultsError, match=r"line 2\.record holds sweep/vec4/fp32 \{\"F\":2,"):
        read_journal(path, Run)


def test_the_cli_refuses_to_resume_a_journal_of_another_measurement(tmp_path: Path, fake_registry: None) -> None:
    ms = json.loads(RUN.read_text())["measurements"]
    _journal(tmp_path, [(_key(ms[1]), ms[0])])
    result = cli.invoke(app, ["run", "--device", "cpu", "--resume", str(tmp_path)])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    want = f"error: --resume: {journal_path(tmp_path, 'run')}: line 2.record holds "
    assert result.output.startswith(want), result.output


def test_a_tune_journal_record_is_checked_by_its_kernel(tmp_path: Path) -> None:
    """A tuning study's key holds the case as planned, which a case rebuilt at another block
    re-sizes (its waves): its record is held to the key's kernel, not its parameters."""
    m = json.loads(TUNE.read_text())["measurements"][0]
    label = f"{m['suite']}/{m['kernel']}/{m['dtype']}"
    other = {**m, "kernel": m["kernel"] + "_other"}
    j = Journal(journal_path(tmp_path, "tune"))
    j.begin(TuneStudy, created="2025-01-01T00:00:00Z", device={"backend": "cuda", "name": "G"}, command=[], options={})
    j.record(record_key(label, "block=64", params={"waves": 999}), m)  # re-sized: read
    j.record(record_key(label, "block=128", params={}), other)
    j.close()
    with pytest.raises(
        ResultsError,
        match=rf"line 3\.record holds {m['suite']}/{other['kernel']}/{m['dtype']} .*, not the measurement of its key",
    ):
        read_journal(journal_path(tmp_path, "tune"), TuneStudy)


def test_a_journal_line_with_a_key_twice_is_named(tmp_path: Path) -> None:
    ms = json.loads(RUN.read_text())["measurements"]
    path = _journal(tmp_path, [(_key(ms[0]), ms[0])])
    lines = path.read_text().split("\n")
    lines[1] = lines[1].replace('"record":{', '"record":{"valid":false,', 1)
    path.write_text("\n".join(lines))
    with pytest.raises(ResultsError, match=r': line 2\.record holds the key "valid" twice \(valid: each key once'):
        read_journal(path, Run)


# -- rates beyond any device ------------------------------------------------------------------------


def test_theoretical_ceilings_of_1e308_are_refused(tmp_path: Path) -> None:
    """Row 6: theoretical ceilings of 1e308 gave ``report -f html`` a traceback (axis limits NaN or
    Inf) and ``plot`` exit 1; now the first is named with the bound, exit 2."""
    d = json.loads(H200.read_text())
    theoretical = [i for i, c in enumerate(d["ceilings"]) if c["source"] == "theoretical"]
    assert theoretical
    for i in theoretical:
        d["ceilings"][i]["value"] = 1e308
    path = tmp_path / "run.json"
    path.write_text(json.dumps(d))
    c = d["ceilings"][theoretical[0]]
    limit = "1e8 GB/s" if c["unit"] == "GB/s" else "1e9 GFLOP/s"
    want = (
        f"error: {path}: ceilings[{theoretical[0]}].value 1e+308 {c['unit']} is beyond any device's physical limit "
        f"(valid: at most {limit})\n"
    )
    for command in (["report", str(path), "-f", "html"], ["plot", str(path), "-o", str(tmp_path / "x.png")]):
        result = cli.invoke(app, command)
        assert (result.exit_code, result.output) == (2, want), command
    assert not (tmp_path / "x.png").exists()


def test_a_measurement_beyond_any_device_is_refused(tmp_path: Path) -> None:
    """STREAM copy's samples a billion times as fast: 3.7e10 GB/s, beyond any device's memory."""
    d = json.loads(RUN.read_text())
    m = Measurement.from_dict(d["measurements"][0])
    d["measurements"][0] = dataclasses.replace(m, samples_s=tuple(s / 1e9 for s in m.samples_s)).to_dict()
    path = tmp_path / "run.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ResultsError) as e:
        load_results(path)
    assert str(e.value).startswith(f"{path}: measurements[0].samples_s gives "), str(e.value)
    assert str(e.value).endswith(
        " GB/s (bytes at its fastest sample), beyond any device's physical limit (valid: at most 1e8 GB/s)"
    )


# -- a byte-order mark ------------------------------------------------------------------------------


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    """Row 11: a run.json starting with a byte-order mark was 'truncated or not JSON (line 1 column
    1)'; it is read as UTF-8 with the mark dropped (utf-8-sig), every kind of file alike."""
    bom = b"\xef\xbb\xbf"
    for name, source in (("run.json", RUN), ("tune.json", TUNE), ("k.json", KERNELS), ("k.csv", NCU)):
        (tmp_path / name).write_bytes(bom + source.read_bytes())
    assert load_results(tmp_path / "run.json") == load_results(RUN)
    assert TuneStudy.load(tmp_path / "tune.json") == TuneStudy.load(TUNE)
    assert load_kernels(tmp_path / "k.json").kernels() == load_kernels(KERNELS).kernels()
    assert load_kernels(tmp_path / "k.csv").kernels() == load_kernels(NCU).kernels()
    result = cli.invoke(app, ["report", str(tmp_path / "run.json")])
    assert result.exit_code == 0, result.output
    bad = tmp_path / "bad.json"
    bad.write_bytes(bom + b'{"a": "\xff"}')
    # the byte's offset in the file, the mark counted
    with pytest.raises(ResultsError, match=r": not UTF-8 text \(byte 10\)$"):
        load_results(bad)


def test_a_journal_with_a_byte_order_mark_resumes_at_its_end(tmp_path: Path) -> None:
    """The journal's end (where appending resumes, truncating a line in flight) counts the mark's
    three bytes, so a resumed journal never cuts its last record."""
    ms = json.loads(RUN.read_text())["measurements"]
    path = _journal(tmp_path, [(_key(ms[0]), ms[0])])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b'{"key": "in flight')
    contents = read_journal(path, Run)
    assert list(contents.records) == [_key(ms[0])]
    assert contents.end == len(path.read_bytes()) - len(b'{"key": "in flight')
