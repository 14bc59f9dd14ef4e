"""Results of a run: frozen dataclasses and their JSON form (schema version 1).

The JSON written by :meth:`Run.save` is a contract other tools read. Its
top-level object has exactly these keys::

    schema_version   int, always 1 for this module
    tool             {name, version, git_revision}
    created          ISO 8601 timestamp (str)
    host             object: host provenance (OS, CPU, memory ...)
    device           object: must contain "backend" and "name"
    command          [str]: the command line
    conventions      {flops, bytes, units}: how FLOPs and bytes are counted
    measurements     [Measurement]: see Measurement.to_dict
    ceilings         [{name, kind, value, unit, source, from}]
    skipped          [{suite, kernel, dtype, reason}]
    warnings         [str]
    complete         bool: false when the run was interrupted

Counting conventions (DESIGN section 4): FLOPs are counted per scalar lane (an
FMA is 2 FLOPs, a 4-wide vector FMA is 8); bytes are compulsory DRAM traffic,
every input read once plus every output written once, write-allocate not
counted (BabelStream's convention); GB = 1e9 bytes, GFLOP/s = 1e9 FLOP/s,
times in seconds.

Reading is strict: :meth:`Run.load` and the ``from_dict``/``from_json``
constructors raise :class:`ResultsError` with a single line naming the file
(or ``source``), the field and what was expected. Keys not listed above are
ignored; derived per-measurement fields (``median_s``, ``gflops`` ...) are
recomputed from ``samples_s`` on reading, never trusted.

This module never imports the native extension.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple, Union

from .stats import Summary, summarize

if TYPE_CHECKING:
    from .roofline import Roofline

__all__ = [
    "read_results_text",
    "parse_results_json",
    "SCHEMA_VERSION",
    "CONVENTIONS",
    "CEILING_KINDS",
    "CEILING_SOURCES",
    "ResultsError",
    "ParamValue",
    "Measurement",
    "Ceiling",
    "Skipped",
    "ToolInfo",
    "Run",
    "write_text_atomic",
    "write_bytes_atomic",
    "format_params",
    "TIMER_PARAM",
]

#: Version of the JSON layout written and read by this module.
SCHEMA_VERSION: int = 1

#: Counting conventions recorded in every run (DESIGN section 4).
CONVENTIONS: Dict[str, str] = {
    "flops": "counted per scalar lane: an FMA is 2 FLOPs, a 4-wide vector FMA is 8",
    "bytes": (
        "compulsory DRAM traffic: every input read once plus every output written once; "
        "write-allocate not counted (BabelStream convention)"
    ),
    "units": "GB = 1e9 bytes, GFLOP/s = 1e9 FLOP/s, times in seconds",
}

#: Ceiling kinds and the unit each must be expressed in.
CEILING_KINDS: Dict[str, str] = {"bandwidth": "GB/s", "compute": "GFLOP/s"}

#: Where a ceiling's value came from.
CEILING_SOURCES: Tuple[str, ...] = ("measured", "theoretical")

#: Type of one kernel parameter value (JSON scalar).
ParamValue = Union[int, float, str, bool]


class ResultsError(ValueError):
    """A results file or dict could not be read or written.

    The message is one line: ``"<source>: <what is wrong>"``, e.g.
    ``"run.json: schema_version 7 is not supported (this tool reads 1)"``.
    """


# --------------------------------------------------------------------------
# atomic writes


#: The parameter in which the runner records how a backend with more than one clock timed the
#: samples (Metal: counter timestamps or command-buffer GPU times); reports list it separately.
TIMER_PARAM = "timer"


def format_params(params: Mapping[str, object]) -> str:
    """A measurement's parameters as ``"F=512, n=1048576"`` (insertion order; "" when empty),
    leaving out :data:`TIMER_PARAM` (a sentence, reported on its own)."""
    return ", ".join(f"{k}={v}" for k, v in params.items() if k != TIMER_PARAM)


def write_bytes_atomic(path: Union[str, "os.PathLike[str]"], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically.

    The bytes go to a temporary file in the same directory, which is flushed,
    fsync'ed and then renamed over ``path`` with :func:`os.replace`. A reader
    therefore sees either the old file or the complete new one, never a
    partial file; if anything fails the temporary file is removed and the
    exception propagates (``OSError`` for file-system problems).

    The new file keeps the permission bits of the file it replaces, or gets
    ``0o644`` when ``path`` did not exist.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:
        mode = os.stat(target).st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=str(directory))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text_atomic(path: Union[str, "os.PathLike[str]"], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


# --------------------------------------------------------------------------
# strict readers used by from_dict


class _Reader:
    """Type-checking accessors that raise ResultsError naming source and field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, msg: str) -> NoReturn:
        raise ResultsError(f"{self.source}: {msg}")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            self.fail(f"{where} must be an object, not {_json_type(value)}")
        for k in value:
            if not isinstance(k, str):
                self.fail(f"{where} must have string keys, found {k!r}")
        return value

    def req(self, d: Mapping[str, Any], key: str, where: str) -> Any:
        if key not in d:
            self.fail(f"{_join(where, key)} is missing (required key)")
        return d[key]

    def string(self, d: Mapping[str, Any], key: str, where: str) -> str:
        v = self.req(d, key, where)
        if not isinstance(v, str):
            self.fail(f"{_join(where, key)} must be a string, not {_json_type(v)}")
        return v

    def opt_string(self, d: Mapping[str, Any], key: str, where: str) -> Optional[str]:
        v = d.get(key)
        if v is not None and not isinstance(v, str):
            self.fail(f"{_join(where, key)} must be a string or null, not {_json_type(v)}")
        return v

    def boolean(self, d: Mapping[str, Any], key: str, where: str) -> bool:
        v = self.req(d, key, where)
        if not isinstance(v, bool):
            self.fail(f"{_join(where, key)} must be true or false, not {_json_type(v)}")
        return v

    def nonneg_int(self, d: Mapping[str, Any], key: str, where: str, *, positive: bool = False) -> int:
        v = self.req(d, key, where)
        ok = isinstance(v, int) and not isinstance(v, bool) and (v > 0 if positive else v >= 0)
        if not ok:
            what = "a positive integer" if positive else "a non-negative integer"
            self.fail(f"{_join(where, key)} must be {what}, not {v!r}")
        return int(v)

    def number(self, d: Mapping[str, Any], key: str, where: str) -> float:
        v = self.req(d, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(f"{_join(where, key)} must be a finite number, not {v!r}")
        return float(v)

    def array(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> List[Any]:
        if not required and key not in d:
            return []
        v = self.req(d, key, where)
        if not isinstance(v, list):
            self.fail(f"{_join(where, key)} must be an array, not {_json_type(v)}")
        return v

    def strings(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> Tuple[str, ...]:
        items = self.array(d, key, where, required=required)
        for i, s in enumerate(items):
            if not isinstance(s, str):
                self.fail(f"{_join(where, key)}[{i}] must be a string, not {_json_type(s)}")
        return tuple(items)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, Mapping):
        return "an object"
    return type(v).__name__


def _check_json_finite(value: Any, where: str) -> None:
    """Raise ResultsError if a non-finite float hides anywhere in ``value``."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ResultsError(f"{where}: {value!r} cannot be written as JSON (not finite)")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _check_json_finite(v, f"{where}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json_finite(v, f"{where}[{i}]")


# --------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class Measurement:
    """One timed kernel configuration and its samples.

    Attributes:
        suite: suite name, e.g. ``"stream"``, ``"sweep"``, ``"peak"``, ``"gemm"``.
        kernel: kernel name within the suite, e.g. ``"triad"``, ``"vec4"``.
        dtype: element type, e.g. ``"fp32"``, ``"fp16"``, ``"fp64"``.
        params: kernel parameters (JSON scalars), stored as a plain ``dict``
            copy; excluded from hashing.
        flops: FLOPs per launch (>= 0), counted per scalar lane.
        bytes: compulsory DRAM bytes per launch (> 0).
        samples_s: seconds per launch, one per sample (>= 1 sample, each
            finite and > 0); stored as a tuple of floats.
        valid: whether the output passed validation against a NumPy reference.
            Invalid measurements are reported but never become ceilings.
        ceiling_class: display name of the ceiling this kernel can set (e.g.
            ``"DRAM bandwidth"``, ``"FP32 vector"``, ``"FP32 scalar ILP"``,
            ``"FP16 vector"``, ``"FP16 scalar ILP"``, ``"FP64"``,
            ``"GEMM FP32"``, ``"GEMM FP64"``); ``None`` = never a ceiling.
        ceiling_kind: ``"bandwidth"`` or ``"compute"``; required exactly when
            ``ceiling_class`` is set.
        batch: launches timed together per sample (>= 1); ``samples_s`` is
            already divided by it.
        validation: what the validation found, e.g.
            ``"max rel err 3.1e-07 <= tol 1.2e-04"``.

    Raises:
        ValueError: on construction, for negative/non-integer ``flops``,
            ``bytes <= 0``, bad samples (see :func:`stats.summarize`),
            ``batch < 1``, an unknown ``ceiling_kind`` or a ``ceiling_class``
            without ``ceiling_kind`` (or the reverse).
    """

    suite: str
    kernel: str
    dtype: str
    params: Mapping[str, ParamValue] = field(hash=False)
    flops: int
    bytes: int
    samples_s: Tuple[float, ...]
    valid: bool
    ceiling_class: Optional[str] = None
    ceiling_kind: Optional[str] = None
    batch: int = 1
    validation: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "samples_s", tuple(float(s) for s in self.samples_s))
        for k, v in self.params.items():
            if not isinstance(k, str):
                raise ValueError(f"{self.label}: params key {k!r} is not a string")
            if not isinstance(v, (int, float, str, bool)):
                raise ValueError(f"{self.label}: params[{k!r}] = {v!r} is not an int, float, str or bool")
        if isinstance(self.flops, bool) or not isinstance(self.flops, int) or self.flops < 0:
            raise ValueError(f"{self.label}: flops must be a non-negative integer, not {self.flops!r}")
        if isinstance(self.bytes, bool) or not isinstance(self.bytes, int) or self.bytes <= 0:
            raise ValueError(f"{self.label}: bytes must be a positive integer, not {self.bytes!r}")
        if isinstance(self.batch, bool) or not isinstance(self.batch, int) or self.batch < 1:
            raise ValueError(f"{self.label}: batch must be an integer >= 1, not {self.batch!r}")
        if (self.ceiling_class is None) != (self.ceiling_kind is None):
            raise ValueError(f"{self.label}: ceiling_class and ceiling_kind must be given together")
        if self.ceiling_kind is not None and self.ceiling_kind not in CEILING_KINDS:
            raise ValueError(
                f"{self.label}: ceiling_kind must be 'bandwidth' or 'compute', not {self.ceiling_kind!r}"
            )
        try:
            summarize(self.samples_s)
        except ValueError as e:
            raise ValueError(f"{self.label}: {e}") from None

    # -- derived -----------------------------------------------------------

    @property
    def label(self) -> str:
        """``"suite/kernel/dtype"``, e.g. ``"stream/triad/fp32"``."""
        return f"{self.suite}/{self.kernel}/{self.dtype}"

    @cached_property
    def summary(self) -> Summary:
        """Statistics of ``samples_s`` (seconds), see :func:`stats.summarize`."""
        return summarize(self.samples_s)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity ``flops / bytes`` in FLOP/byte."""
        return self.flops / self.bytes

    @property
    def median_s(self) -> float:
        """Median seconds per launch."""
        return self.summary.median

    @property
    def min_s(self) -> float:
        """Fastest sample, seconds per launch."""
        return self.summary.min

    @property
    def max_s(self) -> float:
        """Slowest sample, seconds per launch."""
        return self.summary.max

    @property
    def iqr_s(self) -> float:
        """Interquartile range of the samples, seconds."""
        return self.summary.iqr

    @property
    def cv(self) -> float:
        """Coefficient of variation of the samples (fraction; 0.0 for one sample)."""
        return self.summary.cv

    @property
    def gflops(self) -> float:
        """Achieved GFLOP/s (1e9 FLOP/s) at the median time."""
        return self.flops / self.median_s / 1e9

    @property
    def gbps(self) -> float:
        """Achieved GB/s (1e9 B/s) at the median time."""
        return self.bytes / self.median_s / 1e9

    @property
    def best_gflops(self) -> float:
        """GFLOP/s at the fastest sample."""
        return self.flops / self.min_s / 1e9

    @property
    def best_gbps(self) -> float:
        """GB/s at the fastest sample."""
        return self.bytes / self.min_s / 1e9

    # -- JSON --------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the stored fields plus derived ``intensity``,
        ``median_s``, ``min_s``, ``max_s``, ``iqr_s``, ``cv``, ``gflops`` and
        ``gbps`` (which readers ignore and recompute)."""
        return {
            "suite": self.suite,
            "kernel": self.kernel,
            "dtype": self.dtype,
            "params": dict(self.params),
            "flops": self.flops,
            "bytes": self.bytes,
            "intensity": self.intensity,
            "samples_s": list(self.samples_s),
            "median_s": self.median_s,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "iqr_s": self.iqr_s,
            "cv": self.cv,
            "gflops": self.gflops,
            "gbps": self.gbps,
            "valid": self.valid,
            "ceiling_class": self.ceiling_class,
            "ceiling_kind": self.ceiling_kind,
            "batch": self.batch,
            "validation": self.validation,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Measurement":
        """Build from :meth:`to_dict` output; derived fields are ignored.

        ``ceiling_class``, ``ceiling_kind``, ``batch`` and ``validation`` may be
        absent (defaults ``None``, ``None``, 1, ``""``).

        Raises:
            ResultsError: one line ``"<source>: <where>.<field> must be ..."``.
        """
        r = _Reader(source)
        d = r.obj(d, where or "measurement")
        params_raw = r.obj(r.req(d, "params", where), _join(where, "params"))
        params: Dict[str, ParamValue] = {}
        for k, v in params_raw.items():
            if v is None or not isinstance(v, (int, float, str, bool)):
                r.fail(f"{_join(where, 'params')}.{k} must be a number, string or boolean, not {_json_type(v)}")
            params[k] = v
        samples = r.array(d, "samples_s", where)
        if not samples:
            r.fail(f"{_join(where, 'samples_s')} must hold at least one sample")
        for i, s in enumerate(samples):
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
                r.fail(f"{_join(where, 'samples_s')}[{i}] must be a positive number of seconds, not {s!r}")
        ceiling_kind = r.opt_string(d, "ceiling_kind", where)
        if ceiling_kind is not None and ceiling_kind not in CEILING_KINDS:
            r.fail(f"{_join(where, 'ceiling_kind')} must be 'bandwidth', 'compute' or null, not {ceiling_kind!r}")
        batch = r.nonneg_int(d, "batch", where, positive=True) if "batch" in d else 1
        validation = r.string(d, "validation", where) if "validation" in d else ""
        try:
            return cls(
                suite=r.string(d, "suite", where),
                kernel=r.string(d, "kernel", where),
                dtype=r.string(d, "dtype", where),
                params=params,
                flops=r.nonneg_int(d, "flops", where),
                bytes=r.nonneg_int(d, "bytes", where, positive=True),
                samples_s=tuple(float(s) for s in samples),
                valid=r.boolean(d, "valid", where),
                ceiling_class=r.opt_string(d, "ceiling_class", where),
                ceiling_kind=ceiling_kind,
                batch=batch,
                validation=validation,
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(f"{where or 'measurement'}: {e}")


@dataclass(frozen=True)
class Ceiling:
    """A roofline ceiling: a bandwidth (GB/s) or a compute rate (GFLOP/s).

    Attributes:
        name: display name, e.g. ``"DRAM bandwidth"``, ``"FP32 scalar ILP"``.
        kind: ``"bandwidth"`` or ``"compute"``.
        value: the ceiling, > 0 and finite, in ``unit``.
        unit: ``"GB/s"`` (1e9 B/s) for bandwidth, ``"GFLOP/s"`` (1e9 FLOP/s)
            for compute; the pairing is enforced.
        source: ``"measured"`` (from this run's measurements) or
            ``"theoretical"`` (from specifications).
        from_: provenance: the measurement label or spec derivation (JSON key
            ``"from"``).

    Raises:
        ValueError: on construction, for an unknown kind or source, a unit
            that does not match the kind, or a non-positive/non-finite value.
    """

    name: str
    kind: str
    value: float
    unit: str
    source: str
    from_: str

    def __post_init__(self) -> None:
        if self.kind not in CEILING_KINDS:
            raise ValueError(f"ceiling {self.name!r}: kind must be 'bandwidth' or 'compute', not {self.kind!r}")
        want = CEILING_KINDS[self.kind]
        if self.unit != want:
            raise ValueError(f"ceiling {self.name!r}: a {self.kind} ceiling is in {want}, not {self.unit!r}")
        if self.source not in CEILING_SOURCES:
            raise ValueError(
                f"ceiling {self.name!r}: source must be 'measured' or 'theoretical', not {self.source!r}"
            )
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"ceiling {self.name!r}: value must be a positive finite number, not {v!r}")
        object.__setattr__(self, "value", float(v))

    @property
    def label(self) -> str:
        """``"<name> <value> <unit>"`` with the value to 3 significant figures."""
        return f"{self.name} {_fmt3(self.value)} {self.unit}"

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys name, kind, value, unit, source, from."""
        return {
            "name": self.name,
            "kind": self.kind,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "from": self.from_,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Ceiling":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError`."""
        r = _Reader(source)
        d = r.obj(d, where or "ceiling")
        try:
            return cls(
                name=r.string(d, "name", where),
                kind=r.string(d, "kind", where),
                value=r.number(d, "value", where),
                unit=r.string(d, "unit", where),
                source=r.string(d, "source", where),
                from_=r.string(d, "from", where),
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(f"{where or 'ceiling'}: {e}")


@dataclass(frozen=True)
class Skipped:
    """A kernel not run because the device does not support it.

    Example: FP16 kernels on a CPU without FP16 arithmetic.
    """

    suite: str
    kernel: str
    dtype: str
    reason: str

    @property
    def label(self) -> str:
        """``"suite/kernel/dtype"``."""
        return f"{self.suite}/{self.kernel}/{self.dtype}"

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys suite, kernel, dtype, reason."""
        return {"suite": self.suite, "kernel": self.kernel, "dtype": self.dtype, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Skipped":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError`."""
        r = _Reader(source)
        d = r.obj(d, where or "skipped")
        return cls(
            suite=r.string(d, "suite", where),
            kernel=r.string(d, "kernel", where),
            dtype=r.string(d, "dtype", where),
            reason=r.string(d, "reason", where),
        )


@dataclass(frozen=True)
class ToolInfo:
    """The tool that produced a run: name, version and git revision (or None)."""

    name: str
    version: str
    git_revision: Optional[str]

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys name, version, git_revision."""
        return {"name": self.name, "version": self.version, "git_revision": self.git_revision}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "tool") -> "ToolInfo":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError`."""
        r = _Reader(source)
        d = r.obj(d, where)
        return cls(
            name=r.string(d, "name", where),
            version=r.string(d, "version", where),
            git_revision=r.opt_string(d, "git_revision", where),
        )


_TOP_KEYS = (
    "schema_version",
    "tool",
    "created",
    "host",
    "device",
    "command",
    "conventions",
    "measurements",
    "ceilings",
    "skipped",
    "warnings",
    "complete",
)


@dataclass(frozen=True)
class Run:
    """Everything one invocation measured, with its provenance.

    Attributes:
        tool: producing tool, version and git revision.
        created: ISO 8601 timestamp of the run's start (str).
        host: host provenance (OS, CPU, memory ...), JSON-ready; stored as a
            dict copy, excluded from hashing.
        device: device description; must contain ``"backend"`` and ``"name"``.
        command: the command line, one string per argument.
        measurements: every measurement, valid or not.
        ceilings: measured (see :func:`roofline.derive_ceilings`) and
            theoretical ceilings.
        skipped: kernels unsupported on this device, with reasons.
        warnings: human-readable warnings collected during the run.
        complete: ``False`` when the run was interrupted (partial results).
        conventions: counting conventions, default :data:`CONVENTIONS`.
        schema_version: must equal :data:`SCHEMA_VERSION`.

    Raises:
        ValueError: on construction, if ``device`` lacks ``backend`` or
            ``name`` or ``schema_version`` is not :data:`SCHEMA_VERSION`.
    """

    tool: ToolInfo
    created: str
    host: Mapping[str, Any] = field(hash=False)
    device: Mapping[str, Any] = field(hash=False)
    command: Tuple[str, ...]
    measurements: Tuple[Measurement, ...]
    ceilings: Tuple[Ceiling, ...]
    skipped: Tuple[Skipped, ...] = ()
    warnings: Tuple[str, ...] = ()
    complete: bool = True
    conventions: Mapping[str, str] = field(default_factory=lambda: dict(CONVENTIONS), hash=False)
    schema_version: int = SCHEMA_VERSION
    finished: Optional[str] = None  # ISO 8601 time the run ended (optional; added to schema 1)

    def __post_init__(self) -> None:
        object.__setattr__(self, "host", dict(self.host))
        object.__setattr__(self, "device", dict(self.device))
        object.__setattr__(self, "conventions", dict(self.conventions))
        object.__setattr__(self, "command", tuple(self.command))
        object.__setattr__(self, "measurements", tuple(self.measurements))
        object.__setattr__(self, "ceilings", tuple(self.ceilings))
        object.__setattr__(self, "skipped", tuple(self.skipped))
        object.__setattr__(self, "warnings", tuple(self.warnings))
        for key in ("backend", "name"):
            if key not in self.device:
                raise ValueError(f"run: device must contain {key!r}")
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"run: schema_version {self.schema_version!r} is not supported (this tool writes {SCHEMA_VERSION})"
            )

    # -- helpers -----------------------------------------------------------

    @property
    def valid_measurements(self) -> Tuple[Measurement, ...]:
        """The measurements that passed validation, in order."""
        return tuple(m for m in self.measurements if m.valid)

    @property
    def device_name(self) -> str:
        """``str(device["name"])``."""
        return str(self.device["name"])

    @property
    def backend(self) -> str:
        """``str(device["backend"])``, e.g. ``"metal"``, ``"cpu"``, ``"cuda"``."""
        return str(self.device["backend"])

    def with_ceilings(self, ceilings: Sequence[Ceiling]) -> "Run":
        """A copy of this run with ``ceilings`` replacing its ceilings."""
        return dataclasses.replace(self, ceilings=tuple(ceilings))

    # -- JSON --------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with exactly the schema-1 top-level keys (module doc)."""
        return {
            "schema_version": self.schema_version,
            "tool": self.tool.to_dict(),
            "created": self.created,
            "host": dict(self.host),
            "device": dict(self.device),
            "command": list(self.command),
            "conventions": dict(self.conventions),
            "measurements": [m.to_dict() for m in self.measurements],
            "ceilings": [c.to_dict() for c in self.ceilings],
            "skipped": [s.to_dict() for s in self.skipped],
            "warnings": list(self.warnings),
            "complete": self.complete,
            **({"finished": self.finished} if self.finished is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "Run":
        """Build a run from :meth:`to_dict` output (e.g. parsed JSON).

        ``schema_version`` is checked first. Required keys: schema_version,
        tool, created, host, device, command, conventions, measurements,
        ceilings, complete; ``skipped`` and ``warnings`` default to empty.
        Unknown keys are ignored. Measured ceilings are recomputed from the valid
        measurements (roofline.derive_ceilings); theoretical ones are read as stored.

        Raises:
            ResultsError: one line naming ``source``, the field and what was
                expected, e.g. ``"run.json: measurements[2].flops must be a
                non-negative integer, not -1"``.
        """
        r = _Reader(source)
        if not isinstance(d, Mapping):
            r.fail(f"top level must be a JSON object, not {_json_type(d)}")
        d = r.obj(d, "top level")
        if "schema_version" not in d:
            r.fail("schema_version is missing (required key); is this an apple_roofline results file?")
        version = d["schema_version"]
        if version != SCHEMA_VERSION or isinstance(version, bool):
            r.fail(f"schema_version {version!r} is not supported (this tool reads {SCHEMA_VERSION})")
        tool = ToolInfo.from_dict(r.req(d, "tool", ""), source=source)
        created = r.string(d, "created", "")
        host = r.obj(r.req(d, "host", ""), "host")
        device = r.obj(r.req(d, "device", ""), "device")
        for key in ("backend", "name"):
            if key not in device:
                r.fail(f"device.{key} is missing (required key)")
        command = r.strings(d, "command", "")
        conventions_raw = r.obj(r.req(d, "conventions", ""), "conventions")
        conventions: Dict[str, str] = {}
        for k, v in conventions_raw.items():
            if not isinstance(v, str):
                r.fail(f"conventions.{k} must be a string, not {_json_type(v)}")
            conventions[k] = v
        measurements = tuple(
            Measurement.from_dict(m, source=source, where=f"measurements[{i}]")
            for i, m in enumerate(r.array(d, "measurements", ""))
        )
        ceilings = tuple(
            Ceiling.from_dict(c, source=source, where=f"ceilings[{i}]")
            for i, c in enumerate(r.array(d, "ceilings", ""))
        )
        # Measured ceilings are derived data, like median_s: recompute them from the valid
        # measurements rather than trust the file (an invalid measurement is never a ceiling).
        from .roofline import derive_ceilings

        ceilings = tuple(derive_ceilings(measurements)) + tuple(c for c in ceilings if c.source != "measured")
        skipped = tuple(
            Skipped.from_dict(s, source=source, where=f"skipped[{i}]")
            for i, s in enumerate(r.array(d, "skipped", "", required=False))
        )
        warnings = r.strings(d, "warnings", "", required=False)
        complete = r.boolean(d, "complete", "")
        finished = r.opt_string(d, "finished", "")
        return cls(
            tool=tool,
            created=created,
            host=dict(host),
            device=dict(device),
            command=command,
            measurements=measurements,
            ceilings=ceilings,
            skipped=skipped,
            warnings=warnings,
            complete=complete,
            finished=finished,
            conventions=conventions,
            schema_version=SCHEMA_VERSION,
        )

    def to_json(self) -> str:
        """The run as JSON text (indent 2, trailing newline).

        Raises:
            ResultsError: if any number is NaN or infinite (e.g. in ``host``,
                ``device`` or ``params``), naming where it is.
        """
        d = self.to_dict()
        _check_json_finite(d, "run")
        try:
            return json.dumps(d, indent=2, allow_nan=False) + "\n"
        except (TypeError, ValueError) as e:
            raise ResultsError(f"run: cannot be written as JSON: {e}") from None

    @classmethod
    def from_json(cls, text: str, *, source: str = "<string>") -> "Run":
        """Parse JSON text written by :meth:`to_json`.

        Raises:
            ResultsError: for empty or truncated text, invalid JSON (with line
                and column), NaN/Infinity literals, or anything
                :meth:`from_dict` rejects.
        """
        return cls.from_dict(parse_results_json(text, source=source), source=source)

    def roofline(self) -> "Roofline":
        """This run's roofline model (:class:`apple_roofline.roofline.Roofline`): its ceilings,
        ridge points, ``attainable``/``classify``/``efficiency`` and ``plot(points=[...])``."""
        from .roofline import Roofline

        return Roofline.from_run(self)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the run as JSON to ``path`` atomically (temp file + os.replace).

        Raises:
            ResultsError: if the run holds non-finite numbers (nothing is
                written then).
            OSError: if the file cannot be written.
        """
        text = self.to_json()
        write_text_atomic(path, text)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Run":
        """Read a run saved by :meth:`save`.

        Raises:
            ResultsError: one line naming ``path`` and the problem: missing or
                unreadable file, not UTF-8, empty or truncated JSON, wrong
                ``schema_version``, missing keys or wrong types.
        """
        source = str(path)
        return cls.from_json(read_results_text(path), source=source)


def parse_results_json(text: str, *, source: str = "<string>") -> Any:
    """Parse a results file's JSON text (a run or a dispatch study).

    Raises:
        ResultsError: empty or truncated text, invalid JSON (with line and column), or a NaN /
            Infinity literal; one line naming ``source``.
    """
    if not text.strip():
        raise ResultsError(f"{source}: empty file, not JSON")

    def _reject_constant(name: str) -> Any:
        raise ResultsError(f"{source}: {name} is not allowed in a results file")

    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{source}: truncated or not JSON (line {e.lineno} column {e.colno})") from None


def read_results_text(path: Union[str, "os.PathLike[str]"]) -> str:
    """The UTF-8 text of a results file. Raises :class:`ResultsError` naming ``path``: no such file,
    a directory, unreadable, or not UTF-8."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ResultsError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise ResultsError(f"{source}: is a directory, not a results file") from None
    except OSError as e:
        raise ResultsError(f"{source}: cannot be read ({e.strerror or e})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{source}: not UTF-8 text (byte {e.start})") from None


def _fmt3(x: float) -> str:
    """Format ``x`` to 3 significant figures for reports and labels.

    Plain notation for 1e-3 <= |x| < 1e6 (numbers >= 1000 keep all integer
    digits, with thousands separators: ``3849.2 -> "3,849"``), ``%.3g``
    otherwise; NaN/inf/0 as ``%g``.
    """
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    ax = abs(x)
    if ax >= 1e6 or ax < 1e-3:
        return f"{x:.3g}"
    rounded = float(f"{x:.3g}")
    if abs(rounded) >= 1000 or ax >= 1000:
        return f"{x:,.0f}"
    digits = max(2 - int(math.floor(math.log10(abs(rounded)))), 0)
    return f"{rounded:.{digits}f}"
