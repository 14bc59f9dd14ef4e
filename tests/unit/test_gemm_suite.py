"""The gemm suite without a device: its kernel table and counting, and its validation, fed with
device results simulated in NumPy (correct ones must pass, corrupted ones fail) for every precision,
on both paths (elementwise up to EXACT_CHECK_MAX_N, Freivalds above); the cases it plans on a
fake CPU backend (only sgemm and dgemm, as before) and a fake CUDA backend (all six); and the inputs
drawn once for the ladders that take the same ones (fp32, tf32, tiled), with their checks' memo."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import pytest

from apple_roofline.study.records import Measurement
from apple_roofline.suites.base import ITEMSIZE, NUMPY_DTYPE, SuiteContext
from apple_roofline.suites.gemm import checks as gemm_checks
from apple_roofline.suites.gemm import inputs as gemm_operands
from apple_roofline.suites.gemm.checks import check_gemm
from apple_roofline.suites.gemm.inputs import gemm_inputs, input_kind
from apple_roofline.suites.gemm.precisions import (
    GEMM_DTYPES,
    GEMM_PRECISIONS,
    TILED_GEMM,
    bf16_bits,
    bf16_values,
    gemm_bytes,
    gemm_flops,
    gemm_kernel_def,
    round_bf16,
    round_tf32,
)
from apple_roofline.suites.gemm.reuse import SharedDraws
from apple_roofline.suites.gemm.suite import GemmSuite
from fill32 import WriteFill32  # tests/, on the path (conftest)

DTYPES = list(GEMM_PRECISIONS)
F32 = np.float32

# --- simulated devices -------------------------------------------------------------------------


def device_result(dtype: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What a correct library returns, as values (bf16 decoded to float32, int8 -> int32)."""
    if dtype == "fp64":
        # a blocked order (4 panels of K), unlike NumPy's reference
        k = a.shape[1]
        return sum(
            (a[:, s : s + k // 4] @ b[s : s + k // 4] for s in range(0, k, k // 4)), np.zeros((a.shape[0], b.shape[1]))
        )
    if dtype == "fp32":
        return a @ b  # float32 BLAS: FP32 multiplies and adds
    if dtype == "tf32":
        return round_tf32(a) @ round_tf32(b)  # inputs rounded to TF32, FP32 accumulate
    if dtype == "fp16":
        return (a.astype(F32) @ b.astype(F32)).astype(np.float16)  # FP32 accumulate, rounded once
    if dtype == "bf16":
        return round_bf16(a @ b)
    # exact int32 result (float64 BLAS is exact for int8 products at these K, and far faster)
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.int32)


def to_format(dtype: str, x: np.ndarray) -> np.ndarray:
    """Values rounded to the output format of ``dtype``."""
    out = GEMM_PRECISIONS[dtype].out_dtype
    if out == "bf16":
        return round_bf16(x)
    return np.rint(x).astype(np.int32) if out == "int32" else x.astype(NUMPY_DTYPE[out])


def inputs(dtype: str, n: int) -> Tuple[np.ndarray, np.ndarray]:
    a, b, _, _ = gemm_inputs(dtype, n, np.random.default_rng(n))
    return a, b


@pytest.fixture(params=["exact", "freivalds"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test on the elementwise path (N = 64 <= EXACT_CHECK_MAX_N) and on Freivalds' (the
    threshold lowered to 32, so N = 64 takes it)."""
    if request.param == "freivalds":
        monkeypatch.setattr(gemm_checks, "EXACT_CHECK_MAX_N", 32)
    return str(request.param)


# --- table and counting ------------------------------------------------------------------------


def test_kernel_table() -> None:
    assert list(GEMM_DTYPES) == ["fp32", "fp64", "tf32", "fp16", "bf16", "int8"]
    assert GEMM_DTYPES == {
        "fp32": ("sgemm", "GEMM FP32"),
        "fp64": ("dgemm", "GEMM FP64"),
        "tf32": ("tf32gemm", "GEMM TF32"),
        "fp16": ("hgemm", "GEMM FP16"),
        "bf16": ("bf16gemm", "GEMM BF16"),
        "int8": ("i8gemm", "GEMM INT8"),
    }
    for dtype, (name, cclass) in GEMM_DTYPES.items():
        k = gemm_kernel_def(dtype)
        assert (k.suite, k.name, k.dtype, k.ceiling_class, k.ceiling_kind) == ("gemm", name, dtype, cclass, "compute")
        assert k.sources["cuda"] == ("cublas", name)
        cpu = {"fp32": "blas", "fp64": "blas", "fp16": "bnns"}.get(dtype)
        assert k.sources.get("cpu") == ((cpu, name) if cpu else None)
        assert k.sources.get("metal") == (("mps", name) if dtype in ("fp32", "fp16") else None)
    tiled = TILED_GEMM
    assert (tiled.name, tiled.dtype, tiled.ceiling_class) == ("sgemm_tiled16", "fp32", None)
    assert tiled.sources == {
        "metal": ("gemm.metal", "gemm_tiled16_f32"),
        "cuda": ("gemm.cu", "gemm_tiled16_f32"),
        "wgpu": ("gemm.wgsl", "gemm_tiled16_f32"),
    }
    assert all(c["BLOCK"] == 256 for c in tiled.constants.values())
    assert tiled.constants["wgpu"] == {"BLOCK": 256, "AR_RUNTIME_CHECKS": 0}  # built trusted: every access guarded


def test_counting() -> None:
    assert gemm_flops(16, 32, 8) == 2 * 16 * 32 * 8
    m, n, k = 16, 32, 8
    per_elem = {"fp64": (8, 8), "fp32": (4, 4), "tf32": (4, 4), "fp16": (2, 2), "bf16": (2, 2), "int8": (1, 4)}
    for dtype, (i, o) in per_elem.items():
        assert gemm_bytes(m, n, k, dtype) == (m * k + k * n) * i + m * n * o, dtype
    assert gemm_bytes(1024, 1024, 1024, "fp32") == 3 * 1024 * 1024 * 4  # as before for the CPU's two
    assert gemm_bytes(1024, 1024, 1024, "fp64") == 3 * 1024 * 1024 * 8
    with pytest.raises(KeyError):
        gemm_bytes(4, 4, 4, "fp8")


def test_reduced_precision_helpers() -> None:
    x = np.array([1.0, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-10 - 2**-23, -(1 + 2**-10 - 2**-23), 0.1], F32)
    # TF32: ties to even (1 + 2^-11 -> 1, 1 + 3·2^-11 -> 1 + 2^-9), or toward zero
    np.testing.assert_array_equal(round_tf32(x)[:5], np.array([1, 1, 1 + 2**-9, 1 + 2**-10, -(1 + 2**-10)], F32))
    np.testing.assert_array_equal(round_tf32(x, "zero")[:5], np.array([1, 1, 1 + 2**-10, 1, -1], F32))
    assert np.all(round_tf32(x).view(np.uint32) & 0x1FFF == 0)
    with pytest.raises(ValueError, match="rounding mode"):
        round_tf32(x, "up")
    # bf16: 8 significant bits, round to nearest even; bit patterns round-trip
    np.testing.assert_array_equal(
        round_bf16(np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-7], F32)), np.array([1, 1 + 2**-6, 1 + 2**-7], F32)
    )
    r = round_bf16(x)
    np.testing.assert_array_equal(bf16_values(bf16_bits(r)), r)
    assert bf16_bits(np.array([1.0, -2.0], F32)).tolist() == [0x3F80, 0xC000]


def test_inputs_per_precision() -> None:
    for dtype in DTYPES:
        a, b, a_st, b_st = gemm_inputs(dtype, 32, np.random.default_rng(32))
        p = GEMM_PRECISIONS[dtype]
        assert a.shape == b.shape == (32, 32)
        assert a_st.dtype == np.dtype(NUMPY_DTYPE[p.in_dtype]) == b_st.dtype, dtype
        if dtype == "bf16":
            assert a.dtype == F32 and np.all(a.view(np.uint32) & 0xFFFF == 0)  # exact in bf16
            np.testing.assert_array_equal(bf16_values(a_st), a)
        elif dtype == "int8":
            assert a.min() >= -127 and a.max() <= 127 and len(np.unique(a)) > 100
            assert b_st.flags.c_contiguous and np.array_equal(b_st, b.T)  # written N×K, as the backend takes B
        else:
            assert a is a_st and np.all(np.abs(a) <= 1)
        if dtype == "tf32":  # full fp32 values: the library's rounding to TF32 must matter
            assert np.any(round_tf32(a) != a)
    # the CPU's inputs are the draws they always were
    a, b, _, _ = gemm_inputs("fp32", 16, np.random.default_rng(16))
    rng = np.random.default_rng(16)
    np.testing.assert_array_equal(a, rng.uniform(-1.0, 1.0, (16, 16)).astype(F32))
    np.testing.assert_array_equal(b, rng.uniform(-1.0, 1.0, (16, 16)).astype(F32))


# --- validation: correct results pass, corrupted ones fail --------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_correct_result_passes(dtype: str, path: str) -> None:
    a, b = inputs(dtype, 64)
    ok, msg = check_gemm(a, b, device_result(dtype, a, b), dtype)
    assert ok, msg
    assert ("Freivalds" in msg) == (path == "freivalds")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [16, 48, 256])
def test_correct_result_passes_at_other_sizes(dtype: str, n: int) -> None:
    a, b = inputs(dtype, n)
    ok, msg = check_gemm(a, b, device_result(dtype, a, b), dtype)
    assert ok, msg


@pytest.mark.parametrize("dtype", ["fp32", "fp64", "fp16", "bf16", "int8"])
def test_correct_result_passes_above_the_exact_size(dtype: str) -> None:
    """Freivalds at a real size (no threshold patched)."""
    n = gemm_checks.EXACT_CHECK_MAX_N * 2
    a, b = inputs(dtype, n)
    ok, msg = check_gemm(a, b, device_result(dtype, a, b), dtype)
    assert ok and "Freivalds" in msg, msg


@pytest.mark.parametrize("mode", ["nearest", "zero"])
def test_tf32_passes_with_either_input_conversion(mode: str, path: str) -> None:
    a, b = inputs("tf32", 64)
    ok, msg = check_gemm(a, b, round_tf32(a, mode) @ round_tf32(b, mode), "tf32")
    assert ok, msg


def test_fp16_output_underflow_is_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An element of C in fp16's subnormal range (spacing 2^-24) has an absolute rounding error
    that no relative term covers: η_out = 2^-25 does."""
    a = np.zeros((16, 16), np.float16)
    b = np.zeros((16, 16), np.float16)
    a[0, 0] = b[0, 0] = np.float16(1.5 * 2.0**-12)  # product 2.25·2^-24 -> 2·2^-24 (error 2^-26)
    c = (a.astype(F32) @ b.astype(F32)).astype(np.float16)
    assert float(c[0, 0]) == 2.0**-23
    ok, msg = check_gemm(a, b, c, "fp16")
    assert ok, msg
    monkeypatch.setitem(GEMM_PRECISIONS, "fp16", dataclasses.replace(GEMM_PRECISIONS["fp16"], out_eta=0.0))
    assert not check_gemm(a, b, c, "fp16")[0]


def _corrupt_element(dtype: str, c: np.ndarray, delta: float) -> np.ndarray:
    c = c.copy()
    i, j = c.shape[0] // 3, c.shape[1] // 5
    c[i, j] = to_format(dtype, np.array([float(c[i, j]) + delta]))[0]
    return c


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_wrong_element_fails(dtype: str, path: str) -> None:
    """Elementwise, one element off by 0.5 (int8: by 1) fails. Freivalds catches an element whose
    error exceeds about λ·√N times its own bound: at N = 64 that is ~1 for bf16, so use 4."""
    a, b = inputs(dtype, 64)
    c = device_result(dtype, a, b)
    delta = 1.0 if dtype == "int8" else (0.5 if path == "exact" else 4.0)
    bad = _corrupt_element(dtype, c, delta)
    assert np.count_nonzero(bad != c) == 1
    ok, msg = check_gemm(a, b, bad, dtype)
    assert not ok, msg


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fault", ["transposed A", "transposed B", "B·A", "one tile zero"])
def test_wrong_products_fail(dtype: str, fault: str, path: str) -> None:
    a, b = inputs(dtype, 64)
    if fault == "transposed A":
        c = device_result(dtype, a.T.copy(), b)
    elif fault == "transposed B":
        c = device_result(dtype, a, b.T.copy())
    elif fault == "B·A":
        c = device_result(dtype, b, a)
    else:  # a 16×16 tile never computed
        c = device_result(dtype, a, b).copy()
        c[16:32, 32:48] = 0
    ok, msg = check_gemm(a, b, c, dtype)
    assert not ok, msg


@pytest.mark.parametrize("dtype", DTYPES)
def test_unwritten_output_fails(dtype: str, path: str) -> None:
    """C still holding the suite's poison: NaN (bf16: its bit pattern), int32: -2^31."""
    a, b = inputs(dtype, 64)
    c = device_result(dtype, a, b).copy()
    out = GEMM_PRECISIONS[dtype].out_dtype
    poison: Any = {
        "bf16": bf16_values(np.array([gemm_checks._BF16_NAN], np.uint16))[0],
        "int32": gemm_checks._INT32_POISON,
    }.get(out, np.nan)
    c[-1, -3:] = poison
    ok, msg = check_gemm(a, b, c, dtype)
    assert not ok
    assert ("not finite" in msg) if out != "int32" else ("outside" in msg)


@pytest.mark.parametrize("mode", ["nearest", "zero"])
@pytest.mark.parametrize("n", [16, 256, 1024])
def test_tf32_used_for_fp32_fails(n: int, mode: str) -> None:
    """An "fp32" GEMM computed with inputs rounded to TF32 (10-bit mantissas) fails: at N = 256 on
    the elementwise path, at 1024 on Freivalds' (the bound alone cannot tell from N ≈ 512 on: the
    TF32 signature does)."""
    a, b = inputs("fp32", n)
    c = round_tf32(a, mode) @ round_tf32(b, mode)
    ok, msg = check_gemm(a, b, c, "fp32")
    assert not ok, msg
    if n == 1024:
        assert "TF32" in msg and "Freivalds" in msg
    # and a true FP32 product of the same inputs passes (the signature scores ~0)
    ok, msg = check_gemm(a, b, a @ b, "fp32")
    assert ok, msg


def test_tf32_signature_alone_at_large_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the bound alone, a TF32 result passes as FP32 at N = 1024 (its error is ~0.2 of the
    bound); the signature is what fails it."""
    a, b = inputs("fp32", 1024)
    c = round_tf32(a) @ round_tf32(b)
    monkeypatch.setattr(gemm_checks, "TF32_SIGNATURE_MAX", np.inf)
    assert check_gemm(a, b, c, "fp32")[0]
    monkeypatch.undo()
    assert not check_gemm(a, b, c, "fp32")[0]


def _accumulate_low(dtype: str, a: np.ndarray, b: np.ndarray, chunk: int) -> np.ndarray:
    """A GEMM that keeps its running sum in the output format: FP32 products over ``chunk`` terms of
    K (a tensor-core MMA step), the running sum rounded to fp16/bf16 after each."""
    a32, b32 = a.astype(F32), b.astype(F32)
    acc = np.zeros((a.shape[0], b.shape[1]), F32)
    for s in range(0, a.shape[1], chunk):
        acc = to_format(dtype, acc + a32[:, s : s + chunk] @ b32[s : s + chunk]).astype(F32)
    return to_format(dtype, acc)


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("n,chunk", [(64, 1), (64, 16), (256, 16), (512, 16)])
def test_low_precision_accumulation_fails_elementwise(dtype: str, n: int, chunk: int) -> None:
    """An fp16/bf16 GEMM accumulated in fp16/bf16 (per term, or per 16-term MMA step) is caught on
    the elementwise path, N <= 512: its error is ~K·u_out·|C|-sized where the bound allows u_out·|C|."""
    a, b = inputs(dtype, n)
    ok, msg = check_gemm(a, b, _accumulate_low(dtype, a, b, chunk), dtype)
    assert not ok, msg
    assert "partial sums were rounded" in msg


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_low_precision_accumulation_passes_freivalds(dtype: str) -> None:
    """A limit, not a wish: above EXACT_CHECK_MAX_N the Freivalds bound (worst-case 2K·eps32·|A||B|
    per element, summed over a row with Hoeffding's λ·√N) is ~10× larger than the error of
    accumulating in fp16 per 16-term MMA step, so that case passes at N = 1024 (and larger). Only
    the elementwise sizes (16 … 512, measured first on every ladder) catch it."""
    n = 2 * gemm_checks.EXACT_CHECK_MAX_N
    a, b = inputs(dtype, n)
    ok, msg = check_gemm(a, b, _accumulate_low(dtype, a, b, 16), dtype)
    assert ok and "Freivalds" in msg, msg


def test_freivalds_catches_a_transposed_operand_at_large_n() -> None:
    """The Hoeffding row bound keeps Freivalds' test sharp at large N: a transposed A fails by ~30×
    the bound at N = 2048 (and, measured once, by 4.8× at N = 8192, where a worst-case row bound,
    Σ_j of the element bounds, would have passed it at 0.67 of itself)."""
    a, b = inputs("fp32", 2048)
    ok, msg = check_gemm(a, b, a.T.copy() @ b, "fp32")
    assert not ok and "Freivalds" in msg
    worst = float(msg.split(" by ")[1].split("×")[0])
    assert worst > 10, msg


@pytest.mark.parametrize("accumulate", ["float64", "int64"])
def test_int8_freivalds_is_exact(accumulate: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the exact size, int8 C·x must equal A·(B·x) exactly: off by one in one element fails,
    whether the products run in float64 BLAS (exact: every partial sum an integer below 2^53) or,
    where the vectors' bound would be too small for that, in int64."""
    monkeypatch.setattr(gemm_checks, "EXACT_CHECK_MAX_N", 8)
    if accumulate == "int64":
        monkeypatch.setattr(gemm_checks, "INT8_FREIVALDS_MIN_XMAX", 2**60)
    a, b = inputs("int8", 16)
    c = device_result("int8", a, b)
    assert check_gemm(a, b, c, "int8")[0]
    assert check_gemm(a, b, c.astype(np.int64), "int8")[0]
    assert not b.flags.c_contiguous  # B as drawn: a view of the N×K array written to the device
    assert check_gemm(a, np.ascontiguousarray(b), c, "int8")[0]  # B's rows, not its columns, in blocks
    assert not check_gemm(a, np.ascontiguousarray(b.T), c, "int8")[0]
    for i in range(16):
        bad = c.copy()
        bad[i, (3 * i) % 16] -= 1
        assert not check_gemm(a, b, bad, "int8")[0]
    # wrapped int32 (e.g. an int8 accumulator) would be out of range
    wrapped = c.copy()
    wrapped[0, 0] = 2**31 - 1
    ok, msg = check_gemm(a, b, wrapped, "int8")
    assert not ok and "outside" in msg


def test_failure_messages_name_the_bound() -> None:
    a, b = inputs("tf32", 16)
    c = a.T.copy() @ b
    ok, msg = check_gemm(a, b, c, "tf32")
    assert not ok and "(2·K·2^-23 + 2·2^-10 + 2^-20)·|A||B|" in msg and "got" in msg
    a, b = inputs("fp16", 16)
    ok, msg = check_gemm(a, b, device_result("fp16", a, b), "fp16")
    assert ok and "2^-10·|C| + 2^-25" in msg


# --- the suite on fake backends ----------------------------------------------------------------


class FakeBuffer(WriteFill32):
    """Host memory with the Buffer API; ``host_visible`` False makes view() raise (as on a GPU)."""

    def __init__(self, nbytes: int, host_visible: bool) -> None:
        self.mem = np.zeros(nbytes, np.uint8)
        self.nbytes = nbytes
        self.host_visible = host_visible

    def write(self, array: np.ndarray, offset: int = 0) -> None:
        raw = np.ascontiguousarray(array).view(np.uint8).ravel()
        self.mem[offset : offset + raw.size] = raw

    def read(self, dtype: str, count: int = -1, offset: int = 0) -> np.ndarray:
        out: np.ndarray = self.mem[offset:].view(dtype)
        return (out if count < 0 else out[:count]).copy()

    def read_into(self, array: np.ndarray, offset: int = 0) -> None:
        array.view(np.uint8).ravel()[:] = self.mem[offset : offset + array.nbytes]

    def view(self, dtype: str) -> np.ndarray:
        if not self.host_visible:
            raise ValueError("not host-visible")
        out: np.ndarray = self.mem.view(dtype)
        return out


class FakeKernel:
    """A GEMM computing C from A and B as the library would (device_result), in the buffers."""

    def __init__(self, dtype: str, m: int, n: int, k: int, fault: Optional[Callable[[np.ndarray], np.ndarray]]) -> None:
        self.dtype, self.m, self.n, self.k, self.fault = dtype, m, n, k, fault

    def time(self, args: List[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True) -> List[float]:
        p = GEMM_PRECISIONS[self.dtype]
        A, B, C = args
        assert A.nbytes == self.m * self.k * ITEMSIZE[p.in_dtype]
        assert C.nbytes == self.m * self.n * ITEMSIZE[p.out_dtype]
        a = A.read(NUMPY_DTYPE[p.in_dtype], self.m * self.k).reshape(self.m, self.k)
        if p.b_transposed:  # the backend contract: int8 B arrives N×K (transposed)
            b = B.read(NUMPY_DTYPE[p.in_dtype], self.k * self.n).reshape(self.n, self.k).T
        else:
            b = B.read(NUMPY_DTYPE[p.in_dtype], self.k * self.n).reshape(self.k, self.n)
        if p.in_dtype == "bf16":
            a, b = bf16_values(a), bf16_values(b)
        c = device_result(self.dtype, a, b)
        if self.fault is not None:
            c = self.fault(c)
        C.write(bf16_bits(c) if p.out_dtype == "bf16" else np.ascontiguousarray(c))
        return [1e-6] * reps


class FakeTiledKernel:
    """The tiled comparison kernel: args (A, B, C, N), N·N work items, fp32 accumulation."""

    def __init__(self, entry: str, constants: Dict[str, Any]) -> None:
        assert entry == "gemm_tiled16_f32" and constants == {"BLOCK": 256}

    def time(self, args: List[Any], work_items: int, batch: int = 1, reps: int = 1, clock: bool = True) -> List[float]:
        A, B, C, n = args
        assert work_items == n * n and n % 16 == 0
        a = A.read("float32", n * n).reshape(n, n)
        b = B.read("float32", n * n).reshape(n, n)
        C.write(np.ascontiguousarray(a @ b, dtype=np.float32))
        return [1e-6] * reps


class Unsupported(Exception):
    pass


class FakeBackend:
    def __init__(
        self, name: str, precisions: Tuple[str, ...], fault: Optional[Callable[[np.ndarray], np.ndarray]] = None
    ) -> None:
        self.name, self.precisions, self.fault = name, precisions, fault
        self.gemm_calls: List[Tuple[str, int]] = []
        self.allocs: List[int] = []

    def alloc(self, nbytes: int) -> FakeBuffer:
        self.allocs.append(nbytes)
        return FakeBuffer(nbytes, host_visible=self.name == "cpu")

    def gemm(self, dtype: str, m: int, n: int, k: int) -> FakeKernel:
        self.gemm_calls.append((dtype, m))
        if dtype not in self.precisions:
            raise Unsupported(f"no {dtype} GEMM")
        return FakeKernel(dtype, m, n, k, self.fault)

    def compile(self, source: str, entry: str, constants: Dict[str, Any]) -> FakeTiledKernel:
        assert source.startswith("//") and entry in source  # the shader's text, not its file name
        self.gemm_calls.append(("compile", 0))
        return FakeTiledKernel(entry, constants)


def _ctx(backend: FakeBackend, mem: int = 0, budget: float = 1e-12) -> SuiteContext:
    info: Dict[str, Any] = {"backend": backend.name, "memory_bytes": mem}
    return SuiteContext(backend, backend.name, info, True, 1 << 16, {"gemm_max_launch_s": budget})


def _drive(suite: GemmSuite, seconds: float = 1e-6) -> List[Tuple[str, str, int, bool, str]]:
    """Run every case like the runner does (skipping unsupported ones), recording each."""
    seen = []
    for case in suite.cases():
        k = case.kernel
        try:
            kernel = case.make_kernel()
        except Unsupported:
            seen.append((k.name, k.dtype, case.params["m"], False, "unsupported"))
            continue
        kernel.time(case.args, case.work_items, 1, 1)
        ok, msg = case.check()
        suite.record(
            Measurement(
                suite="gemm",
                kernel=k.name,
                dtype=k.dtype,
                params=case.params,
                flops=case.flops,
                bytes=case.bytes,
                samples_s=(seconds,),
                valid=ok,
            )
        )
        seen.append((k.name, k.dtype, case.params["m"], ok, msg))
    return seen


def test_cpu_backend_gets_blas_and_bnns_only() -> None:
    """CPU: BLAS sgemm and dgemm, and BNNS hgemm (unsupported off macOS: recorded as skipped)."""
    backend = FakeBackend("cpu", ("fp32", "fp64"))
    suite = GemmSuite(_ctx(backend))
    assert suite.total() == 30
    seen = _drive(suite, seconds=1.0)  # over budget: one size per precision
    assert [(s[0], s[1], s[2], s[4] == "unsupported") for s in seen] == [
        ("sgemm", "fp32", 16, False),
        ("dgemm", "fp64", 16, False),
        ("hgemm", "fp16", 16, True),
    ]
    assert all(s[3] for s in seen if s[4] != "unsupported"), seen
    assert [c[0] for c in backend.gemm_calls] == ["fp32", "fp64", "fp16"]  # never asked for another precision
    assert backend.allocs == [16 * 16 * 4] * 3 + [16 * 16 * 8] * 3 + [16 * 16 * 2] * 3


def test_metal_backend_gets_mps_and_the_tiled_kernel() -> None:
    backend = FakeBackend("metal", ("fp32", "fp16"))
    suite = GemmSuite(_ctx(backend, budget=1.0))
    assert suite.total() == 30
    seen = _drive(suite, seconds=1.0)  # over budget: one size each
    assert [(s[0], s[1], s[2]) for s in seen] == [
        ("sgemm", "fp32", 16),
        ("hgemm", "fp16", 16),
        ("sgemm_tiled16", "fp32", 16),
    ]
    assert all(s[3] for s in seen), seen
    assert backend.gemm_calls == [("fp32", 16), ("fp16", 16), ("compile", 0)]


def test_cpu_ladder_and_counts_unchanged() -> None:
    backend = FakeBackend("cpu", ("fp32", "fp64"))
    suite = GemmSuite(_ctx(backend, budget=1.0))
    cases = []
    for case in suite.cases():
        cases.append((case.kernel.name, case.params, case.flops, case.bytes, case.work_items))
        if case.params["m"] < 64:
            suite.record(
                Measurement(
                    suite="gemm",
                    kernel=case.kernel.name,
                    dtype=case.kernel.dtype,
                    params=case.params,
                    flops=case.flops,
                    bytes=case.bytes,
                    samples_s=(1e-6,),
                    valid=True,
                )
            )
    assert [(c[0], c[1]["m"]) for c in cases] == [
        ("sgemm", 16),
        ("sgemm", 32),
        ("sgemm", 64),
        ("dgemm", 16),
        ("dgemm", 32),
        ("dgemm", 64),
        ("hgemm", 16),
        ("hgemm", 32),
        ("hgemm", 64),
    ]
    for name, params, flops, nbytes, work_items in cases:
        n = params["m"]
        assert params == {"m": n, "n": n, "k": n} and work_items == 1 and flops == 2 * n**3
        assert nbytes == 3 * n * n * {"sgemm": 4, "dgemm": 8, "hgemm": 2}[name]


def test_cuda_backend_measures_all_six_and_validates() -> None:
    backend = FakeBackend("cuda", tuple(DTYPES))
    suite = GemmSuite(_ctx(backend))
    assert suite.total() == 70  # six precisions and the tiled kernel
    seen = _drive(suite, seconds=1.0)
    assert [(s[0], s[1], s[2]) for s in seen] == [(GEMM_DTYPES[d][0], d, 16) for d in DTYPES] + [
        ("sgemm_tiled16", "fp32", 16)
    ]
    assert all(s[3] for s in seen), seen
    sizes = {d: (ITEMSIZE[GEMM_PRECISIONS[d].in_dtype], ITEMSIZE[GEMM_PRECISIONS[d].out_dtype]) for d in DTYPES}
    assert sizes == {"fp32": (4, 4), "fp64": (8, 8), "tf32": (4, 4), "fp16": (2, 2), "bf16": (2, 2), "int8": (1, 4)}
    assert backend.allocs == [256 * s for d in DTYPES for s in (sizes[d][0], sizes[d][0], sizes[d][1])] + [1024] * 3


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_unwritten_or_wrong_output_is_invalid(dtype: str) -> None:
    """Through the suite's own buffers: a kernel that writes nothing leaves the poison, which fails;
    one that writes a transposed product fails."""
    backend = FakeBackend("cuda", tuple(DTYPES))
    case = next(c for c in GemmSuite(_ctx(backend)).cases() if c.kernel.dtype == dtype)
    ok, msg = case.check()  # nothing launched: C holds the poison
    assert not ok, msg
    backend.fault = lambda c: c.T.copy()
    case.make_kernel().time(case.args, 1, 1, 1)
    assert not case.check()[0]
    backend.fault = None
    case.make_kernel().time(case.args, 1, 1, 1)
    ok, msg = case.check()
    assert ok, msg


def test_unsupported_precision_is_skipped_and_the_ladder_moves_on() -> None:
    backend = FakeBackend("cuda", ("fp32", "fp64", "fp16", "int8"))  # no tf32, bf16 on this device
    seen = _drive(GemmSuite(_ctx(backend, budget=1.0)), seconds=1.0)
    assert [(s[1], s[2], s[4] == "unsupported") for s in seen] == [
        ("fp32", 16, False),
        ("fp64", 16, False),
        ("tf32", 16, True),
        ("fp16", 16, False),
        ("bf16", 16, True),
        ("int8", 16, False),
        ("fp32", 16, False),
    ]  # the last: the tiled kernel


def test_memory_cap_uses_each_precisions_sizes() -> None:
    """Device memory must hold 4× the three matrices, at their own element sizes: 6·N² bytes for
    fp16, bf16 and int8 (1 + 1 + 4), 12·N² for fp32 and tf32, 24·N² for fp64."""
    mem = 4 * gemm_bytes(128, 128, 128, "fp16")
    assert mem == 4 * gemm_bytes(128, 128, 128, "int8") == 4 * 6 * 128**2
    backend = FakeBackend("cuda", tuple(DTYPES))
    seen = _drive(GemmSuite(_ctx(backend, mem=mem, budget=1.0)))
    assert all(s[3] for s in seen), seen
    top = {d: max(s[2] for s in seen if s[1] == d) for d in DTYPES}
    assert top == {"fp32": 64, "tf32": 64, "fp64": 64, "fp16": 128, "bf16": 128, "int8": 128}
    seen = _drive(GemmSuite(_ctx(FakeBackend("cuda", tuple(DTYPES)), mem=mem - 1, budget=1.0)))
    top = {d: max(s[2] for s in seen if s[1] == d) for d in DTYPES}
    assert top == {"fp32": 64, "tf32": 64, "fp64": 32, "fp16": 64, "bf16": 64, "int8": 64}


# --- libraries that do not document their FP16 accumulator (MPS, BNNS) ---------------------------


@pytest.mark.parametrize("n,chunk", [(64, 1), (256, 1), (512, 16), (1024, 16)])
def test_fp16_accumulation_bound_accepts_fp16_accumulated_products(n: int, chunk: int) -> None:
    """A product accumulated in fp16, term by term (the worst order), is within the norm-wise
    FP16-accumulation tolerance, elementwise (N <= 512) and via Freivalds (N = 1024)."""
    a, b = inputs("fp16", n)
    ok, msg = gemm_checks.check_fp16_accumulation(a, b, _accumulate_low("fp16", a, b, chunk))
    assert ok, msg
    assert "FP16-accumulation tolerance" in msg


@pytest.mark.parametrize("n", [16, 256, 1024])
def test_fp16_accumulation_bound_rejects_wrong_products(n: int) -> None:
    """A transposed operand, an unwritten quarter of C and a zero C all fail the FP16-accumulation
    check: its tolerance (at most 0.18 relative at K = 8192) is far below their errors."""
    a, b = inputs("fp16", n)
    good = device_result("fp16", a, b).astype(F32)
    quarter = good.copy()
    quarter[: n // 4] = 0.0
    for bad in (device_result("fp16", a, b.T), quarter, np.zeros_like(good)):
        ok, msg = gemm_checks.check_fp16_accumulation(a, b, bad.astype(np.float16))
        assert not ok, msg
    nan = good.copy()
    nan[1, 2] = np.nan
    assert not gemm_checks.check_fp16_accumulation(a, b, nan)[0]


class Fp16AccumulatingBackend(FakeBackend):
    """A library that accumulates FP16 GEMM in fp16, term by term."""

    def gemm(self, dtype: str, m: int, n: int, k: int) -> FakeKernel:
        kernel = super().gemm(dtype, m, n, k)
        if dtype == "fp16":
            kernel.fault = None
            kernel_time = kernel.time

            def time(args: List[Any], work_items: int, batch: int = 1, reps: int = 1) -> List[float]:
                out = kernel_time(args, work_items, batch, reps)
                A, B, C = args
                a = A.read("float16", m * k).reshape(m, k)
                b = B.read("float16", k * n).reshape(k, n)
                C.write(np.ascontiguousarray(_accumulate_low("fp16", a, b, 1)))
                return out

            kernel.time = time  # type: ignore[method-assign]
        return kernel


@pytest.mark.parametrize("backend_name,valid", [("metal", True), ("cpu", True), ("cuda", False)])
def test_fp16_accumulation_is_accepted_only_where_the_library_does_not_document_it(
    backend_name: str, valid: bool
) -> None:
    """MPS and BNNS FP16 results that are only FP16-accurate are valid, with a message that says so,
    and the ladder goes on to the next size; the same result from cuBLAS (documented FP32 compute
    type) is invalid, and the ladder stops at it: N = 16 only."""
    backend = Fp16AccumulatingBackend(backend_name, ("fp16",))
    suite = GemmSuite(_ctx(backend, budget=1.0))
    results = {}
    for case in suite.cases():  # N = 16, 32, 64, then over budget
        if case.kernel.dtype != "fp16":
            continue
        n = case.params["m"]
        case.make_kernel().time(case.args, case.work_items, 1, 1)
        results[n] = case.check()
        suite.record(
            Measurement(
                suite="gemm",
                kernel=case.kernel.name,
                dtype="fp16",
                params=case.params,
                flops=case.flops,
                bytes=case.bytes,
                samples_s=(1e-6 if n < 64 else 1.0,),
                valid=results[n][0],
            )
        )
    assert sorted(results) == ([16, 32, 64] if valid else [16])
    ok, msg = results[max(results)]
    assert ok is valid, msg
    if valid:
        assert "accumulates this FP16 GEMM in FP16" in msg and "FP16-accumulation tolerance" in msg
    else:  # judged against the FP32-accumulation bound cuBLAS documents, with no FP16 fallback tried
        assert "partial sums were rounded" in msg and "FP16-accumulat" not in msg


def test_unified_memory_gpu_also_measures_the_cpu_library_gemm() -> None:
    """On a GPU that shares the host's memory (Apple silicon) the suite also times the CPU's library
    GEMMs (Accelerate/BNNS: the AMX units) on the CPU backend, as cpu_<kernel> with "CPU GEMM"
    ceiling classes; a discrete GPU (no unified_memory) does not."""
    gpu = FakeBackend("metal", ("fp32", "fp16"))
    host = FakeBackend("cpu", ("fp32", "fp64"))
    info: Dict[str, Any] = {"backend": "metal", "memory_bytes": 0, "unified_memory": True}
    suite = GemmSuite(
        SuiteContext(gpu, "metal", info, True, 1 << 16, {"gemm_max_launch_s": 1e-12, "host_backend": host})
    )
    assert suite.total() == 60
    cases = []
    for case in suite.cases():
        cases.append(case)
        try:
            case.make_kernel().time(case.args, case.work_items, 1, 1)
        except Unsupported:
            continue
        ok, msg = case.check()
        assert ok, msg
        suite.record(
            Measurement(
                suite="gemm",
                kernel=case.kernel.name,
                dtype=case.kernel.dtype,
                params=case.params,
                flops=case.flops,
                bytes=case.bytes,
                samples_s=(1.0,),
                valid=ok,
                ceiling_class=case.kernel.ceiling_class,
                ceiling_kind=case.kernel.ceiling_kind,
            )
        )
    assert [(c.kernel.name, c.kernel.ceiling_class) for c in cases] == [
        ("sgemm", "GEMM FP32"),
        ("hgemm", "GEMM FP16"),
        ("sgemm_tiled16", None),
        ("cpu_sgemm", "CPU GEMM FP32"),
        ("cpu_dgemm", "CPU GEMM FP64"),
        ("cpu_hgemm", "CPU GEMM FP16"),
    ]
    assert gpu.gemm_calls == [("fp32", 16), ("fp16", 16), ("compile", 0)]
    assert host.gemm_calls == [("fp32", 16), ("fp64", 16), ("fp16", 16)]
    info["unified_memory"] = False
    suite = GemmSuite(
        SuiteContext(FakeBackend("cuda", ("fp32",)), "cuda", info, True, 1 << 16, {"gemm_max_launch_s": 1e-12})
    )
    assert not any(c.kernel.name.startswith("cpu_") for c in suite.cases())


# --- inputs drawn once for the ladders that take the same ones ------------------------------------


def test_shared_draws_keep_only_what_a_later_ladder_takes() -> None:
    drawn: List[Tuple[str, int]] = []

    def draw(kind: str, n: int) -> object:
        drawn.append((kind, n))
        return object()

    shared = SharedDraws(draw, ["fp32", "fp64", "fp32", "fp32"])
    shared.start("fp32")  # two fp32 ladders still to come: keep
    first = [shared.get("fp32", n) for n in (16, 32)]
    shared.end("fp32")
    assert shared.held() == 2
    shared.start("fp64")  # no later fp64 ladder: handed out, not kept
    shared.get("fp64", 16)
    shared.end("fp64")
    assert shared.held() == 2 and drawn == [("fp32", 16), ("fp32", 32), ("fp64", 16)]
    shared.start("fp32")
    assert shared.get("fp32", 16) is first[0] and shared.get("fp32", 64) is not None
    shared.end("fp32")
    assert shared.held() == 3  # one fp32 ladder to come
    shared.start("fp32")  # the last: takes its sizes out, and its end releases the rest
    assert shared.get("fp32", 32) is first[1] and shared.held() == 2
    shared.end("fp32")
    assert shared.held() == 0 and shared.draws == len(drawn) == 4


def test_input_kinds() -> None:
    assert {d: input_kind(d) for d in DTYPES} == {
        "fp32": "fp32",
        "fp64": "fp64",
        "tf32": "fp32",  # the same fp32 storage: the library rounds
        "fp16": "fp16",
        "bf16": "bf16",
        "int8": "int8",
    }


def test_fp32_tf32_and_tiled_ladders_share_inputs_and_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a CUDA backend the fp32, tf32 and tiled ladders take one draw of each size's inputs (the
    same read-only arrays), the tf32 and tiled checks reuse the fp32 check's Freivalds reference,
    every product still validates, and nothing is kept once the tiled ladder (the last fp32 one)
    ends."""
    monkeypatch.setattr(gemm_checks, "EXACT_CHECK_MAX_N", 16)  # N = 32 and 64 take Freivalds' path
    draws: List[Tuple[str, int]] = []
    real_inputs, real_reference, real_check = gemm_operands.gemm_inputs, gemm_checks._reference, gemm_checks.check_gemm

    def counted_inputs(dtype: str, n: int, rng: np.random.Generator, uniform: Any = None) -> Any:
        draws.append((dtype, n))
        return real_inputs(dtype, n, rng, uniform)

    references: List[Tuple[int, Tuple[str, ...]]] = []

    def counted_reference(a: np.ndarray, b: np.ndarray, x: np.ndarray, modes: Tuple[str, ...]) -> Any:
        references.append((a.shape[0], modes))
        return real_reference(a, b, x, modes)

    checked: Dict[Tuple[str, int], int] = {}

    def seen_check(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: str, **kw: Any) -> Tuple[bool, str]:
        assert not a.flags.writeable and not b.flags.writeable
        checked[dtype, a.shape[0]] = id(a)
        return real_check(a, b, c, dtype, **kw)

    monkeypatch.setattr(gemm_operands, "gemm_inputs", counted_inputs)
    monkeypatch.setattr(gemm_checks, "_reference", counted_reference)
    monkeypatch.setattr(gemm_checks, "check_gemm", seen_check)
    mem = 4 * gemm_bytes(64, 64, 64, "fp32")  # every fp32 ladder ends at 64
    backend = FakeBackend("cuda", tuple(DTYPES))
    suite = GemmSuite(_ctx(backend, mem=mem, budget=1.0))
    held: List[Tuple[str, int]] = []
    seen = []
    for case in suite.cases():
        if case.kernel.dtype in ("fp32", "tf32"):
            held.append((case.kernel.name, suite.inputs.held()))
        case.make_kernel().time(case.args, case.work_items, 1, 1)
        ok, msg = case.check()
        seen.append((case.kernel.name, case.params["m"], ok, msg))
        suite.record(
            Measurement("gemm", case.kernel.name, case.kernel.dtype, case.params, case.flops, case.bytes, (1e-6,), ok)
        )
    assert all(ok for _, _, ok, _ in seen), seen
    fp32 = [(k, n) for k, n, _, _ in seen if k in ("sgemm", "tf32gemm", "sgemm_tiled16")]
    assert fp32 == [(k, n) for k in ("sgemm", "tf32gemm", "sgemm_tiled16") for n in (16, 32, 64)]
    assert [n for d, n in draws if d == "fp32"] == [16, 32, 64]  # once, for three ladders
    assert [n for d, n in draws if d == "fp16"] == [16, 32, 64]  # a ladder of its own: drawn for it
    for n in (16, 32, 64):
        assert checked["fp32", n] == checked["tf32", n], n  # the same arrays
    # the fp32 check computed the reference with its TF32 products; tf32 and the tiled kernel reused
    # it (fp64, fp16 and bf16 have pairs of their own)
    fp32_refs = [r for r in references if r[1]]
    assert fp32_refs == [(32, ("nearest", "zero")), (64, ("nearest", "zero"))]
    assert len(references) - len(fp32_refs) == 1 + 2 + 2  # fp64 at 32; fp16 and bf16 at 32 and 64
    # kept while a later ladder takes them, then taken out by the tiled ladder, one size at a time
    # (nothing else is kept: no other kind has a second ladder)
    assert held == [("sgemm", 1), ("sgemm", 2), ("sgemm", 3), ("tf32gemm", 3), ("tf32gemm", 3), ("tf32gemm", 3)] + [
        ("sgemm_tiled16", 2),
        ("sgemm_tiled16", 1),
        ("sgemm_tiled16", 0),
    ]
    assert suite.inputs.held() == 0


def test_a_suite_cut_short_releases_its_inputs() -> None:
    backend = FakeBackend("cuda", ("fp32", "tf32"))
    suite = GemmSuite(_ctx(backend, budget=1.0))
    cases = suite.cases()
    next(cases)  # sgemm at 16: kept for tf32 and the tiled kernel
    assert suite.inputs.held() == 1
    cases.close()  # the runner stops asking (a budget cut, an interrupt)
    assert suite.inputs.held() == 0


@pytest.mark.parametrize("first", ["fp32", "tf32"])
def test_a_shared_freivalds_reference_gives_the_same_verdicts(first: str) -> None:
    """A memo filled by one check serves the next exactly: the same messages for correct products,
    and wrong ones still fail (a TF32 product as fp32, whichever precision filled the memo first;
    a transposed product)."""
    n = 2 * gemm_checks.EXACT_CHECK_MAX_N
    a, b = inputs("fp32", n)
    memo: Dict[Any, Any] = {}
    tf32_product = round_tf32(a) @ round_tf32(b)
    check_gemm(a, b, device_result(first, a, b), first, memo=memo)
    assert len(memo) == 1
    for dtype in ("fp32", "tf32"):
        c = device_result(dtype, a, b)
        assert check_gemm(a, b, c, dtype, memo=memo) == check_gemm(a, b, c, dtype)
        assert check_gemm(a, b, c.T.copy(), dtype, memo=memo) == check_gemm(a, b, c.T.copy(), dtype)
        assert not check_gemm(a, b, c.T.copy(), dtype, memo=memo)[0]
    ok, msg = check_gemm(a, b, tf32_product, "fp32", memo=memo)
    assert not ok and "TF32" in msg and (ok, msg) == check_gemm(a, b, tf32_product, "fp32")
    other = inputs("fp32", n // 2)  # another pair: the memo's entry is not theirs
    c = device_result("fp32", *other)
    assert check_gemm(*other, c, "fp32", memo=memo) == check_gemm(*other, c, "fp32")


# --- one draw of float64 values for every floating-point precision ---------------------------------


@pytest.mark.parametrize("n", [16, 64, 257])
def test_inputs_rounded_from_one_float64_pair_are_the_drawn_ones(n: int) -> None:
    """Every floating-point precision's inputs rounded from uniform_pair64(n) are the arrays drawn
    for it from the generator seeded by n, bit for bit (a draw rounds the same float64 values on
    assignment as a cast does); fp64 shares the pair itself."""
    uniform = gemm_operands.uniform_pair64(n)
    assert not uniform[0].flags.writeable and not uniform[1].flags.writeable
    for dtype in DTYPES:
        if dtype == "int8":
            continue
        drawn = gemm_inputs(dtype, n, np.random.default_rng(n))
        rounded = gemm_inputs(dtype, n, np.random.default_rng(12345), uniform)  # the generator is not used
        for x, y in zip(drawn, rounded):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x.view(np.uint8), y.view(np.uint8))
    assert gemm_inputs("fp64", n, np.random.default_rng(0), uniform)[0] is uniform[0]


def test_the_suite_draws_each_sizes_float64_values_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUDA suite draws the float64 values of each size once for fp32, fp64, tf32, fp16, bf16 and
    the tiled kernel (int8 draws its integers), up to UNIFORM_KEEP_MAX_N, above it per precision;
    the verdicts are those of inputs drawn per precision, and nothing is kept once the cases end."""
    pairs: List[int] = []
    real = gemm_operands.uniform_pair64

    def counted(n: int) -> Any:
        pairs.append(n)
        return real(n)

    mem = 4 * gemm_bytes(64, 64, 64, "fp64")
    before = _drive(GemmSuite(_ctx(FakeBackend("cuda", tuple(DTYPES)), mem=mem, budget=1.0)), seconds=1e-6)
    assert all(s[3] for s in before), before
    monkeypatch.setattr(gemm_operands, "uniform_pair64", counted)
    suite = GemmSuite(_ctx(FakeBackend("cuda", tuple(DTYPES)), mem=mem, budget=1.0))
    assert _drive(suite, seconds=1e-6) == before
    assert sorted(pairs) == sorted(set(pairs)) and set(pairs) == {s[2] for s in before if s[1] != "int8"}
    assert suite.uniform == {}
    pairs.clear()
    monkeypatch.setattr(gemm_operands, "UNIFORM_KEEP_MAX_N", 16)
    assert _drive(GemmSuite(_ctx(FakeBackend("cuda", tuple(DTYPES)), mem=mem, budget=1.0)), seconds=1e-6) == before
    assert pairs == [16]  # larger sizes drawn per precision
