"""Results of a dispatch-latency study: latency series, their distributions and their JSON form.

A study (``apple-roofline dispatch``, :func:`apple_roofline.dispatch.run_dispatch`) measures what one
kernel launch costs on one device. Each :class:`LatencySeries` is one kernel ("null": one thread, no
memory; "tiny": one threadgroup/block touching 4 KiB), one measure, one path and one clock:

* measures:

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
  ``mlx``, ``pyobjc``).
* clocks: ``device`` (CUDA events, Metal command-buffer GPU times, the CPU's steady clock inside the
  parallel region) or ``host`` (the host's steady clock around the calls).

Distributions are order statistics (p10, p50, p90, p99, max), the way latency is reported by
tools such as wrk2 and HdrHistogram: a mean hides the tail. Samples are seconds per launch and
may be zero or negative only for ``start_latency`` and ``step`` (a device instant mapped onto the
host clock carries that mapping's uncertainty, recorded in the series' note; and a GPU may start
the work before the host's launch call returns).

The JSON written by :meth:`DispatchStudy.save` has the keys ``kind`` (``"dispatch"``),
``schema_version`` (1), ``tool``, ``created``, ``finished``, ``host``, ``device``, ``command``,
``params``, ``series``, ``skipped``, ``warnings`` and ``complete``. Reading is strict and raises
:class:`~apple_roofline.results.ResultsError` naming the file and field; distributions are
recomputed from the samples on reading, never trusted. This module never imports the extension.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .results import ResultsError, ToolInfo, _check_json_finite, _json_type, _Reader, parse_results_json, read_results_text, write_text_atomic

__all__ = [
    "DISPATCH_SCHEMA_VERSION",
    "KERNELS",
    "MEASURES",
    "CLOCKS",
    "PERCENTILES",
    "Distribution",
    "distribution",
    "LatencySeries",
    "PeerSkipped",
    "DispatchStudy",
    "TINY_FLOATS",
    "FLOAT32_EXACT",
    "check_tiny_counts",
]

DISPATCH_SCHEMA_VERSION = 1
_KIND = "dispatch"

#: The two kernels of the study.
KERNELS: Tuple[str, ...] = ("null", "tiny")
#: What a series measures (module docstring).
MEASURES: Tuple[str, ...] = ("throughput", "round_trip", "start_latency", "step")
#: Which clock timed a series.
CLOCKS: Tuple[str, ...] = ("device", "host")
#: The percentiles every distribution reports (plus min, max and mean).
PERCENTILES: Tuple[float, ...] = (10.0, 50.0, 90.0, 99.0)


#: Floats the ``tiny`` kernel adds 1.0 to per launch: 256 threads × one float4 = 4 KiB.
TINY_FLOATS = 1024
#: float32 counts launches exactly up to 2^24; past it, x + 1.0 rounds back to x.
FLOAT32_EXACT = 1 << 24


def check_tiny_counts(values: Any, count: int) -> Tuple[bool, str]:
    """Validate the ``tiny`` kernel's output after ``count`` launches on a zeroed buffer: every one of
    its :data:`TINY_FLOATS` float32 values must equal ``count`` (saturating at 2^24).

    Returns:
        ``(valid, message)``: what was checked, or the first float that differs and how many do.
    """
    v = np.asarray(values, dtype=np.float32).ravel()
    if v.size != TINY_FLOATS:
        return False, f"the output has {v.size} floats, not {TINY_FLOATS}"
    expected = float(min(count, FLOAT32_EXACT))
    saturated = f" (float32 stops counting at 2^24 = {FLOAT32_EXACT})" if count > FLOAT32_EXACT else ""
    bad = np.flatnonzero(v != np.float32(expected))
    if bad.size == 0:
        return True, f"all {TINY_FLOATS} floats == {int(expected)} after {count} launches{saturated}"
    i = int(bad[0])
    return False, (f"{bad.size} of {TINY_FLOATS} floats != {int(expected)} after {count} launches{saturated} "
                   f"(first: x[{i}] == {float(v[i]):.9g})")


@dataclass(frozen=True)
class Distribution:
    """Order statistics of one series' samples, in seconds.

    Percentiles use linear interpolation between order statistics (NumPy's default method): with
    fewer than 100 samples ``p99`` lies between the two largest. ``n`` is the sample count.
    """

    n: int
    min: float
    p10: float
    p50: float
    p90: float
    p99: float
    max: float
    mean: float


def distribution(samples: Sequence[float]) -> Distribution:
    """The :class:`Distribution` of ``samples`` (seconds).

    Raises:
        ValueError: empty ``samples``, or a value that is not a finite number.
    """
    values = []
    for i, s in enumerate(samples):
        if isinstance(s, bool) or not isinstance(s, (int, float, np.floating, np.integer)) or not math.isfinite(float(s)):
            raise ValueError(f"samples[{i}] is {s!r}, not a finite number of seconds")
        values.append(float(s))
    if not values:
        raise ValueError("samples must not be empty")
    arr = np.asarray(values, dtype=np.float64)
    p10, p50, p90, p99 = (float(x) for x in np.percentile(arr, list(PERCENTILES)))
    return Distribution(
        n=int(arr.size), min=float(arr.min()), p10=p10, p50=p50, p90=p90, p99=p99, max=float(arr.max()),
        mean=float(arr.mean()),
    )


@dataclass(frozen=True)
class LatencySeries:
    """One kernel, measure, path and clock of a study, with its samples.

    Attributes:
        kernel: ``"null"`` or ``"tiny"`` (:data:`KERNELS`).
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
            samples, a non-finite sample, a negative sample outside ``start_latency`` and ``step``,
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
        if isinstance(self.launches_per_sample, bool) or not isinstance(self.launches_per_sample, int) or self.launches_per_sample < 1:
            raise ValueError(f"{where}: launches_per_sample {self.launches_per_sample!r} is out of range (valid: 1 or more)")
        if not self.samples_s:
            raise ValueError(f"{where}: samples must not be empty")
        for i, s in enumerate(self.samples_s):
            if not math.isfinite(s):
                raise ValueError(f"{where}: samples_s[{i}] is {s!r}, not finite")
            if s < 0.0 and self.measure not in ("start_latency", "step"):
                raise ValueError(f"{where}: samples_s[{i}] is {s!r}; only start latencies and steps may be negative")

    @property
    def label(self) -> str:
        """``"kernel measure[/step] path (clock)"``, e.g. ``"null round_trip python (host)"``."""
        what = f"{self.measure}/{self.step}" if self.step else self.measure
        return f"{self.kernel} {what} {self.path} ({self.clock})"

    @property
    def distribution(self) -> Distribution:
        """The :class:`Distribution` of ``samples_s`` (seconds per launch)."""
        return distribution(self.samples_s)

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict; ``distribution`` is included for readers but ignored on reading."""
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
            "distribution": {k: getattr(d, k) for k in ("n", "min", "p10", "p50", "p90", "p99", "max", "mean")},
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "series") -> "LatencySeries":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError` naming the field."""
        r = _Reader(source)
        d = r.obj(d, where)
        samples = r.array(d, "samples_s", where)
        for i, s in enumerate(samples):
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                r.fail(f"{where}.samples_s[{i}] must be a number, not {_json_type(s)}")
        try:
            return cls(
                kernel=r.string(d, "kernel", where),
                measure=r.string(d, "measure", where),
                step=r.string(d, "step", where) if "step" in d else "",
                path=r.string(d, "path", where),
                clock=r.string(d, "clock", where),
                launches_per_sample=r.nonneg_int(d, "launches_per_sample", where, positive=True),
                valid=r.boolean(d, "valid", where),
                validation=r.string(d, "validation", where) if "validation" in d else "",
                note=r.string(d, "note", where) if "note" in d else "",
                samples_s=tuple(float(s) for s in samples),
            )
        except ValueError as e:
            if isinstance(e, ResultsError):
                raise
            r.fail(str(e))


@dataclass(frozen=True)
class PeerSkipped:
    """A path (peer library, or a measure a backend lacks) not measured, and why."""

    path: str
    reason: str

    def to_dict(self) -> Dict[str, Any]:
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "skipped") -> "PeerSkipped":
        r = _Reader(source)
        d = r.obj(d, where)
        return cls(path=r.string(d, "path", where), reason=r.string(d, "reason", where))


