"""The access, dualissue and occupancy kernels on every available backend (the CPU always): every
kernel equals its NumPy reference at launch sizes that are and are not whole vector blocks, and the
suites' own cases validate as the runner times them. The CPU's occupancy suite is one skip."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
import pytest

from apple_roofline.suites.access.kernels import ACCESS_KERNELS, AccessKernel, check_access
from apple_roofline.suites.access.suite import AccessSuite
from apple_roofline.suites.base import SuiteContext, read
from apple_roofline.suites.build import KernelBuild
from apple_roofline.suites.dualissue.kernels import CHAINS, DUAL_KERNELS, DualKernel
from apple_roofline.suites.dualissue.suite import DualIssueSuite, dual_case
from apple_roofline.suites.occupancy.suite import CPU_REASON, OccupancySuite


def _ctx(backend: Any, array_bytes: int = 1 << 20, llc_bytes: int = 0) -> SuiteContext:
    """The suites' context; ``llc_bytes`` (when not 0) caps the last-level cache the device reports, so the
    access suite's cache level (arrays of a quarter of it) is that small: a host CPU's L3 (480 MiB on a
    2-core VM) gave 64 MiB arrays, each case's output checked whole, most of this file's time."""
    info = dict(backend.info())
    if llc_bytes and int(info.get("llc_bytes", 0) or 0) > llc_bytes:
        info["llc_bytes"] = llc_bytes
    return SuiteContext(backend, str(info["backend"]), info, True, array_bytes)


@pytest.mark.parametrize("ak", ACCESS_KERNELS, ids=lambda k: k.entry)
@pytest.mark.parametrize("stride", [1, 4, 32])
def test_access_kernels_match_numpy(backend: Any, ak: AccessKernel, stride: int) -> None:
    suite = AccessSuite(_ctx(backend))
    src = suite.source(ak.kernel_def())
    assert src is not None
    n = 1 << 10
    words = n * ak.width
    inp, out = backend.alloc(4 * words), backend.alloc(4 * words)
    inp.write(np.arange(words, dtype=np.uint32), 0)
    out.write(np.full(words, 0xFFFFFFFF, np.uint32), 0)
    backend.compile(src[0], src[1], suite.constants(ak.kernel_def())).launch([inp, out, stride], n)
    backend.synchronize()
    ok, msg = check_access(read(out, "int32", words).view(np.uint32), n, ak.width, stride)
    assert ok, f"{ak.entry} stride {stride}: {msg}"


#: The chain lengths test_dual_kernels_match_numpy builds each kernel at.
DUAL_F = (2, 64)


@pytest.fixture(scope="module")
def dual_built(backend: Any, compile_ahead: Any) -> None:
    """The kernels test_dual_kernels_match_numpy builds (one per kernel and F), compiled ahead on threads."""
    suite = DualIssueSuite(_ctx(backend))
    nbytes = 4 * max(CHAINS, *(dk.words_out() for dk in DUAL_KERNELS))
    bufs = (backend.alloc(nbytes), backend.alloc(nbytes))
    makers = []
    for dk in DUAL_KERNELS:
        kdef = dk.kernel_def()
        src = suite.source(kdef)
        if src is not None:
            consts = suite.constants(kdef)
            makers += [dual_case(dk, F, 1, bufs, KernelBuild(src, backend, consts), {}, {}).make_kernel for F in DUAL_F]
    compile_ahead(makers)


@pytest.mark.usefixtures("dual_built")
@pytest.mark.parametrize("dk", DUAL_KERNELS, ids=lambda k: k.entry)
@pytest.mark.parametrize("F", DUAL_F)
@pytest.mark.parametrize("items", [37, 4096 + 3])
def test_dual_kernels_match_numpy(backend: Any, dk: DualKernel, F: int, items: int) -> None:
    from apple_roofline._native import _core

    suite = DualIssueSuite(_ctx(backend))
    kdef = dk.kernel_def()
    src = suite.source(kdef)
    assert src is not None
    nbytes = 4 * max(CHAINS, dk.words_out()) * items  # the suite's pair: both of the larger size (the CPU checks both)
    bufs = (backend.alloc(nbytes), backend.alloc(nbytes))
    case = dual_case(dk, F, items, bufs, KernelBuild(src, backend, suite.constants(kdef)), {}, {})
    try:
        kernel = case.make_kernel()
    except _core.UnsupportedError as exc:
        assert "fp16" in dk.kinds, f"{dk.entry} unsupported: {exc}"
        pytest.skip(str(exc))
    kernel.launch(case.args, case.work_items)
    backend.synchronize()
    ok, msg = case.check()
    assert ok, f"{dk.entry} F={F} items={items}: {msg}"
    case.reset()
    assert not case.check()[0], "the poisoned output fails"


@pytest.mark.parametrize("suite_cls", [AccessSuite, DualIssueSuite, OccupancySuite], ids=lambda c: c.name)
def test_rules_suites_run_and_validate(backend: Any, suite_cls: Any) -> None:
    """The suite's own cases, timed as the runner times them: every case it can build valid, every
    other a skip with its reason."""
    from apple_roofline._native import _core

    info = dict(backend.info())
    measured: Dict[str, int] = {"valid": 0, "skipped": 0}
    for case in suite_cls(_ctx(backend, 1 << 22, llc_bytes=1 << 24)).cases():
        try:
            kernel = case.make_kernel()
        except _core.UnsupportedError as exc:
            measured["skipped"] += 1
            if suite_cls is OccupancySuite and info["backend"] == "cpu":
                assert str(exc) == CPU_REASON
            continue
        samples = kernel.time(case.args, case.work_items, 1, 2)
        assert len(samples) == 2 and min(samples) > 0
        ok, msg = case.check()
        assert ok, f"{case.kernel.name} {case.params}: {msg}"
        measured["valid"] += 1
    if suite_cls is OccupancySuite and info["backend"] == "cpu":
        assert measured == {"valid": 0, "skipped": 1}
    else:
        assert measured["valid"] > 0
