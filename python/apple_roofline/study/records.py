"""The records of a roofline run: measurements, ceilings and skipped kernels.

A :class:`Measurement` is one timed kernel configuration with its samples and validation; a
:class:`Ceiling` a bandwidth (GB/s) or compute rate (GFLOP/s), measured or theoretical; a
:class:`Skipped` a kernel the device cannot run. Counting conventions (docs/design/measurement.md, "Counting
FLOPs and bytes"): FLOPs per scalar lane (an FMA is 2 FLOPs, a 4-wide vector FMA 8); bytes are
compulsory DRAM traffic, every input read once plus every output written once, write-allocate not
counted (BabelStream's convention); GB = 1e9 bytes, GFLOP/s = 1e9 FLOP/s, times in seconds.

Reading is strict (:class:`~apple_roofline.study.reader.Reader`); derived per-measurement fields
(``median_s``, ``gflops`` ...) must agree with ``samples_s`` and are recomputed from them on reading,
never trusted.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..sizes import format_size
from ..telemetry.window import PARAMS as TELEMETRY_PARAMS
from ..telemetry.window import POWER
from ..text import sig_figs
from ..timing.clocks import CLOCK_PARAMS
from ..timing.stats import NOISY_CV, Summary, summarize
from .files import ResultsError
from .journal import record_key
from .reader import Reader, join, json_type

__all__ = [
    "CONVENTIONS",
    "CEILING_KINDS",
    "CEILING_SOURCES",
    "TIMER_PARAM",
    "BLOCK_PARAM",
    "REMEASURED_PARAM",
    "LADDER_PARAM",
    "WORKING_SET",
    "working_set_text",
    "TELEMETRY_PARAMS",
    "COUNT_PARAMS",
    "CONDITION_PARAMS",
    "measurement_key",
    "record_mismatch",
    "check_repeats",
    "STORED_STATISTICS",
    "ParamValue",
    "Measurement",
    "Ceiling",
    "NOISY_SAMPLES",
    "OverLimit",
    "OVER_LIMIT_REASONS",
    "Skipped",
    "format_params",
]

#: Counting conventions recorded in every run (docs/design/measurement.md, "Counting FLOPs and bytes").
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

#: The parameter in which the runner records how a backend with more than one clock timed the
#: samples (Metal: counter timestamps or command-buffer GPU times); reports list it separately.
TIMER_PARAM = "timer"
#: The parameter in which a measurement records the CV of a first sample set that was too noisy
#: (above :data:`~apple_roofline.timing.stats.NOISY_CV`), so the runner measured it again (docs/design/measurement.md,
#: "Noisy samples"); its samples are the second set's.
REMEASURED_PARAM = "remeasured_cv"
#: The measurement parameter that says why a GEMM size ladder ended at this size (only the last size has it).
LADDER_PARAM = "ladder"
#: The words a measured ceiling's provenance (``from_``) holds, with the CV, where the measurement that
#: set it is noisy (:attr:`Measurement.noisy`): ``"...(median of 10; noisy samples, CV 189%)"``
#: (:func:`~.model.derive_ceilings`; docs/design/measurement.md, "Noisy samples"). :attr:`Ceiling.noisy` reads it.
NOISY_SAMPLES = "noisy samples"
_NOISY_NOTE = re.compile(re.escape(NOISY_SAMPLES) + r", CV [0-9][0-9.,]*%")
#: The parameter in which a measurement records the threads per block / threadgroup its kernel
#: launched with (where the kernel has one: not CPU kernels or vendor-library routines).
BLOCK_PARAM = "block"
#: The parameter holding a measurement's working set, bytes (a bandwidth class whose winner records
#: one is a level ceiling of that working set: the hierarchy's levels, threadgroup memory).
WORKING_SET = "working_set_bytes"


def working_set_text(ws: Tuple[int, int]) -> str:
    """``"4 KiB–71.2 KiB"`` (one size when both ends are equal): a level ceiling's working sets."""
    lo, hi = ws
    return format_size(lo) if lo == hi else f"{format_size(lo)}–{format_size(hi)}"


