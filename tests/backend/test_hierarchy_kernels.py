"""The hierarchy kernels on every available backend (the CPU always): read and read-modify-write at
working sets that are and are not whole multiples of the lanes (the CPU's last lane then wraps to
word 0), with fewer words than lanes where the kernel allows it, sum over their lanes to the NumPy
reference; rmw leaves its buffer as it found it (docs/design/hierarchy.md, "The memory hierarchy")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apple_roofline.suites.base import SuiteContext
from apple_roofline.suites.hierarchy.suite import (
    HIERARCHY_KERNELS,
    MASK,
    HierarchySuite,
    read_total,
    rmw_total,
    word_sums,
)

_PATTERN = np.random.default_rng(11).integers(0, 1 << 32, 41, dtype=np.uint64).astype(np.uint32)


def _lane_sum(out: np.ndarray) -> np.ndarray:
    total: np.ndarray = (out.reshape(-1, 4).astype(np.uint64).sum(axis=0) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    return total


@pytest.mark.parametrize("n,lanes,passes", [(1000, 3, 2), (1024, 2, 4), (37, 5, 6), (5, 8, 2), (4096, 64, 2)])
def test_hierarchy_kernels_match_numpy(backend: Any, n: int, lanes: int, passes: int) -> None:
    info = dict(backend.info())
    suite = HierarchySuite(SuiteContext(backend, str(info["backend"]), info, True, 0))
    words = np.resize(_PATTERN, 4 * n)
    for hk in HIERARCHY_KERNELS:
        kdef = hk.kernel_def()
        src = suite.source(kdef)
        assert src is not None
        consts = {**suite.constants(kdef), "PASSES": passes}
        t = lanes
        if hk.rmw:  # its lanes own whole slices: n / E lanes of E words
            e = -(-n // lanes)
            t = n // e
            if t * e != n:
                continue
        # at least a word per lane (the CPU checks each buffer against the launch); the kernel reads n
        buf, out = backend.alloc(16 * max(n, t)), backend.alloc(16 * t)
        buf.write(words, 0)
        out.write(np.full(4 * t, 0xA5A5A5A5, np.uint32), 0)
        backend.compile(src[0], src[1], consts).launch([buf, out, n], t)
        backend.synchronize()
        got = _lane_sum(out.read("int32", 4 * t).view(np.uint32))
        if hk.rmw:
            assert np.array_equal(got, rmw_total(word_sums(_PATTERN), word_sums(_PATTERN, MASK), n, passes))
            assert np.array_equal(buf.read("int32", 4 * n).view(np.uint32), words), (
                "rmw did not leave its buffer as it found it"
            )
        else:
            want = read_total(word_sums(_PATTERN), n, t, passes, bool(consts.get("ROTATE", 0)))
            assert np.array_equal(got, want), f"{hk.name} n={n} lanes={t} passes={passes}"
