"""The measurement loop (docs/design.md, "Measurement") against a fake kernel with scripted launch times."""

from __future__ import annotations

from typing import Any, List, Sequence

import pytest

from apple_roofline.measure import time_kernel


class FakeKernel:
    """Each launch takes the next of ``times`` (the last repeats); records every call."""

    def __init__(self, times: Sequence[float]) -> None:
        self.times = list(times)
        self.calls: List[tuple] = []  # type: ignore[type-arg]
        self.launches = 0

    def _next(self) -> float:
        t = self.times[min(self.launches, len(self.times) - 1)]
        self.launches += 1
        return t

    def time(self, args: Any, launch: int, batch: int, reps: int) -> List[float]:
        self.calls.append((launch, batch, reps))
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


@pytest.mark.parametrize("reps", [0, -1, 10001])
def test_rejects_reps_out_of_range(reps: int) -> None:
    with pytest.raises(ValueError, match="valid: 1 to 10000"):
        time_kernel(FakeKernel([1e-3]), [], 1, reps=reps)
