"""The results of a threadgroup-size tuning study (kind ``"tune"``): throughput per block size.

Each timed point is a :class:`~apple_roofline.study.records.Measurement` of a suite's kernel
(stream, sweep, peak, idiv) with its FLOPs and bytes from the kernel table, validated like every
suite's, whose ``params`` add ``block`` (threads per block / threadgroup) and, where the occupancy
calculator knows them (CUDA), ``wave_items``, ``resident_blocks_per_sm`` and
``resident_threads_per_sm``. A size the compiler or the pipeline rejects is a :class:`Rejected`
point with the message. The best size of a kernel is derived on reading, never stored: the valid
point with the highest throughput (GB/s for bandwidth kernels, GFLOP/s otherwise) at its median
time (docs/design/studies.md, "Threadgroup-size tuning").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

from ..errors import OptionError
from ..study.document import Document
from ..study.reader import Reader
from ..study.records import BLOCK_PARAM, Measurement, Skipped, check_repeats, record_mismatch

__all__ = [
    "SCHEMA_VERSION",
    "MAX_BLOCK",
    "Rejected",
    "TuneStudy",
    "rate",
    "rate_unit",
    "candidates",
    "check_blocks",
    "device_block_limit",
    "best_blocks",
]

SCHEMA_VERSION = 1
#: The largest BLOCK the backends accept (core/checks.h: multiples of 32 from 32 to 1024).
MAX_BLOCK = 1024


def rate(m: Measurement) -> float:
    """The throughput a kernel is tuned for at its median time: GB/s for a bandwidth kernel (STREAM),
    GFLOP/s (integer operations for idiv) for every other."""
    return m.gbps if m.ceiling_kind == "bandwidth" else m.gflops


def rate_unit(m: Measurement) -> str:
    """The unit of :func:`rate` for ``m``: ``"GB/s"`` or ``"GFLOP/s"``."""
    return "GB/s" if m.ceiling_kind == "bandwidth" else "GFLOP/s"


def device_block_limit(info: Mapping[str, Any]) -> int:
    """The most threads per block / threadgroup the device allows (``max_threads_per_block`` of a
    CUDA device, ``max_threads_per_threadgroup`` of a Metal one), capped at :data:`MAX_BLOCK`; 0
    when the device states none."""
    limit = int(info.get("max_threads_per_block", 0) or info.get("max_threads_per_threadgroup", 0) or 0)
    return min(limit, MAX_BLOCK) if limit else 0


def candidates(simd: int, limit: int, quick: bool) -> List[int]:
    """The block sizes to try: every multiple of ``simd`` (the SIMD width) up to ``limit``, or with
    ``quick`` the SIMD width times powers of two (32, 64 … 1024 for a width of 32)."""
    if simd <= 0 or limit < simd:
        return []
    if quick:
        out, b = [], simd
        while b <= limit:
            out.append(b)
            b *= 2
        return out
    return list(range(simd, limit + 1, simd))


def check_blocks(values: Sequence[object], simd: int, limit: int) -> List[int]:
    """``values`` as block sizes (sorted, duplicates dropped), each a multiple of ``simd`` from
    ``simd`` to ``limit``.

    Raises:
        OptionError: (option ``block``) no value, a value that is not an integer, not a multiple of
            the SIMD width, or above the limit; the message names the valid range.
    """
    valid = f"multiples of {simd} from {simd} to {limit}"
    if not values:
        raise OptionError("block", "", valid, problem="names no size", shown="''")
    out = set()
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise OptionError("block", v, valid, problem="is not an integer")
        b = int(v)  # type: ignore[call-overload,unused-ignore]
        if b % simd or not simd <= b <= limit:
            problem = "is not a multiple of the SIMD width" if b % simd else "is out of range"
            raise OptionError("block", v, valid, problem=problem)
        out.add(b)
    return sorted(out)


def best_blocks(measurements: Sequence[Measurement]) -> Dict[str, Measurement]:
    """The best valid point of each kernel (``"suite/kernel/dtype"``): the highest :func:`rate`;
    on a tie, the smaller block. Kernels without a valid point have none."""
    best: Dict[str, Measurement] = {}
    for m in measurements:
        if not m.valid or BLOCK_PARAM not in m.params:
            continue
        b = best.get(m.label)
        if b is None or (rate(m), -int(m.params[BLOCK_PARAM])) > (rate(b), -int(b.params[BLOCK_PARAM])):
            best[m.label] = m
    return best


@dataclass(frozen=True)
class Rejected:
    """A block size the compiler or the pipeline rejected for a kernel: an invalid point.

    Attributes:
        suite, kernel, dtype: the kernel.
        block: the size tried (threads per block / threadgroup).
        message: the compiler's or the backend's message, one line.
    """

    suite: str
    kernel: str
    dtype: str
    block: int
    message: str

    @property
    def label(self) -> str:
        """``"suite/kernel/dtype"``."""
        return f"{self.suite}/{self.kernel}/{self.dtype}"

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys suite, kernel, dtype, block, message."""
        return {
            "suite": self.suite,
            "kernel": self.kernel,
            "dtype": self.dtype,
            "block": self.block,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Rejected":
        """Build from :meth:`to_dict` output. Raises :class:`~apple_roofline.study.files.ResultsError`."""
        r = Reader(source)
        d = r.obj(d, where or "rejected")
        return cls(
            suite=r.string(d, "suite", where),
            kernel=r.string(d, "kernel", where),
            dtype=r.string(d, "dtype", where),
            block=r.nonneg_int(d, "block", where, positive=True),
            message=r.string(d, "message", where),
        )


@dataclass(frozen=True)
class TuneStudy(Document):
    """Everything one tuning study measured (the header's fields, then these).

    Attributes:
        params: the study's settings, JSON-ready: ``suites``, ``kernels`` (a filter, or empty),
            ``candidates`` (the block sizes tried), ``simd_width``, ``max_block`` (the device's
            limit), ``quick``, ``reps``, ``array_bytes``.
        measurements: every timed point, valid or not (module docstring), in measurement order.
        rejected: the sizes the compiler or the pipeline rejected, with the message.
        skipped: kernels the device cannot run at any size, with the reason.
    """

    KIND: ClassVar[str] = "tune"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    DESCRIPTION: ClassVar[str] = "tuning study"

    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    measurements: Tuple[Measurement, ...] = ()
    rejected: Tuple[Rejected, ...] = ()
    skipped: Tuple[Skipped, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "measurements", tuple(self.measurements))
        object.__setattr__(self, "rejected", tuple(self.rejected))
        object.__setattr__(self, "skipped", tuple(self.skipped))
        for m in self.measurements:
            if BLOCK_PARAM not in m.params:
                raise ValueError(f"{self.DESCRIPTION}: {m.label} has no block parameter")

    @property
    def valid(self) -> bool:
        """Whether every timed point passed validation."""
        return all(m.valid for m in self.measurements)

    def kernels(self) -> List[str]:
        """The kernels measured or rejected (``"suite/kernel/dtype"``), in first-seen order."""
        seen: Dict[str, None] = {}
        for label in [m.label for m in self.measurements] + [x.label for x in self.rejected]:
            seen.setdefault(label, None)
        return list(seen)

    def points(self, kernel: str) -> List[Measurement]:
        """The timed points of ``kernel``, by block size."""
        return sorted((m for m in self.measurements if m.label == kernel), key=lambda m: int(m.params[BLOCK_PARAM]))

    def best(self) -> Dict[str, Measurement]:
        """The best point of each kernel with a valid one (:func:`best_blocks`)."""
        return best_blocks(self.measurements)

    def blocks(self) -> Dict[str, int]:
        """The best block size of each kernel with a valid point: what ``run --tune-file`` uses."""
        return {k: int(m.params[BLOCK_PARAM]) for k, m in self.best().items()}

    def best_of(self, kernel: str) -> Optional[Measurement]:
        """The best point of ``kernel``, or None when it has no valid point."""
        return self.best().get(kernel)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header, ``params``, ``measurements``, ``rejected``, ``skipped``."""
        return {
            **self.header_dict(),
            "params": dict(self.params),
            "measurements": [m.to_dict() for m in self.measurements],
            "rejected": [x.to_dict() for x in self.rejected],
            "skipped": [s.to_dict() for s in self.skipped],
        }

    @classmethod
    def journal_mismatch(cls, key: str, record: Mapping[str, Any]) -> str:
        """The measurement ``record`` holds where it is not of the kernel its journal ``key`` names,
        else "" (:func:`~apple_roofline.study.records.record_mismatch`; the key's parameters are
        the case's as planned, which a case rebuilt at another block re-sizes: not compared)."""
        return record_mismatch(key, record, params=False)

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "TuneStudy":
        """Build from :meth:`to_dict` output (a measurement given twice is refused, naming both).
        Raises :class:`~apple_roofline.study.files.ResultsError`."""
        r = Reader(source)
        header = cls.read_header(d, r)
        measurements = tuple(
            Measurement.from_dict(m, source=source, where=f"measurements[{i}]")
            for i, m in enumerate(r.array(d, "measurements", ""))
        )
        check_repeats(measurements, r)
        for i, m in enumerate(measurements):
            b = m.params.get(BLOCK_PARAM)
            if isinstance(b, bool) or not isinstance(b, int) or b < 1:
                r.fail(f"measurements[{i}].params.block must be a positive integer (threads per block), not {b!r}")
        return cls(
            **header,
            params=r.params(d),
            measurements=measurements,
            rejected=tuple(
                Rejected.from_dict(x, source=source, where=f"rejected[{i}]")
                for i, x in enumerate(r.array(d, "rejected", "", required=False))
            ),
            skipped=tuple(
                Skipped.from_dict(s, source=source, where=f"skipped[{i}]")
                for i, s in enumerate(r.array(d, "skipped", "", required=False))
            ),
        )
