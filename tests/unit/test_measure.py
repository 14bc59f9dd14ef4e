"""The measurement loop (docs/design/measurement.md, "Measurement") against a fake kernel with scripted launch times."""

from __future__ import annotations

from typing import Any, List, Sequence

import pytest

from apple_roofline.timing.measure import time_kernel


class FakeKernel:
    """Each launch takes the next of ``times`` (the last repeats); records every call."""

    def __init__(self, times: Sequence[float]) -> None:
        self.times = list(times)
        self.calls: List[tuple] = []  # type: ignore[type-arg]
        self.clocks: List[bool] = []  # each call's ``clock``
        self.launches = 0

    def _next(self) -> float:
        t = self.times[min(self.launches, len(self.times) - 1)]
        self.launches += 1
        return t

    def time(self, args: Any, work_items: int, batch: int, reps: int, clock: bool = True) -> List[float]:
        self.calls.append((work_items, batch, reps))
        self.clocks.append(clock)
        return [sum(self._next() for _ in range(batch)) for _ in range(reps)]


def test_calibrates_batch_to_one_millisecond() -> None:
    k = FakeKernel([1e-5])
    t = time_kernel(k, [], 64, reps=10)
    assert t.batch == 100 and len(t.samples_s) == 10
    assert all(abs(s - 1e-5) < 1e-12 for s in t.samples_s)  # seconds per launch, not per sample
    assert k.calls[-1] == (64, 100, 10)


def test_long_launches_use_batch_one() -> None:
    t = time_kernel(FakeKernel([0.02]), [], 1, reps=12)
    assert t.batch == 1 and len(t.samples_s) == 12


def test_warmup_continues_while_clocks_ramp() -> None:
    ramp = [8e-3, 6e-3, 4e-3, 3e-3, 2e-3, 2e-3, 2e-3]
    t = time_kernel(FakeKernel(ramp), [], 1, reps=10, warmup=3)
    assert t.warmup_launches >= 6  # kept warming until two consecutive launches agreed


def test_spin_up_runs_one_long_batch_right_before_the_samples() -> None:
    k = FakeKernel([1e-4])
    t = time_kernel(k, [], 8, reps=5, spin_up_s=0.25)
    assert k.calls[-2] == (8, 2500, 1)  # 0.25 s of launches back to back, as one sample
    assert k.calls[-1] == (8, t.batch, 5) and t.batch == 10
    k0 = FakeKernel([1e-4])
    time_kernel(k0, [], 8, reps=5)
    assert (8, 2500, 1) not in k0.calls and len(k0.calls) == len(k.calls) - 1  # off by default


def test_only_the_timed_samples_measure_the_clock() -> None:
    """The warm-up, the calibration and the spin-up call ``Kernel.time`` with ``clock=False`` (no
    clock probe among their launches, docs/design/clocks.md, "Clocks"); the timed samples, the last call,
    with the clock."""
    ramp = [8e-3, 6e-3, 4e-3, 3e-3, 2e-3, 2e-3]
    k = FakeKernel(ramp)
    time_kernel(k, [], 8, reps=5, spin_up_s=0.01, min_window_s=0.05)
    assert len(k.calls) >= 5  # warm-up (two calls or more), calibration, spin-up, samples
    assert k.clocks[-1] is True and k.calls[-1][2] == 5
    assert not any(k.clocks[:-1]), list(zip(k.calls, k.clocks))


def test_min_window_lengthens_samples_not_their_number() -> None:
    """``run --power-window``: the timed samples together last at least ``min_window_s``, by more
    launches per sample; the number of samples stays ``reps``; off by default."""
    k = FakeKernel([1e-4])
    t = time_kernel(k, [], 8, reps=10, min_window_s=2.0)
    assert t.batch == 2000 and len(t.samples_s) == 10  # 10 samples x 2000 launches x 0.1 ms = 2 s
    assert k.calls[-2:] == [(8, 10, 1), (8, 2000, 10)]  # one calibrated sample sizes the window
    assert time_kernel(FakeKernel([1e-4]), [], 8, reps=10).batch == 10  # 1 ms samples without it
    assert time_kernel(FakeKernel([1.0]), [], 8, reps=10, min_window_s=2.0).batch == 1  # long enough already


class BatchedKernel(FakeKernel):
    """A launch alone takes ``alone`` seconds; in a batch of more than one, ``batched`` each."""

    def __init__(self, alone: float, batched: float) -> None:
        super().__init__([alone])
        self.batched = batched

    def time(self, args: Any, work_items: int, batch: int, reps: int, clock: bool = True) -> List[float]:
        self.calls.append((work_items, batch, reps))
        return [self.times[0] if batch == 1 else batch * self.batched for _ in range(reps)]


def test_min_window_is_sized_by_the_batched_launch_time() -> None:
    """Launches that overlap in a batch (7x shorter than alone) still fill the window: sized from a
    lone launch, the samples would last a seventh of it."""
    k = BatchedKernel(7e-5, 1e-5)
    t = time_kernel(k, [], 8, reps=10, min_window_s=0.2)
    assert t.batch * 10 * 1e-5 >= 0.2 and t.batch == 2000


@pytest.mark.parametrize("reps", [0, -1, 10001])
def test_rejects_reps_out_of_range(reps: int) -> None:
    with pytest.raises(ValueError, match="valid: 1 to 10000"):
        time_kernel(FakeKernel([1e-3]), [], 1, reps=reps)
