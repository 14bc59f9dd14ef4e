"""The results of an engines study: Core ML predictions per compute unit (kind ``"engines"``).

A study holds the models it built (with their accounting checked against the kernel table) and one
:class:`EnginePoint` per (compute units, precision, shape, batch). A point is ``measured`` (its
predictions timed on the ``native`` path — Objective-C++, ``_core.coreml_time`` — and on the
``python`` path — coremltools' ``predict`` —, each a :class:`PathTiming` validated against NumPy),
``skipped`` (with the reason: off macOS, "Core ML predictions need macOS"; such points hold no
timing at all) or ``failed`` (Core ML refused: its message). ``plan`` is Core ML's compute plan of
the point's model under its compute units: per operation, the device Core ML prefers
(``MLComputePlan``, macOS 14.4+), or ``known: false`` with the reason it cannot be known.

GFLOP/s = flops / median seconds per prediction; FLOPs and bytes come from :mod:`.kernels`
(docs/design/measurement.md, "Counting FLOPs and bytes" and "The engines study").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Tuple

from ..study.document import Document
from ..study.files import ResultsError
from ..study.reader import Reader
from ..timing.stats import Summary, summarize
from .kernels import phase

__all__ = ["SCHEMA_VERSION", "STATUSES", "PATHS", "PathTiming", "EnginePoint", "EnginesStudy", "planned_devices"]

SCHEMA_VERSION = 1
#: What became of a point.
STATUSES: Tuple[str, ...] = ("measured", "skipped", "failed")
#: The two ways predictions are made: Objective-C++ in the native core, and coremltools' Python predict.
PATHS: Tuple[str, ...] = ("native", "python")


@dataclass(frozen=True)
class PathTiming:
    """The timed predictions of one point on one path.

    Attributes:
        path: ``"native"`` or ``"python"``.
        samples_s: seconds of each prediction, one by one (>= 1, each finite and > 0).
        valid: whether every output passed validation against NumPy.
        validation: what validation found.
        timer: the clock, in words.
        warmup: predictions made before the timed ones.
        load_s: seconds to load the compiled model with its compute units (not a measurement of
            the predictions).

    Raises:
        ValueError: on construction, for an unknown path or bad samples.
    """

    path: str
    samples_s: Tuple[float, ...]
    valid: bool
    validation: str
    timer: str
    warmup: int = 0
    load_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples_s", tuple(float(s) for s in self.samples_s))
        if self.path not in PATHS:
            raise ValueError(f"path must be one of {', '.join(PATHS)}, not {self.path!r}")
        self.summary  # validates the samples (summarize raises ValueError) and keeps the statistics

    @cached_property
    def summary(self) -> Summary:
        """Statistics of the per-prediction seconds (median, quartiles, p10/p90/p99 ...), computed once."""
        return summarize(self.samples_s)

    @property
    def median_s(self) -> float:
        """Median seconds per prediction."""
        return self.summary.median

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict (derived statistics are recomputed on reading, never stored)."""
        return {
            "path": self.path,
            "samples_s": list(self.samples_s),
            "valid": self.valid,
            "validation": self.validation,
            "timer": self.timer,
            "warmup": self.warmup,
            "load_s": self.load_s,
        }

    @classmethod
    def from_dict(cls, d: Any, r: Reader, where: str) -> "PathTiming":
        """Build from :meth:`to_dict` output. Raises ResultsError naming ``where``."""
        d = r.obj(d, where)
        samples = r.samples(d, "samples_s", where)
        try:
            return cls(
                path=r.string(d, "path", where),
                samples_s=samples,
                valid=r.boolean(d, "valid", where),
                validation=r.string(d, "validation", where),
                timer=r.string(d, "timer", where),
                warmup=r.nonneg_int(d, "warmup", where),
                load_s=r.nonneg(d, "load_s", where),
            )
        except ResultsError:
            raise
        except ValueError as exc:
            r.fail(f"{where}: {exc}")


