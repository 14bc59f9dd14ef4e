"""What a suite's cases cost, described before they are measured (docs/design/budgets.md, "Time budgets").

A suite knows its cases; :class:`CaseWork` says what each one moves and computes, in the units the
time prediction of a ``--quick`` run (:mod:`apple_roofline.roofline.run.predict`) turns into seconds on
the machine at hand. A suite describes its cases through its registration's ``work``
(:attr:`~.registry.SuiteSpec.work`), from the same planning its ``cases()`` uses, without
allocating anything. ``QUICK_SHRINK_OPTION`` is the context option by which a ``--quick`` run asks
the suites for a smaller grid (:data:`SHRINK_STEPS` says what each step drops).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Tuple

__all__ = ["CaseWork", "QUICK_SHRINK_OPTION", "SHRINK_STEPS", "shrink_level"]

#: ``SuiteContext.options`` key: how many of :data:`SHRINK_STEPS` a ``--quick`` run takes (0: none).
QUICK_SHRINK_OPTION = "quick_shrink"

#: The steps by which a ``--quick`` run predicted to last too long shrinks its grid, in the order
#: they are taken (each suite reads :func:`shrink_level` and applies those that are its own).
SHRINK_STEPS: Tuple[str, ...] = (
    "peak: a quarter of the work items per launch (1 MiB buffers: still compute-bound and "
    "cache-resident; GPUs still run whole waves)",
    "sweep: its buffers at 4x the last-level cache (the smallest working set that still measures "
    "DRAM) where that is below the STREAM array size",
)


def shrink_level(options: Mapping[str, Any]) -> int:
    """The shrink steps a suite context's ``options`` ask for: 0 to ``len(SHRINK_STEPS)``."""
    return max(0, min(len(SHRINK_STEPS), int(options.get(QUICK_SHRINK_OPTION, 0) or 0)))


@dataclass(frozen=True)
class CaseWork:
    """The work of one case of a suite.

    Attributes:
        label: the case in words (``"sweep/vec4 F=64"``).
        launch_bytes: bytes one launch moves through device memory (>= 0).
        launch_flops: FLOPs of one launch (>= 0).
        write_bytes: bytes the host writes before the case (its inputs, its poisoned output).
        check_bytes: bytes of output the host reads to validate it.
        min_launch_s: seconds a launch lasts at least (a suite that sizes its launches to a
            duration, as the hierarchy does); 0: none.
        series: cases of one adaptive series share it (the sweep's kernel); "" for none.
        shrink_to_s: > 0: once the previous case of its series ran below half the bandwidth of the
            series' first case, a launch of this one lasts about this long (the sweep's working set
            shrinks once compute-bound); 0: never shrunk.
    """

    label: str
    launch_bytes: float
    launch_flops: float = 0.0
    write_bytes: float = 0.0
    check_bytes: float = 0.0
    min_launch_s: float = 0.0
    series: str = ""
    shrink_to_s: float = 0.0
