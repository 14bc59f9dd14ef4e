"""The threadgroup-size tuning study over a faked GPU backend: candidates, bad sizes, rejected sizes
as invalid points, validation of every point (a wrong output at one size is caught even after a
correct one), the work per kernel not growing with the number of sizes, the best size, the results
file, the report, the figure, the CLI (tune, plot, report), and ``run --tune`` measuring at the sizes
found."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Sequence, Set, Tuple

import numpy as np
import pytest
from typer.testing import CliRunner

from apple_roofline.devices import DeviceSpec
from apple_roofline.errors import CannotMeasure, OptionError
from apple_roofline.results import load_results
from apple_roofline.roofline.run import runner as roofline_runner
from apple_roofline.roofline.run.options import RunOptions, dram_array_bytes
from apple_roofline.study.records import Measurement
from apple_roofline.suites import SuiteContext, chains
from apple_roofline.suites.base import NUMPY_DTYPE, PERIOD
from apple_roofline.suites.fma import FMA_KERNELS, FmaKernel
from apple_roofline.suites.idiv.kernels import IDIV_KERNELS, IdivKernel
from apple_roofline.suites.stream import suite as stream
from apple_roofline.suites.stream.suite import Q
from apple_roofline.tuning import FileTuner, QuickTuner, TuneStudy, runner
from apple_roofline.tuning.model import candidates, check_blocks, device_block_limit
from apple_roofline.tuning.outputs import write_tune
from apple_roofline.tuning.report import format_tune
from fill32 import WriteFill32  # tests/, on the path (conftest)

SIMD, MAX_PIPELINE, SMS = 32, 512, 4


class FakeBuffer(WriteFill32):
    def __init__(self, nbytes: int) -> None:
        self.data = np.zeros(nbytes, dtype=np.uint8)

    def write(self, arr: np.ndarray, offset: int) -> None:
        b = np.ascontiguousarray(arr).view(np.uint8).ravel()
        self.data[offset : offset + b.size] = b

    def view(self, dtype: str) -> np.ndarray:
        return self.data.view(dtype)


#: The references the fake device computes its FMA-chain and idiv outputs with (saved before a test
#: wraps them to count the suites' own calls).
FMA_REFERENCES = FmaKernel.references
IDIV_REFERENCE = IdivKernel.reference
CHAIN_ENTRIES = {fk.entry(dt): (fk, dt) for fk in FMA_KERNELS.values() for dt in ("fp16", "fp32", "fp64")}
IDIV_ENTRIES = {ik.entry: ik for ik in IDIV_KERNELS}


class FakeKernel:
    """A GPU kernel whose STREAM, FMA-chain and idiv entries compute in NumPy (the chains and idiv
    over one period of their periodic input, tiled); its time per launch depends on the block
    (fastest at 128), so the best size is known; ``broken`` writes nothing (validation must fail)."""

    timer = ""

    def __init__(
        self, entry: str, block: int, broken: bool, constants: Dict[str, Any], memo: Dict[Tuple[str, int], np.ndarray]
    ) -> None:
        self.entry, self.block, self.broken, self.constants, self.memo = entry, block, broken, constants, memo
        self.simd_width, self.max_block = SIMD, 1024
        self.wave_items = SMS * (2048 // block) * block

    def _periodic(self, x: np.ndarray, count: int, out: np.ndarray) -> None:
        key = (self.entry, int(self.constants["F"]))
        if key not in self.memo:
            F = key[1]
            if self.entry in CHAIN_ENTRIES:
                fk, dt = CHAIN_ENTRIES[self.entry]
                self.memo[key] = FMA_REFERENCES(fk, x[:PERIOD].copy(), [F], dt)[F]  # not counted as the suite's
            else:
                self.memo[key] = IDIV_REFERENCE(IDIV_ENTRIES[self.entry], x[:PERIOD].copy(), F)
        out[:count] = np.resize(self.memo[key], count)

    def time(
        self, args: Sequence[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True
    ) -> List[float]:
        if self.broken:
            pass
        elif self.entry in CHAIN_ENTRIES:
            fk, dt = CHAIN_ENTRIES[self.entry]
            count = work_items * fk.elems_per_item
            self._periodic(args[0].view(NUMPY_DTYPE[dt]), count, args[1].view(NUMPY_DTYPE[dt]))
        elif self.entry in IDIV_ENTRIES:
            self._periodic(args[0].view("uint32"), work_items, args[1].view("uint32"))
        else:
            a, b, c = (x.view("float32") for x in args[:3])
            n = work_items * 4
            op = self.entry.split("_")[1]
            if op == "copy":
                c[:n] = a[:n]
            elif op == "scale":
                b[:n] = np.float32(Q) * c[:n]
            elif op == "add":
                c[:n] = a[:n] + b[:n]
            else:
                a[:n] = b[:n] + np.float32(Q) * c[:n]
        per_launch = 1e-3 * (1.0 + abs(np.log2(self.block / 128.0)))
        return [per_launch * batch] * reps


class FakeBackend:
    """Counts its allocations; kernels built at a size of ``broken_blocks`` write nothing."""

    def __init__(self, broken: bool = False, simd: int = SIMD) -> None:
        self.broken, self.simd, self.max_pipeline = broken, simd, MAX_PIPELINE
        self.broken_blocks: Set[int] = set()
        self.compiled: List[Any] = []
        self.allocs = 0
        self.llc_bytes = 0
        self.memo: Dict[Tuple[str, int], np.ndarray] = {}

    def info(self) -> Dict[str, Any]:
        return {
            "backend": "cuda",
            "name": "Fake GPU",
            "index": 0,
            "compute_units": SMS,
            "memory_bytes": 48 << 20,
            "max_threads_per_block": 1024,
            "llc_bytes": self.llc_bytes,
        }

    def alloc(self, nbytes: int) -> FakeBuffer:
        self.allocs += 1
        return FakeBuffer(nbytes)

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> FakeKernel:
        block = int(constants.get("BLOCK", 256))
        self.compiled.append((entry, block))
        if block > self.max_pipeline:
            raise ValueError(
                f"constant BLOCK {block} exceeds the {self.max_pipeline} threads per block kernel '{entry}' allows"
            )
        k = FakeKernel(entry, block, self.broken or block in self.broken_blocks, dict(constants), self.memo)
        if not self.simd:
            k.simd_width = k.max_block = k.block = k.wave_items = 0
        return k


class _BackendError(RuntimeError):
    pass


class _CompileError(_BackendError):
    pass


class _UnsupportedError(_BackendError):
    pass


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    """The fake backend, opened for "cuda:0"; the extension's exception types stand in as a fake
    ``apple_roofline._native`` (the unit tier never loads the extension)."""
    native = types.ModuleType("apple_roofline._native")
    native._core = types.SimpleNamespace(  # type: ignore[attr-defined]
        BackendError=_BackendError,
        CompileError=_CompileError,
        UnsupportedError=_UnsupportedError,
        kernel_cache_stats=lambda: {"warnings": []},
    )
    monkeypatch.setitem(sys.modules, "apple_roofline._native", native)
    backend = FakeBackend()
    monkeypatch.setattr(runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(runner, "open_device", lambda spec: backend)
    return backend


def _tune(journal: Any = None, **kw: Any) -> TuneStudy:
    options = runner.TuneOptions(suites=["stream"], array_bytes=4096, reps=2, **kw)
    return runner.run_tune("cuda:0", options, journal=journal)


def test_candidates_are_multiples_of_the_simd_width() -> None:
    assert candidates(32, 1024, False) == list(range(32, 1025, 32))
    assert candidates(32, 1024, True) == [32, 64, 128, 256, 512, 1024]
    assert candidates(0, 1024, True) == []
    assert device_block_limit({"max_threads_per_threadgroup": 4096}) == 1024
    assert device_block_limit({"max_threads_per_block": 512}) == 512


@pytest.mark.parametrize(
    "bad, problem", [(48, "not a multiple of the SIMD width"), (2048, "out of range"), ("x", "not an integer")]
)
def test_bad_block_names_the_valid_range(bad: object, problem: str) -> None:
    with pytest.raises(OptionError, match=f"{problem}.*multiples of 32 from 32 to 1024"):
        check_blocks([64, bad], 32, 1024)


def test_tune_measures_validates_and_finds_the_best(fake: FakeBackend) -> None:
    study = _tune(blocks=[64, 128, 256, 1024])
    assert study.params["candidates"] == [64, 128, 256, 1024] and study.params["simd_width"] == SIMD
    assert study.kernels() == [f"stream/{k}/fp32" for k in ("copy", "scale", "add", "triad")]
    assert all(m.valid for m in study.measurements) and len(study.measurements) == 4 * 3
    assert study.blocks() == {k: 128 for k in study.kernels()}
    # 1024 exceeds the fake pipeline's maximum: an invalid point with the message, not a crash
    assert {(x.kernel, x.block) for x in study.rejected} == {(k, 1024) for k in ("copy", "scale", "add", "triad")}
    assert "exceeds the 512 threads" in study.rejected[0].message
    m = study.points("stream/triad/fp32")[0]
    assert m.params["block"] == 64 and m.params["resident_blocks_per_sm"] == 2048 // 64
    assert m.params["resident_threads_per_sm"] == 2048


def test_a_wrong_output_is_an_invalid_point(fake: FakeBackend) -> None:
    fake.broken = True
    study = _tune(blocks=[128])
    assert study.measurements and not any(m.valid for m in study.measurements)
    assert study.blocks() == {} and any("failed validation" in w for w in study.warnings)


def test_kernel_filter_and_unknown_kernel(fake: FakeBackend) -> None:
    study = _tune(blocks=[128], kernels=["triad"])
    assert study.kernels() == ["stream/triad/fp32"]
    with pytest.raises(OptionError, match="names no kernel"):
        _tune(blocks=[128], kernels=["nope"])


def test_every_size_rejected_is_nothing_measured(fake: FakeBackend, tmp_path: Path) -> None:
    """A study whose every point the pipeline rejects holds no measurement: it refuses (the machine,
    exit 1) with the compiler's reason, and the command writes no tune.json."""
    from apple_roofline.cli.app import app

    with pytest.raises(
        CannotMeasure,
        match=r"^nothing measured: Fake GPU ran no kernel at any block size: "
        r"block 1024: constant BLOCK 1024 exceeds the 512 threads",
    ):
        _tune(blocks=[1024])
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["tune", "-d", "cuda:0", "-s", "stream", "--block", "1024", "-o", str(out)])
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error")]
    assert r.exit_code == 1 and len(errors) == 1, r.output
    assert errors[0].startswith("error: nothing measured: Fake GPU ran no kernel") and not list(out.glob("tune*"))


