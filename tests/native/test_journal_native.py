"""Fault injection on the CPU backend (docs/design/files.md, "Journal and resume"): a ``run`` and a ``calls``
study, each started as a subprocess and killed at seeded random points, with SIGKILL, SIGTERM and
SIGHUP in turn, then resumed until it completes.

Every time: the journal parses, it holds every measurement whose progress line was printed before
the kill, in the order an uninterrupted study measures them; SIGTERM and SIGHUP also leave a valid
partial results file (``complete`` false, exit 128 + the signal). The completed study has the same
measurement keys as an uninterrupted one, each measured once (the journal holds each key once, and
the kept ones are in the results as the journal holds them), and names the kept ones in ``resumed``.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type

import pytest

import apple_roofline
from apple_roofline.calls.model import CallsStudy
from apple_roofline.roofline.model.run import Run
from apple_roofline.study.document import Document
from apple_roofline.study.journal import journal_path, read_journal
from journal_lines import assert_each_key_once

#: Each study: its command (short, but with many measurements), its results stem and document kind.
STUDIES: Dict[str, Tuple[List[str], str, Type[Document]]] = {
    "run": (
        [
            "run",
            "--device",
            "cpu",
            "--quick",
            "--suite",
            "stream,peak",
            "--reps",
            "2",
            "--array-bytes",
            "1MiB",
            "--budget",
            "none",
        ],
        "run",
        Run,
    ),
    "calls": (
        ["calls", "--device", "cpu", "--quick", "--batches", "1,2,4", "--sizes", "16,32,48,64", "--max-reps", "10000"],
        "calls",
        CallsStudy,
    ),
}
#: The order of the interruptions of each study (None: run to the end).
SIGNALS = {
    "run": (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP),
    "calls": (signal.SIGHUP, signal.SIGKILL, signal.SIGTERM),
}
#: Seconds any one subprocess may take.
LIMIT_S = 120
_STEP = re.compile(r"^\[[^\]]+\] \d+/\d+ (.*)$")
_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [str(Path(apple_roofline.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
    ),
}


def _measured(line: str) -> bool:
    """Whether a progress line announces a measurement made by this process."""
    m = _STEP.match(line)
    return bool(m) and not m.group(1).endswith((": resumed", ": unsupported", ": skipped"))


def _study(args: Sequence[str], kill: Optional[Tuple[int, int]] = None) -> Tuple[int, int, str]:
    """Run ``apple-roofline ARGS``; with ``kill = (signal, k)`` send the signal once the k-th measured
    progress line is printed. Returns the exit status (negative: the signal that killed it), the
    measured lines printed before the signal, and stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "apple_roofline", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_ENV,
    )
    watchdog = threading.Timer(LIMIT_S, proc.kill)
    watchdog.start()
    seen, sent, lines = 0, False, []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if not sent and _measured(line):
                seen += 1
                if kill is not None and seen == kill[1]:
                    proc.send_signal(kill[0])
                    sent = True
        rc = proc.wait()
    finally:
        watchdog.cancel()
    return rc, seen, "".join(lines)


