"""The matrix suite without a GPU: tile composition, inputs that keep every accumulator exact, the
reference and the exact check, counting, cases over a fake backend (CUDA with and without Hopper's
wgmma, Metal with and without the Neural Accelerators, the CPU's one skip), opt-in selection, the
ceilings named by instruction and the report section; the NumPy model of matrix.cu's mma.sync fragments
against the PTX ISA's tables, and of wgmma.cu's shared-memory layout, matrix descriptors and
accumulator fragment against the PTX ISA's definitions."""

from __future__ import annotations

import sys
import types
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

from apple_roofline.errors import OptionError
from apple_roofline.roofline.model.model import RooflineModel, derive_ceilings
from apple_roofline.roofline.model.run import Run
from apple_roofline.roofline.model.selection import default_names
from apple_roofline.roofline.run.options import parse_suites
from apple_roofline.roofline.views.html import to_html
from apple_roofline.roofline.views.report import to_markdown
from apple_roofline.study.document import ToolInfo
from apple_roofline.study.records import Ceiling, Measurement, Skipped
from apple_roofline.suites.base import ITEMSIZE, SuiteContext
from apple_roofline.suites.matrix import suite as matrix_suite
from apple_roofline.suites.matrix.kernels import (
    API_BY_NAME,
    ITERS,
    MAX_ACC_PER_THREAD,
    PRECISION_BY_DTYPE,
    PRECISIONS,
    REPS,
    TILE_SHAPES,
    WGMMA_CONSTANTS,
    WGMMA_SHAPES,
    bytes_per_launch,
    check_shape,
    check_tile_output,
    compose,
    from_storage,
    largest_shape,
    matrix_class,
    matrix_inputs,
    matrix_reference,
    ops_per_group,
    parse_matrix_class,
    to_storage,
)
from apple_roofline.suites.matrix.suite import (
    BLOCK,
    CPU_REASON,
    GROUPS_QUICK,
    LARGEST,
    SHAPES_OPTION,
    SWEEP,
    MatrixSuite,
    wgmma_reason,
)
from apple_roofline.suites.matrix.table import matrix_shapes_table, matrix_summary_table
from apple_roofline.suites.registry import default_suites, suite_names
from apple_roofline.text import DASH
from fill32 import WriteFill32  # tests/, on the path (conftest)
from shader_twins import (
    MMA_EPR,
    emulate_mma_tile,
    emulate_wgmma_tile,
    mma_a_index,
    mma_b_index,
    mma_c_index,
    ptx_a,
    ptx_b,
    ptx_c,
    ptx_desc_fields,
    ptx_wgmma_d,
    wg_c_index,
    wg_desc,
    wg_offset,
)

F16F32, F16F16, S8, BF16, E4M3, E5M2 = (
    PRECISION_BY_DTYPE[d] for d in ("fp16→fp32", "fp16→fp16", "int8→int32", "bf16→fp32", "e4m3→fp32", "e5m2→fp32")
)
#: The precisions with no mma.sync or Metal instruction: one skip each per API.
NO_MMA = (E4M3, E5M2)

# ---- composition ------------------------------------------------------------------------------------


def test_mma_composition_and_its_reasons() -> None:
    mma = API_BY_NAME["mma"]
    assert compose(mma, F16F32, 16, 8, 16).instruction == "mma.sync.aligned.m16n8k16"
    assert compose(mma, F16F32, 32, 32, 8).fragment == (16, 8, 8)
    assert compose(mma, S8, 16, 16, 128).fragment == (16, 8, 32)
    assert compose(mma, S8, 16, 16, 16).fragment == (16, 8, 16)
    r = compose(mma, S8, 16, 8, 8)
    assert not r.ok and "K = 8" in r.reason and "16" in r.reason
    r = compose(mma, BF16, 8, 16, 16)
    assert not r.ok and r.reason.startswith("M = 8 is not a multiple") and "16 rows" in r.reason
    # every shape of the sweep: composed or a reason, never nothing
    for p in PRECISIONS:
        for shape in TILE_SHAPES:
            c = compose(mma, p, *shape)
            assert c.ok != bool(c.reason)
            if c.ok:
                fm, fn, fk = c.fragment
                assert all(d % f == 0 for d, f in zip(shape, c.fragment)) and fm == 16 and fn == 8


def test_metal_composition() -> None:
    sg, mpp = API_BY_NAME["simdgroup_matrix"], API_BY_NAME["mpp"]
    assert all(compose(sg, F16F16, *s).fragment == (8, 8, 8) for s in TILE_SHAPES)
    assert "no integer simdgroup_matrix" in compose(sg, S8, 16, 16, 16).reason
    assert "MSL 3.1" in compose(sg, BF16, 16, 16, 16).reason
    assert compose(mpp, S8, 8, 32, 128).fragment == (8, 32, 128)


@pytest.mark.parametrize("bad", [(0, 8, 8), (12, 8, 8), (8, 8, 256), (8, 8.0, 8), (True, 8, 8)])
def test_bad_tile_shape_is_one_line(bad: Tuple[Any, Any, Any]) -> None:
    with pytest.raises(ValueError, match=r"^matrix: tile [MNK] = .* must be a multiple of 8 from 8 to 128$"):
        check_shape(*bad)


