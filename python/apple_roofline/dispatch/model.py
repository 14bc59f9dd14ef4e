"""The results of a dispatch-latency study: latency series and the study as a results file.

A study (:func:`~.runner.run_dispatch`, ``apple-roofline dispatch``) measures what one kernel launch
costs on one device. Each :class:`LatencySeries` is one kernel (:data:`~.kernels.KERNELS`: ``null``,
one thread and no memory; ``tiny``, one threadgroup/block touching 4 KiB), one measure, one path and
one clock:

* measures (:data:`MEASURES`):

  - ``throughput``: N launches back to back (one stream / one command buffer / one parallel
    region), time per launch = sample / N;
  - ``round_trip``: one launch, then wait for it, repeated; one sample per launch;
  - ``start_latency``: host submit to the start of the GPU work (Metal ``GPUStartTime``, CUDA
    ``%globaltimer`` mapped onto the host clock; the CPU pool's first worker);
  - ``step``: one step of a round trip (``step`` names it: Metal ``create``, ``encode``,
    ``commit``, ``start``, ``execute``, ``complete``; CUDA ``launch``, ``start``, ``complete``; CPU
    ``wake``, ``fork``, ``join``).

* paths: ``native`` (a C++ loop in the extension: the floor), ``python`` (Python calling the
  public API, :meth:`Kernel.launch` and :meth:`Backend.synchronize`, once per launch: the floor plus
  the binding's own cost), or a peer library measured in the same run (``cupy``, ``torch``,
  ``mlx``, ``pyobjc``; :mod:`.peers`).
* clocks (:data:`CLOCKS`): ``device`` (CUDA events, Metal command-buffer GPU times, the CPU's steady
  clock inside the parallel region) or ``host`` (the host's steady clock around the calls).

A series' distribution is :func:`apple_roofline.timing.stats.summarize` of its samples; reports use its
order statistics (p10, p50, p90, p99, max), the way wrk2 and HdrHistogram report latency: a mean
hides the tail (docs/design/measurement.md, "Measurement"). Samples are seconds per launch and may be zero or
negative only for ``start_latency`` and ``step`` (a device instant mapped onto the host clock carries
that mapping's uncertainty, recorded in the series' note; and a GPU may start the work before the
host's launch call returns).

The JSON written by :meth:`DispatchStudy.save` is the header every results file shares
(:class:`~apple_roofline.study.document.Document`, with ``kind`` ``"dispatch"`` and
``schema_version`` 1; docs/design/files.md, "Results files") and::

    params     object: the study's settings (reps, launches, warmup, tiny_bytes, tiny_items, peers)
    series     [LatencySeries]: see LatencySeries.to_dict
    skipped    [{path, reason}]
    pairings   [Pairing]: see Pairing.to_dict (absent in files written before the paths were
               interleaved: those read with no pairing)

A :class:`Pairing` says that the ``native`` and ``python`` host-clock series of one kernel and
measure were measured interleaved, sample ``i`` of each forming pair ``i`` (:mod:`.paired`); its
``difference`` (the median of the paired differences, its interval and status) is written for
readers, checked against the samples on reading and recomputed.

Reading is strict and raises :class:`~apple_roofline.study.files.ResultsError` naming the file and
field; each series' ``distribution`` must agree with its samples and is recomputed from them on
reading, never trusted. This
module never imports the extension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Optional, Tuple

from ..study.document import Document, Skipped
from ..study.files import ResultsError
from ..study.reader import Reader, join
from ..timing.stats import Summary, summarize
from .kernels import KERNELS
from .paired import PAIRED_PATHS, STATUSES, PairedDifference, paired_difference

__all__ = [
    "SCHEMA_VERSION",
    "MEASURES",
    "CLOCKS",
    "SIGNED_MEASURES",
    "PAIRED_MEASURES",
    "DISTRIBUTION_KEYS",
    "LatencySeries",
    "Pairing",
    "PeerSkipped",
    "DispatchStudy",
]

#: Version of the JSON layout written and read by :class:`DispatchStudy`.
SCHEMA_VERSION: int = 1
#: What a series measures (module docstring).
MEASURES: Tuple[str, ...] = ("throughput", "round_trip", "start_latency", "step")
#: Which clock timed a series.
CLOCKS: Tuple[str, ...] = ("device", "host")
#: The measures whose samples may be zero or negative: differences of a device instant mapped onto
#: the host clock and a host instant.
SIGNED_MEASURES: Tuple[str, ...] = ("start_latency", "step")
#: The keys of a series' ``"distribution"`` object in the JSON (fields of
#: :class:`~apple_roofline.timing.stats.Summary`), written for readers; on reading checked, then recomputed.
DISTRIBUTION_KEYS: Tuple[str, ...] = ("n", "min", "p10", "p50", "p90", "p99", "max", "mean")
#: The measures whose native and python series are measured interleaved (:class:`Pairing`).
PAIRED_MEASURES: Tuple[str, ...] = ("throughput", "round_trip")
#: Each key of ``"distribution"`` and the :class:`~apple_roofline.timing.stats.Summary` field it holds: checked
#: against the samples on reading.
DISTRIBUTION_FIELDS: Dict[str, str] = {k: "median" if k == "p50" else k for k in DISTRIBUTION_KEYS}


@dataclass(frozen=True)
class LatencySeries:
    """One kernel, measure, path and clock of a study, with its samples.

    Attributes:
        kernel: ``"null"`` or ``"tiny"`` (:data:`~.kernels.KERNELS`).
        measure: one of :data:`MEASURES`.
        path: ``"native"``, ``"python"`` or a peer's name (``"cupy"``, ``"torch"``, ``"mlx"``,
            ``"pyobjc"``).
        clock: ``"device"`` or ``"host"`` (:data:`CLOCKS`).
        samples_s: seconds per launch, one per sample (for ``throughput`` each sample is the mean
            of ``launches_per_sample`` back-to-back launches).
        launches_per_sample: launches averaged into one sample (>= 1).
        step: the step's name when ``measure == "step"``, else ``""``.
        valid: whether the kernel's output passed validation (the series is still stored, but
            reports mark it and plots leave it out).
        validation: what was checked, or why it failed.
        note: how it was measured (API calls, clock mapping and its uncertainty).

    Raises:
        ValueError: on construction, for an unknown kernel, measure or clock, an empty path, no
            samples, a non-finite sample, a zero or negative sample outside :data:`SIGNED_MEASURES`,
            ``launches_per_sample < 1``, or a ``step`` given (or missing) against ``measure``.
    """

    kernel: str
    measure: str
    path: str
    clock: str
    samples_s: Tuple[float, ...]
    launches_per_sample: int = 1
    step: str = ""
    valid: bool = True
    validation: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples_s", tuple(float(s) for s in self.samples_s))
        where = f"series {self.kernel}/{self.measure}/{self.path}"
        self._check_labels(where)
        self._check_samples(where)

    def _check_labels(self, where: str) -> None:
        """ValueError for an unknown kernel, measure or clock, an empty path, or a step name given
        (or missing) against the measure."""
        if self.kernel not in KERNELS:
            raise ValueError(f"{where}: kernel {self.kernel!r} is not one of {', '.join(KERNELS)}")
        if self.measure not in MEASURES:
            raise ValueError(f"{where}: measure {self.measure!r} is not one of {', '.join(MEASURES)}")
        if self.clock not in CLOCKS:
            raise ValueError(f"{where}: clock {self.clock!r} is not one of {', '.join(CLOCKS)}")
        if not self.path:
            raise ValueError(f"{where}: path must not be empty")
        if (self.measure == "step") != bool(self.step):
            raise ValueError(f"{where}: a step name is required for measure 'step' and only there")

    def _check_samples(self, where: str) -> None:
        """ValueError for ``launches_per_sample < 1``, no samples, a non-finite sample, or a zero or
        negative sample outside :data:`SIGNED_MEASURES`."""
        count = self.launches_per_sample
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}: launches_per_sample {count!r} is out of range (valid: 1 or more)")
        if not self.samples_s:
            raise ValueError(f"{where}: samples must not be empty")
        for i, s in enumerate(self.samples_s):
            if not math.isfinite(s):
                raise ValueError(f"{where}: samples_s[{i}] is {s!r}, not finite")
            if s <= 0.0 and self.measure not in SIGNED_MEASURES:
                raise ValueError(
                    f"{where}: samples_s[{i}] is {s!r}; only start latencies and steps may be zero or negative"
                )

    @property
    def label(self) -> str:
        """``"kernel measure[/step] path (clock)"``, e.g. ``"null round_trip python (host)"``."""
        what = f"{self.measure}/{self.step}" if self.step else self.measure
        return f"{self.kernel} {what} {self.path} ({self.clock})"

    @property
    def distribution(self) -> Summary:
        """The :class:`~apple_roofline.timing.stats.Summary` of ``samples_s`` (seconds per launch; zero and
        negative samples admitted, as start latencies and steps may hold them)."""
        return summarize(self.samples_s, positive=False)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict; ``distribution`` (:data:`DISTRIBUTION_KEYS`) is included for readers,
        checked against the samples on reading and recomputed."""
        d = self.distribution
        return {
            "kernel": self.kernel,
            "measure": self.measure,
            "step": self.step,
            "path": self.path,
            "clock": self.clock,
            "launches_per_sample": self.launches_per_sample,
            "valid": self.valid,
            "validation": self.validation,
            "note": self.note,
            "samples_s": list(self.samples_s),
            "distribution": {k: getattr(d, k) for k in DISTRIBUTION_KEYS},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "series") -> "LatencySeries":
        """Build from :meth:`to_dict` output; a stored ``distribution`` must be the samples' own
        (:meth:`~apple_roofline.study.reader.Reader.statistics`). Raises :class:`ResultsError`
        naming the field."""
        r = Reader(source)
        d = r.obj(d, where)
        measure = r.string(d, "measure", where)
        signed = measure in SIGNED_MEASURES
        samples = r.samples(d, "samples_s", where, signed=signed)
        if "distribution" in d:  # written for other readers: it must be the samples' own
            r.statistics(
                r.obj(d["distribution"], f"{where}.distribution"),
                f"{where}.distribution",
                samples,
                DISTRIBUTION_FIELDS,
                signed=signed,
            )
        try:
            return cls(
                kernel=r.string(d, "kernel", where),
                measure=measure,
                step=r.string(d, "step", where, default=""),
                path=r.string(d, "path", where),
                clock=r.string(d, "clock", where),
                launches_per_sample=r.nonneg_int(d, "launches_per_sample", where, positive=True),
                valid=r.boolean(d, "valid", where),
                validation=r.string(d, "validation", where, default=""),
                note=r.string(d, "note", where, default=""),
                samples_s=samples,
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(str(e))


@dataclass(frozen=True)
class Pairing:
    """The ``native`` and ``python`` host-clock series of one kernel and measure, measured
    interleaved: sample ``i`` of each is pair ``i``, taken back to back (:mod:`.paired`).

    Attributes:
        kernel: ``"null"`` or ``"tiny"`` (:data:`~.kernels.KERNELS`).
        measure: ``"throughput"`` or ``"round_trip"``.
        first: per pair, the path measured first (``"native"`` or ``"python"``,
            :func:`~.paired.pair_order`); its length is the number of pairs.
        confidence: the level of the paired difference's interval (a fraction, e.g. 0.95).

    Raises:
        ValueError: on construction, for an unknown kernel, a measure other than throughput or
            round trip, no pairs, a path in ``first`` other than native or python, or a
            ``confidence`` not strictly between 0 and 1.
    """

    kernel: str
    measure: str
    first: Tuple[str, ...]
    confidence: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "first", tuple(self.first))
        where = f"pairing {self.kernel}/{self.measure}"
        if self.kernel not in KERNELS:
            raise ValueError(f"{where}: kernel {self.kernel!r} is not one of {', '.join(KERNELS)}")
        if self.measure not in PAIRED_MEASURES:
            raise ValueError(f"{where}: measure {self.measure!r} is not one of {', '.join(PAIRED_MEASURES)}")
        if not self.first:
            raise ValueError(f"{where}: first must name the first path of at least one pair")
        for i, p in enumerate(self.first):
            if p not in PAIRED_PATHS:
                raise ValueError(f"{where}: first[{i}] {p!r} is not one of {', '.join(PAIRED_PATHS)}")
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 < c < 1.0:
            raise ValueError(f"{where}: confidence {c!r} is out of range (valid: strictly between 0 and 1)")

    def to_dict(self, difference: Optional[PairedDifference] = None) -> Dict[str, Any]:
        """JSON-ready dict: ``kernel``, ``measure``, ``clock`` (``"host"``), ``confidence``,
        ``first``, and ``difference`` (:meth:`~.paired.PairedDifference.to_dict`) when given."""
        out: Dict[str, Any] = {
            "kernel": self.kernel,
            "measure": self.measure,
            "clock": "host",
            "confidence": self.confidence,
            "first": list(self.first),
        }
        if difference is not None:
            out["difference"] = difference.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "pairing") -> "Pairing":
        """Build from :meth:`to_dict` output (``difference`` is checked by
        :meth:`DispatchStudy.from_dict`, which holds the samples). Raises :class:`ResultsError`
        naming the field."""
        r = Reader(source)
        d = r.obj(d, where)
        clock = r.string(d, "clock", where)
        if clock != "host":
            r.fail(f"{join(where, 'clock')} {clock!r} is not the clock of a pairing (valid: host)")
        try:
            return cls(
                kernel=r.string(d, "kernel", where),
                measure=r.string(d, "measure", where),
                first=r.strings(d, "first", where),
                confidence=r.number(d, "confidence", where),
            )
        except ValueError as e:
            r.fail(str(e))


