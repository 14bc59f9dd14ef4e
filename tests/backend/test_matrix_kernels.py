"""The matrix suite on every GPU backend here (skips without one; the CPU yields one skip): each case
of a few shapes per precision compiled, launched once and checked exactly against NumPy, and the
skipped shapes carry their reason."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Tuple

import pytest

from apple_roofline.suites.base import SuiteContext
from apple_roofline.suites.matrix.suite import CPU_REASON, MatrixSuite

#: The tiles (M, N, K) test_gpu_tiles_equal_the_reference launches and checks.
TESTED_TILES = {(16, 8, 16), (32, 32, 128), (16, 16, 8), (32, 16, 32), (8, 8, 8)}
Build = Tuple[str, str, Dict[str, Any]]


def _prebuild_only(
    monkeypatch: pytest.MonkeyPatch, keep: Callable[[Dict[str, Any]], bool], more: Callable[[Build], Iterable[Build]]
) -> None:
    """The suite compiles every kernel of an API's sweep on threads before its first case
    (``prebuild``); here it compiles those whose constants ``keep`` and the builds ``more`` adds for
    each of them, the kernels the test launches: the whole sweep (120 mma.sync kernels, and on a Hopper
    GPU 36 wgmma kernels at 2-3 s of NVRTC each) was most of this file's time."""
    import apple_roofline.suites.matrix.suite as matrix_suite
    from apple_roofline.suites.base import prebuild

    def tested(backend: Any, builds: Any) -> None:
        kept = [b for b in builds if keep(b[2])]
        prebuild(backend, kept + [extra for b in kept for extra in more(b)])

    monkeypatch.setattr(matrix_suite, "prebuild", tested)


def _sweep_only_tested_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each API's tile sweep narrowed to :data:`TESTED_TILES`: the suite then builds, compiles (its
    prebuild, and each case's occupancy query) and computes the reference of those tiles only. Every
    case of the whole sweep compiled one kernel for its occupancy even when the test went on to skip
    it (156 NVRTC programs on a Hopper GPU, 110 s of a 206-s GPU tier on an H200)."""
    import dataclasses

    import apple_roofline.suites.matrix.suite as matrix_suite

    narrowed = tuple(
        dataclasses.replace(api, shapes=tuple(s for s in api.shapes if s in TESTED_TILES)) for api in matrix_suite.APIS
    )
    monkeypatch.setattr(matrix_suite, "APIS", narrowed)


def _backend(name: str) -> Any:
    from apple_roofline._native import _core

    try:
        return _core.Backend(name, 0)
    except _core.BackendError as exc:
        pytest.skip(f"no {name} device: {exc}")


def test_cpu_skips_with_the_reason() -> None:
    b = _backend("cpu")
    cases = list(MatrixSuite(SuiteContext(b, "cpu", dict(b.info()), True, 1 << 20)).cases())
    from apple_roofline._native import _core

    assert len(cases) == 1
    with pytest.raises(_core.UnsupportedError, match="no matrix unit"):
        cases[0].make_kernel()
    assert cases[0].check() == (False, CPU_REASON)


@pytest.mark.parametrize("name", ["cuda", "metal"])
def test_gpu_tiles_equal_the_reference(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from apple_roofline._native import _core

    b = _backend(name)
    _sweep_only_tested_tiles(monkeypatch)
    suite = MatrixSuite(SuiteContext(b, name, dict(b.info()), True, 1 << 20))
    ran = skipped = 0
    for case in suite.cases():
        if case.flops == 0:
            with pytest.raises(_core.UnsupportedError):
                case.make_kernel()
            skipped += 1
            continue
        if (case.params["m"], case.params["n"], case.params["k"]) not in TESTED_TILES:
            continue
        try:
            kernel = case.make_kernel()
        except _core.UnsupportedError:
            skipped += 1
            continue
        kernel.time(case.args, case.work_items, 1, 1)
        ok, msg = case.check()
        assert ok, f"{case.kernel.name}/{case.kernel.dtype}: {msg}"
        ran += 1
    assert ran > 0 and skipped > 0


def test_wgmma_tiles_equal_the_reference_and_a_swapped_descriptor_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Hopper GPU: wgmma tiles of N = 64 and 256 equal NumPy's product exactly, and the same
    kernel with the descriptors' two byte offsets swapped (WG_SWAP_LBO_SBO) computes a product the
    check rejects. Elsewhere: skipped with the suite's reason."""
    from apple_roofline.shaders import resolve
    from apple_roofline.suites.matrix.kernels import PRECISIONS
    from apple_roofline.suites.matrix.suite import wgmma_reason

    b = _backend("cuda")
    info = dict(b.info())
    reason = wgmma_reason(info)
    if reason:
        pytest.skip(reason)
    # the tiles below and their swapped twins, compiled on threads (24 NVRTC programs)
    _prebuild_only(
        monkeypatch,
        lambda c: c.get("TM") == 64 and c.get("TN") != 128 and c.get("TK") == 64,
        lambda build: [(build[0], build[1], {**build[2], "WG_SWAP_LBO_SBO": 1})],
    )
    suite = MatrixSuite(SuiteContext(b, "cuda", info, True, 1 << 20))
    ran = 0
    for case in suite.cases():
        if not case.kernel.name.startswith("wgmma_") or case.params["n"] == 128 or case.params["k"] != 64:
            continue
        kernel = case.make_kernel()
        kernel.time(case.args, case.work_items, 1, 1)
        ok, msg = case.check()
        assert ok, f"{case.kernel.name}/{case.kernel.dtype}: {msg}"
        text, entry = resolve(*case.kernel.sources["cuda"])
        swapped = b.compile(text, entry, {**case.kernel.constants["cuda"], "WG_SWAP_LBO_SBO": 1})
        case.reset()
        swapped.time(case.args, case.work_items, 1, 1)
        ok, msg = case.check()
        assert not ok and "differ from the NumPy reference" in msg, f"{case.kernel.name}/{case.kernel.dtype}"
        ran += 1
        if ran == 2 * len(PRECISIONS):
            break  # wgmma is measured first: the mma.sync cases after it are not needed here
    assert ran == 2 * len(PRECISIONS)  # FP16, BF16, INT8 and FP8 (E4M3, E5M2) inputs