#: Parameters that are counts wherever a suite or study writes them (problem sizes, launches, pixels,
#: texels, block sizes, bytes): each must be a non-negative integer. Every other integer parameter
#: must be non-negative too (:meth:`~apple_roofline.study.reader.Reader.counts`).
COUNT_PARAMS: Tuple[str, ...] = (
    "F",
    "n",
    "m",
    "k",
    "block",
    "batch",
    "iters",
    "reps",
    "groups",
    "waves",
    "array_bytes",
    "working_set_bytes",
    "width",
    "height",
    "layers",
    "size",
    "fetches",
    "pixels_drawn",
    "pixels_shaded",
    "texels",
    "tile_bytes_per_pixel",
    "dram_bytes",
    "fragment_invocations",
    "wave_items",
    "resident_blocks_per_sm",
    "resident_threads_per_sm",
)

#: The parameters that say what a measurement was measured at or how its measuring went, not which
#: case it measured: the timer, the clocks and power sampled over its samples, the CV of a first set
#: measured again, the GEMM ladder's note. Every other parameter (the case's own, its launch block)
#: identifies it (:func:`measurement_key`).
CONDITION_PARAMS: Tuple[str, ...] = (TIMER_PARAM, REMEASURED_PARAM, LADDER_PARAM, *TELEMETRY_PARAMS, *CLOCK_PARAMS)


def measurement_key(label: str, params: Mapping[str, Any]) -> str:
    """What identifies a measurement of ``label`` (``"suite/kernel/dtype"``) with ``params`` in its
    run, as the journal's key names it (:func:`~apple_roofline.study.journal.record_key`): the label,
    then the parameters but :data:`CONDITION_PARAMS` as compact JSON with sorted keys
    (``'stream/copy/fp32 {"array_bytes":8388608,"n":1048576,"q":1.0}'``). A run holds one
    measurement of each."""
    return record_key(label, params={k: v for k, v in params.items() if k not in CONDITION_PARAMS})


def record_mismatch(key: str, record: Mapping[str, Any], *, params: bool = True) -> str:
    """The :func:`measurement_key` of the measurement a journal ``record`` holds where it is not the
    one its ``key`` names (``record_key(label, ..., params=...)``: the label first, the parameters'
    JSON last), else "": the key's label (suite/kernel/dtype) must be the record's, and with
    ``params`` each of the key's parameters the record's parameter of that name (a tuning study's key
    holds the parameters of the case as planned, which a case rebuilt at another block re-sizes:
    it passes ``params=False``). The words between them (a tuning study's ``block=256``) and the
    key's ``BLOCK`` (a kernel's compile-time block constant, which a record does not hold: its
    ``block`` is the launch's) are not compared. A record that names no measurement (no suite,
    kernel and dtype strings) is its reader's to refuse (:meth:`Measurement.from_dict`, when the
    study takes it), not this check's."""
    names = [record.get(k) for k in ("suite", "kernel", "dtype")]
    if not all(isinstance(n, str) for n in names):
        return ""
    label, _, rest = key.partition(" ")
    start = rest.find("{")
    try:
        want = json.loads(rest[start:]) if start >= 0 else {}
    except ValueError:
        want = None
    held = record.get("params")
    held = held if isinstance(held, Mapping) else {}
    got = "/".join(str(n) for n in names)
    same = isinstance(want, dict) and got == label
    if same and params and isinstance(want, dict):
        same = all(k == "BLOCK" or (k in held and held[k] == v) for k, v in want.items())
    return "" if same else measurement_key(got, held)


