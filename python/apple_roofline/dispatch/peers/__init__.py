"""Peer libraries in a dispatch-latency study: what one launch costs through CuPy, PyTorch, MLX, PyObjC.

Each peer launches the study's kernels (:mod:`..kernels`: ``null``, one thread and no memory;
``tiny``, one threadgroup/block of 256 threads adding 1.0 to 4 KiB of float32) through its own public
API, timed with the host clock as the ``python`` path is, so the series compare the libraries'
launch paths with the extension's. Two measures per kernel:

* ``throughput``: per sample, ``launches`` launches back to back, then one wait;
  seconds per launch = sample / ``launches`` (``launches_per_sample = launches``);
* ``round_trip``: per sample, one launch and its wait.

Each measure runs ``warmup`` untimed launches (then a wait) before its ``reps`` samples; samples
are :func:`time.perf_counter_ns` differences taken with the garbage collector disabled (as
:mod:`timeit` does; its previous state is restored). The ``tiny`` output is zeroed before each
measure and checked after it: every float must equal the number of launches that measure made
(warm-up included), so a launch that was dropped, or ran twice, fails validation
(docs/design/measurement.md, "Validation").

One module per peer (:mod:`.cupy_peer`, :mod:`.torch_peer`, :mod:`.mlx_peer`, :mod:`.pyobjc_peer`;
what they share is in :mod:`.common`): CuPy and PyTorch on CUDA, MLX on Metal and on the CPU, PyObjC
on Metal (:data:`PEERS`). Every library is optional and imported only inside its module's openers
(``OPENERS``, one per backend): a peer that is not installed, fails to import, finds no device or
raises while being measured becomes a :class:`~apple_roofline.dispatch.model.PeerSkipped` with the
reason, and the other peers still run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Dict, List, Tuple

from ...errors import OptionError, check_int
from ..kernels import KERNEL_SOURCES
from ..model import LatencySeries, PeerSkipped
from . import cupy_peer, mlx_peer, pyobjc_peer, torch_peer
from .common import Opener, PeerUnavailable, measure_kernel

__all__ = ["PEERS", "measure_peers"]

_MODULES = (cupy_peer, torch_peer, mlx_peer, pyobjc_peer)

#: Peer name -> the backends whose devices it drives, in the order the peers are measured.
PEERS: Dict[str, Tuple[str, ...]] = {m.NAME: tuple(m.OPENERS) for m in _MODULES}

_OPENERS: Dict[Tuple[str, str], Opener] = {(m.NAME, b): o for m in _MODULES for b, o in m.OPENERS.items()}


def measure_peers(
    backend: str,
    device_index: int,
    *,
    reps: int,
    launches: int,
    warmup: int,
    progress: Callable[[str], None] | None = None,
) -> Tuple[List[LatencySeries], List[PeerSkipped]]:
    """Measure every peer library of ``backend`` on device ``device_index``.

    For each peer of :data:`PEERS` that drives ``backend`` (in that order), and each kernel
    the peer can express (``null``, ``tiny``): a ``throughput`` series (``reps`` samples of
    ``launches`` back-to-back launches and one wait, in seconds per launch,
    ``launches_per_sample = launches``) and a ``round_trip`` series (``reps`` samples of one
    launch and its wait, seconds), both ``clock="host"``, ``path`` = the peer's name, each after
    ``warmup`` untimed launches. ``tiny`` series are validated (every float equals the launches
    made since the output was zeroed); ``null`` series only record that no error was raised.

    Args:
        backend: ``"cuda"``, ``"metal"`` or ``"cpu"`` (MLX only).
        device_index: the device's index within the backend (``cuda:N``, ``metal:N``; 0 for
            ``cpu``), >= 0.
        reps: samples per series, >= 1.
        launches: launches per ``throughput`` sample, >= 1.
        warmup: untimed launches before each series, >= 0.
        progress: called with a one-line description (``"cupy tiny round_trip"``, or a skip and
            its reason) before each series.

    Returns:
        ``(series, skipped)``: the series measured (valid or not, in peer order) and the peers
        (or kernels) not measured, with reasons: not installed or broken (naming the library), no
        device, or ``"<ExceptionType>: <message>"`` when measuring raised; a peer's series
        measured before such an exception are kept.

    Raises:
        OptionError: unknown ``backend``, or ``device_index``, ``reps``, ``launches`` or
            ``warmup`` not an integer or out of range (nothing is measured). Nothing a peer raises
            propagates except ``KeyboardInterrupt`` and other ``BaseException`` that are not
            ``Exception``.
    """
    if backend not in KERNEL_SOURCES:
        raise OptionError("backend", backend, ", ".join(KERNEL_SOURCES), problem="is not a known backend")
    device_index = check_int(device_index, "device_index", 0)
    reps = check_int(reps, "reps", 1)
    launches = check_int(launches, "launches", 1)
    warmup = check_int(warmup, "warmup", 0)

    series: List[LatencySeries] = []
    skipped: List[PeerSkipped] = []

    def skip(path: str, reason: str) -> None:
        skipped.append(PeerSkipped(path=path, reason=reason))
        if progress:
            progress(f"{path}: skipped, {reason}")

    for path, backends in PEERS.items():
        if backend not in backends:
            continue
        try:
            with _OPENERS[path, backend](device_index) as (kernels, kernel_skips):
                for s in kernel_skips:
                    skip(s.path, s.reason)
                for k in kernels:
                    measure_kernel(path, k, series, reps=reps, launches=launches, warmup=warmup, progress=progress)
        except PeerUnavailable as exc:
            skip(path, str(exc))
        except Exception as exc:  # noqa: BLE001 - one peer's failure must not stop the others
            skip(path, f"{type(exc).__name__}: {exc}")
    return series, skipped
