"""bench/bench_clock.py's pure parts: the probe's cost from sample pairs (which samples are paired,
in which order, and the verdict against the 0.5 % target). No GPU or ncu is needed."""

from __future__ import annotations

from typing import Any, List, Tuple

import pytest

from bench_scripts import load_bench

bench_clock = load_bench("bench_clock")


class Kernel:
    """A stand-in build: each call of ``time`` returns ``reps`` samples of ``seconds`` (the second
    ``slow`` times longer), and records the call in ``calls``."""

    def __init__(self, name: str, seconds: float, calls: List[Tuple[str, int, int]], slow: float = 1.0) -> None:
        self.name, self.seconds, self.calls, self.slow = name, seconds, calls, slow

    def time(self, args: Any, work_items: int, batch: int, reps: int, clock: bool = True) -> List[float]:
        self.calls.append((self.name, batch, reps))
        return [self.seconds * batch] + [self.seconds * batch * self.slow] * (reps - 1)


class Case:
    class kernel:  # noqa: N801 (the attribute a suite's Case has)
        name = "vec4_cross4"

    args: List[Any] = []
    work_items = 1024


def test_a_pair_is_two_calls_of_two_samples_the_first_build_alternating() -> None:
    calls: List[Tuple[str, int, int]] = []
    kernels = {False: Kernel("with", 1e-3, calls, slow=1.01), True: Kernel("without", 1e-3, calls)}
    ratios = bench_clock.paired_ratios(Case(), kernels, 8, 4)
    assert calls == [
        ("with", 8, 2),
        ("without", 8, 2),
        ("without", 8, 2),
        ("with", 8, 2),
        ("with", 8, 2),
        ("without", 8, 2),
        ("without", 8, 2),
        ("with", 8, 2),
    ]
    # the second samples are paired: the probed build's second sample is 1 % slower here
    assert ratios == pytest.approx([1.01] * 4)


def test_the_verdict_needs_the_whole_interval_within_half_a_percent() -> None:
    n = 384
    tight = [1.0 + 0.001 * ((i % 7) - 3) / 3 for i in range(n)]
    row = bench_clock.cost_of_probe(tight)
    assert row["cost_verdict"] == "within" and row["cost_pairs"] == n and row["cost_ratios"] == tight
    assert row["cost_ratio_low"] <= row["cost_ratio"] <= row["cost_ratio_high"]
    costly = [r + 0.02 for r in tight]  # the probe would cost 2 %: wholly outside
    assert bench_clock.cost_of_probe(costly)["cost_verdict"] == "above"
    spread = [1.0 + 0.06 * (-1) ** i * (i % 5) / 4 for i in range(12)]  # ±6 %, a dozen pairs
    assert bench_clock.cost_of_probe(spread)["cost_verdict"] == "not resolved"
