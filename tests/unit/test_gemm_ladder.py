"""The GEMM ladder's end (docs/design/matrix.md, "The GEMM ladder"): the settle rule on its own, the ladder a
fake CUDA backend gets from recorded H200 rates (sgemm, dgemm and the tiled kernel settle at 4096,
TF32 goes on to 8192), the reason recorded with the last size, fewer samples for small sizes, the
runner keeping those samples only when they are quiet, and the sizes: the default ladder's and a
--quick run's coarser one (64, 256, 1024, 4096), which the runner passes to the suite."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

from apple_roofline.roofline.run import case_loop
from apple_roofline.study.records import LADDER_PARAM, Measurement
from apple_roofline.suites.base import Case, KernelDef, SuiteContext
from apple_roofline.suites.gemm import inputs as gemm_operands
from apple_roofline.suites.gemm.precisions import gemm_flops
from apple_roofline.suites.gemm.settle import (
    FEW_REPS,
    SETTLE_MIN_NEXT_S,
    few_reps,
    settle_note,
)
from apple_roofline.suites.gemm.sizes import (
    DEFAULT_SIZES,
    QUICK_SIZES,
    SIZES_OPTION,
    growth,
    ladder_sizes,
    most_sizes,
    next_size,
)
from apple_roofline.suites.gemm.suite import GemmSuite
from fill32 import WriteFill32  # tests/, on the path (conftest)

# --- the rule ------------------------------------------------------------------------------------


def test_two_quiet_sizes_within_three_percent_settle_where_the_next_is_costly() -> None:
    note = settle_note(2048, 50038.0, 0.002, 4096, 51122.0, 0.001, 2.69e-3)
    assert note is not None and note == "settled: +2.2% from 2048, within 3%"
    # a size that ran a little slower agrees too (a power cap)
    assert settle_note(4096, 60604.0, 0.001, 8192, 59000.0, 0.001, 0.02) is not None


@pytest.mark.parametrize(
    "rate_before, cv_before, rate, cv, fastest_s, why",
    [
        (344595.0, 0.002, 399985.0, 0.002, 3.4e-4, "gained 16 %"),
        (60604.0, 0.001, 56515.0, 0.001, 0.02, "dropped 6.7 %: disturbed, not agreeing"),
        (50038.0, 0.02, 51122.0, 0.001, 2.69e-3, "noisy samples before"),
        (50038.0, 0.002, 51122.0, 0.03, 2.69e-3, "noisy samples"),
        (50038.0, 0.002, 51122.0, 0.001, SETTLE_MIN_NEXT_S / 8 / 2, "the next size is cheap"),
    ],
)
def test_what_does_not_settle(
    rate_before: float, cv_before: float, rate: float, cv: float, fastest_s: float, why: str
) -> None:
    assert settle_note(2048, rate_before, cv_before, 4096, rate, cv, fastest_s) is None, why


def test_a_rate_that_is_not_positive_is_an_error() -> None:
    with pytest.raises(ValueError, match="rates must be positive"):
        settle_note(16, 0.0, 0.0, 32, 1.0, 0.0, 1.0)


def test_few_reps_only_for_sizes_predicted_short() -> None:
    assert few_reps(None) is None  # the first size: nothing to predict from
    assert few_reps(5e-6) == FEW_REPS  # 40 us predicted
    assert few_reps(1e-5) is None  # 80 us predicted
    assert few_reps(5e-6, 0.05) == FEW_REPS and few_reps(5e-6, 0.08) is None  # after a noisy size: all


# --- the ladder ------------------------------------------------------------------------------------

#: GFLOP/s per size on an H200 (tests/unit/data/run_h200_default.json), with the samples' CV.
H200: Dict[str, Dict[int, Tuple[float, float]]] = {
    "sgemm": {512: (18938, 0.001), 1024: (37997, 0.001), 2048: (50038, 0.002), 4096: (51122, 0.001),
              8192: (51082, 0.002)},
    "dgemm": {512: (28576, 0.064), 1024: (52292, 0.002), 2048: (59096, 0.001), 4096: (60604, 0.001),
              8192: (56515, 0.033)},
    "tf32gemm": {512: (34510, 0.001), 1024: (156383, 0.001), 2048: (344595, 0.002), 4096: (399985, 0.002),
                 8192: (411597, 0.004)},
    "sgemm_tiled16": {512: (6871, 0.001), 1024: (7762, 0.001), 2048: (8145, 0.001), 4096: (8122, 0.001),
                      8192: (8130, 0.001)},
}  # fmt: skip


class StubBuffer(WriteFill32):
    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes

    def write(self, array: np.ndarray, offset: int = 0) -> None:
        pass


class StubBackend:
    """A CUDA backend with fp32, fp64 and tf32 cuBLAS and the tiled kernel; no memory behind it."""

    name = "cuda"

    def alloc(self, nbytes: int) -> StubBuffer:
        return StubBuffer(nbytes)

    def gemm(self, dtype: str, m: int, n: int, k: int) -> Any:
        if dtype not in ("fp32", "fp64", "tf32"):
            raise NotImplementedError(dtype)
        return dtype

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> Any:
        return entry


def _samples(kernel: str, n: int, count: int) -> Tuple[float, ...]:
    """``count`` samples (seconds per launch) with the recorded median rate and about its CV; sizes
    below the table's are launch-latency bound (6 us, CV 2 %)."""
    rate, cv = H200[kernel].get(n, (gemm_flops(n, n, n) / 6e-6 / 1e9, 0.02))
    median = gemm_flops(n, n, n) / rate / 1e9
    spread = np.linspace(-1.0, 1.0, count) * cv * 1.5
    return tuple(float(median * (1.0 + s)) for s in spread)