def test_wgmma_composition_and_its_reasons() -> None:
    wg = API_BY_NAME["wgmma"]
    c = compose(wg, F16F32, 64, 256, 64)
    assert c.instruction == "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" and c.fragment == (64, 256, 16)
    assert compose(wg, S8, 64, 128, 32).instruction == "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8"
    assert compose(wg, F16F16, 64, 64, 32).instruction.endswith("m64n64k16.f16.f16.f16")
    assert compose(wg, BF16, 64, 64, 32).instruction.endswith("m64n64k16.f32.bf16.bf16")
    assert compose(wg, E4M3, 64, 256, 64).instruction == "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3"
    assert compose(wg, E5M2, 64, 64, 32).fragment == (64, 64, 32)
    assert compose(wg, E5M2, 64, 64, 16).reason == "K = 16 is not a multiple of the e5m2 wgmma K (32)"
    assert "M = 32" in compose(wg, F16F32, 32, 64, 32).reason and "64 rows" in compose(wg, F16F32, 32, 64, 32).reason
    assert (
        compose(wg, F16F32, 64, 96, 32).reason == "N = 96 is not one of the wgmma N this kernel builds (64, 128, 256)"
    )
    assert compose(wg, S8, 64, 64, 16).reason == "K = 16 is not a multiple of the int8 wgmma K (32)"
    assert all(compose(wg, p, *s).ok for p in PRECISIONS for s in WGMMA_SHAPES)
    assert {s[1] for s in WGMMA_SHAPES} == {64, 128, 256} and {s[0] for s in WGMMA_SHAPES} == {64}
    with pytest.raises(ValueError, match=r"^matrix: tile N = 264 must be a multiple of 8 from 8 to 256$"):
        compose(wg, F16F32, 64, 264, 32)


def test_ceilings_are_named_by_instruction() -> None:
    names = {a.name: a.ceiling_class(F16F32) for a in API_BY_NAME.values()}
    assert names == {
        "mma": "Matrix FP16→FP32 (mma.sync)",
        "wgmma": "Matrix FP16→FP32 (wgmma)",
        "simdgroup_matrix": "Matrix FP16→FP32 (simdgroup_matrix)",
        "mpp": "Matrix FP16→FP32 (matmul2d)",
    }
    assert matrix_class("int8→int32", "wgmma") == "Matrix INT8→INT32 (wgmma)"
    assert parse_matrix_class("Matrix INT8→INT32 (wgmma)") == ("int8→int32", "wgmma")
    assert parse_matrix_class("Matrix BF16→FP32") == ("bf16→fp32", "")  # a run from before the names
    assert parse_matrix_class("GEMM FP16") is None and parse_matrix_class("Matrix units") is None


# ---- inputs, reference, check -----------------------------------------------------------------------


@pytest.mark.parametrize("p", PRECISIONS, ids=lambda p: p.suffix)
@pytest.mark.parametrize("shape", [(8, 8, 8), (16, 8, 16), (32, 32, 128), (32, 16, 64)])
def test_every_partial_sum_is_exact_in_the_accumulator(p: Any, shape: Tuple[int, int, int]) -> None:
    m, n, k = shape
    a, b = matrix_inputs(p, m, n, k)
    assert np.array_equal(from_storage(to_storage(a, p.input), p.input), a), "inputs not exact in storage"
    c = matrix_reference(a, b)
    chain = ITERS * REPS
    exact = {"fp32": 2**24, "fp16": 2048, "int32": 2**31 - 1}[p.acc]
    worst_partial = chain * np.abs(a @ b).max() + np.abs(a).max() * np.abs(b).max() * k
    if p.acc == "fp16":
        assert np.abs(a @ b).max() <= 1 and worst_partial <= exact, "the cancelling inputs exceed FP16's integers"
        assert np.count_nonzero(a) > a.size // 3 and np.count_nonzero(b) > b.size // 3, "inputs must be dense"
    assert worst_partial < exact
    assert np.array_equal(from_storage(to_storage(c, p.acc), p.acc), c)
    assert np.abs(c).max() > 0, "a zero product would pass a kernel that did nothing"


def test_fp16_cancellation_catches_a_misread_row_of_b() -> None:
    a, b = matrix_inputs(F16F16, 16, 8, 32)
    off_by_one = np.roll(b, 1, axis=0)  # a fragment reading B one row (k) off
    assert not np.array_equal(a @ off_by_one, a @ b)


def test_check_is_exact_and_names_the_first_wrong_element() -> None:
    a, b = matrix_inputs(F16F32, 16, 8, 16)
    want = matrix_reference(a, b)
    got = np.resize(to_storage(want, "fp32"), 3 * want.size)
    assert check_tile_output(got, want, 3)[0]
    got[want.size + 9] += 1
    ok, msg = check_tile_output(got, want, 3)
    assert not ok and msg.startswith("1 of 384") and "work group 1 at row 1, column 1" in msg
    ok, msg = check_tile_output(np.full(want.size, np.nan, np.float32), want, 1)
    assert not ok and "128 of 128" in msg


