"""Strict reading of parsed JSON: typed accessors that fail with one line naming the field.

Every results file is read through a :class:`Reader`, so every kind of study reports a bad file the
same way: ``"run.json: measurements[2].flops must be a non-negative integer, not -1 (valid: 0 to
2**63 - 1)"``.

The rules every kind shares (docs/design/files.md, "Results files"): every number is finite (checked
over the whole file when it is parsed, :func:`~.files.check_finite`); counts are non-negative
integers up to :data:`MAX_COUNT` (:meth:`Reader.nonneg_int`, and :meth:`Reader.counts` for free-form
parameters, where a key naming a unit marks a quantity that is never negative); times and rates
are positive (:meth:`Reader.positive`; samples within :data:`SAMPLE_SECONDS`,
:meth:`Reader.samples`); and a statistic stored beside its samples (a median, a minimum, a rate at
the median) lies within the samples' range and equals the value recomputed from them, to a
relative :data:`REL_TOL`
(:meth:`Reader.statistics`, :meth:`Reader.derived`). A file that breaks one is rejected with one
line naming the field and the valid range, never read as data.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, NoReturn, Optional, Sequence, Tuple

from ..timing.stats import Summary, summarize
from .files import ResultsError

__all__ = [
    "Reader",
    "json_type",
    "join",
    "unit_of",
    "REL_TOL",
    "ORDER_STATISTICS",
    "MAX_COUNT",
    "SAMPLE_SECONDS",
    "MAX_RATE",
    "UNIT_SUFFIXES",
]

#: How far a statistic stored beside its samples may lie from the one recomputed from them, as a
#: fraction of it. JSON holds a float exactly, so a file this tool wrote agrees to the last bit; the
#: slack admits another writer's rounding to 7 significant digits, no more.
REL_TOL = 1e-6

#: The largest count a results file may hold (a signed 64-bit integer: what every JSON reader can
#: hold, and a FLOP or byte count far beyond any measurement). Larger integers would overflow the
#: floats that rates are computed in.
MAX_COUNT = 2**63 - 1

#: The range of a sample, in seconds: below a femtosecond no clock resolves, above 1e9 s (31
#: years) no study runs; outside it the statistics and rates derived from samples would overflow.
SAMPLE_SECONDS: Tuple[float, float] = (1e-15, 1e9)

#: The largest rate a results file may hold, by unit: beyond any device's physical limit by orders of
#: magnitude, so a figure above it comes of a corrupted or edited file, never of a measurement. The
#: fastest chips of 2025 peak below 1e7 GFLOP/s (a B200's dense FP4 tensor rate, 9e6), near 1e4 GB/s
#: from DRAM (HBM3e, 8e3) and below 1e6 GB/s on chip (an H100's L1 and shared memory summed over its
#: SMs, about 3e4): the bounds are 100 times these and more. A rate at a sample's time counts too,
#: so a bound holds every figure a view derives (:meth:`Reader.rate`, :meth:`Reader.within_rate`).
MAX_RATE: Dict[str, float] = {"GFLOP/s": 1e9, "GB/s": 1e8}

#: The order statistics of :class:`~apple_roofline.timing.stats.Summary`, smallest first: a stored one
#: must lie within its samples' range.
ORDER_STATISTICS: Tuple[str, ...] = ("min", "p10", "q1", "median", "q3", "p90", "p99", "max")


def json_type(v: Any) -> str:
    """How a JSON value is named in an error message (``"null"``, ``"a string"``, ``"the number 3"``)."""
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


#: The units a key's last ``_`` part names (``lead_s``, ``power_w``, ``sm_clock_mhz``, ``clock_hz``,
#: ``gpu_active_pct``, ``temperature_c``): numbers under such keys are measured quantities, never
#: negative, except a temperature (``""``: no sign rule).
UNIT_SUFFIXES: Dict[str, str] = {"s": "seconds", "hz": "Hz", "mhz": "MHz", "w": "watts", "pct": "percent", "c": ""}


def unit_of(key: str) -> Optional[str]:
    """The unit ``key`` names by its suffix (:data:`UNIT_SUFFIXES`), or None."""
    return UNIT_SUFFIXES.get(key.rsplit("_", 1)[-1].lower()) if "_" in key else None


def _shown(v: Any) -> str:
    """``repr(v)``, an integer of more than 30 digits shortened to its digit count (a hostile file's
    value must not flood the one-line message)."""
    text = repr(v)
    return f"an integer of {len(text)} digits" if isinstance(v, int) and len(text) > 30 else text


def join(where: str, key: str) -> str:
    """The path of ``key`` inside ``where`` (``"device" + "name" -> "device.name"``)."""
    return f"{where}.{key}" if where else key


class Reader:
    """Type-checking accessors for one source (a file name or ``"<dict>"``); each raises
    :class:`~.files.ResultsError` ``"<source>: <field> must be ..."``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, msg: str) -> NoReturn:
        """Raise ResultsError ``"<source>: <msg>"``."""
        raise ResultsError(f"{self.source}: {msg}")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        """``value`` as an object with string keys."""
        if not isinstance(value, Mapping):
            self.fail(f"{where} must be an object, not {json_type(value)}")
        for k in value:
            if not isinstance(k, str):
                self.fail(f"{where} must have string keys, found {k!r}")
        return value

    def req(self, d: Mapping[str, Any], key: str, where: str) -> Any:
        """``d[key]``; a required key."""
        if key not in d:
            self.fail(f"{join(where, key)} is missing (required key)")
        return d[key]

    def string(self, d: Mapping[str, Any], key: str, where: str, *, default: Optional[str] = None) -> str:
        """``d[key]`` as a string; ``default`` when given and the key is absent."""
        if default is not None and key not in d:
            return default
        v = self.req(d, key, where)
        if not isinstance(v, str):
            self.fail(f"{join(where, key)} must be a string, not {json_type(v)}")
        return v

    def opt_string(self, d: Mapping[str, Any], key: str, where: str) -> Optional[str]:
        """``d[key]`` as a string, or None when absent or null."""
        v = d.get(key)
        if v is not None and not isinstance(v, str):
            self.fail(f"{join(where, key)} must be a string or null, not {json_type(v)}")
        return v

    def boolean(self, d: Mapping[str, Any], key: str, where: str) -> bool:
        """``d[key]`` as true or false."""
        v = self.req(d, key, where)
        if not isinstance(v, bool):
            self.fail(f"{join(where, key)} must be true or false, not {json_type(v)}")
        return v

    def nonneg_int(self, d: Mapping[str, Any], key: str, where: str, *, positive: bool = False) -> int:
        """``d[key]`` as an integer >= 0 (> 0 with ``positive``), at most :data:`MAX_COUNT`."""
        v = self.req(d, key, where)
        ok = isinstance(v, int) and not isinstance(v, bool) and (v > 0 if positive else v >= 0) and v <= MAX_COUNT
        if not ok:
            what = "a positive integer" if positive else "a non-negative integer"
            self.fail(f"{join(where, key)} must be {what}, not {_shown(v)} (valid: {int(positive)} to 2**63 - 1)")
        return int(v)

    def number(self, d: Mapping[str, Any], key: str, where: str) -> float:
        """``d[key]`` as a finite number."""
        v = self.req(d, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            self.fail(f"{join(where, key)} must be a finite number, not {v!r}")
        return float(v)

    def array(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> List[Any]:
        """``d[key]`` as an array; an empty list when not ``required`` and absent."""
        if not required and key not in d:
            return []
        v = self.req(d, key, where)
        if not isinstance(v, list):
            self.fail(f"{join(where, key)} must be an array, not {json_type(v)}")
        return v

    def strings(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> Tuple[str, ...]:
        """``d[key]`` as an array of strings."""
        items = self.array(d, key, where, required=required)
        for i, s in enumerate(items):
            if not isinstance(s, str):
                self.fail(f"{join(where, key)}[{i}] must be a string, not {json_type(s)}")
        return tuple(items)

    def numbers(self, d: Mapping[str, Any], key: str, where: str) -> Tuple[float, ...]:
        """``d[key]`` as an array of numbers (finiteness is the caller's to check)."""
        items = self.array(d, key, where)
        for i, s in enumerate(items):
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                self.fail(f"{join(where, key)}[{i}] must be a number, not {json_type(s)}")
        return tuple(float(s) for s in items)

    # -- the rules every kind shares: positive times and rates, counts, statistics ---------------

    def positive(self, d: Mapping[str, Any], key: str, where: str, unit: str = "seconds") -> float:
        """``d[key]`` as a finite number > 0, in ``unit`` (named in the message; "" for a pure number)."""
        v = self.req(d, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            self.fail(f"{join(where, key)} must be a positive number{' of ' + unit if unit else ''}, not {v!r}")
        return float(v)

    def rate(self, d: Mapping[str, Any], key: str, where: str, unit: str) -> float:
        """``d[key]`` as a positive rate in ``unit`` (:meth:`positive`) within :data:`MAX_RATE`
        where it bounds ``unit``."""
        v = self.positive(d, key, where, unit)
        self.within_rate(v, join(where, key), unit)
        return v

    def within_rate(self, value: float, path: str, unit: str, what: str = "") -> None:
        """Fail unless the rate ``value`` (in ``unit``; ``what``: how it was derived, named in the
        message) is at most :data:`MAX_RATE`'s bound of ``unit`` (a unit it does not bound passes)."""
        bound = MAX_RATE.get(unit)
        if bound is None or value <= bound:
            return
        limit = f"{bound:.0e}".replace("e+0", "e").replace("e+", "e")
        shown = f"gives {value:.3g} {unit} ({what})," if what else f"{value!r} {unit} is"
        self.fail(f"{path} {shown} beyond any device's physical limit (valid: at most {limit} {unit})")

    def nonneg(self, d: Mapping[str, Any], key: str, where: str, unit: str = "seconds") -> float:
        """``d[key]`` as a finite number >= 0, in ``unit`` (named in the message; "" for a pure number)."""
        v = self.req(d, key, where)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            self.fail(f"{join(where, key)} must be a non-negative number{' of ' + unit if unit else ''}, not {v!r}")
        return float(v)

    def samples(self, d: Mapping[str, Any], key: str, where: str, *, signed: bool = False) -> Tuple[float, ...]:
        """``d[key]`` as at least one sample in seconds: each a finite number within
        :data:`SAMPLE_SECONDS`, or, when ``signed`` (differences of two clocks' instants, which may
        be zero or negative), of magnitude at most its upper end."""
        items = self.array(d, key, where)
        if not items:
            self.fail(f"{join(where, key)} must hold at least one sample")
        lo, hi = SAMPLE_SECONDS
        for i, s in enumerate(items):
            number = not isinstance(s, bool) and isinstance(s, (int, float)) and math.isfinite(s)
            if not number or (not signed and s <= 0):
                what = "a finite number of seconds" if signed else "a positive number of seconds"
                self.fail(f"{join(where, key)}[{i}] must be {what}, not {s!r}")
            if abs(s) > hi or (not signed and s < lo):
                valid = f"-{hi:g} to {hi:g}" if signed else f"{lo:g} to {hi:g}"
                self.fail(f"{join(where, key)}[{i}] {s!r} is out of range (valid: {valid} seconds)")
        return tuple(float(s) for s in items)

    def counts(self, d: Mapping[str, Any], where: str, names: Sequence[str] = ()) -> None:
        """Free-form settings or parameters ``d`` (nested too): a number whose key names a unit
        (:data:`UNIT_SUFFIXES`: ``lead_s``, ``power_w``, ``clock_hz`` ..., and what nests under
        such a key) is a measured quantity, never negative (a temperature may be); every other
        integer is a count, 0 to :data:`MAX_COUNT`; and each of ``names`` present must be such an
        integer (a float there is no count)."""
        for key, v in d.items():
            path = join(where, key)
            if key in names and (isinstance(v, bool) or not isinstance(v, int)):
                self.fail(f"{path} must be a non-negative integer (a count), not {_shown(v)} (valid: 0 to 2**63 - 1)")
            self._quantities(v, path, unit_of(key))

    def _quantities(self, v: Any, path: str, unit: Optional[str]) -> None:
        if isinstance(v, Mapping):
            for k, x in v.items():
                self._quantities(x, join(path, str(k)), unit_of(k) or unit)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                self._quantities(x, f"{path}[{i}]", unit)
        elif isinstance(v, bool) or not isinstance(v, (int, float)):
            return
        elif unit is None:
            if isinstance(v, int) and not 0 <= v <= MAX_COUNT:
                self.fail(f"{path} must be a non-negative integer (a count), not {_shown(v)} (valid: 0 to 2**63 - 1)")
        elif unit and v < 0:
            self.fail(f"{path} must be a non-negative number of {unit}, not {v!r}")

    def params(self, d: Mapping[str, Any], key: str = "params", where: str = "") -> Dict[str, Any]:
        """A study's settings ``d[key]``: an object of counts and quantities (:meth:`counts`)."""
        value = self.obj(self.req(d, key, where), join(where, key))
        self.counts(value, join(where, key))
        return dict(value)

    def close(self, value: float, want: float, path: str, what: str, *, scale: float = 0.0) -> None:
        """Fail unless ``value`` equals ``want`` (the value recomputed from the file's own data,
        described by ``what``) to a relative :data:`REL_TOL` (of the larger of the two and ``scale``,
        which is the samples' largest magnitude where the value may be near zero)."""
        if not math.isclose(value, want, rel_tol=REL_TOL, abs_tol=REL_TOL * scale):
            self.fail(f"{path} {value!r} is not {what} (valid: {want!r}, to a relative {REL_TOL:g})")

    def derived(self, d: Mapping[str, Any], key: str, where: str, want: float, what: str, unit: str) -> None:
        """A value derived from the file's own data, stored for other readers (a rate at the median,
        an intensity): when ``d`` has ``key``, it must be a finite number, positive where ``want`` is
        (non-negative where it is 0), and equal ``want`` (:meth:`close`)."""
        if key not in d:
            return
        v = self.positive(d, key, where, unit) if want > 0 else self.nonneg(d, key, where, unit)
        self.close(v, want, join(where, key), what)

    def statistics(
        self,
        d: Mapping[str, Any],
        where: str,
        samples: Sequence[float],
        keys: Mapping[str, str],
        *,
        samples_key: str = "samples_s",
        signed: bool = False,
    ) -> Summary:
        """Check the statistics stored in ``d`` beside ``samples`` (each key optional) and return
        the samples' :class:`~apple_roofline.timing.stats.Summary`.

        ``keys`` maps a key of ``d`` to the :class:`~apple_roofline.timing.stats.Summary` field it holds:
        ``"n"`` must be the number of samples; ``"iqr"``, ``"stdev"`` and ``"cv"`` non-negative;
        the order statistics (:data:`ORDER_STATISTICS`) and ``"mean"`` are times, positive unless
        ``signed``, within the samples' range (a median within [min, max]). Every one must equal
        the value recomputed from ``samples`` (:meth:`close`).
        """
        s = summarize(samples, positive=not signed)
        scale = max(abs(x) for x in samples) if signed else 0.0  # a signed statistic may be near 0
        values = {}
        for key, field in keys.items():
            if key not in d:
                continue
            path = join(where, key)
            if field == "n":
                n = self.nonneg_int(d, key, where)
                if n != s.n:
                    self.fail(f"{path} {n} is not the number of samples in {samples_key} (valid: {s.n})")
                continue
            if field in ("iqr", "stdev", "cv"):
                v = self.nonneg(d, key, where, "seconds" if field != "cv" else "")
            elif signed:
                v = self.number(d, key, where)
            else:
                v = self.positive(d, key, where)
            values[key] = v
        for key, v in values.items():  # a median (any order statistic, the mean) within the samples
            if keys[key] in ORDER_STATISTICS + ("mean",) and not s.min <= v <= s.max:
                self.fail(f"{join(where, key)} {v!r} lies outside {samples_key} (valid: {s.min!r} to {s.max!r})")
        for key, v in values.items():
            what = f"the {keys[key]} of {samples_key}"
            self.close(v, float(getattr(s, keys[key])), join(where, key), what, scale=scale)
        return s