@dataclass(frozen=True)
class EnginePoint:
    """One point of the sweep and what became of it.

    Attributes:
        units: compute units (``CPU_ONLY``, ``CPU_AND_GPU``, ``CPU_AND_NE``, ``ALL``).
        precision: ``fp16`` or ``w8a16``.
        k, m: the weight's shape (inputs × outputs); batch: B.
        flops, bytes: per prediction, from the kernel table.
        model: the cache key of the model.
        status: ``measured``, ``skipped`` or ``failed``; reason: why, when not measured.
        plan: the compute plan, ``{"known": bool, "reason": str, "ops": [{"op", "preferred",
            "supported", "cost"}]}``.
        native, python: the timings of each path (None when not measured).
    """

    units: str
    precision: str
    k: int
    m: int
    batch: int
    flops: int
    bytes: int
    model: str
    status: str
    reason: str = ""
    plan: Mapping[str, Any] = field(default_factory=dict, hash=False)
    native: Optional[PathTiming] = None
    python: Optional[PathTiming] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "plan", dict(self.plan))
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {self.status!r}")
        if self.status != "measured" and (self.native or self.python):
            raise ValueError(f"a {self.status} point holds no timing")

    @property
    def shape(self) -> str:
        """``"2048"`` for a square weight, ``"2048x8192"`` otherwise."""
        return str(self.k) if self.k == self.m else f"{self.k}x{self.m}"

    @property
    def phase(self) -> str:
        """``"decode"`` (B = 1), ``"prefill"`` (B >= 64) or ``""``."""
        return phase(self.batch)

    @property
    def label(self) -> str:
        """``"ALL fp16 2048 B=64"``."""
        return f"{self.units} {self.precision} {self.shape} B={self.batch}"

    @property
    def valid(self) -> bool:
        """Whether every timing of the point passed validation (True when none was made)."""
        return all(t.valid for t in (self.native, self.python) if t is not None)

    def timing(self, path: str) -> Optional[PathTiming]:
        """The timing of ``path`` (``native`` or ``python``)."""
        return self.native if path == "native" else self.python if path == "python" else None

    def gflops(self, path: str = "native") -> Optional[float]:
        """GFLOP/s at the median time of ``path``, or None when it was not measured or is invalid."""
        t = self.timing(path)
        return self.flops / t.median_s / 1e9 if t is not None and t.valid else None

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict."""
        return {
            "units": self.units,
            "precision": self.precision,
            "k": self.k,
            "m": self.m,
            "batch": self.batch,
            "flops": self.flops,
            "bytes": self.bytes,
            "model": self.model,
            "status": self.status,
            "reason": self.reason,
            "plan": dict(self.plan),
            "native": self.native.to_dict() if self.native else None,
            "python": self.python.to_dict() if self.python else None,
        }

    @classmethod
    def from_dict(cls, d: Any, r: Reader, where: str) -> "EnginePoint":
        """Build from :meth:`to_dict` output. Raises ResultsError naming ``where``."""
        d = r.obj(d, where)
        timings = {p: (PathTiming.from_dict(d[p], r, f"{where}.{p}") if d.get(p) is not None else None) for p in PATHS}
        try:
            return cls(
                units=r.string(d, "units", where),
                precision=r.string(d, "precision", where),
                k=r.nonneg_int(d, "k", where, positive=True),
                m=r.nonneg_int(d, "m", where, positive=True),
                batch=r.nonneg_int(d, "batch", where, positive=True),
                flops=r.nonneg_int(d, "flops", where),
                bytes=r.nonneg_int(d, "bytes", where, positive=True),
                model=r.string(d, "model", where),
                status=r.string(d, "status", where),
                reason=r.string(d, "reason", where, default=""),
                plan=dict(r.obj(d.get("plan", {}), f"{where}.plan")),
                native=timings["native"],
                python=timings["python"],
            )
        except ResultsError:
            raise
        except ValueError as exc:
            r.fail(f"{where}: {exc}")


def planned_devices(plan: Mapping[str, Any]) -> str:
    """The devices Core ML plans for a model's operations, as ``"neural_engine"`` or
    ``"cpu, gpu"`` (operations that run on no device — constants, compile-time decompressions —
    left out), or ``"unknown: <reason>"``."""
    if not plan.get("known"):
        return f"unknown: {plan.get('reason') or 'no compute plan'}"
    devices: List[str] = []
    for op in plan.get("ops", []):
        d = str(op.get("preferred", "unknown")) if isinstance(op, Mapping) else "unknown"
        if d != "none" and d not in devices:
            devices.append(d)
    return ", ".join(devices) or "none"


@dataclass(frozen=True)
class EnginesStudy(Document):
    """Everything one engines study built and measured (the header's fields, then these).

    Attributes:
        params: the settings (``units``, ``precisions``, ``sizes``, ``batches``, ``reps``, ``quick``,
            ``cache_dir``, ``coremltools``, ``predictions``: "" when Core ML could run, else why not).
        models: the models built, each with its accounting check (``models.model_summary``).
        points: every point of the sweep.
    """

    KIND: ClassVar[str] = "engines"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    DESCRIPTION: ClassVar[str] = "engines study"

    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    models: Tuple[Mapping[str, Any], ...] = ()
    points: Tuple[EnginePoint, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "models", tuple(dict(m) for m in self.models))
        object.__setattr__(self, "points", tuple(self.points))

    @property
    def valid(self) -> bool:
        """Whether every timing passed validation and every model's accounting held."""
        return all(p.valid for p in self.points) and all(bool(m.get("accounting_ok")) for m in self.models)

    @property
    def measured(self) -> Tuple[EnginePoint, ...]:
        """The measured points."""
        return tuple(p for p in self.points if p.status == "measured")

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header, ``params``, ``models``, ``points``."""
        return {
            **self.header_dict(),
            "params": dict(self.params),
            "models": [dict(m) for m in self.models],
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "EnginesStudy":
        """Build from :meth:`to_dict` output; each model's counts must be non-negative integers and its
        ``accounting_ok`` what its two weight-byte counts say. Raises
        :class:`~apple_roofline.study.files.ResultsError`."""
        r = Reader(source)
        header = cls.read_header(d, r)
        return cls(
            **header,
            params=r.params(d),
            models=tuple(_read_model(r, m, f"models[{i}]") for i, m in enumerate(r.array(d, "models", ""))),
            points=tuple(EnginePoint.from_dict(p, r, f"points[{i}]") for i, p in enumerate(r.array(d, "points", ""))),
        )


#: The counts of a model's summary (``models.model_summary``).
MODEL_COUNTS: Tuple[str, ...] = ("k", "m", "batch", "weight_bytes_counted", "weight_bytes_in_model")


def _read_model(r: Reader, value: Any, where: str) -> Dict[str, Any]:
    """A built model's summary: its counts (:data:`MODEL_COUNTS`) non-negative integers, ``build_s``
    non-negative seconds, and ``accounting_ok`` true exactly when the weight bytes in the model are
    the bytes counted."""
    m = r.obj(value, where)
    r.counts(m, where, MODEL_COUNTS)  # build_s too: seconds, never negative
    if "accounting_ok" in m and "weight_bytes_counted" in m and "weight_bytes_in_model" in m:
        holds = m["weight_bytes_counted"] == m["weight_bytes_in_model"]
        if r.boolean(m, "accounting_ok", where) != holds:
            r.fail(
                f"{where}.accounting_ok must be {str(holds).lower()}: the model holds {m['weight_bytes_in_model']} "
                f"weight bytes and {m['weight_bytes_counted']} are counted"
            )
    return dict(m)
