"""Runs the suites on one device and assembles a :class:`~apple_roofline.results.Run`.

For every case of every requested suite: get the kernel (compile or vendor routine), time it with
the measurement loop of DESIGN.md §5 (measure.py), validate its output against the NumPy
reference, and record a Measurement; kernels the device cannot run are recorded as skipped with the
backend's reason. The measured ceilings come from valid measurements only (roofline.derive_ceilings);
theoretical ones from specs.py.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

try:
    from typing import Protocol
except ImportError:  # pragma: no cover - Python < 3.8
    from typing_extensions import Protocol  # type: ignore[assignment]

from .measure import DEFAULT_REPS, MAX_REPS, time_kernel  # not `from . import measure`: the package exports measure()
from ._version import __version__
from .devices import default_device, open_device
from .results import CONVENTIONS, Measurement, Run, Skipped, ToolInfo
from .roofline import derive_ceilings
from .sizes import format_size
from .stats import CV_WARN
from .suites import SUITES, SuiteContext

__all__ = ["SUITES", "Progress", "RunInterrupted", "parse_suites", "default_array_bytes", "run_roofline"]

MIB = 1 << 20


class Progress(Protocol):
    """Receives progress: one ``start`` per suite, one ``advance`` per case, one ``finish``."""

    def start(self, suite: str, total: int) -> None: ...

    def advance(self, description: str) -> None: ...

    def finish(self, suite: str) -> None: ...


class RunInterrupted(Exception):
    """Raised when the run was interrupted (Ctrl-C); ``partial`` holds what was measured so far,
    with ``complete=False``."""

    def __init__(self, partial: Run) -> None:
        super().__init__("run interrupted")
        self.partial = partial


def parse_suites(text: str) -> Tuple[str, ...]:
    """Parse ``"stream,peak"`` into ``("stream", "peak")`` (order of SUITES, duplicates dropped).

    Raises ValueError naming the unknown suite and the valid names, or when the list is empty.
    """
    names = [s.strip().lower() for s in text.split(",") if s.strip()]
    if not names:
        raise ValueError(f"no suite in '{text}' (valid: {', '.join(SUITES)})")
    for n in names:
        if n not in SUITES:
            raise ValueError(f"unknown suite '{n}' (valid: {', '.join(SUITES)})")
    return tuple(s for s in SUITES if s in names)


def default_array_bytes(info: Mapping[str, Any]) -> int:
    """Default bytes per STREAM array: 256 MiB (the M5 article's size), or 4× the last-level cache
    if that is larger — on Apple silicon the system-level cache (up to 96 MB) is not reported, so
    the floor also covers it — capped so three arrays take at most half the memory."""
    want = max(256 * MIB, 4 * int(info.get("llc_bytes", 0) or 0))
    mem = int(info.get("memory_bytes", 0) or 0)
    if mem:
        want = min(want, mem // 6 // MIB * MIB)
    return max(MIB, want)


def _check_array_bytes(array_bytes: int, info: Mapping[str, Any]) -> None:
    mem = int(info.get("memory_bytes", 0) or 0)
    # Three STREAM arrays plus validation's chunks and the interpreter: half of memory at most.
    limit = (mem // 2) // 3 if mem else None
    if array_bytes < 4096 or (limit is not None and array_bytes > limit):
        hi = f" to {format_size(limit)}" if limit else " or more"
        raise ValueError(
            f"--array-size {format_size(array_bytes)} is out of range for {info.get('name', 'this device')} "
            f"(valid: 4 KiB{hi}: three arrays must fit in half of its {format_size(mem)} memory)"
        )


def _git_revision() -> Optional[str]:
    """The git revision the installed extension was built from (CMake records it), or None."""
    try:
        from ._build_info import GIT_REVISION
    except ImportError:
        return None
    return GIT_REVISION or None


def _host() -> Dict[str, Any]:
    import numpy as np

    return {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "logical_cpus": os.cpu_count(),
    }


def _now() -> str:
    """The local time, ISO 8601 with its UTC offset, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def _run_suite(suite: Any, *, reps: int, max_warmup_s: float, measurements: List[Measurement],
               skipped: List[Skipped], progress: Optional[Progress]) -> None:
    """Measure every case of ``suite``, appending to ``measurements`` and ``skipped``. The suite's
    buffers (held by its cases) are released when this returns, before the next suite allocates."""
    from ._native import _core

    for case in suite.cases():
        k = case.kernel
        label = f"{k.suite}/{k.name}/{k.dtype} {_params_str(case.params)}"
        try:
            kernel = case.make_kernel()
        except _core.UnsupportedError as exc:
            skipped.append(Skipped(k.suite, k.name, k.dtype, str(exc)))
            if progress:
                progress.advance(f"{label}: unsupported")
            continue
        timing = time_kernel(kernel, case.args, case.launch, reps=reps, max_warmup_s=max_warmup_s)
        ok, message = case.check()
        params = dict(case.params)
        timer = str(getattr(kernel, "timer", "") or "")
        if timer:  # how the backend timed the samples, where it has more than one way (Metal)
            params["timer"] = timer
        m = Measurement(
            suite=k.suite, kernel=k.name, dtype=k.dtype, params=params,
            flops=int(case.flops), bytes=int(case.bytes), samples_s=timing.samples_s, valid=ok,
            ceiling_class=k.ceiling_class, ceiling_kind=k.ceiling_kind, batch=timing.batch,
            validation=message,
        )
        measurements.append(m)
        suite.record(m)
        if progress:
            progress.advance(f"{label}: {m.gflops:.1f} GFLOP/s, {m.gbps:.1f} GB/s" + ("" if ok else " INVALID"))


def run_roofline(
    device: Optional[str] = None,
    suites: Optional[Sequence[str]] = None,
    *,
    quick: bool = False,
    reps: int = DEFAULT_REPS,
    array_bytes: Optional[int] = None,
    progress: Optional[Progress] = None,
    command: Sequence[str] = (),
) -> Run:
    """Measure ``device`` ("cpu", "cuda:0", "metal:0"; default: the best available) with ``suites``
    (default: all of stream, sweep, peak, gemm) and return the Run with its ceilings.

    ``array_bytes`` is the size of each STREAM array in bytes (default: default_array_bytes);
    ``quick`` trims the sweep to F = 1, 4 … 1024 and shortens time budgets (under a minute on a
    2-core machine). Raises ValueError for bad options (unknown suite, reps outside 1..10000, an
    array size that does not fit memory), ``_core.BackendError`` subclasses for device failures, and
    RunInterrupted (with the partial Run) on KeyboardInterrupt.
    """
    suite_names = tuple(SUITES) if suites is None else parse_suites(",".join(suites))
    if not 1 <= reps <= MAX_REPS:
        raise ValueError(f"--reps {reps} is out of range (valid: 1 to {MAX_REPS})")
    spec = device or default_device()
    backend = open_device(spec)
    info = dict(backend.info())
    if array_bytes is None:
        array_bytes = default_array_bytes(info)
    _check_array_bytes(array_bytes, info)
    options = {
        "max_launch_s": 0.01 if quick else 0.05,
        "gemm_max_launch_s": 0.03 if quick else 0.25,
    }
    max_warmup_s = 0.05 if quick else 0.5
    ctx = SuiteContext(backend, str(info["backend"]), info, quick, array_bytes, options)
    from .specs import device_theoretical

    device_desc, theoretical = device_theoretical(info)
    created = _now()

    measurements: List[Measurement] = []
    skipped: List[Skipped] = []

    def assemble(complete: bool) -> Run:
        warnings: List[str] = []
        for m in measurements:
            if not m.valid:
                warnings.append(f"{m.label} failed validation: {m.validation}")
            elif m.cv > CV_WARN:
                warnings.append(f"{m.label} {_params_str(m.params)}: CV {m.cv:.1%} > {CV_WARN:.0%} (noisy samples)")
        if any(m.ceiling_class == "Cache bandwidth" for m in measurements):
            warnings.append(
                f"STREAM arrays of {format_size(array_bytes)} are smaller than 4x the last-level cache "
                f"({format_size(int(info.get('llc_bytes', 0) or 0))}): the bandwidth ceiling measures caches, not DRAM"
            )
        if any(m.params.get("shrunk") for m in measurements):
            warnings.append("sweep points marked shrunk ran on a smaller working set once the kernel was compute-bound")
        warnings += _ladder_warnings(measurements)
        return Run(
            finished=_now(),
            tool=ToolInfo("apple_roofline", __version__, _git_revision()),
            created=created,
            host=_host(),
            device={**info, **device_desc, "array_bytes": array_bytes, "quick": quick, "reps": reps},
            command=tuple(command),
            measurements=tuple(measurements),
            ceilings=tuple(derive_ceilings(measurements)) + tuple(theoretical),
            skipped=tuple(skipped),
            warnings=tuple(warnings),
            complete=complete,
            conventions=CONVENTIONS,
        )

    try:
        for name in suite_names:
            suite = SUITES[name](ctx)
            if progress:
                progress.start(name, suite.total())
            _run_suite(suite, reps=reps, max_warmup_s=max_warmup_s, measurements=measurements,
                       skipped=skipped, progress=progress)
            if progress:
                progress.finish(name)
    except KeyboardInterrupt:
        raise RunInterrupted(assemble(False)) from None
    return assemble(True)


def _ladder_warnings(measurements: Sequence[Measurement]) -> List[str]:
    """Flag a GEMM size that ran more than 5x below the rate of the size before it: a larger product
    is never that much slower per FLOP, so the point is disturbed (a noisy machine, BLAS thread
    wake-ups), not a property of the library. The point stays in the run, as measured."""
    out: List[str] = []
    prev: Dict[str, Measurement] = {}
    for m in measurements:
        if m.suite != "gemm" or not m.valid:
            continue
        key = f"{m.kernel}/{m.dtype}"  # each kernel's own ladder (library, tiled, host GEMMs)
        p = prev.get(key)
        if p is not None and m.gflops * 5 < p.gflops:
            out.append(
                f"{m.label} {_params_str(m.params)} ran at {m.gflops:.3g} GFLOP/s, more than 5x below "
                f"{_params_str(p.params)} ({p.gflops:.3g} GFLOP/s): a disturbed measurement, not a ceiling"
            )
        prev[key] = m
    return out


def _params_str(params: Mapping[str, Any]) -> str:
    keys = [k for k in ("F", "m", "n") if k in params]
    return " ".join(f"{k}={params[k]}" for k in keys)
