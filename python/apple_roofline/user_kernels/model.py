"""Your kernels on a measured roofline: the dots, the kernels that cannot be placed, and the set a
file holds (docs/design/model.md, "Your kernels on the roofline").

A :class:`KernelDot` is one kernel at one memory level: its FLOPs, the bytes it moved at that level
and its time, summed over its launches; its intensity and performance follow. Two sources make
them: the embedding API's measurements (:func:`apple_roofline.measure`, saved as a ``kind:
"kernels"`` results file, :mod:`.document`), one DRAM dot each; and an Nsight Compute export
(:mod:`.ncu`), one dot per kernel and level (L1, L2, DRAM). A kernel that cannot be placed is an
:class:`Unplaced` naming the metric it lacks, never dropped.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..roofline.model.roofs import PRECISIONS

__all__ = ["LEVELS", "KernelDot", "Unplaced", "KernelSet"]

#: The memory levels a dot may stand at, innermost first.
LEVELS: Tuple[str, ...] = ("L1", "L2", "DRAM")


@dataclass(frozen=True)
class KernelDot:
    """One kernel at one memory level, over all its launches.

    Attributes:
        kernel: the kernel's name (ncu's demangled ``Kernel Name``, or the measured callable's).
        level: ``"DRAM"``, ``"L2"`` or ``"L1"`` (:data:`LEVELS`).
        flops: floating-point operations (> 0; an FMA is 2, a packed half FMA 4, tensor-pipe
            operations as ncu counts them).
        bytes: bytes moved at ``level`` (> 0).
        seconds: the kernel's time (> 0): the sum of its launches' durations.
        launches: launches summed (>= 1).
        precision: the precision most of the FLOPs were done in (:data:`PRECISIONS`), or None
            when unknown (a callable measured without a dtype).
        work: FLOPs per precision (they sum to ``flops``).
        source: ``"ncu"`` or ``"measure"``.
        metrics: the metrics (or the API call) behind ``flops``, ``bytes`` and ``seconds``.
        pipe: ``"tensor"`` where most FLOPs ran on the matrix units (ncu's tensor pipe),
            ``"fma"`` where most were FP instructions (FADD/FMUL/FFMA ...), None when unknown;
            it chooses between a precision's GEMM and vector roofs
            (:func:`~apple_roofline.roofline.model.roofs.roof_for`).
        working_set: the bytes a measured callable touches (``measure(..., working_set=)``), where
            given: the level it is judged at (:func:`~apple_roofline.roofline.model.binding.judge`); None.
        other_device: the device the kernel ran on where that is not the device of the run it is
            placed on (placed anyway: ``--kernels-any-device``, :meth:`KernelSet.on_other_device`), else None.

    Raises:
        ValueError: a count that is not finite and positive, an unknown level or precision.
    """

    kernel: str
    level: str
    flops: float
    bytes: float
    seconds: float
    launches: int = 1
    precision: Optional[str] = None
    work: Mapping[str, float] = field(default_factory=dict, hash=False)
    source: str = "measure"
    metrics: Tuple[str, ...] = ()
    pipe: Optional[str] = None
    other_device: Optional[str] = None
    working_set: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "work", dict(self.work))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        for key in ("flops", "bytes", "seconds"):
            v = getattr(self, key)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"kernel {self.kernel!r} ({self.level}): {key} must be a finite number > 0, not {v!r}")
        if self.level not in LEVELS:
            raise ValueError(
                f"kernel {self.kernel!r}: level {self.level!r} is not a memory level (valid: {', '.join(LEVELS)})"
            )
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(
                f"kernel {self.kernel!r}: precision {self.precision!r} is unknown (valid: {', '.join(PRECISIONS)})"
            )
        if self.launches < 1:
            raise ValueError(f"kernel {self.kernel!r}: launches must be >= 1, not {self.launches!r}")

    @property
    def intensity(self) -> float:
        """Arithmetic intensity at this level, FLOP/byte."""
        return self.flops / self.bytes

    @property
    def gflops(self) -> float:
        """Achieved GFLOP/s (1e9 FLOP/s)."""
        return self.flops / self.seconds / 1e9

    @property
    def gbps(self) -> float:
        """Achieved GB/s at this level (1e9 B/s)."""
        return self.bytes / self.seconds / 1e9


@dataclass(frozen=True)
class Unplaced:
    """A kernel (or one level of it) that cannot be placed, and why.

    Attributes:
        kernel: the kernel's name.
        reason: one sentence (``"no floating-point operations: ... an integer-only kernel has no FLOPs"``).
        missing: the metrics it lacks (empty where they are present but zero).
        level: the level that cannot be placed, or None for the whole kernel.
        seconds: its time where known (it counts in the time shares), else None.
        launches: launches seen.
    """

    kernel: str
    reason: str
    missing: Tuple[str, ...] = ()
    level: Optional[str] = None
    seconds: Optional[float] = None
    launches: int = 1


@dataclass(frozen=True)
class KernelSet:
    """What one file gives: the dots, the kernels that cannot be placed, and where they came from.

    Attributes:
        dots: the placed dots, kernel by kernel, levels innermost first.
        unplaced: the kernels or levels that cannot be placed.
        source: the file (its path as given).
        kind: ``"ncu"`` (an Nsight Compute export) or ``"measure"`` (a ``kind: "kernels"`` file).
        device: the device the file names, or None.
        total_seconds: the whole file's kernel time (s) the shares are of: kept by
            :meth:`filtered`; None for the set's own (:meth:`kernel_seconds` summed).
    """

    dots: Tuple[KernelDot, ...]
    unplaced: Tuple[Unplaced, ...] = ()
    source: str = ""
    kind: str = "measure"
    device: Optional[str] = None
    total_seconds: Optional[float] = None

    def kernel_seconds(self) -> Dict[str, float]:
        """Each kernel's time (s), placed or not where known, in first-seen order."""
        out: Dict[str, float] = {}
        for d in self.dots:
            out.setdefault(d.kernel, d.seconds)
        for u in self.unplaced:
            if u.seconds is not None:
                out.setdefault(u.kernel, u.seconds)
        return out

    def shares(self) -> Dict[str, float]:
        """Each kernel's share of the file's total kernel time (0 to 1; :attr:`total_seconds`)."""
        seconds = self.kernel_seconds()
        total = self.total_seconds if self.total_seconds is not None else sum(seconds.values())
        return {k: (s / total if total > 0 else 0.0) for k, s in seconds.items()}

    def filtered(self, match: Sequence[str] = (), min_share: float = 0.0) -> "KernelSet":
        """The kernels whose name matches one of ``match`` (a case-insensitive substring, or a glob
        with ``*``, ``?`` or ``[``; every kernel when empty) and whose time share is at least
        ``min_share`` (0 to 1). Shares stay those of the whole file.

        Raises:
            ValueError: ``min_share`` outside 0 to 1.
        """
        if not (0.0 <= min_share <= 1.0):
            raise ValueError(f"min_share {min_share!r} is out of range (valid: 0 to 1)")
        shares = self.shares()

        def keep(kernel: str) -> bool:
            low = kernel.lower()
            named = not match or any(
                fnmatch.fnmatch(low, n.lower()) if any(c in n for c in "*?[") else n.lower() in low for n in match
            )
            return named and shares.get(kernel, 0.0) >= min_share

        return KernelSet(
            tuple(d for d in self.dots if keep(d.kernel)),
            tuple(u for u in self.unplaced if keep(u.kernel) or (u.seconds is None and not match)),
            self.source,
            self.kind,
            self.device,
            sum(self.kernel_seconds().values()) if self.total_seconds is None else self.total_seconds,
        )

    def ran_elsewhere(self, device_name: str) -> bool:
        """Whether the set names a device (not ``"unknown"``) other than ``device_name``: compared
        without case, one name holding the other counting as the same (``"NVIDIA H200"`` and
        ``"NVIDIA H200 (cuda:0)"``)."""
        theirs, ours = (self.device or "").strip().lower(), device_name.strip().lower()
        return bool(theirs) and theirs != "unknown" and theirs not in ours and ours not in theirs

    def on_other_device(self) -> "KernelSet":
        """The set with every dot marked as run on :attr:`device` (:attr:`KernelDot.other_device`),
        for placing them on another device's roofline with that said in every view."""
        dots = tuple(dataclasses.replace(d, other_device=self.device or "another device") for d in self.dots)
        return dataclasses.replace(self, dots=dots)

    def kernels(self) -> List[str]:
        """The kernels named, placed or not, in first-seen order."""
        seen: Dict[str, None] = {}
        for k in [d.kernel for d in self.dots] + [u.kernel for u in self.unplaced]:
            seen.setdefault(k, None)
        return list(seen)
