"""Checks compared while the next case measures (roofline/run/later.py, docs/design/budgets.md, "Time budgets"):
the runner's loop over a suite without a device. Each case's output is read on the measuring thread
right after its samples and compared on the worker while the next case is timed; it is settled
before the next read, journaled and yielded in order, with its verdict; an adaptive suite, a noisy
case and a plain check are compared at once; an interrupt keeps the case being compared."""

from __future__ import annotations

import sys
import threading
import types
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import pytest

from apple_roofline.roofline.run import case_loop
from apple_roofline.roofline.run.later import LaterChecks
from apple_roofline.study.records import Measurement
from apple_roofline.study.timing import SuiteClock
from apple_roofline.suites.base import Case, KernelDef, OutputCheck

#: How long a comparison waits for the next case's samples to begin, seconds (never reached when the
#: loop overlaps them; bounded so that a loop that does not cannot hang the test).
WAIT_S = 10.0


class _UnsupportedError(RuntimeError):
    pass


@pytest.fixture(autouse=True)
def fake_native(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extension's exception type the runner catches, as a fake ``apple_roofline._native`` (the
    unit tier never loads the extension)."""
    native = types.ModuleType("apple_roofline._native")
    native._core = types.SimpleNamespace(UnsupportedError=_UnsupportedError)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "apple_roofline._native", native)


class Events:
    """What happened, in order, and on which thread."""

    def __init__(self) -> None:
        self.log: List[Tuple[str, int, str]] = []
        self.timing = [threading.Event() for _ in range(8)]
        self.lock = threading.Lock()

    def add(self, what: str, i: int) -> None:
        with self.lock:
            self.log.append((what, i, threading.current_thread().name))

    def order(self) -> List[Tuple[str, int]]:
        return [(what, i) for what, i, _ in self.log]

    def threads(self, what: str) -> List[str]:
        return [name for w, _, name in self.log if w == what]


class Kernel:
    """Ten quiet samples of 1 ms (or a noisy first set), logging each timed set; ``interrupt`` raises
    KeyboardInterrupt when timed, as Ctrl-C during the samples would."""

    def __init__(self, i: int, events: Events, noisy: bool = False, interrupt: bool = False) -> None:
        self.i, self.events, self.noisy, self.interrupt = i, events, noisy, interrupt
        self.sets = 0

    def time(
        self, args: Sequence[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True
    ) -> List[float]:
        if batch == 1 and reps < 10:
            return [1e-3] * reps  # warm-up
        if self.interrupt:
            raise KeyboardInterrupt
        self.events.add("time", self.i)
        self.events.timing[self.i].set()
        self.sets += 1
        if self.noisy and self.sets == 1:
            return [1e-3 * batch * (10 if r >= reps - 2 else 1) for r in range(reps)]  # CV above NOISY_CV
        return [1e-3 * batch] * reps


class Suite:
    name = "fake"

    def __init__(self, cases: List[Case], adaptive: bool = False) -> None:
        self._cases, self.adaptive = cases, adaptive
        self.recorded: List[str] = []

    def cases(self) -> Iterator[Case]:
        yield from self._cases

    def record(self, m: Any) -> None:
        self.recorded.append(str(m.params["i"]))

    def constants(self, k: KernelDef) -> Dict[str, Any]:
        return {}


class FakeJournal:
    path = None

    def __init__(self) -> None:
        self.records: List[Tuple[str, Mapping[str, Any]]] = []

    def stored(self, key: str) -> Optional[Mapping[str, Any]]:
        return None

    def record(self, key: str, record: Mapping[str, Any]) -> None:
        self.records.append((key, record))


def _case(i: int, events: Events, last: int, ok: bool = True, plain: bool = False, **kernel: Any) -> Case:
    kdef = KernelDef("fake", f"k{i}", "fp32", {"cuda": ("x.cu", f"k{i}")})

    def read() -> int:
        events.add("read", i)
        return i

    def compare(got: int) -> Tuple[bool, str]:
        events.add("compare", i)
        if i < last:  # the next case's samples begin while this one is compared
            events.timing[i + 1].wait(WAIT_S)
        events.add("compared", i)
        return ok, f"output {got} {'matches' if ok else 'differs'}"

    check: Any = OutputCheck(read, compare)
    if plain:
        check = check.__call__  # a plain callable: compared at once
    return Case(kdef, {"i": i}, 1, 0, 4, [], lambda: Kernel(i, events, **kernel), check, lambda: None)


def _drive(suite: Suite, later: Optional[LaterChecks]) -> Tuple[List[Measurement], FakeJournal]:
    settings = case_loop.CaseSettings(reps=10, max_warmup_s=0.0, later=later)
    journal = FakeJournal()
    got: List[Measurement] = []
    try:
        for outcome in case_loop.measure_suite_cases(suite, settings, SuiteClock("fake", 0.0), journal):  # type: ignore[arg-type]
            assert isinstance(outcome, Measurement)
            got.append(outcome)
    finally:
        if later is not None:
            later.close()
    return got, journal


def test_each_case_is_compared_while_the_next_is_timed() -> None:
    events = Events()
    suite = Suite([_case(i, events, last=2, ok=i != 1) for i in range(3)])
    got, journal = _drive(suite, LaterChecks())
    order = events.order()
    main = [(w, i) for w, i, name in events.log if name == threading.current_thread().name]
    for i in (0, 1):
        # read right after its samples; the next case's samples begin before its verdict; its verdict
        # comes before the next read (the scratch it reads is not written meanwhile)
        assert main.index(("read", i)) == main.index(("time", i)) + 1
        assert order.index(("time", i + 1)) < order.index(("compared", i)) < order.index(("read", i + 1))
    assert set(events.threads("compare")) == {"roofline-check_0"}  # the worker, one at a time
    assert set(events.threads("read")) == {threading.current_thread().name}
    assert [m.kernel for m in got] == ["k0", "k1", "k2"] and suite.recorded == ["0", "1", "2"]
    assert [m.valid for m in got] == [True, False, True]
    assert got[1].validation == "output 1 differs"
    assert [key.split()[0] for key, _ in journal.records] == ["fake/k0/fp32", "fake/k1/fp32", "fake/k2/fp32"]
    assert [rec["valid"] for _, rec in journal.records] == [True, False, True]


@pytest.mark.parametrize("how", ["no worker", "adaptive suite", "plain check", "noisy samples"])
def test_otherwise_each_case_is_compared_before_the_next(how: str) -> None:
    events = Events()
    noisy = how == "noisy samples"
    cases = [_case(i, events, last=-1, plain=how == "plain check", noisy=noisy) for i in range(2)]
    suite = Suite(cases, adaptive=how == "adaptive suite")
    got, journal = _drive(suite, None if how == "no worker" else LaterChecks())
    order = events.order()
    assert order.index(("compared", 0)) < order.index(("time", 1))
    assert set(events.threads("compare")) == {threading.current_thread().name}
    assert [m.valid for m in got] == [True, True] and len(journal.records) == 2
    if noisy:  # measured once more, as before
        assert [w for w, i in order if i == 0] == [
            "time",
            "read",
            "compare",
            "compared",
            "time",
            "read",
            "compare",
            "compared",
        ]


def test_an_interrupt_keeps_the_case_being_compared() -> None:
    events = Events()
    cases = [_case(0, events, last=-1), _case(1, events, last=-1, interrupt=True), _case(2, events, last=-1)]
    suite = Suite(cases)
    got: List[Measurement] = []
    journal = FakeJournal()
    later = LaterChecks()
    settings = case_loop.CaseSettings(reps=10, max_warmup_s=0.0, later=later)
    with pytest.raises(KeyboardInterrupt):
        for outcome in case_loop.measure_suite_cases(suite, settings, SuiteClock("fake", 0.0), journal):  # type: ignore[arg-type]
            assert isinstance(outcome, Measurement)
            got.append(outcome)
    later.close()
    assert [m.kernel for m in got] == ["k0"] and got[0].valid
    assert len(journal.records) == 1 and not later.pending


def test_a_second_read_before_the_first_is_settled_is_refused() -> None:
    events = Events()
    later = LaterChecks()
    case = _case(0, events, last=-1)
    timed = Measurement("fake", "k0", "fp32", {"i": 0}, 0, 4, (1e-3,), True)
    later.defer(case, timed, "key", "fake/k0")
    with pytest.raises(RuntimeError, match="fake/k0 is still being compared"):
        later.defer(case, timed, "key", "fake/k0 again")
    settled = later.settle()
    later.close()
    assert settled is not None and settled.measurement.valid and settled.key == "key"
    assert later.settle() is None