def _drive(
    monkeypatch: pytest.MonkeyPatch, budget: float = 0.25, sizes: Optional[Tuple[int, ...]] = None
) -> List[Tuple[str, int, Optional[int], str]]:
    """The runner's loop over the suite's cases without a device: each case's samples from
    :data:`H200`, its note recorded as judge records it; (kernel, N, few_reps, ladder note).
    ``sizes``: the ladder's (the context's SIZES_OPTION), None for the default."""
    monkeypatch.setattr(
        gemm_operands, "gemm_inputs", lambda dtype, n, rng, uniform=None: (np.zeros((n, n)),) * 4
    )  # no draws: nothing is checked here
    monkeypatch.setattr(gemm_operands, "uniform_pair64", lambda n: (np.zeros((n, n)),) * 2)
    info: Dict[str, Any] = {"backend": "cuda", "memory_bytes": 141 << 30}
    options: Dict[str, Any] = {"gemm_max_launch_s": budget, **({SIZES_OPTION: sizes} if sizes else {})}
    suite = GemmSuite(SuiteContext(StubBackend(), "cuda", info, False, 1 << 16, options))
    seen = []
    for case in suite.cases():
        k = case.kernel
        if k.dtype not in ("fp32", "fp64", "tf32"):
            continue  # the stub has no such library GEMM (the runner records it as skipped)
        samples = _samples(k.name, case.params["m"], 10)
        params: Dict[str, Any] = dict(case.params)
        assert case.note is not None
        params.update(case.note(samples))
        m = Measurement("gemm", k.name, k.dtype, params, case.flops, case.bytes, samples, True)
        suite.record(m)
        seen.append((k.name, case.params["m"], case.few_reps, str(params.get(LADDER_PARAM, ""))))
    return seen