def test_counting() -> None:
    assert ops_per_group(16, 8, 16) == ITERS * REPS * 2 * 16 * 8 * 16
    assert bytes_per_launch(S8, 16, 8, 32, 10) == (16 * 32 + 32 * 8) * 1 + 10 * 16 * 8 * 4
    assert bytes_per_launch(F16F16, 16, 8, 16, 1) == (256 + 128) * 2 + 128 * 2


# ---- cases over a fake backend ----------------------------------------------------------------------


class _Buf(WriteFill32):
    def __init__(self, nbytes: int) -> None:
        self.data = np.zeros(nbytes, np.uint8)

    def write(self, a: np.ndarray, offset: int = 0) -> None:
        b = np.ascontiguousarray(a).view(np.uint8)
        self.data[offset : offset + b.size] = b

    def view(self, dtype: str) -> np.ndarray:
        return self.data.view(dtype)


class _Kernel:
    def __init__(self, wave: int) -> None:
        self.wave_items = wave


class _Backend:
    def __init__(self, wave: int = 0) -> None:
        self.compiled: List[Tuple[str, str, Dict[str, Any]]] = []
        self.wave = wave

    def alloc(self, nbytes: int) -> _Buf:
        return _Buf(nbytes)

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> _Kernel:
        self.compiled.append((source, entry, dict(constants)))
        return _Kernel(self.wave)


@pytest.fixture(autouse=True)
def _no_native(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        matrix_suite,
        "wave_items",
        lambda backend, src, consts: int(backend.compile(src[0], src[1], dict(consts)).wave_items),
    )


def _suite(backend_name: str, info: Dict[str, Any], wave: int = 0) -> "tuple[MatrixSuite, _Backend]":
    b = _Backend(wave)
    return MatrixSuite(SuiteContext(b, backend_name, {"backend": backend_name, **info}, True, 1 << 20)), b


def _is_skip(case: Any) -> bool:
    return case.flops == 0 and not case.args


def test_cuda_cases_cover_every_shape_and_precision() -> None:
    suite, b = _suite("cuda", {"cc_major": 8, "cc_minor": 6}, wave=50_688)
    cases = list(suite.cases())
    assert len(cases) == suite.total() == 4 * 45 + len(NO_MMA) + len(PRECISIONS)
    wg = [c for c in cases if c.kernel.name.startswith("wgmma")]
    assert len(wg) == len(PRECISIONS) and all(
        _is_skip(c) and c.check()[1] == "wgmma needs an sm_90a (Hopper) GPU; this is sm_86" for c in wg
    )
    fp8 = [c for c in cases if c.kernel.name == "mma"]  # the precision mma.sync lacks: one skip, not 45
    assert [c.kernel.dtype for c in fp8] == ["e4m3→fp32", "e5m2→fp32"]
    assert all(_is_skip(c) and "builds no FP8 mma.sync" in c.check()[1] for c in fp8)
    cases = [c for c in cases if c not in wg and c not in fp8]
    skips = [c for c in cases if _is_skip(c)]
    assert len(skips) == 4 * 15 + 3 * 2  # M = 8 for every precision; s8 K = 8 at M = 16, 32 (N = 8, 16, 32)
    for c in cases:
        if _is_skip(c):
            assert not c.check()[0]
            continue
        p = PRECISION_BY_DTYPE[c.kernel.dtype]
        m, n, k, groups = (c.params[x] for x in ("m", "n", "k", "groups"))
        assert c.work_items == groups * 32 and c.work_items % BLOCK == 0 and c.work_items % 50_688 == 0
        assert c.flops == ops_per_group(m, n, k) * groups and c.bytes == bytes_per_launch(p, m, n, k, groups)
        assert c.kernel.ceiling_class == f"{p.ceiling_class} (mma.sync)" and c.kernel.ceiling_kind == "compute"
        assert c.params["scope"] == "1 warp" and c.params["instruction"].startswith("mma.sync")
        ok, msg = c.check()
        assert not ok, "an unwritten (poisoned) output must fail"
    consts = [k[2] for k in b.compiled]
    assert all(set(c) == {"BLOCK", "TM", "TN", "TK", "ITERS", "REPS"} for c in consts)


HOPPER = {"cc_major": 9, "cc_minor": 0, "nvrtc_arch_target": "sm_90a"}


