"""Row blocks on a thread pool (suites/blocks.py) and the streamed Freivalds test built on them:
the blocks cover the rows once, in order, and the verdicts do not depend on the block size."""

from __future__ import annotations

import types
from typing import Any, List, Tuple

import numpy as np
import pytest

from apple_roofline.suites import blocks
from apple_roofline.suites.gemm.checks import check_gemm
from apple_roofline.suites.gemm.inputs import gemm_inputs


@pytest.mark.parametrize("rows,cols", [(0, 5), (1, 1), (7, 3), (1000, 1 << 20), (4096, 8192)])
def test_row_blocks_cover_every_row_once(rows: int, cols: int) -> None:
    got = blocks.row_blocks(rows, cols)
    seen = [i for s in got for i in range(s.start, s.stop)]
    assert seen == list(range(rows))
    assert all(s.stop - s.start >= 1 for s in got)
    assert all((s.stop - s.start) * cols * 8 <= max(blocks.BLOCK_BYTES, cols * 8) for s in got)


def test_row_blocks_refuse_negative_sizes() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        blocks.row_blocks(-1, 3)


def test_map_keeps_row_order_and_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "BLOCK_BYTES", 8 * 10)  # 10 rows of one column per block
    out = blocks.map_row_blocks(lambda s: list(range(s.start, s.stop)), 95, 1)
    assert [i for part in out for i in part] == list(range(95))

    def boom(s: slice) -> int:
        raise RuntimeError(f"block {s.start}")

    with pytest.raises(RuntimeError, match="block"):
        blocks.map_row_blocks(boom, 95, 1)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16", "tf32", "fp64"])
def test_freivalds_verdicts_do_not_depend_on_the_block_size(monkeypatch: pytest.MonkeyPatch, dtype: str) -> None:
    """The same product checked in one block and in 16-row blocks on several threads: the same
    verdicts, for a right and a transposed C. The right product's worst ratio to the bound is a
    rounding-level figure whose digits depend on the BLAS's summation order (and so on the block
    size and the machine): only its place far below the bound is asserted, never its digits."""
    n = 640  # above EXACT_CHECK_MAX_N: Freivalds' path
    a, b, _, _ = gemm_inputs(dtype, n, np.random.default_rng(n))
    c = a.astype(np.float64) @ b.astype(np.float64)
    c = c.astype({"fp64": np.float64, "fp16": np.float16}.get(dtype, np.float32))
    wrong = np.ascontiguousarray(c.T)  # a transposed result
    results = []
    for block_bytes in (1 << 30, 8 * n * 16):
        monkeypatch.setattr(blocks, "BLOCK_BYTES", block_bytes)
        results.append((check_gemm(a, b, c, dtype), check_gemm(a, b, wrong, dtype)))
    (ok1, msg1), (bad1, _) = results[0]
    (ok2, msg2), (bad2, _) = results[1]
    assert ok1 and ok2 and not bad1 and not bad2
    assert "Freivalds" in msg1 and "Freivalds" in msg2
    for msg in (msg1, msg2):
        worst = float(msg.split("worst ")[1].split(" ")[0])
        assert 0.0 <= worst < 0.25, msg  # passed with a wide margin: rounding, not a near miss


def test_prebuild_compiles_each_distinct_kernel_once_and_leaves_errors_to_the_suite() -> None:
    """suites.base.prebuild: every distinct (source, entry, constants) compiled, on several threads,
    duplicates once; a failing build raises nothing here (the suite meets it again and records it)."""
    import threading

    from apple_roofline.suites.base import prebuild

    seen = []
    threads = set()
    lock = threading.Lock()

    class Backend:
        def compile(self, source: str, entry: str, constants: dict) -> None:  # type: ignore[type-arg]
            with lock:
                seen.append((source, entry, tuple(sorted(constants.items()))))
                threads.add(threading.get_ident())
            if entry == "bad":
                raise RuntimeError("does not compile")

    builds = [("a.cu", "k", {"F": f, "BLOCK": 256}) for f in (1, 2, 4, 8)] + [("a.cu", "k", {"BLOCK": 256, "F": 1})]
    prebuild(Backend(), builds + [("a.cu", "bad", {})])
    assert sorted(seen) == sorted({(s, e, tuple(sorted(c.items()))) for s, e, c in builds + [("a.cu", "bad", {})]})
    assert len(seen) == 5
    seen.clear()
    prebuild(Backend(), [("a.cu", "k", {})])  # one build: nothing to gain, left to the suite
    assert seen == []


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_uniform_pair_is_the_serial_draws_bit_for_bit(monkeypatch: pytest.MonkeyPatch, dtype: type) -> None:
    """The GEMM inputs drawn in row blocks on threads equal two serial rng.uniform draws (cast to
    the storage type), and leave the generator where the serial draws leave it."""
    from apple_roofline.suites.gemm.inputs import uniform_pair

    monkeypatch.setattr(blocks, "BLOCK_BYTES", 8 * 100 * 7)  # 7 rows of 100 per block: many blocks
    serial = np.random.default_rng(100)
    want = (serial.uniform(-1.0, 1.0, (100, 100)).astype(dtype), serial.uniform(-1.0, 1.0, (100, 100)).astype(dtype))
    rng = np.random.default_rng(100)
    got = uniform_pair(rng, 100, dtype)
    assert all(np.array_equal(g, w) and g.dtype == np.dtype(dtype) for g, w in zip(got, want))
    assert rng.random() == serial.random()
    # a bit generator without advance() draws serially, to the same values
    mt = np.random.Generator(np.random.MT19937(5))
    got_mt = uniform_pair(mt, 20, dtype)
    ref = np.random.Generator(np.random.MT19937(5))
    assert np.array_equal(
        got_mt[1], (ref.uniform(-1.0, 1.0, (20, 20)), ref.uniform(-1.0, 1.0, (20, 20)))[1].astype(dtype)
    )