@dataclass(frozen=True)
class PeerSkipped(Skipped):
    """A path (peer library, or a measure a backend lacks) not measured, and why."""


@dataclass(frozen=True)
class DispatchStudy(Document):
    """Everything one dispatch-latency study measured, with its provenance (the header's fields of
    :class:`~apple_roofline.study.document.Document`, then these).

    Attributes:
        params: the study's settings (``reps``, ``launches``, ``warmup`` ...), JSON-ready; stored
            as a dict copy, excluded from hashing.
        series: every :class:`LatencySeries`, valid or not.
        skipped: paths or measures not measured, with reasons.
        pairings: the kernels and measures whose native and python host-clock series were
            measured interleaved (:class:`Pairing`); at most one per kernel and measure.

    Raises:
        ValueError: on construction, when ``device`` lacks ``backend`` or ``name``, or a pairing
            repeats a kernel and measure, lacks its native or python host-clock series (exactly one
            of each), or has another number of pairs than they have samples.
    """

    KIND: ClassVar[str] = "dispatch"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    DESCRIPTION: ClassVar[str] = "dispatch study"

    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    series: Tuple[LatencySeries, ...] = ()
    skipped: Tuple[PeerSkipped, ...] = ()
    pairings: Tuple[Pairing, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "series", tuple(self.series))
        object.__setattr__(self, "skipped", tuple(self.skipped))
        object.__setattr__(self, "pairings", tuple(self.pairings))
        seen = set()
        for p in self.pairings:
            if (p.kernel, p.measure) in seen:
                raise ValueError(f"pairing {p.kernel}/{p.measure} is given twice (valid: one per kernel and measure)")
            seen.add((p.kernel, p.measure))
            self._paired_series(p)

    def _paired_series(self, p: Pairing) -> Tuple[LatencySeries, LatencySeries]:
        """The python and native host-clock series of ``p``; ValueError unless there is exactly
        one of each and each holds one sample per pair."""
        out = []
        for path in ("python", "native"):
            found = [
                s
                for s in self.series
                if (s.kernel, s.measure, s.path, s.clock, s.step) == (p.kernel, p.measure, path, "host", "")
            ]
            if len(found) != 1:
                raise ValueError(
                    f"pairing {p.kernel}/{p.measure}: {len(found)} {path} host-clock series (valid: exactly one)"
                )
            if len(found[0].samples_s) != len(p.first):
                raise ValueError(
                    f"pairing {p.kernel}/{p.measure}: {len(p.first)} pairs but "
                    f"{len(found[0].samples_s)} {path} samples (valid: one sample per pair)"
                )
            out.append(found[0])
        return out[0], out[1]

    def paired(self, kernel: str, measure: str) -> Optional[PairedDifference]:
        """The paired ``python − native`` difference of ``kernel`` and ``measure``
        (:func:`~.paired.paired_difference` of its two series, at the pairing's confidence), or
        None when the study has no such pairing."""
        for p in self.pairings:
            if (p.kernel, p.measure) == (kernel, measure):
                python, native = self._paired_series(p)
                return paired_difference(python.samples_s, native.samples_s, p.confidence)
        return None

    @property
    def valid(self) -> bool:
        """Whether every series passed validation."""
        return all(s.valid for s in self.series)

    def find(
        self, kernel: str, measure: str, path: str, clock: Optional[str] = None, step: str = ""
    ) -> Optional[LatencySeries]:
        """The first series matching the arguments (any clock when ``clock`` is None), or None."""
        for s in self.series:
            if (s.kernel, s.measure, s.path, s.step) == (kernel, measure, path, step) and clock in (None, s.clock):
                return s
        return None

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header and the keys of the module docstring."""
        return {
            **self.header_dict(),
            "params": dict(self.params),
            "series": [s.to_dict() for s in self.series],
            "skipped": [s.to_dict() for s in self.skipped],
            "pairings": [p.to_dict(self.paired(p.kernel, p.measure)) for p in self.pairings],
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "DispatchStudy":
        """Build from :meth:`to_dict` output (e.g. parsed JSON): the header first
        (:meth:`~apple_roofline.study.document.Document.read_header`), then ``params`` and
        ``series`` (required), ``skipped`` and ``pairings`` (may be absent); a pairing's stored
        ``difference`` must be the one its samples give (:func:`_check_difference`).

        Raises:
            ResultsError: one line naming ``source`` and the field.
        """
        r = Reader(source)
        header = cls.read_header(d, r)
        raw = r.array(d, "pairings", "", required=False)
        try:
            study = cls(
                **header,
                params=r.params(d),
                series=tuple(
                    LatencySeries.from_dict(s, source=source, where=f"series[{i}]")
                    for i, s in enumerate(r.array(d, "series", ""))
                ),
                skipped=tuple(
                    PeerSkipped.from_dict(s, source=source, where=f"skipped[{i}]")
                    for i, s in enumerate(r.array(d, "skipped", "", required=False))
                ),
                pairings=tuple(Pairing.from_dict(p, source=source, where=f"pairings[{i}]") for i, p in enumerate(raw)),
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(str(e))
        for i, (p, item) in enumerate(zip(study.pairings, raw)):
            if "difference" in item:
                want = study.paired(p.kernel, p.measure)
                assert want is not None
                _check_difference(
                    r, r.obj(item["difference"], f"pairings[{i}].difference"), f"pairings[{i}].difference", want
                )
        return study


def _check_difference(r: Reader, d: Mapping[str, Any], where: str, want: PairedDifference) -> None:
    """A pairing's stored ``difference`` (each key optional) against the one recomputed from its
    samples: ``n`` equal, the seconds and fractions equal to a relative ``REL_TOL``, ``status`` the
    same key of :data:`~.paired.STATUSES`."""
    if "n" in d and r.nonneg_int(d, "n", where) != want.n:
        r.fail(f"{join(where, 'n')} {d['n']} is not the number of pairs (valid: {want.n})")
    scale = max(abs(want.low_s), abs(want.high_s))  # a signed statistic may be near 0
    for key in ("median_s", "low_s", "high_s", "confidence", "coverage"):
        if key in d:
            what = f"the {key.removesuffix('_s')} of the paired differences"
            r.close(
                r.number(d, key, where),
                float(getattr(want, key)),
                join(where, key),
                what,
                scale=scale if key.endswith("_s") else 0.0,
            )
    if "status" in d:
        status = r.string(d, "status", where)
        if status != want.status:
            r.fail(
                f"{join(where, 'status')} {status!r} is not what the paired samples give "
                f"(valid: {want.status!r}; one of {', '.join(STATUSES)})"
            )
