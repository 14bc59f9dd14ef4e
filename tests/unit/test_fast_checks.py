"""The faster validation paths decide as the straightforward computations they replace: the
column extremes over row blocks on threads (tiled_within), the tiles compared in their own dtype
(check_tile_output), the hierarchy's restored-buffer check, the FMA-chain references of several F
from one pass and with fp16 rounded arithmetically, and the poison blocks made once (docs/design/measurement.md,
"Validation"). Each is compared with the plain computation on outputs that pass, that fail by one
element just outside the tolerance, and that hold a NaN, where the threads see several blocks."""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

from apple_roofline.host.cpus import THREADS_ENV
from apple_roofline.suites import blocks
from apple_roofline.suites.base import (
    CHUNK,
    NUMPY_DTYPE,
    check_close,
    check_tiled,
    constant_block,
    pattern,
    poison,
    tiled_within,
    write_tiled,
)
from apple_roofline.suites.chains import chain_input, chain_reference, chain_references
from apple_roofline.suites.fma import FMA_KERNELS, FP16_MAX, round_to_fp16, tolerance
from fill32 import WriteFill32  # tests/, on the path (conftest)


@pytest.fixture
def many_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Row blocks of a few rows and four threads, so that the blocks' results are combined."""
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 8 * 37 * 3)
    monkeypatch.setenv(THREADS_ENV, "4")


def _nudged(value: float, dtype: Any, steps: int) -> float:
    """``value`` in ``dtype`` moved ``steps`` ulps (either way)."""
    x = np.asarray(value, dtype)
    for _ in range(abs(steps)):
        x = np.nextafter(x, np.asarray(np.inf if steps > 0 else -np.inf, dtype))
    return float(x)


@pytest.mark.parametrize("dtype", ["fp16", "fp32", "fp64"])
@pytest.mark.usefixtures("many_blocks")
def test_tiled_within_over_blocks_decides_as_check_close_on_both_sides_of_the_bound(dtype: str) -> None:
    period = 37
    ref = pattern(dtype, -2.0, 2.0, 5, period)
    n = 40 * period + 11  # 14 blocks of 3 rows and a tail
    rtol, atol = tolerance(dtype)
    t = np.dtype(NUMPY_DTYPE[dtype])
    want = np.resize(ref, n)
    decisions = set()
    for i in (4, 20 * period + 5, 39 * period + 36, n - 3):  # first, middle and last block, the tail
        w = float(want[i])
        edge = w + (atol + rtol * abs(w))
        for steps in (-2, -1, 0, 1, 2):  # just inside and just outside the bound
            got = want.copy()
            got[i] = _nudged(edge, t, steps)
            ok = tiled_within(got, ref, rtol, atol)
            assert ok == check_close(got, want, rtol, atol).ok, (i, steps)
            assert check_tiled(got, ref, rtol, atol)[0] == ok
            decisions.add(ok)
        got = want.copy()
        got[i] = np.nan
        assert not tiled_within(got, ref, rtol, atol)
    assert decisions == {True, False}  # the nudges crossed the bound
    assert tiled_within(want.copy(), ref, rtol, atol)


@pytest.mark.usefixtures("many_blocks")
def test_check_tiled_message_is_unchanged_by_the_blocks() -> None:
    ref = np.arange(1, 38, dtype=np.float32)
    got = np.resize(ref, 37 * 30)
    got[[5, 700]] = -1.0
    ok, msg = check_tiled(got, ref, 1e-6, 0.0, chunk=37 * 10)
    assert not ok and msg.startswith("2 of 1110 elements differ from the NumPy reference; chunk at 0: 1 of 370")


def _tile_output_f64(got: np.ndarray, want: np.ndarray, groups: int) -> bool:
    """check_tile_output's decision as it was made before: every element compared in float64."""
    return bool(np.all(np.asarray(got, np.float64).reshape(groups, want.size) == want.reshape(1, -1)))