def test_device_without_threadgroup_is_a_one_line_error(fake: FakeBackend) -> None:
    fake.simd = 0
    with pytest.raises(OptionError, match="has no threadgroup size to tune"):
        _tune()


def test_unknown_suite_names_the_tunable_ones() -> None:
    with pytest.raises(OptionError, match="stream, sweep, peak, idiv"):
        runner.parse_tune_suites("gemm")


def test_results_file_round_trips_and_views(fake: FakeBackend, tmp_path: Path) -> None:
    study = _tune(blocks=[64, 128, 1024])
    written, problems = write_tune(study, tmp_path)
    assert [p.name for p in written] == ["tune.json", "tune.md", "tune.png"] and not problems
    again = load_results(tmp_path / "tune.json")
    assert isinstance(again, TuneStudy) and again.blocks() == study.blocks()
    md = format_tune(study)
    assert "**128** (best)" in md and "rejected: constant BLOCK 1024" in md
    assert "best" in format_tune(study, "csv")
    d = json.loads((tmp_path / "tune.json").read_text())
    d["measurements"][0]["params"]["block"] = "big"
    with pytest.raises(
        ValueError, match=r"measurements\[0\]\.params\.block must be a non-negative integer \(a count\), not 'big'"
    ):
        TuneStudy.from_dict(d)