def check_repeats(measurements: Sequence["Measurement"], r: Reader, where: str = "measurements") -> None:
    """Fail (``r``'s :class:`ResultsError`) naming both places where two of ``measurements`` (read
    from the array ``where``) are one case: one :attr:`Measurement.key`."""
    seen: Dict[str, int] = {}
    for i, m in enumerate(measurements):
        first = seen.setdefault(m.key, i)
        if first != i:
            r.fail(
                f"{where}[{i}] repeats {where}[{first}], {m.key} (valid: each measurement once, by its "
                "kernel and parameters)"
            )


#: The statistics a measurement's JSON holds beside ``samples_s`` (key -> field of
#: :class:`~apple_roofline.timing.stats.Summary`), checked on reading.
STORED_STATISTICS: Dict[str, str] = {"min_s": "min", "median_s": "median", "max_s": "max", "iqr_s": "iqr", "cv": "cv"}

#: Why a measured figure can lie above the physical limit of what it is labelled with
#: (:class:`OverLimit`; docs/design/limits.md, "Physical limits").
OVER_LIMIT_REASONS: Tuple[str, ...] = ("cache-resident working set", "clock misread", "timer error")


@dataclass(frozen=True)
class OverLimit:
    """A measured figure above the physical limit of what it is labelled with, beyond the tolerance
    (:data:`~.limits.TOLERANCE`): it sets no ceiling and no level, and every view marks it
    (docs/design/limits.md, "Physical limits"). Derived from the measurement, the run's theoretical ceilings
    and its clocks by :func:`~.limits.check_limits`; written to results files for other readers and
    derived again on reading, never trusted.

    Attributes:
        figure: the measured figure, in ``unit`` (the rate every view shows of the measurement: its
            median's, a working-set point's best sample's).
        limit: the limit at the clock the measurement ran at, in ``unit``.
        unit: ``"GB/s"`` or ``"GFLOP/s"``.
        against: what the limit is, e.g. ``"theoretical DRAM bandwidth (the memory interface's peak)"``.
        reason: one of :data:`OVER_LIMIT_REASONS`.

    Raises:
        ValueError: on construction, for a figure or limit that is not positive and finite, a figure
            not above its limit, a unit that is neither, or an unknown reason.
    """

    figure: float
    limit: float
    unit: str
    against: str
    reason: str

    def __post_init__(self) -> None:
        for name in ("figure", "limit"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"over_limit: {name} must be a positive finite number, not {v!r}")
            object.__setattr__(self, name, float(v))
        if self.figure <= self.limit:
            raise ValueError(f"over_limit: figure {self.figure!r} is not above its limit {self.limit!r}")
        if self.unit not in CEILING_KINDS.values():
            raise ValueError(f"over_limit: unit must be 'GB/s' or 'GFLOP/s', not {self.unit!r}")
        if self.reason not in OVER_LIMIT_REASONS:
            raise ValueError(f"over_limit: reason must be one of {', '.join(OVER_LIMIT_REASONS)}, not {self.reason!r}")

    @property
    def text(self) -> str:
        """``"5,130 GB/s is above the theoretical DRAM bandwidth (...), 4,814 GB/s: cache-resident
        working set"``: no percentage, since none above 100 is shown."""
        return (
            f"{sig_figs(self.figure)} {self.unit} is above the {self.against}, "
            f"{sig_figs(self.limit)} {self.unit}: {self.reason}"
        )

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys figure, limit, unit, against, reason."""
        return {
            "figure": self.figure,
            "limit": self.limit,
            "unit": self.unit,
            "against": self.against,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>", where: str = "over_limit") -> "OverLimit":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError`."""
        r = Reader(source)
        d = r.obj(d, where)
        unit = r.string(d, "unit", where)
        figure, limit = r.positive(d, "figure", where, unit), r.positive(d, "limit", where, unit)
        against, reason = r.string(d, "against", where), r.string(d, "reason", where)
        try:
            return cls(figure=figure, limit=limit, unit=unit, against=against, reason=reason)
        except ValueError as e:
            r.fail(f"{where}: {e}")