def test_h200_ladders_settle_at_4096_where_the_rate_stopped_rising(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _drive(monkeypatch)
    tops = {name: n for name, n, _, _ in seen}
    assert tops == {"sgemm": 4096, "dgemm": 4096, "tf32gemm": 8192, "sgemm_tiled16": 4096}
    notes = {name: note for name, n, _, note in seen if note}
    assert notes["sgemm"] == "settled: +2.2% from 2048, within 3%"
    assert notes["dgemm"] == "settled: +2.6% from 2048, within 3%"
    assert notes["sgemm_tiled16"] == "settled: -0.3% from 2048, within 3%"
    assert notes["tf32gemm"] == "settled: +2.9% from 4096, within 3%"  # and the largest size
    assert [n for name, n, _, note in seen if note] == [4096, 4096, 8192, 4096]  # only the last size says why
    # the ceiling each would give is the recorded run's within 1 %: the best size it measured
    for name, top in tops.items():
        best = max(r for n, (r, _) in H200[name].items() if n <= top)
        assert best >= 0.99 * max(r for r, _ in H200[name].values()), name


def test_the_time_budget_still_ends_a_ladder_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _drive(monkeypatch, budget=0.01)
    notes = {name: (n, note) for name, n, _, note in seen if note}
    # 2.1 ms x 8 > 10 ms: the budget ends it (+4.9 % from 1024 did not agree)
    assert notes["sgemm_tiled16"][0] == 2048
    assert notes["sgemm_tiled16"][1].startswith("time budget: next launch predicted 0.0")


def test_small_sizes_take_few_samples_first(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _drive(monkeypatch)
    sgemm = {n: few for name, n, few, _ in seen if name == "sgemm"}
    assert sgemm[16] is None  # nothing to predict from
    assert all(sgemm[n] == FEW_REPS for n in (32, 64, 128, 256))  # predicted 8 x 6 us = 48 us, after a quiet size
    assert all(sgemm[n] is None for n in (1024, 2048, 4096))


# --- the runner keeps few samples only when they are quiet -----------------------------------------


class SpreadKernel:
    """Launches of 0.1 ms (a sample batches 10); the first timed set spreads by ±``first_spread``
    (the rest are quiet). Records the samples of each timed set."""

    def __init__(self, first_spread: float) -> None:
        self.first_spread = first_spread
        self.timed: List[int] = []

    def time(
        self, args: Sequence[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True
    ) -> List[float]:
        if batch == 1:
            return [1e-4] * reps  # warm-up, launch by launch
        spread = self.first_spread if not self.timed else 0.0
        self.timed.append(reps)
        return [1e-4 * batch * (1.0 + spread * (-1) ** i) for i in range(reps)]


def _case(few: Optional[int]) -> Case:
    kdef = KernelDef(
        "gemm", "sgemm", "fp32", {"cuda": ("cublas", "sgemm")}, ceiling_class="GEMM FP32", ceiling_kind="compute"
    )
    check = lambda: (True, "ok")  # noqa: E731
    return Case(kdef, {"m": 64}, 1, 2 * 64**3, 3 * 64 * 64 * 4, [], lambda: None, check, lambda: None, few_reps=few)


@pytest.mark.parametrize(
    "few, spread, timed", [(5, 0.001, [5]), (5, 0.2, [5, 10]), (None, 0.001, [10]), (12, 0.001, [10])]
)
def test_the_runner_keeps_few_samples_only_when_quiet(few: Optional[int], spread: float, timed: List[int]) -> None:
    kernel = SpreadKernel(spread)
    case = _case(few)
    case.make_kernel = lambda: kernel
    settings = case_loop.CaseSettings(reps=10, max_warmup_s=0.0)
    m = case_loop._measure(case, "gemm/sgemm/fp32 m=64", settings, None)
    assert kernel.timed == timed  # samples per timed set: the few kept, or the run's count after them
    assert len(m.samples_s) == timed[-1] and m.valid


# --- the sizes: default and --quick ----------------------------------------------------------------


def test_the_default_ladder_doubles_from_16_to_8192() -> None:
    assert ladder_sizes() == DEFAULT_SIZES == (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    for n in DEFAULT_SIZES[:-1]:  # the next size is the doubling, whatever the budget
        assert next_size(DEFAULT_SIZES, n, 1.0, 1e-9) == 2 * n and growth(n, 2 * n) == 8.0
    assert next_size(DEFAULT_SIZES, 8192, 0.0, 1.0) is None
    info: Dict[str, Any] = {"backend": "cuda", "memory_bytes": 141 << 30}
    suite = GemmSuite(SuiteContext(StubBackend(), "cuda", info, True, 1 << 16, {"gemm_max_launch_s": 0.03}))
    assert suite.sizes == DEFAULT_SIZES  # the quick flag alone does not change it: the option does
    assert suite.total() == 10 * len(suite.ladder_dtypes())
    quick = GemmSuite(
        SuiteContext(StubBackend(), "cuda", info, True, 1 << 16, {"gemm_max_launch_s": 0.03, SIZES_OPTION: QUICK_SIZES})
    )
    assert quick.sizes == QUICK_SIZES and quick.total() == 7 * len(quick.ladder_dtypes())  # up to 64, 128 … 4096


def test_quick_sizes_step_by_four_to_4096() -> None:
    assert ladder_sizes(QUICK_SIZES) == QUICK_SIZES == (64, 256, 1024, 4096)
    assert growth(1024, 4096) == 64.0
    assert [next_size(QUICK_SIZES, n, 1e-6, 0.03) for n in QUICK_SIZES] == [256, 1024, 4096, None]
    # the most a ladder may measure, with a doubling between each two (the progress bar's bound)
    assert most_sizes(QUICK_SIZES) == 7 and most_sizes(DEFAULT_SIZES) == 10 and most_sizes((16, 48)) == 3


def test_a_coarse_ladder_doubles_where_its_step_would_not_fit() -> None:
    """Where the ×4 step is predicted over the budget but a doubling is not, the next size is the
    doubling, and from it the ladder's own sizes again: the 2-core EPYC's DGEMM (fastest 0.54 ms at
    256, 3.0 ms at 512, tests/unit/data/run_epyc_2vcpu.json) reaches 1024 with --quick's budget, as a
    doubling ladder does, where ×4 steps alone would stop at 256 (64 × 0.54 ms = 35 ms > 30 ms)."""
    assert next_size(QUICK_SIZES, 256, 5.4e-4, 0.03) == 512
    assert next_size(QUICK_SIZES, 512, 3.0e-3, 0.03) == 1024  # 8 × 3 ms = 24 ms: fits
    assert next_size(QUICK_SIZES, 1024, 2.2e-2, 0.03) == 2048  # returned; the caller finds 0.18 s over
    assert next_size(QUICK_SIZES, 256, 1e-4, 0.03) == 1024  # 6.4 ms: the ×4 step fits


def test_the_time_budget_ends_a_quick_ladder_where_a_doubling_one_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of 0.01 s the tiled kernel's ×4 step from 1024 (64 × 0.28 ms) does not fit: it
    measures 2048 instead and ends there, as the default ladder does."""
    seen = _drive(monkeypatch, budget=0.01, sizes=QUICK_SIZES)
    tiled = [(n, note) for k, n, _, note in seen if k == "sgemm_tiled16"]
    assert [n for n, _ in tiled] == [64, 256, 1024, 2048]
    assert tiled[-1][1].startswith("time budget: next launch predicted 0.0")
    default = _drive(monkeypatch, budget=0.01)
    assert max(n for k, n, _, _ in default if k == "sgemm_tiled16") == 2048


@pytest.mark.parametrize("sizes", [(), (64, 32), (64, 64), (8,), (100,), (16384,), (64.0,), (True,)])
def test_bad_sizes_are_refused(sizes: Tuple[Any, ...]) -> None:
    with pytest.raises(ValueError, match="increasing multiples of 16 from 16 to 8192"):
        ladder_sizes(sizes)


def test_the_quick_ladder_on_h200_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    """With --quick's sizes and launch budget every ladder runs 64, 256, 1024 and 4096 (none of the
    ×4 steps agrees within 3 %; the tiled kernel's 4096, predicted 64 × 0.28 ms = 18 ms, fits the
    0.03 s budget) and its last size says it is the largest; TF32's best is then 4096's, 2.8 % below
    the default ladder's 8192."""
    seen = _drive(monkeypatch, budget=0.03, sizes=QUICK_SIZES)
    for name in H200:
        assert [n for k, n, _, _ in seen if k == name] == list(QUICK_SIZES), name
    assert [(k, n, note) for k, n, _, note in seen if note] == [(k, 4096, "largest size") for k in H200]
    assert all(few is None for _, _, few, _ in seen)  # 64 x 6 us: no size is predicted under 50 us
    assert H200["tf32gemm"][4096][0] / H200["tf32gemm"][8192][0] == pytest.approx(0.972, abs=0.001)


def test_the_settle_note_names_the_size_before() -> None:
    """A ×4 ladder's settle note names the size before (1024), not N/2; the next launch it predicts
    is 64× this one's fastest. Past a ladder's last size nothing is predicted: "largest size"."""
    flops = gemm_flops(1024, 1024, 1024)
    before = Measurement("gemm", "sgemm", "fp32", {"m": 1024}, flops, 3 * 1024**2 * 4, (4.3e-5,) * 10, True)
    samples = (gemm_flops(4096, 4096, 4096) / (before.gflops * 1.01) / 1e9,) * 10  # +1 % from 1024
    sizes = (256, 1024, 4096, 8192)
    assert GemmSuite._end_note(sizes, 4096, 1024, "fp32", before, 10.0, 0, samples) == {
        LADDER_PARAM: "settled: +1.0% from 1024, within 3%"
    }
    assert GemmSuite._end_note(QUICK_SIZES, 4096, 1024, "fp32", None, 1e-9, 0, samples) == {
        LADDER_PARAM: "largest size"
    }
    # over the budget for the ×4 step and the doubling: the doubling (8192) is the one predicted
    assert GemmSuite._end_note(sizes, 4096, 1024, "fp32", None, 1e-9, 0, samples) == {
        LADDER_PARAM: f"time budget: next launch predicted {8 * samples[0]:.3g} s > 1e-09 s"
    }
    assert settle_note(1024, 100.0, 0.0, 4096, 101.0, 0.0, 2e-5, growth=64.0) is not None  # 1.3 ms next
    assert settle_note(1024, 100.0, 0.0, 4096, 101.0, 0.0, 2e-5) is None  # 8 × 20 µs: cheap


def test_a_suite_whose_cases_ended_is_released_without_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The draws a GEMM suite shares between its ladders call a plain function of its kept values,
    not the suite's own method: no reference cycle keeps the suite, and what it holds, alive until
    Python's collector runs (docs/design/measurement.md, "Measurement", "Each suite starts clean")."""
    import gc
    import weakref

    monkeypatch.setattr(gemm_operands, "gemm_inputs", lambda dtype, n, rng, uniform=None: (np.zeros((n, n)),) * 4)
    monkeypatch.setattr(gemm_operands, "uniform_pair64", lambda n: (np.zeros((n, n)),) * 2)
    info: Dict[str, Any] = {"backend": "cuda", "memory_bytes": 141 << 30}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        suite = GemmSuite(SuiteContext(StubBackend(), "cuda", info, False, 1 << 16, {SIZES_OPTION: (64, 256)}))
        measured = 0
        for case in suite.cases():
            if case.kernel.dtype in ("fp32", "fp64", "tf32"):
                samples = _samples(case.kernel.name, case.params["m"], 10)
                k = case.kernel
                suite.record(
                    Measurement("gemm", k.name, k.dtype, dict(case.params), case.flops, case.bytes, samples, True)
                )
                measured += 1
        assert measured > 0
        released = weakref.ref(suite)
        del suite, case, k
        assert released() is None
    finally:
        if was_enabled:
            gc.enable()
