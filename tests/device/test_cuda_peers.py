"""Device tier, CUDA peers: the REAL CuPy and PyTorch peers of the dispatch-latency study
(:func:`apple_roofline.dispatch.peers.measure_peers`) on ``cuda:0``.

The unit tier runs the peers against fakes; here the libraries launch the kernels on the GPU, so
these tests check what only real hardware can: CuPy compiles ``shaders/cuda/dispatch.cu`` with NVRTC
and launches it, PyTorch's ``add_`` runs, every tiny-kernel count comes back exact (no launch dropped
or run twice), and the samples are positive seconds of a plausible size. A peer that fails is not
an exception but a skip entry, so each test also asserts that its peer was not skipped.

Each test skips, saying why, when its library is not installed or sees no CUDA device.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Dict, List, Tuple

import pytest

from apple_roofline.dispatch import LatencySeries, PeerSkipped
from apple_roofline.dispatch.peers import measure_peers

REPS, LAUNCHES, WARMUP = 50, 20, 10
THROUGHPUT_COUNT = WARMUP + REPS * LAUNCHES  # launches on the tiny buffer in one throughput measure
ROUND_TRIP_COUNT = WARMUP + REPS
TORCH_NULL_SKIP = PeerSkipped("torch", "null kernel: PyTorch has no public API that launches an empty kernel")

Measured = Tuple[List[LatencySeries], List[PeerSkipped]]


def _import(module: str, library: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{library} is not installed ({exc})")
    except Exception as exc:  # noqa: BLE001 - a broken install (missing CUDA libraries ...)
        pytest.skip(f"{library} fails to import ({type(exc).__name__}: {exc})")


@pytest.fixture(scope="module")
def cupy_on_cuda() -> None:
    """Skips unless CuPy is installed and sees a CUDA device."""
    cp = _import("cupy", "CuPy")
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - no driver, no device: CuPy raises its CUDARuntimeError
        pytest.skip(f"CuPy finds no CUDA device ({type(exc).__name__}: {exc})")
    if count < 1:
        pytest.skip("CuPy finds no CUDA device (cupy.cuda.runtime.getDeviceCount() is 0)")


@pytest.fixture(scope="module")
def torch_on_cuda() -> None:
    """Skips unless PyTorch is installed with CUDA and sees a device."""
    torch = _import("torch", "PyTorch")
    if not torch.cuda.is_available():
        pytest.skip(f"PyTorch {torch.__version__} finds no CUDA device (torch.cuda.is_available() is False)")


@pytest.fixture(scope="module")
def measured() -> Measured:
    """Every CUDA peer installed, measured once on cuda:0."""
    return measure_peers("cuda", 0, reps=REPS, launches=LAUNCHES, warmup=WARMUP)


def _series_of(path: str, measured: Measured) -> Dict[Tuple[str, str], LatencySeries]:
    series, skipped = measured
    failures = [s for s in skipped if s.path == path and s != TORCH_NULL_SKIP]
    assert not failures, f"the {path} peer was skipped: {failures}"
    return {(s.kernel, s.measure): s for s in series if s.path == path}


def _check(s: LatencySeries) -> None:
    """A series as the study stores it: valid, host clock, REPS positive samples of a plausible size."""
    assert s.valid, (s.label, s.validation)
    assert s.clock == "host" and s.step == ""
    assert s.launches_per_sample == (LAUNCHES if s.measure == "throughput" else 1)
    assert len(s.samples_s) == REPS
    assert all(t > 0.0 for t in s.samples_s), (s.label, min(s.samples_s))
    # seconds per launch: a launch and a synchronize take more than 10 ns and far less than 10 ms
    assert 1e-8 < s.distribution.p50 < 1e-2, (s.label, s.distribution.p50)
    assert LatencySeries.from_dict(s.to_dict()) == s


def _check_tiny_counts(by_key: Dict[Tuple[str, str], LatencySeries]) -> None:
    assert by_key["tiny", "throughput"].validation == (
        f"all 1024 floats == {THROUGHPUT_COUNT} after {THROUGHPUT_COUNT} launches"
    )
    assert by_key["tiny", "round_trip"].validation == (
        f"all 1024 floats == {ROUND_TRIP_COUNT} after {ROUND_TRIP_COUNT} launches"
    )


def test_cupy_peer(cupy_on_cuda: None, measured: Measured) -> None:
    """CuPy's RawKernel launches of dispatch.cu: both kernels, both measures, exact tiny counts."""
    cupy = _series_of("cupy", measured)
    assert sorted(cupy) == [
        ("null", "round_trip"),
        ("null", "throughput"),
        ("tiny", "round_trip"),
        ("tiny", "throughput"),
    ]
    for s in cupy.values():
        _check(s)
        assert "RawKernel" in s.note and "dispatch.cu" in s.note
    _check_tiny_counts(cupy)


def test_torch_peer(torch_on_cuda: None, measured: Measured) -> None:
    """PyTorch's add_(1.0): the tiny kernel, both measures, exact counts; null reported skipped."""
    torch = _series_of("torch", measured)
    assert sorted(torch) == [("tiny", "round_trip"), ("tiny", "throughput")]
    for s in torch.values():
        _check(s)
        assert "add_(1.0)" in s.note
    _check_tiny_counts(torch)
    assert TORCH_NULL_SKIP in measured[1]


def test_both_peers_in_one_study(cupy_on_cuda: None, torch_on_cuda: None, measured: Measured) -> None:
    """With both installed, the peers run in PEERS order and nothing but torch's null kernel is skipped."""
    series, skipped = measured
    assert skipped == [TORCH_NULL_SKIP]
    assert [s.path for s in series] == ["cupy"] * 4 + ["torch"] * 2
