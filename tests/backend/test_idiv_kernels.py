"""The idiv kernels on every available backend (the CPU always): every kernel, chain lengths and
launch sizes that are and are not whole vector blocks, equal the NumPy reference word for word."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apple_roofline.suites.base import SuiteContext, read
from apple_roofline.suites.build import KernelBuild
from apple_roofline.suites.idiv.kernels import IDIV_DIVISOR, IDIV_KERNELS, IdivKernel, check_exact, idiv_input
from apple_roofline.suites.idiv.suite import IdivSuite, idiv_case


def _ctx(backend: Any) -> SuiteContext:
    info = dict(backend.info())
    return SuiteContext(backend, str(info["backend"]), info, True, 1 << 16)


#: The chain lengths test_idiv_kernels_match_numpy builds each kernel at.
IDIV_F = (1, 3, 256)


@pytest.fixture(scope="module")
def idiv_built(backend: Any, compile_ahead: Any) -> None:
    """The kernels test_idiv_kernels_match_numpy builds (one per kernel and F: 48 NVRTC programs on
    CUDA), compiled ahead on threads."""
    suite = IdivSuite(_ctx(backend))
    bufs = (backend.alloc(4), backend.alloc(4))
    makers = []
    for ik in IDIV_KERNELS:
        kdef = ik.kernel_def()
        src = suite.source(kdef)
        if src is not None:
            build = KernelBuild(src, backend, suite.constants(kdef))
            makers += [idiv_case(ik, F, 1, bufs, build).make_kernel for F in IDIV_F]
    compile_ahead(makers)


@pytest.mark.usefixtures("idiv_built")
@pytest.mark.parametrize("ik", IDIV_KERNELS, ids=lambda k: k.entry)
@pytest.mark.parametrize("F", IDIV_F)
@pytest.mark.parametrize("items", [1, 37, 4096 + 5])
def test_idiv_kernels_match_numpy(backend: Any, ik: IdivKernel, F: int, items: int) -> None:
    suite = IdivSuite(_ctx(backend))
    kdef = ik.kernel_def()
    src = suite.source(kdef)
    assert src is not None
    bufs = (backend.alloc(4 * items), backend.alloc(4 * items))
    case = idiv_case(ik, F, items, bufs, KernelBuild(src, backend, suite.constants(kdef)))
    case.make_kernel().launch(case.args, case.work_items)
    ok, msg = case.check()
    assert ok, f"{ik.entry} F={F} items={items}: {msg}"


def test_idiv_suite_runs_and_validates(backend: Any) -> None:
    """The suite's own cases (quick size), timed as the runner times them, every one valid."""
    cases = 0
    for case in IdivSuite(_ctx(backend)).cases():
        samples = case.make_kernel().time(case.args, case.work_items, 1, 2)
        assert len(samples) == 2 and all(s > 0 for s in samples)
        ok, msg = case.check()
        assert ok, f"{case.kernel.name}/{case.kernel.dtype}: {msg}"
        cases += 1
    assert cases == len(IDIV_KERNELS)


def test_cpu_argument_kernel_with_divisor_zero_writes_nothing(backend: Any) -> None:
    """Below the suite's check: the CPU's argument kernels do not trap on d = 0 (or -1, which
    overflows INT_MIN / d); they leave the output as it was, so validation fails."""
    if dict(backend.info())["backend"] != "cpu":
        pytest.skip("the guard is the CPU kernels'")
    ik = IdivKernel("div", "argument", True)
    n = 100
    bufs = (backend.alloc(4 * n), backend.alloc(4 * n))
    case = idiv_case(ik, 4, n, bufs, KernelBuild(("idiv.cpp", ik.entry), backend))
    kernel = case.make_kernel()
    for bad in (0, -1):
        kernel.launch([bufs[0], bufs[1], bad], n)
        ok, msg = case.check()
        assert not ok and f"{n} of {n} words differ" in msg
    kernel.launch([bufs[0], bufs[1], IDIV_DIVISOR], n)
    assert check_exact(read(bufs[1], "int32", n).view(np.uint32), ik.reference(idiv_input(), 4))[0]
