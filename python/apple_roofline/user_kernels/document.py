"""The embedding API's measurements as a results file (kind ``"kernels"``).

:func:`save_kernels` writes the :class:`~apple_roofline.roofline.model.model.Point`\\ s that
:func:`apple_roofline.measure` returned; ``plot RUN.json --kernels FILE``, ``report`` and ``run``
draw them on a measured roofline, one DRAM dot each (docs/design/model.md, "Your kernels on the
roofline"). Besides the header every results file has (:mod:`apple_roofline.study.document`)::

    kernels   [{name, flops, bytes, seconds, dtype, pipe, working_set, samples_s, n}]: FLOPs (>= 0)
              and bytes (> 0) of one call, its median seconds (> 0), the precision it computes in
              (or null), where given the pipe doing the work ("fma" or "tensor") and the bytes it
              touches (> 0; both absent otherwise) and, where measured, the samples (seconds per
              call) and their count: ``seconds`` is then their median (recomputed on reading; where
              stored it must equal it, :meth:`~apple_roofline.study.reader.Reader.statistics`)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..host import provenance
from ..roofline.model.model import Point
from ..roofline.model.roofs import PIPES, PRECISIONS
from ..study.document import Document, ToolInfo
from ..study.reader import Reader
from .model import KernelDot, KernelSet, Unplaced

__all__ = ["KernelsFile", "save_kernels"]

#: The device a kernels file names when the caller gives none.
UNKNOWN_DEVICE: Mapping[str, str] = {"backend": "unknown", "name": "unknown"}


@dataclass(frozen=True)
class KernelsFile(Document):
    """Measured callables (the header's fields, then ``points``).

    Attributes:
        points: the measurements, each a Point (name, FLOPs and bytes per call, median seconds,
            dtype, and the samples' summary where known).
    """

    KIND: ClassVar[str] = "kernels"
    DESCRIPTION: ClassVar[str] = "kernels file"

    points: Tuple[Point, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "points", tuple(self.points))

    def kernel_set(self, source: str = "") -> KernelSet:
        """The points as dots (one DRAM dot each: the bytes are those the caller counted); a
        zero-FLOP point is unplaced (no arithmetic intensity)."""
        dots: List[KernelDot] = []
        unplaced: List[Unplaced] = []
        for p in self.points:
            if p.flops <= 0:
                unplaced.append(
                    Unplaced(
                        p.name, "no FLOPs counted (flops = 0): no arithmetic intensity", ("flops",), seconds=p.seconds
                    )
                )
                continue
            dots.append(
                KernelDot(
                    p.name,
                    "DRAM",
                    float(p.flops),
                    float(p.bytes),
                    float(p.seconds),
                    1,
                    p.dtype,
                    {p.dtype: float(p.flops)} if p.dtype else {},
                    "measure",
                    ("apple_roofline.measure",),
                    p.pipe,
                    working_set=p.working_set,
                )
            )
        return KernelSet(tuple(dots), tuple(unplaced), source, "measure", self.device_name)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header and ``kernels`` (module docstring)."""
        rows = []
        for p in self.points:
            row: Dict[str, Any] = {
                "name": p.name,
                "flops": float(p.flops),
                "bytes": float(p.bytes),
                "seconds": float(p.seconds),
                "dtype": p.dtype,
            }
            if p.pipe is not None:
                row["pipe"] = p.pipe
            if p.working_set is not None:
                row["working_set"] = float(p.working_set)
            if p.samples:
                row.update(samples_s=list(p.samples), n=len(p.samples))
            rows.append(row)
        return {**self.header_dict(), "kernels": rows}

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "KernelsFile":
        """Build from :meth:`to_dict` output. Raises :class:`~apple_roofline.study.files.ResultsError`
        naming the field: a count that is negative (FLOPs) or not positive (bytes, seconds), an
        unknown dtype, samples out of range, a ``seconds`` that is not their median, or counts whose
        rates (FLOP/s, B/s) or intensity are not finite."""
        r = Reader(source)
        header = cls.read_header(d, r)
        points: List[Point] = []
        for i, raw in enumerate(r.array(d, "kernels", "")):
            where = f"kernels[{i}]"
            k = r.obj(raw, where)
            dtype = r.opt_string(k, "dtype", where)
            if dtype is not None and dtype not in PRECISIONS:
                r.fail(f"{where}.dtype {dtype!r} is unknown (valid: {', '.join(PRECISIONS)} or null)")
            samples: Tuple[float, ...] = ()
            summary = None
            if "samples_s" in k or "n" in k:  # seconds, where stored, must be their median
                if "seconds" in k:
                    r.positive(k, "seconds", where)
                samples = r.samples(k, "samples_s", where)
                summary = r.statistics(k, where, samples, {"seconds": "median", "n": "n"})
                seconds = summary.median
            else:
                seconds = r.positive(k, "seconds", where)
            name, flops, nbytes = (
                r.string(k, "name", where),
                r.nonneg(k, "flops", where, ""),
                r.positive(k, "bytes", where, "bytes"),
            )
            pipe = r.opt_string(k, "pipe", where)
            if pipe is not None and pipe not in PIPES:
                r.fail(f"{where}.pipe {pipe!r} is unknown (valid: {', '.join(PIPES)} or absent)")
            working_set = r.positive(k, "working_set", where, "bytes") if "working_set" in k else None
            try:  # finite counts can still make a rate that is not (1e308 FLOPs in a millisecond)
                points.append(
                    Point(
                        name,
                        flops,
                        nbytes,
                        seconds,
                        summary=summary,
                        dtype=dtype,
                        samples=samples,
                        pipe=pipe,
                        working_set=working_set,
                    )
                )
            except ValueError as exc:
                r.fail(f"{where}: {exc} (valid: FLOPs, bytes and seconds whose rates are finite)")
        return cls(**header, points=tuple(points))


def save_kernels(
    path: Union[str, "os.PathLike[str]"], points: Sequence[Point], *, device: Optional[Mapping[str, Any]] = None
) -> KernelsFile:
    """Write ``points`` (from :func:`apple_roofline.measure`) as a kernels file at ``path``, for
    ``apple-roofline plot RUN.json --kernels FILE`` (and ``report``, ``run``).

    Args:
        path: the file to write (JSON), atomically.
        points: the measurements; at least one.
        device: the device they ran on, with ``backend`` and ``name`` (a run's ``run.device``);
            default ``{"backend": "unknown", "name": "unknown"}``.

    Returns:
        The :class:`KernelsFile` written.

    Raises:
        ValueError: no points, or a device without ``backend`` and ``name``.
        TypeError: an item that is not a Point.
        OSError: the file cannot be written.
    """
    items = list(points)
    if not items:
        raise ValueError("save_kernels needs at least one point (from apple_roofline.measure)")
    for p in items:
        if not isinstance(p, Point):
            raise TypeError(f"save_kernels takes Points (from apple_roofline.measure), not {type(p).__name__}: {p!r}")
    doc = KernelsFile(
        ToolInfo.current(),
        provenance.now(),
        provenance.host(),
        dict(device or UNKNOWN_DEVICE),
        tuple(sys.argv),
        points=tuple(items),
        finished=provenance.now(),
    )
    doc.save(path)
    return doc
