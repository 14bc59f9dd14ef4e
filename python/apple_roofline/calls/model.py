"""The results of a per-call cost study: one matmul shape through one path, and the study as a
results file (docs/design/studies.md, "The per-call cost study").

A study (:func:`~.runner.run_calls`, ``apple-roofline calls``) times C[B×N] = A[B×N]·W[N×N] (fp32)
over a grid of shapes (:mod:`.shapes`) through every path the machine has (:mod:`.paths`): a
:class:`CallMeasurement` is one shape through one path, its samples seconds per call (each sample
one call: launch, then wait for it), its output validated. Per path the measurements' medians are
fitted by t(F) = t0 + F/R (:mod:`.fit`) and every pair of paths has a crossover.

The JSON written by :meth:`CallsStudy.save` is the header every results file shares
(:class:`~apple_roofline.study.document.Document`, ``kind`` ``"calls"``, ``schema_version`` 1) and::

    params        object: the study's settings (batches, sizes, quick, budget_s, max_reps, dtype)
    paths         [{name, label, call, device}]: every path measured, and what one call includes
    measurements  [CallMeasurement]
    skipped       [{path, reason}]
    fits          [{path, t0_s, rate_gflops, rms_rel, max_rel, points}]: for readers; on reading each
                  must be one of the study's paths with a non-negative t0_s, a positive rate (or
                  null), non-negative errors and a count of points, and is then recomputed from the
                  valid measurements' medians

Reading is strict (one :class:`~apple_roofline.study.files.ResultsError` naming the file and the
field), checks every derived number stored for other readers (distributions, fits) and recomputes
it from the samples. This module
never imports the extension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Set, Tuple

from ..study.document import Document, Skipped
from ..study.files import ResultsError
from ..study.reader import Reader
from ..suites.gemm.precisions import gemm_flops
from ..timing.stats import Summary, summarize
from .fit import CallFit, Crossover, crossovers, fit_call_cost

__all__ = ["SCHEMA_VERSION", "DISTRIBUTION_KEYS", "CallMeasurement", "CallPathInfo", "PathSkipped", "CallsStudy"]

#: Version of the JSON layout written and read by :class:`CallsStudy`.
SCHEMA_VERSION: int = 1
#: The keys of a measurement's ``"distribution"`` object in the JSON, written for readers; on reading
#: checked against the samples, then recomputed.
DISTRIBUTION_KEYS: Tuple[str, ...] = ("n", "min", "p10", "p50", "p90", "max", "cv")
#: Each key of ``"distribution"`` and the :class:`~apple_roofline.timing.stats.Summary` field it holds: checked
#: against the samples on reading.
DISTRIBUTION_FIELDS: Dict[str, str] = {k: "median" if k == "p50" else k for k in DISTRIBUTION_KEYS}


@dataclass(frozen=True)
class CallMeasurement:
    """One shape through one path: its samples, FLOPs and bytes per call, and its validation.

    Attributes:
        path: the path's name (:data:`~.paths.PATHS`).
        batch: B, rows of A and C.
        n: N, columns of A and C, and W is N×N.
        flops: 2·B·N·N per call (:func:`~apple_roofline.suites.gemm.precisions.gemm_flops`).
        bytes: compulsory bytes per call, (B·N + N·N)·4 + B·N·4
            (:func:`~apple_roofline.suites.gemm.precisions.gemm_bytes`).
        samples_s: seconds per call, one call per sample (> 0).
        rows: rows the path computed (B, or B padded to the tiled kernel's 16-row tile); FLOPs
            count the B asked for.
        valid: whether the output after the timed calls passed validation.
        validation: what was checked, or why it failed.

    Raises:
        ValueError: on construction, for an empty path, B or N below 1, rows below B, negative
            FLOPs or bytes, no samples, or a sample that is not a positive finite number.
    """

    path: str
    batch: int
    n: int
    flops: int
    bytes: int
    samples_s: Tuple[float, ...]
    rows: int = 0
    valid: bool = True
    validation: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples_s", tuple(float(s) for s in self.samples_s))
        if self.rows == 0:
            object.__setattr__(self, "rows", self.batch)
        where = f"measurement {self.path} {self.batch}x{self.n}"
        if not self.path:
            raise ValueError(f"{where}: path must not be empty")
        for name in ("batch", "n", "rows", "flops", "bytes"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (1 if name in ("batch", "n", "rows") else 0):
                raise ValueError(f"{where}: {name} {v!r} is out of range")
        if self.rows < self.batch:
            raise ValueError(f"{where}: rows {self.rows} is below the batch {self.batch}")
        if not self.samples_s:
            raise ValueError(f"{where}: samples must not be empty")
        for i, s in enumerate(self.samples_s):
            if not math.isfinite(s) or s <= 0.0:
                raise ValueError(f"{where}: samples_s[{i}] is {s!r}, not a positive number of seconds")

    @property
    def shape(self) -> str:
        """``"B×N²"``, e.g. ``"16×1024²"``."""
        return f"{self.batch}×{self.n}²"

    @cached_property
    def distribution(self) -> Summary:
        """:func:`~apple_roofline.timing.stats.summarize` of ``samples_s`` (seconds per call), computed once."""
        return summarize(self.samples_s)

    @property
    def gflops(self) -> float:
        """FLOPs per call / median seconds per call, in GFLOP/s."""
        return self.flops / self.distribution.median / 1e9

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict; ``distribution`` (:data:`DISTRIBUTION_KEYS`) is for readers, ignored on reading."""
        d = self.distribution
        return {
            "path": self.path,
            "batch": self.batch,
            "n": self.n,
            "flops": self.flops,
            "bytes": self.bytes,
            "rows": self.rows,
            "valid": self.valid,
            "validation": self.validation,
            "samples_s": list(self.samples_s),
            "distribution": {k: getattr(d, k) for k in DISTRIBUTION_KEYS},
        }

    @classmethod
    def from_dict(
        cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "measurement"
    ) -> "CallMeasurement":
        """Build from :meth:`to_dict` output; a stored ``distribution`` must be the samples' own
        (:meth:`~apple_roofline.study.reader.Reader.statistics`), ``flops`` 2·B·N² and ``bytes``
        positive. Raises :class:`ResultsError` naming the field."""
        r = Reader(source)
        d = r.obj(d, where)
        samples = r.samples(d, "samples_s", where)
        if "distribution" in d:  # written for other readers: it must be the samples' own
            r.statistics(
                r.obj(d["distribution"], f"{where}.distribution"), f"{where}.distribution", samples, DISTRIBUTION_FIELDS
            )
        batch, n = r.nonneg_int(d, "batch", where, positive=True), r.nonneg_int(d, "n", where, positive=True)
        flops = r.nonneg_int(d, "flops", where)
        if flops != gemm_flops(batch, n, n):  # the FLOPs of the shape asked for, whatever the path computed
            r.fail(
                f"{where}.flops {flops} is not the FLOPs of a {batch}×{n}² call (valid: 2·B·N² = "
                f"{gemm_flops(batch, n, n)})"
            )
        try:
            return cls(
                path=r.string(d, "path", where),
                batch=batch,
                n=n,
                flops=flops,
                bytes=r.nonneg_int(d, "bytes", where, positive=True),
                samples_s=samples,
                rows=r.nonneg_int(d, "rows", where, positive=True),
                valid=r.boolean(d, "valid", where),
                validation=r.string(d, "validation", where, default=""),
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(str(e))


@dataclass(frozen=True)
class CallPathInfo:
    """A path measured: its name, a label naming the library or kernel, what one call includes, and
    the device it ran on (``"cpu"``, ``"cuda:0"``)."""

    name: str
    label: str
    call: str
    device: str

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys name, label, call, device."""
        return {"name": self.name, "label": self.label, "call": self.call, "device": self.device}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "paths") -> "CallPathInfo":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError` naming the field."""
        r = Reader(source)
        d = r.obj(d, where)
        return cls(
            r.string(d, "name", where),
            r.string(d, "label", where),
            r.string(d, "call", where),
            r.string(d, "device", where),
        )


@dataclass(frozen=True)
class PathSkipped(Skipped):
    """A path (or one shape of it) not measured, and why."""


@dataclass(frozen=True)
class CallsStudy(Document):
    """Everything one per-call cost study measured, with its provenance (the header's fields of
    :class:`~apple_roofline.study.document.Document`, then these).

    Attributes:
        params: the study's settings, JSON-ready; stored as a dict copy, excluded from hashing.
        paths: every path measured (:class:`CallPathInfo`), in measurement order.
        measurements: every :class:`CallMeasurement`, valid or not.
        skipped: paths (or shapes) not measured, with reasons.
    """

    KIND: ClassVar[str] = "calls"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    DESCRIPTION: ClassVar[str] = "per-call cost study"

    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    paths: Tuple[CallPathInfo, ...] = ()
    measurements: Tuple[CallMeasurement, ...] = ()
    skipped: Tuple[PathSkipped, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "paths", tuple(self.paths))
        object.__setattr__(self, "measurements", tuple(self.measurements))
        object.__setattr__(self, "skipped", tuple(self.skipped))

    @property
    def valid(self) -> bool:
        """Whether every measurement passed validation."""
        return all(m.valid for m in self.measurements)

    def path_info(self, name: str) -> Optional[CallPathInfo]:
        """The :class:`CallPathInfo` named ``name``, or None."""
        return next((p for p in self.paths if p.name == name), None)

    def of_path(self, name: str, *, valid_only: bool = True) -> List[CallMeasurement]:
        """The measurements of path ``name`` (only the valid ones by default), in order of FLOPs."""
        return sorted(
            (m for m in self.measurements if m.path == name and (m.valid or not valid_only)),
            key=lambda m: (m.flops, m.n),
        )

    def fits(self) -> List[CallFit]:
        """The fit of every path with at least 2 valid measurements of different FLOP counts
        (:func:`~.fit.fit_call_cost` of the medians), in the order of :attr:`paths`."""
        out = []
        for p in self.paths:
            ms = self.of_path(p.name)
            if len({m.flops for m in ms}) >= 2:
                out.append(fit_call_cost(p.name, [m.flops for m in ms], [m.distribution.median for m in ms]))
        return out

    def crossovers(self) -> List[Crossover]:
        """:func:`~.fit.crossovers` of :meth:`fits`."""
        return crossovers(self.fits())

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header and the keys of the module docstring."""
        return {
            **self.header_dict(),
            "params": dict(self.params),
            "paths": [p.to_dict() for p in self.paths],
            "measurements": [m.to_dict() for m in self.measurements],
            "skipped": [s.to_dict() for s in self.skipped],
            "fits": [
                {
                    "path": f.path,
                    "t0_s": f.t0_s,
                    "rate_gflops": None if f.rate is None else f.rate / 1e9,
                    "rms_rel": f.rms_rel,
                    "max_rel": f.max_rel,
                    "points": f.points,
                }
                for f in self.fits()
            ],
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "CallsStudy":
        """Build from :meth:`to_dict` output: the header, then ``params``, ``paths`` and
        ``measurements`` (required) and ``skipped`` (may be absent); ``fits`` is checked (module
        docstring) and recomputed.

        Raises:
            ResultsError: one line naming ``source`` and the field.
        """
        r = Reader(source)
        header = cls.read_header(d, r)
        paths = tuple(
            CallPathInfo.from_dict(p, source=source, where=f"paths[{i}]") for i, p in enumerate(r.array(d, "paths", ""))
        )
        for i, f in enumerate(r.array(d, "fits", "", required=False)):
            _check_fit(r, r.obj(f, f"fits[{i}]"), f"fits[{i}]", {p.name for p in paths})
        return cls(
            **header,
            params=r.params(d),
            paths=paths,
            measurements=tuple(
                CallMeasurement.from_dict(m, source=source, where=f"measurements[{i}]")
                for i, m in enumerate(r.array(d, "measurements", ""))
            ),
            skipped=tuple(
                PathSkipped.from_dict(s, source=source, where=f"skipped[{i}]")
                for i, s in enumerate(r.array(d, "skipped", "", required=False))
            ),
        )


def _check_fit(r: Reader, f: Mapping[str, Any], where: str, paths: Set[str]) -> None:
    """A stored fit (:meth:`CallsStudy.to_dict`): a path of the study, ``t0_s`` non-negative
    seconds, ``rate_gflops`` positive or null, ``rms_rel`` and ``max_rel`` non-negative, ``points``
    a count of at least 2 (:class:`~.fit.CallFit`)."""
    name = r.string(f, "path", where)
    if name not in paths:
        r.fail(f"{where}.path {name!r} is not a path of the study (valid: {', '.join(sorted(paths)) or 'none'})")
    r.nonneg(f, "t0_s", where, "seconds")
    if r.req(f, "rate_gflops", where) is not None:
        r.positive(f, "rate_gflops", where, "GFLOP/s")
    r.nonneg(f, "rms_rel", where, "")
    r.nonneg(f, "max_rel", where, "")
    if r.nonneg_int(f, "points", where) < 2:
        r.fail(f"{where}.points must be at least 2 (a line through fewer is no fit), not {f['points']!r}")
