"""Row blocks on a thread pool (suites/blocks.py) and the streamed Freivalds test built on them:
the blocks cover the rows once, in order, and the verdicts do not depend on the block size."""

from __future__ import annotations

import numpy as np
import pytest

from apple_roofline.suites import blocks
from apple_roofline.suites.gemm import check_gemm, gemm_inputs


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
    verdict and the same worst ratio (to rounding of the row sums), for a right and a transposed C."""
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
    assert "Freivalds" in msg1 and msg1.split("worst ")[1][:4] == msg2.split("worst ")[1][:4]