def test_hopper_measures_wgmma_beside_mma_sync() -> None:
    suite, b = _suite("cuda", HOPPER, wave=5 * 132 * 128)
    cases = list(suite.cases())
    assert len(cases) == suite.total() == 4 * 45 + len(NO_MMA) + len(PRECISIONS) * len(WGMMA_SHAPES)
    wg = [c for c in cases if c.kernel.name.startswith("wgmma_")]
    assert len(wg) == len(PRECISIONS) * len(WGMMA_SHAPES) and not any(_is_skip(c) for c in wg)
    assert {c.kernel.dtype for c in wg} >= {"e4m3→fp32", "e5m2→fp32"}  # Hopper's FP8
    for c in wg:
        p = PRECISION_BY_DTYPE[c.kernel.dtype]
        m, n, k, groups = (c.params[x] for x in ("m", "n", "k", "groups"))
        assert c.work_items == groups * 128 and c.work_items % (5 * 132 * 128) == 0
        assert groups >= 4 * 5 * 132  # whole waves, at least MIN_WAVES
        assert c.flops == ops_per_group(m, n, k) * groups and c.bytes == bytes_per_launch(p, m, n, k, groups)
        assert c.kernel.ceiling_class == f"{p.ceiling_class} (wgmma)"
        assert c.params["scope"] == "1 warpgroup" and c.params["instruction"].startswith("wgmma.mma_async")
        assert c.kernel.sources["cuda"] == ("wgmma.cu", f"wgmma_{p.suffix}")
        assert not c.check()[0], "an unwritten (poisoned) output must fail"
    consts = [x[2] for x in b.compiled if x[1].startswith("wgmma_")]
    assert consts and all(c["AR_ARCH_SPECIFIC"] == 1 and c["BLOCK"] == 128 and c["TM"] == 64 for c in consts)
    assert all(c[name] == v for c in consts for name, v in WGMMA_CONSTANTS.items())


@pytest.mark.parametrize(
    "info,reason",
    [
        ({"cc_major": 8, "cc_minor": 0}, "wgmma needs an sm_90a (Hopper) GPU; this is sm_80"),
        ({"cc_major": 10, "cc_minor": 0}, "wgmma needs an sm_90a (Hopper) GPU; this is sm_100"),
        ({}, "wgmma needs an sm_90a (Hopper) GPU; this is of unknown compute capability"),
        (
            {
                "cc_major": 9,
                "cc_minor": 0,
                "nvrtc_arch_target": "unavailable: the arch-specific target sm_90a needs NVRTC "
                "12.0 or newer; this is 11.8",
            },
            "wgmma needs NVRTC for the arch-specific target sm_90a: the arch-specific target sm_90a needs "
            "NVRTC 12.0 or newer; this is 11.8",
        ),
        (HOPPER, ""),
    ],
)
def test_wgmma_reason(info: Dict[str, Any], reason: str) -> None:
    assert wgmma_reason(info) == reason


def test_a_written_output_passes() -> None:
    suite, b = _suite("cuda", {})
    case = next(c for c in suite.cases() if not _is_skip(c))
    p = PRECISION_BY_DTYPE[case.kernel.dtype]
    a, bb = matrix_inputs(p, case.params["m"], case.params["n"], case.params["k"])
    assert np.array_equal(case.args[0].view("float16")[: a.size], a.ravel().astype(np.float16))
    want = to_storage(matrix_reference(a, bb), p.acc)
    out = case.args[2].view({"fp32": "float32", "fp16": "float16"}[p.acc])
    out[: want.size * case.params["groups"]] = np.tile(want.ravel(), case.params["groups"])
    assert case.check()[0]
    assert case.params["groups"] == GROUPS_QUICK


def test_metal_without_neural_accelerators_skips_mpp_per_precision() -> None:
    suite, b = _suite("metal", {"gpu_family": "Apple9", "gpu_family_raw": 1009})
    cases = list(suite.cases())
    mpp = [c for c in cases if c.kernel.name == "mpp"]
    assert len(mpp) == len(PRECISIONS) and all(_is_skip(c) and "Apple9" in c.check()[1] for c in mpp)
    simd = [c for c in cases if c.kernel.name.startswith("simdgroup_matrix_")]
    assert len(simd) == 2 * 45 and not any(c.kernel.name.startswith("wgmma") for c in cases)
    assert not any(_is_skip(c) for c in simd)  # FP16 inputs: every shape
    lacking = {c.kernel.dtype: c.check()[1] for c in cases if c.kernel.name == "simdgroup_matrix"}
    assert set(lacking) == {"int8→int32", "bf16→fp32", "e4m3→fp32", "e5m2→fp32"}  # one skip each, with the reason
    assert "no integer simdgroup_matrix" in lacking["int8→int32"] and "no 8-bit floating-point" in lacking["e4m3→fp32"]


def test_metal_mpp_prepends_the_tile_as_macros() -> None:
    suite, b = _suite("metal", {"gpu_family": "Apple10", "gpu_family_raw": 1010})
    cases = [c for c in suite.cases() if c.kernel.name.startswith("mpp_") and not _is_skip(c)]
    assert len(cases) == 4 * 45  # every precision but FP8
    src, entry, consts = next(x for x in b.compiled if x[1].startswith("mpp_"))
    assert src.startswith("#define TM 8\n#define TN 8\n#define TK 8\n") and "AR_MSL_VERSION_4_0" in src
    assert consts == {"BLOCK": BLOCK}


def test_cpu_yields_one_skip_saying_why() -> None:
    suite, b = _suite("cpu", {})
    cases = list(suite.cases())
    assert len(cases) == 1 and _is_skip(cases[0]) and cases[0].check() == (False, CPU_REASON)
    assert not b.compiled