@pytest.mark.parametrize("acc", ["float32", "float16", "int32"])
@pytest.mark.usefixtures("many_blocks")
def test_check_tile_output_in_its_own_dtype_decides_as_float64(acc: str) -> None:
    from apple_roofline.suites.matrix.kernels import check_tile_output

    want = np.random.default_rng(1).integers(-300, 300, (4, 8)).astype(np.float64)
    groups = 50
    good = np.resize(want.astype(acc), groups * want.size)
    cases: List[np.ndarray] = [good]
    for i in (3, 25 * 32 + 7, groups * 32 - 1):
        for delta in (1, -1):  # one unit (one ulp for floats) off, either way
            bad = good.copy()
            if acc == "int32":
                bad[i] += delta
            else:
                bad[i] = np.nextafter(bad[i], np.asarray(np.inf * delta, acc))
            cases.append(bad)
        if acc == "int32":
            poisoned = good.copy()
            poisoned[i] = np.iinfo(np.int32).min
            cases.append(poisoned)
        else:
            nan = good.copy()
            nan[i] = np.nan
            cases.append(nan)
    for got in cases:
        ok, msg = check_tile_output(got, want, groups)
        assert ok == _tile_output_f64(got, want, groups)
        assert ok == (got is good)
        assert msg.startswith(f"{groups * 32} elements ({groups} tiles)") if ok else "differ" in msg
    # a reference the accumulator cannot hold exactly fails, as in float64
    odd = want.copy()
    odd[0, 0] = 0.1
    assert check_tile_output(good, odd, groups)[0] is False
    assert not _tile_output_f64(good, odd, groups)


@pytest.mark.usefixtures("many_blocks")
def test_restored_finds_a_changed_word_in_any_block_and_names_the_first() -> None:
    from apple_roofline.suites.base import HostScratch
    from apple_roofline.suites.hierarchy.suite import _restored

    pat = np.random.default_rng(2).integers(0, 1 << 32, 37, dtype=np.uint64).astype(np.uint32)
    count = 37 * 40 + 9

    class Host:  # a host-visible buffer
        def __init__(self, words: np.ndarray) -> None:
            self.words = words

        def view(self, dtype: str) -> np.ndarray:
            return self.words.view(dtype)

    words = np.resize(pat, count)
    assert _restored(Host(words), pat, count, HostScratch()) == (True, "")
    for i in (0, 37 * 20 + 3, count - 1):
        changed = words.copy()
        changed[i] ^= np.uint32(1)
        ok, msg = _restored(Host(changed), pat, count, HostScratch())
        assert not ok and f"at uint32 {i}:" in msg


def _straight_reference(name: str, x: np.ndarray, F: int, dtype: str, a: float = -0.75) -> np.ndarray:
    """The FMA chains as the reference computed them before: one F at a time, every rounding by
    NumPy's conversion to the dtype."""
    from apple_roofline.suites.fma import _fma64

    fk = FMA_KERNELS[name]
    t = NUMPY_DTYPE[dtype]

    def r(v: np.ndarray) -> np.ndarray:
        return v.astype(t).astype(np.float64)

    def fma(p: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
        return _fma64(p, q, s) if dtype == "fp64" else r(p * q + s)

    x64 = x.astype(t).astype(np.float64)
    if fk.cross:
        c, e, d, f = x64.copy(), x64.copy(), np.full_like(x64, -1.0), np.full_like(x64, -1.0)
        for _ in range(F):
            c = fma(c, d, e)
            d = fma(d, e, f)
            e = fma(e, f, c)
            f = fma(f, c, d)
        out: np.ndarray = r(r(r(c + d) + e) + f).astype(t)
        return out
    a64 = float(np.asarray(a, dtype=t))
    cs = np.stack([r(x64 + k * 0.0625) for k in range(fk.chains)]) if fk.width == 4 else x64[None, :]
    for _ in range(F):
        cs = fma(cs, cs, np.full_like(cs, a64))
    s = cs[0]
    if fk.width == 4:
        for k in range(1, fk.chains):
            s = r(s + cs[k])
    out = s.astype(t)
    return out


def _same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    return got.dtype == want.dtype and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("name", sorted(FMA_KERNELS))
@pytest.mark.parametrize("dtype", ["fp16", "fp32", "fp64"])
def test_references_of_several_F_from_one_pass_are_the_per_F_ones_bit_for_bit(name: str, dtype: str) -> None:
    x = chain_input(dtype)[:257]
    Fs = [0, 1, 3, 16, 40]
    refs: Dict[int, np.ndarray] = FMA_KERNELS[name].references(x, [40, 3, 16, 0, 1, 3], dtype)
    assert sorted(refs) == Fs
    for F in Fs:
        assert _same_bits(refs[F], _straight_reference(name, x, F, dtype)), F
        assert _same_bits(FMA_KERNELS[name].reference(x, F, dtype), refs[F])
    with pytest.raises(ValueError, match="non-negative"):
        FMA_KERNELS[name].references(x, [-1], dtype)


def test_the_runs_references_are_the_per_F_ones_bit_for_bit() -> None:
    """The peak's and the sweep's references at their F (a quick run's), over the whole input period."""
    from apple_roofline.suites.peak.suite import PEAK_F, PEAK_VARIANTS
    from apple_roofline.suites.sweep.suite import SWEEP_KERNELS, sweep_F

    for dtype, name in PEAK_VARIANTS:
        got = chain_reference(FMA_KERNELS[name], PEAK_F, dtype)()
        assert _same_bits(got, _straight_reference(name, chain_input(dtype), PEAK_F, dtype)), (dtype, name)
    for _, fk in SWEEP_KERNELS:
        refs = chain_references(fk, sweep_F(True), "fp32")
        for F in sweep_F(True):
            assert _same_bits(refs[F](), _straight_reference(fk.name, chain_input("fp32"), F, "fp32")), (fk.name, F)


def test_round_to_fp16_is_numpys_conversion_bit_for_bit() -> None:
    """Every finite fp16 value, every midpoint between neighbours (ties to even) and the float64
    values either side of it, the subnormal range, overflow, zeros of both signs, NaN and inf."""
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    h = np.sort(h[np.isfinite(h)])
    mids = (h[:-1] + h[1:]) / 2
    rng = np.random.default_rng(4)
    wide = rng.standard_normal(20000) * np.exp2(rng.uniform(-40, 20, 20000))
    special = np.array([0.0, -0.0, 2.0**-25, -(2.0**-25), 3 * 2.0**-25, 5e-324, FP16_MAX, 65519.99, 65520.0, -65520.0])
    special = np.concatenate([special, [1e300, np.inf, -np.inf, np.nan]])
    for v in (h, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf), wide, special):
        with np.errstate(over="ignore"):
            want = v.astype(np.float16).astype(np.float64)
        got = round_to_fp16(v)
        same = (got.view(np.int64) == want.view(np.int64)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), v[~same][:5]