def _keys(path: Path, kind: Type[Document]) -> List[str]:
    """The journal's keys as its lines hold them, each on one line (checked on the file itself: the
    reader keeps a key written twice once), and the reader reads the same."""
    contents = read_journal(path, kind)
    assert contents.dropped == "", contents.dropped
    keys = assert_each_key_once(path)
    assert list(contents.records) == keys
    return keys


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, List[str]]:
    """The measurement keys of each study run once without interruption, in order."""
    out: Dict[str, List[str]] = {}
    for name, (args, stem, kind) in STUDIES.items():
        d = tmp_path_factory.mktemp(f"reference-{name}")
        rc, _, err = _study([*args, "--out", str(d)])
        assert rc == 0, err
        out[name] = _keys(journal_path(d, stem), kind)
        assert len(out[name]) >= 10  # each once: _keys counted the lines
    return out


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_killed_at_random_points_then_resumed(name: str, reference: Dict[str, List[str]], tmp_path: Path) -> None:
    args, stem, kind = STUDIES[name]
    ref = reference[name]
    rng = random.Random(f"t21-{name}")
    journal = journal_path(tmp_path, stem)
    results = tmp_path / f"{stem}.json"
    kept: List[str] = []
    for i, sig in enumerate(SIGNALS[name]):
        k = rng.randint(1, max(1, (len(ref) - len(kept)) // 3))
        where = ["--out", str(tmp_path)] if i == 0 else ["--resume", str(tmp_path)]
        rc, seen, err = _study([*args, *where], (sig, k))
        assert seen == k and rc in (-sig, 128 + sig), (sig, rc, err)

        keys = _keys(journal, kind)
        # every measurement announced before the kill is in the journal, in the uninterrupted order
        assert len(keys) >= len(kept) + seen, err
        assert keys[: len(kept)] == kept and keys == ref[: len(keys)], err
        assert len(keys) < len(ref), "the study finished before the signal: nothing was interrupted"
        if sig == signal.SIGKILL:
            assert not results.exists() or kind.load(results).complete is False
            if i == 0:  # a write torn by the kill: the resumed study drops it with a warning
                with open(journal, "a") as fh:
                    fh.write('{"key": "torn", "rec')
        else:
            assert rc == 128 + sig
            said = f"interrupted by {signal.Signals(sig).name}: "  # then "continue with: ... --resume DIR; "
            assert said in err and "partial results written to " in err and err.count("Traceback") == 0
            partial = kind.load(results)
            assert partial.complete is False
            n = len(getattr(partial, "measurements"))
            assert len(kept) + seen <= n <= len(keys)
        kept = keys

    rc, _, err = _study([*args, "--resume", str(tmp_path)])
    assert rc == 0, err
    assert "truncated" not in err  # dropped once, then appended over
    final = _keys(journal, kind)
    assert final == ref  # the same lines as an uninterrupted study: none measured or journaled twice
    done = kind.load(results)
    assert done.complete is True and done.resumed is not None
    assert done.resumed["measurements"] == kept
    assert done.resumed["device"]["backend"] == "cpu"
    stored = read_journal(journal, kind).records

    # kept as the journal holds them, not re-measured; a run's over_limit is judged on the whole run (a
    # CPU whose uarch table underrates its FMA pipes flags its best peak kernel), not stored per record
    def as_stored(d: Dict[str, Any]) -> Dict[str, Any]:
        return {field: v for field, v in d.items() if field != "over_limit"}

    measured = [as_stored(m.to_dict()) for m in getattr(done, "measurements")]
    assert measured[: len(kept)] == [as_stored(stored[key]) for key in kept]
    assert "Resumed" in (tmp_path / ("report.md" if stem == "run" else f"{stem}.md")).read_text()


def test_resume_refuses_other_options_and_other_studies(reference: Dict[str, List[str]], tmp_path: Path) -> None:
    args, stem, _ = STUDIES["calls"]
    rc, _, err = _study([*args[:-1], "5000", "--out", str(tmp_path)], (signal.SIGKILL, 1))
    assert rc == -signal.SIGKILL
    before = journal_path(tmp_path, stem).read_bytes()
    rc, _, err = _study([*args, "--resume", str(tmp_path)])
    assert rc == 2 and err.strip().splitlines() == [
        f"error: --resume {str(tmp_path)!r} holds a study with other options: max_reps 5000 there, 10000 here "
        "(valid: a directory whose journal was made on this device with these options)"
    ]
    rc, _, err = _study([*STUDIES["run"][0], "--resume", str(tmp_path)])
    assert rc == 2 and err.strip().splitlines() == [f"error: --resume: {journal_path(tmp_path, 'run')}: no such file"]
    journal_path(tmp_path, "run").write_bytes(before)  # a calls journal under a run's name
    rc, _, err = _study([*STUDIES["run"][0], "--resume", str(tmp_path)])
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "kind is 'calls', not 'roofline'" in err
    assert journal_path(tmp_path, stem).read_bytes() == before
    head, first = before.splitlines()[:2]
    assert json.loads(head)["options"]["max_reps"] == 5000
    key = json.loads(first)["key"]
    journal_path(tmp_path, stem).write_bytes(
        head + b"\n" + json.dumps({"key": key, "record": {"path": 5}}).encode() + b"\n"
    )
    rc, _, err = _study([*args[:-1], "5000", "--resume", str(tmp_path)])
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"error: {journal_path(tmp_path, stem)}")


def test_dispatch_resume_measures_only_the_steps_its_journal_lacks(
    monkeypatch: pytest.MonkeyPatch, resume_check: Any
) -> None:
    from apple_roofline.dispatch.model import DispatchStudy
    from apple_roofline.dispatch.run import runner

    calls: List[str] = []
    steps, timeline = runner._launch_steps, runner._timeline

    def counted_steps(*a: Any) -> Any:
        return [(key, text, lambda run=run, key=key: calls.append(key) or run()) for key, text, run in steps(*a)]

    def counted_timeline(*a: Any) -> Any:
        calls.append("timeline")
        return timeline(*a)

    monkeypatch.setattr(runner, "_launch_steps", counted_steps)
    monkeypatch.setattr(runner, "_timeline", counted_timeline)
    # one journal record per step: the device clock's throughput, each interleaved pair of series
    # (one pairing), the timeline (its start latency)
    study = resume_check(
        "dispatch",
        DispatchStudy,
        lambda j: runner.run_dispatch("cpu", reps=5, launches=2, warmup=1, peers=False, journal=j),
        lambda s: [x for x in s.series if x.clock == "device" or x.measure == "start_latency"] + list(s.pairings),
        lambda: len(calls),
    )
    assert study.valid and len(study.pairings) == 4