def test_reads_reuse_the_scratch_and_copy_into_a_new_array_without_one() -> None:
    from apple_roofline.suites.base import HostScratch, read

    class Device:  # a discrete GPU's buffer: no host view
        def __init__(self, data: np.ndarray) -> None:
            self.data = data
            self.reads = 0

        def view(self, dtype: str) -> np.ndarray:
            raise ValueError("not host-visible")

        def read(self, dtype: str, count: int) -> np.ndarray:
            self.reads += 1
            return self.data.view(dtype)[:count].copy()

        def read_into(self, out: np.ndarray, offset: int = 0) -> None:
            out.view(np.uint8)[:] = self.data.view(np.uint8)[offset : offset + out.nbytes]

    scratch = HostScratch()
    a = Device(np.arange(16, dtype=np.float32))
    first = read(a, "fp32", 8, scratch)
    assert first.tolist() == list(range(8)) and a.reads == 0
    again = read(Device(np.full(16, 7, np.float32)), "fp32", 4, scratch)
    assert again.tolist() == [7.0] * 4 and np.shares_memory(first, again)  # one array, reused
    big = read(Device(np.ones(64, np.float64)), "fp64", 64, scratch)
    assert big.dtype == np.float64 and big.size == 64  # grown to the largest read
    plain = read(a, "fp32", 4)  # no scratch: Buffer.read, a new array
    assert plain.tolist() == [0, 1, 2, 3] and a.reads == 1
    assert not np.shares_memory(plain, big)