def test_largest_shape_is_the_rule_over_the_table() -> None:
    """The default run's tile per precision and instruction is the largest the instruction builds
    (M·N·K, then K) among the API's own shapes whose accumulator holds at most MAX_ACC_PER_THREAD
    elements per thread; none for a precision the API lacks."""
    for api in API_BY_NAME.values():
        for p in PRECISIONS:
            fit = [
                s
                for s in api.shapes
                if compose(api, p, *s).ok and s[0] * s[1] / api.group_threads <= MAX_ACC_PER_THREAD
            ]
            got = largest_shape(api, p)
            if not fit:
                assert got is None
                continue
            assert got in fit and all(s[0] * s[1] * s[2] <= got[0] * got[1] * got[2] for s in fit)
    assert largest_shape(API_BY_NAME["wgmma"], E4M3) == (64, 128, 64)  # N = 256: 128 per thread, over the cap
    assert largest_shape(API_BY_NAME["mma"], S8) == (32, 32, 128) and largest_shape(API_BY_NAME["mma"], E4M3) is None


def test_default_run_measures_the_largest_tile_per_precision_and_instruction() -> None:
    b = _Backend(5 * 132 * 128)
    ctx = SuiteContext(b, "cuda", {"backend": "cuda", **HOPPER}, False, 1 << 20, {SHAPES_OPTION: LARGEST})
    suite = MatrixSuite(ctx)
    cases = list(suite.cases())
    assert len(cases) == suite.total() == len(PRECISIONS) + len(PRECISIONS)  # wgmma 6; mma.sync 4 + 2 FP8 skips
    measured = [c for c in cases if not _is_skip(c)]
    assert sorted((c.kernel.name, c.kernel.dtype) for c in measured) == sorted(
        [("wgmma_64x128x64", p.dtype) for p in PRECISIONS]
        + [("mma_32x32x128", p.dtype) for p in PRECISIONS if p not in NO_MMA]
    )
    assert all(c.params["shapes"] == "largest tile" for c in measured)
    assert (
        {(x[1], x[2].get("TN"), x[2].get("TK")) for x in b.compiled}
        == {  # only those tiles are compiled
            *((f"wgmma_{p.suffix}", 128, 64) for p in PRECISIONS),
            *((f"matrix_{p.suffix}", 32, 128) for p in PRECISIONS[:4]),
        }
    )
    sweep = MatrixSuite(SuiteContext(_Backend(5 * 132 * 128), "cuda", {"backend": "cuda", **HOPPER}, False, 1 << 20))
    assert sweep.total() == 4 * 45 + len(NO_MMA) + len(PRECISIONS) * len(WGMMA_SHAPES)  # the sweep stays the default


def test_matrix_is_a_default_suite_whose_sweep_is_named() -> None:
    assert "matrix" in suite_names() and "matrix" in default_suites()
    assert parse_suites("matrix,gemm") == ("gemm", "matrix")


@pytest.mark.parametrize("suites,want", [(None, LARGEST), (["matrix"], SWEEP)])
def test_runner_asks_for_the_largest_tiles_only_when_no_suite_is_named(
    monkeypatch: pytest.MonkeyPatch, suites: Any, want: str
) -> None:
    """A run with no suites named measures the matrix suite's largest tiles; ``--suite matrix`` its sweep."""
    from apple_roofline.devices import DeviceSpec
    from apple_roofline.roofline.run import runner
    from apple_roofline.roofline.run.options import RunOptions

    seen: Dict[str, Any] = {}

    class Recording(MatrixSuite):
        def total(self) -> int:
            return 0

        def cases(self) -> Any:
            seen[self.name] = self.ctx.options.get(SHAPES_OPTION)
            return iter(())

    native = types.ModuleType("apple_roofline._native")  # the unit tier never loads the extension
    native._core = types.SimpleNamespace(  # type: ignore[attr-defined]
        UnsupportedError=RuntimeError,
        kernel_cache_stats=lambda: {"warnings": []},
    )
    monkeypatch.setitem(sys.modules, "apple_roofline._native", native)
    monkeypatch.setattr(runner.registry, "spec", lambda name: types.SimpleNamespace(measure=Recording))
    monkeypatch.setattr(runner, "resolve_device", lambda d: DeviceSpec("cuda", 0))
    monkeypatch.setattr(
        runner,
        "open_device",
        lambda spec: types.SimpleNamespace(
            info=lambda: {"backend": "cuda", "name": "Fake GPU", "index": 0, "memory_bytes": 48 << 20, "llc_bytes": 0},
            alloc=lambda nbytes: types.SimpleNamespace(view=lambda dtype: np.zeros(nbytes, dtype)),  # host-visible
        ),
    )
    with pytest.raises(OptionError, match="cannot run on Fake GPU"):  # the recording suites measure nothing
        runner.run_roofline(RunOptions(device="cuda:0", suites=suites, array_bytes=4096, reps=2, telemetry=False))
    assert seen == {"matrix": want}


# ---- ceilings and the report ------------------------------------------------------------------------


def _m(kernel: str, dtype: str, gflops: float, valid: bool = True, **params: Any) -> Measurement:
    ops = 10**9
    api = API_BY_NAME[kernel.split("_")[0]]
    return Measurement(
        "matrix",
        kernel,
        dtype,
        {"m": 16, "n": 8, "k": 16, "instruction": "mma.sync.aligned.m16n8k16", "scope": "1 warp", **params},
        ops,
        1000,
        (ops / gflops / 1e9,) * 3,
        valid,
        api.ceiling_class(PRECISION_BY_DTYPE[dtype]),
        "compute",
        validation="ok" if valid else "3 of 128 elements differ",
    )