@dataclass(frozen=True)
class DispatchStudy:
    """Everything one dispatch-latency study measured, with its provenance.

    Attributes:
        tool: producing tool, version and git revision.
        created: ISO 8601 time the study started.
        host: host provenance (as in :class:`~apple_roofline.results.Run`).
        device: the device's description; contains ``"backend"`` and ``"name"``.
        command: the command line.
        params: the study's settings (``reps``, ``launches``, ``warmup`` ...), JSON-ready.
        series: every :class:`LatencySeries`, valid or not.
        skipped: paths or measures not measured, with reasons.
        warnings: human-readable warnings.
        complete: ``False`` when the study was interrupted.
        finished: ISO 8601 time it ended, or ``None``.

    Raises:
        ValueError: on construction, when ``device`` lacks ``backend`` or ``name``.
    """

    tool: ToolInfo
    created: str
    host: Mapping[str, Any] = field(hash=False)
    device: Mapping[str, Any] = field(hash=False)
    command: Tuple[str, ...]
    params: Mapping[str, Any] = field(hash=False)
    series: Tuple[LatencySeries, ...]
    skipped: Tuple[PeerSkipped, ...] = ()
    warnings: Tuple[str, ...] = ()
    complete: bool = True
    finished: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("host", "device", "params"):
            object.__setattr__(self, name, dict(getattr(self, name)))
        for name in ("command", "series", "skipped", "warnings"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        for key in ("backend", "name"):
            if key not in self.device:
                raise ValueError(f"dispatch study: device must contain {key!r}")

    @property
    def backend(self) -> str:
        """``str(device["backend"])``."""
        return str(self.device["backend"])

    @property
    def device_name(self) -> str:
        """``str(device["name"])``."""
        return str(self.device["name"])

    @property
    def valid(self) -> bool:
        """Whether every series passed validation."""
        return all(s.valid for s in self.series)

    def find(self, kernel: str, measure: str, path: str, clock: Optional[str] = None,
             step: str = "") -> Optional[LatencySeries]:
        """The first series matching the arguments (any clock when ``clock`` is None), or None."""
        for s in self.series:
            if (s.kernel, s.measure, s.path, s.step) == (kernel, measure, path, step) and clock in (None, s.clock):
                return s
        return None

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with the keys listed in the module docstring."""
        return {
            "kind": _KIND,
            "schema_version": DISPATCH_SCHEMA_VERSION,
            "tool": self.tool.to_dict(),
            "created": self.created,
            "finished": self.finished,
            "host": dict(self.host),
            "device": dict(self.device),
            "command": list(self.command),
            "params": dict(self.params),
            "series": [s.to_dict() for s in self.series],
            "skipped": [s.to_dict() for s in self.skipped],
            "warnings": list(self.warnings),
            "complete": self.complete,
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "DispatchStudy":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError` naming the field."""
        r = _Reader(source)
        if not isinstance(d, Mapping):
            r.fail(f"top level must be a JSON object, not {_json_type(d)}")
        d = r.obj(d, "top level")
        if d.get("kind") != _KIND:
            r.fail(f"kind is {d.get('kind')!r}, not 'dispatch'; is this an apple-roofline dispatch study?")
        version = d.get("schema_version")
        if version != DISPATCH_SCHEMA_VERSION or isinstance(version, bool):
            r.fail(f"schema_version {version!r} is not supported (this tool reads {DISPATCH_SCHEMA_VERSION})")
        device = r.obj(r.req(d, "device", ""), "device")
        for key in ("backend", "name"):
            if key not in device:
                r.fail(f"device.{key} is missing (required key)")
        return cls(
            tool=ToolInfo.from_dict(r.req(d, "tool", ""), source=source),
            created=r.string(d, "created", ""),
            finished=r.opt_string(d, "finished", ""),
            host=dict(r.obj(r.req(d, "host", ""), "host")),
            device=dict(device),
            command=r.strings(d, "command", ""),
            params=dict(r.obj(r.req(d, "params", ""), "params")),
            series=tuple(
                LatencySeries.from_dict(s, source=source, where=f"series[{i}]")
                for i, s in enumerate(r.array(d, "series", ""))
            ),
            skipped=tuple(
                PeerSkipped.from_dict(s, source=source, where=f"skipped[{i}]")
                for i, s in enumerate(r.array(d, "skipped", "", required=False))
            ),
            warnings=r.strings(d, "warnings", "", required=False),
            complete=r.boolean(d, "complete", ""),
        )

    def to_json(self) -> str:
        """JSON text (indent 2). Raises :class:`ResultsError` for a non-finite number."""
        d = self.to_dict()
        _check_json_finite(d, "dispatch study")
        return json.dumps(d, indent=2, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = "<string>") -> "DispatchStudy":
        """Parse :meth:`to_json` text. Raises :class:`ResultsError` (empty, truncated, not JSON, bad fields)."""
        return cls.from_dict(parse_results_json(text, source=source), source=source)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write atomically (temp file + rename): a failed write never leaves a half-written file.

        Raises:
            ResultsError: a non-finite number (nothing is written).
            OSError: the file cannot be written.
        """
        write_text_atomic(path, self.to_json())

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "DispatchStudy":
        """Read a study written by :meth:`save`.

        Raises:
            ResultsError: missing or unreadable file, not UTF-8, empty or truncated JSON, or a field
                :meth:`from_dict` rejects; one line naming the file.
        """
        return cls.from_json(read_results_text(path), source=os.fspath(path))