def test_a_reserved_scratch_is_grown_ahead_and_read_into_without_growing_again() -> None:
    """HostScratch.reserve grows a scratch that grows ``ahead`` on a thread of its own: a read the
    scratch cannot hold as it is (here the first, into an empty scratch) waits for it and lands in
    the reserved memory, and a read up to the reserved size lands in the same memory (without the
    reservation the small read's memory would not hold the large one). A reservation no larger than
    the scratch, or of a scratch that does not grow ahead, does nothing."""
    from apple_roofline.suites.base import HostScratch

    for reserved in (True, False):
        scratch = HostScratch(ahead=reserved)
        scratch.reserve(1 << 20)
        small = scratch.array("fp32", 10)
        large = scratch.array("fp32", (1 << 20) // 4)
        assert large.size == (1 << 20) // 4 and np.shares_memory(small, large) == reserved
    scratch = HostScratch(ahead=True)
    big = scratch.array("fp32", (1 << 20) // 4)
    scratch.reserve(1 << 10)  # smaller than it is: nothing to do
    assert np.shares_memory(scratch.array("fp32", 16), big)


def test_a_read_the_scratch_holds_does_not_wait_for_a_growth(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a growth is under way (a thread that has not run yet), a read the scratch holds as it is
    takes the memory it has; a larger reservation replaces the growth; a larger read waits for the
    growth under way (joins its thread) and takes its memory."""
    from apple_roofline.suites import base

    made: List["Held"] = []

    class Held:  # a thread that runs its target only when joined
        def __init__(self, target: Any, name: str, daemon: bool) -> None:
            self.target, self.ran = target, False
            made.append(self)

        def start(self) -> None:
            pass

        def is_alive(self) -> bool:
            return not self.ran

        def join(self) -> None:
            self.target()
            self.ran = True

    monkeypatch.setattr(base, "threading", types.SimpleNamespace(Thread=Held))
    scratch = base.HostScratch(ahead=True)
    old = scratch.array("fp32", 1024)
    scratch.reserve(1 << 20)
    (growth,) = made
    assert np.shares_memory(scratch.array("fp32", 16), old) and not growth.ran  # fits: no wait
    scratch.reserve(1 << 22)  # larger than the growth under way: replaces it
    first, larger = made
    grown = scratch.array("fp32", (1 << 20) // 4)
    assert larger.ran and not first.ran and not np.shares_memory(grown, old)
    assert scratch.array("fp32", (1 << 22) // 4).size == (1 << 22) // 4 and np.shares_memory(
        scratch.array("fp32", 16), grown
    )  # the larger growth's memory: the read of its whole size did not grow the scratch again


def test_reads_copy_where_a_buffer_has_no_host_view() -> None:
    from apple_roofline.suites.base import reads_copy

    class Backend:
        def __init__(self, visible: bool) -> None:
            self.visible = visible

        def alloc(self, nbytes: int) -> Any:
            visible = self.visible

            class Buffer:
                def view(self, dtype: str) -> np.ndarray:
                    if not visible:
                        raise ValueError("not host-visible")
                    return np.zeros(nbytes, dtype)

            return Buffer()

    assert reads_copy(Backend(False)) and not reads_copy(Backend(True))


class _Device:
    """A discrete GPU's buffer of ``nbytes``: write() and fill32() (its fills recorded)."""

    def __init__(self, nbytes: int) -> None:
        self.mem = np.zeros(nbytes, np.uint8)
        self.fills: List[Tuple[int, int, int]] = []

    def write(self, a: np.ndarray, offset: int = 0) -> None:
        raw = np.ascontiguousarray(a).view(np.uint8).ravel()
        self.mem[offset : offset + raw.size] = raw

    def fill32(self, value: int, nbytes: int, offset: int = 0) -> None:
        self.fills.append((value, nbytes, offset))
        self.mem[offset : offset + nbytes].view(np.uint32)[:] = value


@pytest.mark.parametrize(
    ("dtype", "value", "count"),
    [
        ("float32", float("nan"), 1001),
        ("float16", float("nan"), 1001),
        ("float64", float("nan"), 7),
        ("uint16", 0x7FC0, 9),
        ("int32", -(2**31), 5),
        ("uint8", 0xA5, 7),
    ],
)
def test_a_constant_fill_sets_every_element_with_or_without_a_device_fill(dtype: str, value: float, count: int) -> None:
    """fill_constant gives the same elements through Buffer.fill32 (a word repeated, the last partial
    word written) as host writes of the constant block do: NaN stays NaN (float64's as another NaN,
    whose 32-bit halves repeat), integers exact; nothing beyond ``count`` is touched."""
    from apple_roofline.suites.base import constant_block, fill_constant, fill_word, write_tiled

    itemsize = np.dtype(dtype).itemsize
    got = {}
    for fill in (True, False):
        buf = _Device(itemsize * (count + 3))
        if fill:
            fill_constant(buf, dtype, value, count)
        else:
            write_tiled(buf, constant_block(dtype, value), count)
        assert bool(buf.fills) == fill
        assert not buf.mem[itemsize * count :].any()
        got[fill] = buf.mem[: itemsize * count].view(dtype)
    for values in got.values():
        if np.isnan(value):
            assert np.isnan(values).all()
        else:
            assert (values == np.array([value]).astype(dtype)).all()
    assert fill_word("float32", float("nan")) == 0x7FC00000 and fill_word("float16", float("nan")) == 0x7E007E00
    assert fill_word("float64", 1.5) is None  # halves differ and not a NaN: host writes


def test_row_blocks_take_a_block_size_of_their_own() -> None:
    """A pass may ask for smaller blocks (blocks.CACHE_BLOCK_BYTES, the GEMM checks'): the same rows in
    order, more blocks, each within the size asked for."""
    rows, cols = 4096, 4096
    small = blocks.row_blocks(rows, cols, blocks.CACHE_BLOCK_BYTES)
    default = blocks.row_blocks(rows, cols)
    assert [r for s in small for r in range(s.start, s.stop)] == list(range(rows))
    assert len(small) == blocks.BLOCK_BYTES // blocks.CACHE_BLOCK_BYTES * len(default)
    assert all((s.stop - s.start) * cols * 8 <= blocks.CACHE_BLOCK_BYTES for s in small)
    assert blocks.map_row_blocks(lambda s: s.stop - s.start, rows, cols, blocks.CACHE_BLOCK_BYTES) == [
        s.stop - s.start for s in small
    ]