def _run() -> Run:
    ms = [
        _m("mma_16x8x16", "fp16→fp32", 500e3),
        _m("mma_32x32x64", "fp16→fp32", 700e3),
        _m("mma_32x32x128", "fp16→fp32", 9e6, valid=False),
        _m("mma_16x8x32", "int8→int32", 1.2e6),
        _m("wgmma_64x256x64", "fp16→fp32", 850e3, sm_clock_mhz=1700.0),
        _m("wgmma_64x128x64", "fp16→fp32", 800e3),
    ]
    ceilings = derive_ceilings(ms) + [
        Ceiling("GEMM FP16", "compute", 650e3, "GFLOP/s", "measured", "gemm/hgemm/fp16"),
        Ceiling("GEMM FP16", "compute", 1000e3, "GFLOP/s", "theoretical", "spec"),
        Ceiling("DRAM bandwidth", "bandwidth", 3000, "GB/s", "measured", "stream"),
    ]
    skipped = (
        Skipped("matrix", "mma_8x8x8", "fp16→fp32", "M = 8 is not a multiple of the m16n8k16 fragment's 16 rows"),
    )
    return Run(
        ToolInfo("t", "1", None),
        "2026-01-02",
        {},
        {"backend": "cuda", "name": "test", "clock_hz": 2_000_000_000, "theoretical": {"clock_hz": 2_000_000_000}},
        (),
        tuple(ms),
        tuple(ceilings),
        skipped,
    )


def test_fp8_stands_beside_the_fp8_peak() -> None:
    """Both FP8 formats' wgmma ceilings are set against "GEMM FP8" (one theoretical rate for E4M3 and
    E5M2); there is no vendor FP8 GEMM in a run."""
    ms = [
        _m("wgmma_64x256x64", "e4m3→fp32", 1800e3, sm_clock_mhz=1800.0),
        _m("wgmma_64x256x64", "e5m2→fp32", 1700e3, sm_clock_mhz=1800.0),
    ]
    run = Run(
        ToolInfo("t", "1", None),
        "2026-01-02",
        {},
        {"backend": "cuda", "name": "test", "clock_hz": 2_000_000_000, "theoretical": {"clock_hz": 2_000_000_000}},
        (),
        tuple(ms),
        tuple(derive_ceilings(ms)) + (Ceiling("GEMM FP8", "compute", 2000e3, "GFLOP/s", "theoretical", "spec"),),
    )
    summary = matrix_summary_table(run)
    assert summary is not None
    rows = {r[0]: r for r in summary.rows}
    assert list(rows) == ["Matrix E4M3→FP32 (wgmma)", "Matrix E5M2→FP32 (wgmma)"]
    e4 = rows["Matrix E4M3→FP32 (wgmma)"]
    assert e4[3] == DASH and e4[6] == "90%" and e4[8] == "100%"  # 1800 of 2000; at 1800 MHz the peak is 1800
    assert rows["Matrix E5M2→FP32 (wgmma)"][6] == "85%"
    assert parse_matrix_class("Matrix E4M3→FP32 (wgmma)") == ("e4m3→fp32", "wgmma")


def test_best_valid_shape_is_the_ceiling() -> None:
    cs = {c.name: c for c in derive_ceilings(_run().measurements)}
    mma = cs["Matrix FP16→FP32 (mma.sync)"]
    assert mma.value == pytest.approx(700e3) and "mma_32x32x64" in mma.from_
    assert cs["Matrix INT8→INT32 (mma.sync)"].value == pytest.approx(1.2e6)
    wg = cs["Matrix FP16→FP32 (wgmma)"]
    assert wg.value == pytest.approx(850e3) and "wgmma_64x256x64" in wg.from_


def test_report_lists_every_shape_and_the_ceiling_beside_the_gemm() -> None:
    run = _run()
    shapes = matrix_shapes_table(run)
    assert shapes is not None and len(shapes.rows) == 7
    invalid = next(r for r in shapes.rows if r[8] == "**NO**")
    assert "3 of 128 elements differ" in invalid[9]
    skip = next(r for r in shapes.rows if r[8] == "skipped")
    assert skip[:5] == ("mma", "fp16→fp32", "8", "8", "8") and "16 rows" in skip[9]
    summary = matrix_summary_table(run)
    assert summary is not None
    assert [r[0] for r in summary.rows] == [
        "Matrix FP16→FP32 (mma.sync)",
        "Matrix FP16→FP32 (wgmma)",
        "Matrix INT8→INT32 (mma.sync)",
    ]  # precision order, then instruction
    row = next(r for r in summary.rows if r[0] == "Matrix FP16→FP32 (mma.sync)")
    assert row[4] == "1.08×" and row[6] == "70%" and "GEMM FP16" in row[3]
    assert row[7] == row[8] == DASH  # no SM clock sampled
    wg = next(r for r in summary.rows if r[0] == "Matrix FP16→FP32 (wgmma)")
    # 850 of 1000 at the 2000 MHz maximum; at the 1700 MHz it ran at, the peak is 850: 100 %
    assert wg[6] == "85%" and wg[7] == "1700" and wg[8] == "100%" and "wgmma_64x256x64" in wg[2]
    int8 = next(r for r in summary.rows if r[0] == "Matrix INT8→INT32 (mma.sync)")
    assert int8[3] == int8[4] == int8[5] == DASH  # no INT8 GEMM in this run
    md, page = to_markdown(run), to_html(run)
    assert "## Matrix units" in md and "Matrix FP16→FP32 (wgmma)" in md and "<h2>Matrix units</h2>" in page
    empty = Run(ToolInfo("t", "1", None), "2026-01-02", {}, {"backend": "cpu", "name": "x"}, ())
    assert "## Matrix units" not in to_markdown(empty) and matrix_summary_table(empty) is None