def test_run_tune_measures_each_suite_at_its_best_size(fake: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    run = roofline_runner.run_roofline(
        RunOptions(device="cuda:0", suites=["stream"], array_bytes=4096, reps=2, telemetry=False, tuner=QuickTuner(2))
    )
    assert run.measurements and all(m.params["block"] == 128 for m in run.measurements)
    assert "quick tune" in str(run.device["tune"])
    fake.max_pipeline = 1024
    plain = roofline_runner.run_roofline(
        RunOptions(device="cuda:0", suites=["stream"], array_bytes=4096, reps=2, telemetry=False)
    )
    assert {m.params["block"] for m in plain.measurements} == {1024}  # the stream table's CUDA block


def test_run_tune_file_uses_the_study(fake: FakeBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    study = _tune(blocks=[64, 96])  # best of these: 96 (closer to 128)
    monkeypatch.setattr(roofline_runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(roofline_runner, "open_device", lambda spec: fake)
    run = roofline_runner.run_roofline(
        RunOptions(
            device="cuda:0",
            suites=["stream"],
            array_bytes=4096,
            reps=2,
            telemetry=False,
            tuner=FileTuner(study, "t.json"),
        )
    )
    assert {m.params["block"] for m in run.measurements} == {96}


def test_cli_tune_writes_files_and_rejects_bad_sizes(fake: FakeBackend, tmp_path: Path) -> None:
    from apple_roofline.cli.app import app

    r = CliRunner().invoke(
        app, ["tune", "-d", "cuda:0", "-s", "stream", "--block", "64,128", "--reps", "2", "-o", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "tune.md").exists() and "best block 128" in r.output
    r = CliRunner().invoke(app, ["tune", "-d", "cuda:0", "-s", "stream", "--block", "48", "-o", str(tmp_path)])
    assert r.exit_code == 2 and "not a multiple of the SIMD width" in r.output
    r = CliRunner().invoke(app, ["run", "--tune-file", str(tmp_path / "tune.json"), "-o", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--tune-file needs --tune" in r.output


class _Work:
    """What tuning costs besides the timing, counted per kernel: buffer allocations, reference
    builds (the STREAM, FMA-chain and idiv references) and input fills (STREAM and the chains)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, backend: FakeBackend) -> None:
        self.backend = backend
        self.refs: Counter[str] = Counter()
        self.fills = 0

        def counted(sk: Any) -> Any:
            def ref(*args: Any) -> Any:
                self.refs[f"stream/{sk.name}"] += 1
                return sk.ref(*args)

            return dataclasses.replace(sk, ref=ref)

        def fma_references(fk: FmaKernel, x: Any, Fs: Any, dtype: str, *args: Any, **kwargs: Any) -> Any:
            for F in set(Fs):
                self.refs[f"{fk.name}/{dtype}/F={F}"] += 1
            return FMA_REFERENCES(fk, x, Fs, dtype, *args, **kwargs)

        def idiv_reference(ik: IdivKernel, x: Any, F: int, *args: Any, **kw: Any) -> Any:
            self.refs[f"{ik.entry}/F={F}"] += 1
            return IDIV_REFERENCE(ik, x, F, *args, **kw)

        def fill(*args: Any) -> None:
            self.fills += 1
            base_fill(*args)

        base_fill = stream.fill
        monkeypatch.setattr(stream, "STREAM_KERNELS", tuple(counted(sk) for sk in stream.STREAM_KERNELS))
        monkeypatch.setattr(FmaKernel, "references", fma_references)
        monkeypatch.setattr(IdivKernel, "reference", idiv_reference)
        monkeypatch.setattr(stream, "fill", fill)
        monkeypatch.setattr(chains, "fill", fill)

    def tune(self, suite: str, blocks: List[int]) -> Tuple[List[Measurement], int, Counter[str], int]:
        """Tune ``suite`` at ``blocks`` (:func:`runner.tune_suite`, without the device probe of
        :func:`runner.run_tune`); its points and the allocations, reference builds and fills."""
        allocs, self.refs, self.fills = self.backend.allocs, Counter(), 0
        info = self.backend.info()
        ctx = SuiteContext(self.backend, "cuda", info, False, 64 << 10, {"max_launch_s": 0.01})
        found = runner.TunePoints()
        runner.tune_suite(ctx, suite, blocks, found, runner.PointTiming(reps=2, max_warmup_s=0.0))
        return found.measurements, self.backend.allocs - allocs, self.refs, self.fills


@pytest.mark.parametrize("suite, fixed_launch", [("stream", True), ("sweep", True), ("peak", False), ("idiv", False)])
def test_work_per_kernel_does_not_grow_with_the_sizes(
    fake: FakeBackend, monkeypatch: pytest.MonkeyPatch, suite: str, fixed_launch: bool
) -> None:
    """Buffers are allocated and references built once per kernel, whatever the number of sizes
    (the speed-up of rebinding a planned case, docs/design/studies.md, "Threadgroup-size tuning"); where
    the launch does not depend on the block, the inputs are also written once. (The whole-wave
    suites re-size their launches, and grow their buffers only when a size's whole waves need more:
    here every size's wave is the same number of threads.)"""
    fake.max_pipeline = 1024
    work = _Work(monkeypatch, fake)
    few, allocs_few, refs_few, fills_few = work.tune(suite, [64, 128])
    many, allocs_many, refs_many, fills_many = work.tune(suite, [32, 64, 128, 256, 512, 1024])
    kernels = len({m.label for m in few})
    assert kernels and len(many) == 3 * len(few) == 6 * kernels
    assert all(m.valid for m in many), [m.validation for m in many if not m.valid]
    assert allocs_many == allocs_few > 0
    assert refs_many == refs_few and set(refs_few.values()) == {1} and len(refs_few) == kernels
    if fixed_launch:
        assert fills_many == fills_few > 0


@pytest.mark.parametrize(
    "suite, kernel", [("stream", None), ("sweep", None), ("peak", "vec4_indep4"), ("idiv", "idiv/div_argument/uint32")]
)
def test_a_wrong_output_at_one_size_is_caught_after_a_correct_one(fake: FakeBackend, suite: str, kernel: Any) -> None:
    """The kernel built at 128 writes nothing: the output of the correct 64 before it must not pass
    for it (the output is poisoned again before every size), and the correct 256 after it passes."""
    fake.broken_blocks = {128}
    study = runner.run_tune(
        "cuda:0",
        runner.TuneOptions(
            suites=[suite], array_bytes=64 << 10, reps=2, blocks=[64, 128, 256], kernels=[kernel] if kernel else None
        ),
    )
    assert study.kernels()
    for k in study.kernels():
        got = {int(m.params["block"]): m.valid for m in study.points(k)}
        assert got == {64: True, 128: False, 256: True}, k
        bad = next(m for m in study.points(k) if m.params["block"] == 128)
        assert "differ" in bad.validation or "wrong" in bad.validation, bad.validation
    assert study.blocks() and all(b != 128 for b in study.blocks().values())


def test_quick_tune_uses_the_smallest_dram_arrays(fake: FakeBackend) -> None:
    assert dram_array_bytes({"llc_bytes": 50 << 20, "memory_bytes": 80 << 30}) == 200 << 20
    assert dram_array_bytes({"llc_bytes": 0, "memory_bytes": 80 << 30}) == 256 << 20  # unknown cache (Apple)
    assert dram_array_bytes({"llc_bytes": (50 << 20) + 1, "memory_bytes": 80 << 30}) == 201 << 20
    fake.llc_bytes = 1 << 20
    study = runner.run_tune(
        "cuda:0", runner.TuneOptions(suites=["stream"], quick=True, blocks=[128], reps=2, kernels=["triad"])
    )
    assert (
        study.params["array_bytes"] == 4 << 20 and study.points("stream/triad/fp32")[0].params["array_bytes"] == 4 << 20
    )
    assert study.measurements[0].ceiling_class == "DRAM bandwidth"
    full = runner.run_tune("cuda:0", runner.TuneOptions(suites=["stream"], blocks=[128], reps=2, kernels=["triad"]))
    assert full.params["array_bytes"] == (48 << 20) // 6  # a run's default (capped by the fake's memory)


def test_cli_plot_and_report_read_a_tuning_study(fake: FakeBackend, tmp_path: Path) -> None:
    from apple_roofline.cli.app import app

    study = _tune(blocks=[64, 128, 1024])
    write_tune(study, tmp_path)
    tune_json = tmp_path / "tune.json"
    (tmp_path / "tune.png").unlink()
    cli = CliRunner()
    r = cli.invoke(app, ["plot", str(tune_json)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "tune.png").stat().st_size > 0 and "wrote" in r.output
    r = cli.invoke(app, ["plot", str(tune_json), "-o", str(tmp_path / "t.svg")])
    assert r.exit_code == 0 and (tmp_path / "t.svg").read_text().lstrip().startswith("<?xml")
    r = cli.invoke(app, ["plot", str(tune_json), "--point", "k:1e9:1e8:0.1"])
    assert r.exit_code == 2 and "tuning study" in r.output
    r = cli.invoke(app, ["report", str(tune_json)])
    assert r.exit_code == 0 and "**128** (best)" in r.output and "rejected: constant BLOCK 1024" in r.output
    r = cli.invoke(app, ["report", str(tune_json), "-f", "csv"])
    assert r.exit_code == 0 and r.output.startswith("kernel,block,valid")
    r = cli.invoke(app, ["report", str(tune_json), "-f", "json"])
    assert r.exit_code == 0 and json.loads(r.output)["kind"] == "tune"
    r = cli.invoke(app, ["report", str(tune_json), "-f", "html"])
    assert r.exit_code == 2 and "tuning study has md, csv and json" in r.output
    # a study without a valid point has nothing to draw: one line, exit 1
    fake.broken = True
    (tmp_path / "bad").mkdir()
    write_tune(_tune(blocks=[128]), tmp_path / "bad")
    r = cli.invoke(app, ["plot", str(tmp_path / "bad" / "tune.json")])
    assert r.exit_code == 1 and "no valid point" in r.output


def test_resume_measures_only_the_points_its_journal_lacks(
    fake: FakeBackend, monkeypatch: pytest.MonkeyPatch, resume_check: Any
) -> None:
    calls: List[int] = []
    measure = runner.time_case

    def counted(*a: Any, **kw: Any) -> Any:
        calls.append(1)
        return measure(*a, **kw)

    monkeypatch.setattr(runner, "time_case", counted)
    resume_check(
        "tune", TuneStudy, lambda j: _tune(blocks=[64, 128], journal=j), lambda s: s.measurements, lambda: len(calls)
    )
