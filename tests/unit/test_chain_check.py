"""check_chain: an FMA-chain output that rounds every FMA twice (WGSL allows it; lavapipe does) is valid
where the backend says its fma may round twice, and a chain one iteration short is not, either way."""

from __future__ import annotations

import numpy as np

from apple_roofline.suites.chains import chain_input, check_chain
from apple_roofline.suites.fma import FMA_KERNELS, tolerance


def test_the_twice_rounded_trajectory_passes_only_where_allowed() -> None:
    fk, F = FMA_KERNELS["scalar_indep8"], 1024
    x = np.asarray(chain_input("fp32"))
    fused = fk.reference(x, F, "fp32")
    unfused = fk.references(x, [F], "fp32", fused=False)[F]
    got = np.resize(unfused, 8 * x.size)
    rtol, atol = tolerance("fp32")
    assert not check_chain(got, fused, None, rtol, atol)[0], "the unfused trajectory passes the fused check alone"
    ok, msg = check_chain(got, fused, unfused, rtol, atol)
    assert ok and "unfused" in msg, msg
    short = np.resize(fk.reference(x, F - 1, "fp32"), got.size)
    ok, msg = check_chain(short, fused, unfused, rtol, atol)
    assert not ok and "neither" in msg, msg