def test_default_figure_shows_the_top_matrix_class() -> None:
    model = RooflineModel.from_run(_run())
    names = default_names(model)
    assert "Matrix INT8→INT32 (mma.sync)" in names
    assert not any(n.startswith("Matrix FP16") for n in names)


# ---- the mma.sync fragment model --------------------------------------------------------------------


@pytest.mark.parametrize("ptype,fk", [("f16", 16), ("f16", 8), ("bf16", 16), ("bf16", 8), ("s8", 32), ("s8", 16)])
def test_kernel_indices_equal_the_ptx_tables(ptype: str, fk: int) -> None:
    """The register/element formulas of matrix.cu name the same fragment elements as the PTX ISA's
    element-by-element tables, and every lane's registers cover each fragment exactly once."""
    epr = MMA_EPR[ptype]
    areg, breg = fk // (4 * epr) * 2, fk // (4 * epr)
    seen_a, seen_b, seen_c = set(), set(), set()
    for lane in range(32):
        for r in range(areg):
            for e in range(epr):
                assert mma_a_index(lane, r, e, epr) == ptx_a(lane, r * epr + e, ptype, fk)
                seen_a.add(mma_a_index(lane, r, e, epr))
        for r in range(breg):
            for e in range(epr):
                assert mma_b_index(lane, r, e, epr) == ptx_b(lane, r * epr + e, ptype, fk)
                seen_b.add(mma_b_index(lane, r, e, epr))
        for i in range(4):
            assert mma_c_index(lane, i) == ptx_c(lane, i)
            seen_c.add(mma_c_index(lane, i))
    assert seen_a == {(r, c) for r in range(16) for c in range(fk)}
    assert seen_b == {(r, c) for r in range(fk) for c in range(8)}
    assert seen_c == {(r, c) for r in range(16) for c in range(8)}


@pytest.mark.parametrize(
    "p,shape",
    [(F16F32, (32, 16, 32)), (F16F16, (16, 32, 8)), (S8, (32, 8, 64)), (S8, (16, 16, 16)), (BF16, (16, 8, 16))],
    ids=str,
)
def test_emulated_warp_computes_the_reference(p: Any, shape: Tuple[int, int, int]) -> None:
    m, n, k = shape
    c = compose(API_BY_NAME["mma"], p, m, n, k)
    a, b = matrix_inputs(p, m, n, k)
    ptype = {"fp16": "f16", "bf16": "bf16", "int8": "s8"}[p.input]
    got = emulate_mma_tile(a, b, ptype, c.fragment[2], chain=2)
    assert np.array_equal(got, 2 * (a @ b))