def format_params(params: Mapping[str, object]) -> str:
    """A measurement's parameters as ``"F=512, n=1048576"`` (insertion order; "" when empty),
    leaving out :data:`TIMER_PARAM` (a sentence, reported on its own) and the clocks and power
    (:data:`TELEMETRY_PARAMS` and the effective clock, :data:`~apple_roofline.timing.clocks.CLOCK_PARAMS`,
    reported in their own sections)."""
    return ", ".join(
        f"{k}={v}"
        for k, v in params.items()
        if k != TIMER_PARAM and k not in TELEMETRY_PARAMS and k not in CLOCK_PARAMS
    )


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
        over_limit: where the measured figure lies above the physical limit of what it is labelled
            with (:class:`OverLimit`, set by :func:`~.limits.check_limits`): such a measurement is
            reported and drawn, marked, but never becomes a ceiling or a level. None otherwise.
            Derived, so not part of equality.

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
    over_limit: Optional[OverLimit] = field(default=None, compare=False, hash=False)

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
            raise ValueError(f"{self.label}: ceiling_kind must be 'bandwidth' or 'compute', not {self.ceiling_kind!r}")
        try:
            summarize(self.samples_s)
        except ValueError as e:
            raise ValueError(f"{self.label}: {e}") from None

    # -- derived -----------------------------------------------------------

    @property
    def label(self) -> str:
        """``"suite/kernel/dtype"``, e.g. ``"stream/triad/fp32"``."""
        return f"{self.suite}/{self.kernel}/{self.dtype}"

    @property
    def key(self) -> str:
        """What identifies this measurement in its run (:func:`measurement_key`)."""
        return measurement_key(self.label, self.params)

    @property
    def usable(self) -> bool:
        """Whether this measurement may set a ceiling or a level: valid and not above its physical
        limit (docs/design/limits.md, "Physical limits")."""
        return self.valid and self.over_limit is None

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
    def noisy(self) -> bool:
        """Whether the samples are noisy enough to be marked: CV above
        :data:`~apple_roofline.timing.stats.NOISY_CV` (docs/design/measurement.md, "Noisy samples")."""
        return self.cv > NOISY_CV

    @property
    def gflops(self) -> float:
        """Achieved GFLOP/s (1e9 FLOP/s) at the median time."""
        return self.flops / self.median_s / 1e9

    @property
    def gbps(self) -> float:
        """Achieved GB/s (1e9 B/s) at the median time."""
        return self.bytes / self.median_s / 1e9

    @property
    def power_w(self) -> Optional[float]:
        """Mean power in watts over the timed samples (the ``power_w`` parameter, docs/design/power.md,
        "Clocks and power"), or None when the run did not measure power."""
        p = self.params.get(POWER)
        return float(p) if isinstance(p, (int, float)) and not isinstance(p, bool) and p > 0 else None

    @property
    def gflops_per_watt(self) -> Optional[float]:
        """GFLOP/s per watt (:attr:`gflops` / :attr:`power_w`), None without power; derived, never
        stored."""
        p = self.power_w
        return self.gflops / p if p is not None else None

    @property
    def gbps_per_watt(self) -> Optional[float]:
        """GB/s per watt (:attr:`gbps` / :attr:`power_w`), None without power; derived, never stored."""
        p = self.power_w
        return self.gbps / p if p is not None else None

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
        ``gbps`` (which readers check against the samples and recompute), and ``over_limit``
        where set (absent otherwise; derived again on reading)."""
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
            **({"over_limit": self.over_limit.to_dict()} if self.over_limit is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Measurement":
        """Build from :meth:`to_dict` output. The derived fields, when present, are checked against
        the samples (each optional; :data:`STORED_STATISTICS`, ``gflops``, ``gbps``, ``intensity``:
        docs/design/files.md, "Results files") and then recomputed, never used.

        ``ceiling_class``, ``ceiling_kind``, ``batch`` and ``validation`` may be
        absent (defaults ``None``, ``None``, 1, ``""``). ``over_limit``, where present, must be an
        :class:`OverLimit`; it is checked and dropped, as it is derived: a run's reader sets it
        again from the run's limits (:func:`~.limits.check_limits`).

        Raises:
            ResultsError: one line ``"<source>: <where>.<field> must be ..."``; FLOPs or bytes at the
                fastest sample beyond any device's rate (:data:`~apple_roofline.study.reader.MAX_RATE`)
                name ``samples_s``.
        """
        r = Reader(source)
        d = r.obj(d, where or "measurement")
        params_raw = r.obj(r.req(d, "params", where), join(where, "params"))
        params: Dict[str, ParamValue] = {}
        for k, v in params_raw.items():
            if v is None or not isinstance(v, (int, float, str, bool)):
                r.fail(f"{join(where, 'params')}.{k} must be a number, string or boolean, not {json_type(v)}")
            params[k] = v
        r.counts(params, join(where, "params"), COUNT_PARAMS)  # and seconds, clocks, power never below 0
        samples = r.samples(d, "samples_s", where)
        ceiling_kind = r.opt_string(d, "ceiling_kind", where)
        if ceiling_kind is not None and ceiling_kind not in CEILING_KINDS:
            r.fail(f"{join(where, 'ceiling_kind')} must be 'bandwidth', 'compute' or null, not {ceiling_kind!r}")
        batch = r.nonneg_int(d, "batch", where, positive=True) if "batch" in d else 1
        validation = r.string(d, "validation", where) if "validation" in d else ""
        if d.get("over_limit") is not None:
            OverLimit.from_dict(d["over_limit"], source=source, where=join(where, "over_limit"))
        flops = r.nonneg_int(d, "flops", where)
        nbytes = r.nonneg_int(d, "bytes", where, positive=True)
        fastest = min(samples)  # the highest rate any view derives: every other is at a slower sample
        for count, name, unit in ((flops, "flops", "GFLOP/s"), (nbytes, "bytes", "GB/s")):
            r.within_rate(count / fastest / 1e9, join(where, "samples_s"), unit, f"{name} at its fastest sample")
        # the derived values written for other readers must be the samples' own
        median = r.statistics(d, where, samples, STORED_STATISTICS).median
        r.derived(d, "gflops", where, flops / median / 1e9, "flops / median_s / 1e9", "GFLOP/s")
        r.derived(d, "gbps", where, nbytes / median / 1e9, "bytes / median_s / 1e9", "GB/s")
        r.derived(d, "intensity", where, flops / nbytes, "flops / bytes", "FLOP/byte")
        try:
            return cls(
                suite=r.string(d, "suite", where),
                kernel=r.string(d, "kernel", where),
                dtype=r.string(d, "dtype", where),
                params=params,
                flops=flops,
                bytes=nbytes,
                samples_s=samples,
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
        working_set: for the bandwidth of one level of the memory hierarchy (a cache, shared
            memory: the cache-aware roofline, docs/design/hierarchy.md, "The memory hierarchy"), the working
            sets in bytes it holds for, ``(smallest, largest)``; None for every other ceiling
            (DRAM's, compute ceilings). A level ceiling is never the default bandwidth of the
            model: DRAM's stays the ridge point's. JSON key ``"working_set"``, absent when None.

    Raises:
        ValueError: on construction, for an unknown kind or source, a unit
            that does not match the kind, or a non-positive/non-finite value; a working set
            on a compute ceiling, or one that is not two positive sizes in order.
    """

    name: str
    kind: str
    value: float
    unit: str
    source: str
    from_: str
    working_set: Optional[Tuple[int, int]] = None

    def __post_init__(self) -> None:
        if self.kind not in CEILING_KINDS:
            raise ValueError(f"ceiling {self.name!r}: kind must be 'bandwidth' or 'compute', not {self.kind!r}")
        want = CEILING_KINDS[self.kind]
        if self.unit != want:
            raise ValueError(f"ceiling {self.name!r}: a {self.kind} ceiling is in {want}, not {self.unit!r}")
        if self.source not in CEILING_SOURCES:
            raise ValueError(f"ceiling {self.name!r}: source must be 'measured' or 'theoretical', not {self.source!r}")
        v = self.value
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise ValueError(f"ceiling {self.name!r}: value must be a positive finite number, not {v!r}")
        object.__setattr__(self, "value", float(v))
        if self.working_set is not None:
            lo, hi = self.working_set
            if self.kind != "bandwidth" or not 0 < int(lo) <= int(hi):
                raise ValueError(
                    f"ceiling {self.name!r}: working_set must be two sizes 0 < smallest <= largest on a "
                    f"bandwidth ceiling, not {self.working_set!r}"
                )
            object.__setattr__(self, "working_set", (int(lo), int(hi)))

    @property
    def is_level(self) -> bool:
        """Whether this is the bandwidth of one level of the memory hierarchy (it has a working set)."""
        return self.working_set is not None

    @property
    def label(self) -> str:
        """``"<name> <value> <unit>"`` with the value to 3 significant figures."""
        return f"{self.name} {sig_figs(self.value)} {self.unit}"

    @property
    def noise(self) -> Optional[str]:
        """``"noisy samples, CV 189%"`` where this measured ceiling was set by a noisy measurement
        (its ``from_`` says so, :data:`NOISY_SAMPLES`), else None. Every figure marks such a ceiling
        with these words, as the report's From column does. Measured ceilings are derived again
        from the measurements on reading (:mod:`.run`), so the mark follows the samples, never a
        stored flag."""
        if self.source != "measured":
            return None
        found = _NOISY_NOTE.search(self.from_)
        return found.group(0) if found else None

    @property
    def noisy(self) -> bool:
        """Whether this is a measured ceiling set by a noisy measurement (:attr:`noise`)."""
        return self.noise is not None

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys name, kind, value, unit, source, from."""
        return {
            "name": self.name,
            "kind": self.kind,
            "value": self.value,
            "unit": self.unit,
            "source": self.source,
            "from": self.from_,
            **({"working_set": list(self.working_set)} if self.working_set is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "") -> "Ceiling":
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError`, for a value beyond any
        device's (:data:`~apple_roofline.study.reader.MAX_RATE`) too."""
        r = Reader(source)
        d = r.obj(d, where or "ceiling")
        kind = r.string(d, "kind", where)
        try:
            return cls(
                name=r.string(d, "name", where),
                kind=kind,
                value=r.rate(d, "value", where, CEILING_KINDS.get(kind, "GB/s or GFLOP/s")),
                unit=r.string(d, "unit", where),
                source=r.string(d, "source", where),
                from_=r.string(d, "from", where),
                working_set=_working_set(r, d, where),
            )
        except ResultsError:
            raise
        except ValueError as e:
            r.fail(f"{where or 'ceiling'}: {e}")


def _working_set(r: Reader, d: Mapping[str, Any], where: str) -> Optional[Tuple[int, int]]:
    """A ceiling's optional ``working_set``: two integers, or absent."""
    if "working_set" not in d:
        return None
    ws = d["working_set"]
    if not isinstance(ws, list) or len(ws) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in ws):
        r.fail(f"{join(where, 'working_set')} must be two integers [smallest, largest] in bytes, not {ws!r}")
    return int(ws[0]), int(ws[1])


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
        r = Reader(source)
        d = r.obj(d, where or "skipped")
        return cls(
            suite=r.string(d, "suite", where),
            kernel=r.string(d, "kernel", where),
            dtype=r.string(d, "dtype", where),
            reason=r.string(d, "reason", where),
        )


def level_ceiling_name(level: str) -> str:
    """The ceiling class of a level: ``"L2 bandwidth"``."""
    return f"{level} bandwidth"
