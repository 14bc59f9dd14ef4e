"""How long a suite's cases take on the machine at hand, predicted before they run (docs/design/budgets.md,
"Time budgets"): each case's work (:class:`~apple_roofline.suites.work.CaseWork`, what its suite
says it moves and computes) against the machine's rates (:class:`Rates`, measured by
:mod:`.probe`) under the measurement policy of the run (:class:`Policy`: warm-up, samples,
re-measurement, as :mod:`apple_roofline.measure` and the runner apply them).

The model, in seconds, for a case whose launch lasts ``t``:

* ``t`` = the longest of its bytes at the device's bandwidth, its FLOPs at the device's FLOP rate,
  its suite's shortest launch and :data:`MIN_LAUNCH_S`; for a case of an adaptive series (the
  sweep), ``t`` is cut to the series' ``shrink_to_s`` once the previous case of the series ran
  under half the bandwidth of its first, as the suite shrinks its working set then, and the case's
  host bytes shrink with it;
* warm-up: ``warmup`` launches, continued to ``max_warmup_s`` at most (the worst case: launches
  that never settle), and never more than 64 launches;
* timed samples: ``reps`` samples of at least ``min_sample_s`` each;
* re-measurement: a noisy case is measured once more; :data:`REMEASURE_SHARE` of the warm-up and
  samples is added for it;
* the host: the bytes it writes (inputs, poison) at its write rate and the bytes it reads to
  validate at its check rate, plus :data:`CASE_OVERHEAD_S` of bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Sequence

from ...suites.work import CaseWork

__all__ = [
    "Rates",
    "Policy",
    "MIN_LAUNCH_S",
    "REMEASURE_SHARE",
    "CASE_OVERHEAD_S",
    "launch_seconds",
    "timing_seconds",
    "case_seconds",
    "suite_seconds",
]

#: The shortest launch the model counts, seconds (a launch's own cost on any backend).
MIN_LAUNCH_S = 20e-6
#: The share of a case's warm-up and samples added for its re-measurement when noisy (the runner
#: measures a noisy case once more; on a loaded 2-vCPU machine about a fifth of the cases were).
REMEASURE_SHARE = 0.25
#: Seconds of host bookkeeping per case (building the case, reading clocks, recording).
CASE_OVERHEAD_S = 0.01
#: A series' case is past the ridge once it runs below this fraction of its first case's bandwidth
#: (the sweep's rule, :mod:`apple_roofline.suites.sweep.suite`).
COMPUTE_BOUND_FRACTION = 0.5


@dataclass(frozen=True)
class Rates:
    """What the machine at hand sustains (:func:`.probe.probe_rates` measures them).

    Attributes:
        device_gbps: GB/s (1e9 bytes per second) of a kernel streaming arrays larger than the caches.
        device_gflops: GFLOP/s of FP32 FMA chains on the device.
        host_write_gbps: GB/s at which the host writes a device buffer (inputs, poison).
        host_check_gbps: GB/s at which the host reads back and validates an output.

    Raises:
        ValueError: a rate that is not a positive, finite number.
    """

    device_gbps: float
    device_gflops: float
    host_write_gbps: float
    host_check_gbps: float

    def __post_init__(self) -> None:
        for name in ("device_gbps", "device_gflops", "host_write_gbps", "host_check_gbps"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 < value < float("inf")):
                raise ValueError(f"{name} must be a positive number of GB/s or GFLOP/s, not {value!r}")


@dataclass(frozen=True)
class Policy:
    """How each case is measured (:func:`apple_roofline.timing.measure.time_kernel`'s arguments as the
    runner passes them): ``reps`` samples of at least ``min_sample_s`` seconds each, after
    ``warmup`` launches continued to at most ``max_warmup_s`` seconds and ``max_warmup_launches``
    launches."""

    reps: int
    max_warmup_s: float
    warmup: int = 3
    min_sample_s: float = 1e-3
    max_warmup_launches: int = 64


def launch_seconds(work: CaseWork, rates: Rates) -> float:
    """Seconds of one launch of ``work`` at ``rates``, before any shrink (module docstring)."""
    return max(
        work.launch_bytes / (rates.device_gbps * 1e9),
        work.launch_flops / (rates.device_gflops * 1e9),
        work.min_launch_s,
        MIN_LAUNCH_S,
    )


def timing_seconds(launch_s: float, policy: Policy) -> float:
    """Seconds of warm-up and timed samples of a kernel whose launch lasts ``launch_s``, with
    :data:`REMEASURE_SHARE` added for a re-measurement."""
    warm = min(
        policy.max_warmup_launches * launch_s,
        max(policy.warmup * launch_s, policy.max_warmup_s + launch_s),
    )
    samples = policy.reps * max(launch_s, policy.min_sample_s)
    return (warm + samples) * (1 + REMEASURE_SHARE)


def case_seconds(work: CaseWork, rates: Rates, policy: Policy, launch_s: float = 0.0) -> float:
    """Predicted seconds of one case: its timing (:func:`timing_seconds`) at ``launch_s`` (0: its
    :func:`launch_seconds`), its host bytes (scaled as its launch is, where ``launch_s`` shortens
    it) and :data:`CASE_OVERHEAD_S`."""
    full = launch_seconds(work, rates)
    t = launch_s if launch_s > 0 else full
    scale = min(1.0, t / full)
    host = work.write_bytes / (rates.host_write_gbps * 1e9) + work.check_bytes / (rates.host_check_gbps * 1e9)
    return timing_seconds(t, policy) + host * scale + CASE_OVERHEAD_S


def suite_seconds(works: Sequence[CaseWork], rates: Rates, policy: Policy) -> float:
    """Predicted seconds of a suite's cases ``works``, in order, with each series' launches shrunk
    once its previous case ran below :data:`COMPUTE_BOUND_FRACTION` of its first case's bandwidth
    (module docstring)."""
    first_gbps: Dict[str, float] = {}
    last_gbps: Dict[str, float] = {}
    total = 0.0
    for w in works:
        full = launch_seconds(w, rates)
        t = full
        if w.series and w.shrink_to_s > 0 and w.series in first_gbps:
            if last_gbps[w.series] < COMPUTE_BOUND_FRACTION * first_gbps[w.series]:
                t = min(t, w.shrink_to_s)
        total += case_seconds(w, rates, policy, t)
        if w.series:
            gbps = w.launch_bytes / full / 1e9  # a shrunk launch moves its bytes in the same proportion
            first_gbps.setdefault(w.series, gbps)
            last_gbps[w.series] = gbps
    return total