def test_emulation_catches_a_transposed_b_fragment() -> None:
    a, b = matrix_inputs(F16F32, 16, 8, 16)

    def wrong_b(lane: int, r: int, e: int, epr: int) -> Tuple[int, int]:
        k, n = mma_b_index(lane, r, e, epr)
        return (n + 8 * (k // 8), k % 8)  # a layout mix-up: k and n swapped within each 8 x 8 block

    assert not np.array_equal(emulate_mma_tile(a, b, "f16", 16, b_index=wrong_b), a @ b)


# ---- the wgmma layout, descriptors and fragment ------------------------------------------------------


def test_descriptor_encoding_follows_the_ptx_table() -> None:
    # by hand: start 0x400 >> 4 = 0x40 in bits 0-13, LBO 128 >> 4 = 8 in bits 16-29, SBO 1024 >> 4 = 64
    # in bits 32-45, no base offset, no swizzle
    assert wg_desc(0x400, 128, 1024) == 0x0000_0040_0008_0040
    for addr, lbo, sbo in [(0, 128, 256), (0xA470, 128, 1024), (0x3FFF0, 2048, 128), (0x20010, 128, 512)]:
        assert ptx_desc_fields(wg_desc(addr, lbo, sbo)) == {
            "start": addr & 0x3FFF0,
            "lbo": lbo,
            "sbo": sbo,
            "base": 0,
            "swizzle": 0,
        }


def test_smem_layout_is_the_canonical_k_major_one() -> None:
    """Each core matrix (8 rows x 16 bytes) is 128 contiguous bytes; K-adjacent ones are 128 bytes
    apart (LBO), row-adjacent ones 8 KB apart (SBO); the tile fills its bytes exactly once."""
    kbytes = 128
    offsets = [wg_offset(r, kb, kbytes) for r in range(64) for kb in range(kbytes)]
    assert sorted(offsets) == list(range(64 * kbytes))
    assert wg_offset(3, 5, kbytes) == 3 * 16 + 5 and wg_offset(0, 16, kbytes) == 128
    assert wg_offset(8, 0, kbytes) == 8 * kbytes and wg_offset(9, 17, kbytes) == 8 * kbytes + 128 + 16 + 1


def test_accumulator_store_equals_the_ptx_fragment() -> None:
    for n in (64, 128, 256):
        seen = set()
        for w in range(4):
            for t in range(32):
                for i in range(n // 2):
                    assert wg_c_index(w, t, i) == ptx_wgmma_d(w, t, i)
                    seen.add(wg_c_index(w, t, i))
        assert seen == {(r, c) for r in range(64) for c in range(n)}


@pytest.mark.parametrize(
    "p,shape",
    [(F16F32, (64, 64, 32)), (BF16, (64, 128, 64)), (S8, (64, 64, 64)), (S8, (64, 64, 32)), (F16F16, (64, 64, 64))],
    ids=str,
)
def test_emulated_warpgroup_computes_the_reference(p: Any, shape: Tuple[int, int, int]) -> None:
    m, n, k = shape
    a, b = matrix_inputs(p, m, n, k)
    assert np.array_equal(emulate_wgmma_tile(a, b, ITEMSIZE[p.input], chain=2), 2 * (a @ b))


@pytest.mark.parametrize("p", NO_MMA, ids=lambda p: p.suffix)
@pytest.mark.parametrize("shape", [(64, 64, 32), (64, 256, 64)], ids=str)
def test_emulated_fp8_warpgroup_decodes_the_stored_codes(p: Any, shape: Tuple[int, int, int]) -> None:
    """FP8 as the kernel gets it: A and B written as byte codes (to_storage, the NumPy model of the
    format), laid out and read by the tensor core as bytes, decoded by the model, multiplied: the
    reference exactly. Decoding the codes as the other FP8 format does not give it."""
    m, n, k = shape
    a, b = matrix_inputs(p, m, n, k)
    ca, cb = to_storage(a, p.input), to_storage(b, p.input)
    assert ca.dtype == np.uint8 and ITEMSIZE[p.input] == 1
    got = emulate_wgmma_tile(
        ca.astype(np.int64), cb.astype(np.int64), 1, chain=2, decode=lambda codes: from_storage(codes, p.input)
    )
    assert np.array_equal(got, 2.0 * (a @ b))
    other = "e5m2" if p.input == "e4m3" else "e4m3"
    wrong = emulate_wgmma_tile(
        ca.astype(np.int64), cb.astype(np.int64), 1, decode=lambda codes: from_storage(codes, other)
    )
    assert not np.array_equal(wrong, a @ b)


@pytest.mark.parametrize("p", NO_MMA, ids=lambda p: p.suffix)
def test_fp8_partial_sums_stay_where_a_14_bit_adder_is_exact(p: Any) -> None:
    """Hopper's FP8 tensor cores keep about 14 bits of their sums (module docstring of
    matrix_kernels): every partial sum of the chain stays below 2^11, with dense inputs that every
    format holds exactly."""
    for m, n, k in WGMMA_SHAPES:
        a, b = matrix_inputs(p, m, n, k)
        assert set(np.unique(a)) | set(np.unique(b)) <= {-2, -1, 0, 1, 2}
        worst_partial = ITERS * REPS * np.abs(a @ b).max() + np.abs(a).max() * np.abs(b).max() * k
        assert worst_partial < 2**11 and np.abs(a @ b).max() == 1
        assert np.count_nonzero(a) > a.size // 3 and np.count_nonzero(b) > b.size // 3, "inputs must be dense"


@pytest.mark.parametrize("p", [F16F32, S8, F16F16, E4M3], ids=lambda p: p.suffix)
def test_emulation_catches_swapped_descriptor_offsets(p: Any) -> None:
    a, b = matrix_inputs(p, 64, 64, 64)
    assert not np.array_equal(emulate_wgmma_tile(a, b, ITEMSIZE[p.input], swap_lbo_sbo=True), a @ b)


def test_emulation_catches_a_wrong_layout_or_store() -> None:
    a, b = matrix_inputs(F16F32, 64, 64, 32)

    def k_chunks_apart(row: int, kb: int, kbytes: int) -> int:  # core matrices along K laid out 8 KB apart
        return (row >> 3) * 128 + (kb >> 4) * (kbytes * 8) + (row & 7) * 16 + (kb & 15)

    def row_halves_swapped(w: int, t: int, i: int) -> Tuple[int, int]:  # d[4i+2..3] stored at row t/4, not t/4+8
        r, c = wg_c_index(w, t, i)
        return r ^ 8, c

    assert not np.array_equal(emulate_wgmma_tile(a, b, 2, offset=k_chunks_apart), a @ b)
    assert not np.array_equal(emulate_wgmma_tile(a, b, 2, c_index=row_halves_swapped), a @ b)