class _Recorder(WriteFill32):
    """A buffer that keeps what is written to it."""

    def __init__(self, nbytes: int) -> None:
        self.mem = np.zeros(nbytes, np.uint8)
        self.writes = 0

    def write(self, array: np.ndarray, offset: int = 0) -> None:
        self.mem[offset : offset + array.nbytes] = np.ascontiguousarray(array).view(np.uint8)
        self.writes += 1


@pytest.mark.parametrize("dtype", ["fp16", "fp32", "fp64"])
def test_host_writes_set_nan_over_exactly_count_elements_from_one_kept_block(dtype: str) -> None:
    """The host path of a constant fill (``fill_constant`` where no 32-bit word repeats to the
    value): one kept, read-only block written over ``count`` elements in pieces, nothing beyond."""
    t = np.dtype(NUMPY_DTYPE[dtype])
    count = CHUNK + 5
    buf = _Recorder((count + 3) * t.itemsize)
    write_tiled(buf, constant_block(t.name, float("nan")), count)
    values = buf.mem.view(t)
    assert np.isnan(values[:count]).all() and not values[count:].any()
    assert buf.writes == 2
    block = constant_block(t.name, float("nan"))
    assert block is constant_block(t.name, float("nan")) and not block.flags.writeable
    assert constant_block("int32", -(2.0**31))[0] == np.iinfo(np.int32).min
    poisoned = _Recorder((count + 3) * t.itemsize)  # poison: the same NaN, through fill32 where a word repeats
    poison(poisoned, dtype, count)
    got = poisoned.mem.view(t)
    assert np.isnan(got[:count]).all() and not got[count:].any()


def test_exact_gemm_checks_sharing_a_memo_give_the_memo_less_verdicts_and_messages() -> None:
    """The fp32, tf32 and tiled ladders check one pair of inputs at each N <= EXACT_CHECK_MAX_N:
    A·B, |A|·|B| and the TF32 signature products are kept in the pair's memo, with the same
    verdicts and messages as computing them for every check."""
    from apple_roofline.suites.gemm.checks import check_gemm
    from apple_roofline.suites.gemm.inputs import gemm_inputs
    from apple_roofline.suites.gemm.precisions import round_tf32

    a, b, _, _ = gemm_inputs("fp32", 64, np.random.default_rng(64))
    right = a @ b
    tf32 = round_tf32(a) @ round_tf32(b)
    off = right.copy()
    off[5, 7] = np.nextafter(off[5, 7] * np.float32(1 + 2e-4), np.float32(np.inf))
    nan = right.copy()
    nan[63, 0] = np.nan
    memo: Dict[Any, Any] = {}
    seen = set()
    for c, dtype in [(right, "fp32"), (tf32, "tf32"), (tf32, "fp32"), (off, "fp32"), (nan, "tf32"), (right, "fp32")]:
        want = check_gemm(a, b, c, dtype)
        assert check_gemm(a, b, c, dtype, memo=memo) == want, dtype
        seen.add(want[0])
    assert seen == {True, False} and memo  # both verdicts met, and the memo was used
