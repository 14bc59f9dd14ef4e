"""The roofline model: ceilings, ridge points, attainable performance (the one model every view draws).

Methodology: Williams, Waterman and Patterson, "Roofline: an insightful visual performance model
for multicore architectures", CACM 52(4), 2009. Attainable performance at arithmetic intensity
``I`` (FLOP/byte) under a bandwidth ceiling ``B`` (GB/s) and a compute ceiling ``P`` (GFLOP/s) is
``min(P, B * I)`` GFLOP/s; the ridge point ``P / B`` (FLOP/byte) is where the two meet. Several
compute ceilings (FP32 vector, FP32 scalar ILP, FP16, GEMM ...) each get their own ridge point
against the same bandwidth, as in the summary table of the M5 GPU roofline analysis (122 GB/s
against 815 GFLOP/s float4 gives ~6.5 FLOP/B; against 3,849 GFLOP/s scalar ~31 FLOP/B).

Measured ceilings come from a run's valid measurements (:func:`derive_ceilings`); theoretical
ones from specifications (:mod:`apple_roofline.theoretical`). Every ridge point the package shows
comes from :meth:`RooflineModel.ridge_table`. The plots and reports (:mod:`.plot`, :mod:`.report`)
are views of this model; it never imports them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

from ...study.records import WORKING_SET, Ceiling, Measurement, format_params
from ...suites.registry import suite_ceilings
from ...text import date_of
from ...timing.clocks import theoretical_clock_mhz
from ...timing.stats import Summary
from .binding import Binding, compute_roof, judge, judged_source
from .roofs import PIPES, PRECISIONS

__all__ = [
    "COMPUTE_BOUND",
    "MEMORY_BOUND",
    "Point",
    "RidgeRow",
    "RidgeTable",
    "RooflineModel",
    "RunLike",
    "derive_ceilings",
    "ridge_point_of",
]

MEMORY_BOUND = "memory-bound"
COMPUTE_BOUND = "compute-bound"

CeilingRef = Union[Ceiling, str, None]


def ridge_point_of(compute: Ceiling, bandwidth: Ceiling) -> float:
    """The ridge point, FLOP/byte: ``compute`` (GFLOP/s) over ``bandwidth`` (GB/s)."""
    return compute.value / bandwidth.value


class RunLike(Protocol):
    """What :meth:`RooflineModel.from_run` reads of a run (a :class:`~.run.Run`)."""

    @property
    def ceilings(self) -> Tuple[Ceiling, ...]: ...

    @property
    def measurements(self) -> Tuple[Measurement, ...]: ...

    @property
    def device_name(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def created(self) -> str: ...

    @property
    def device(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Point:
    """A workload placed on the roofline: work, traffic and time of one run of it.

    Attributes:
        name: label shown on plots and in reports.
        flops: FLOPs performed (>= 0), counted per scalar lane.
        bytes: DRAM bytes moved (> 0).
        seconds: elapsed time (> 0).
        summary: optional statistics of the timing samples (seconds per call)
            behind ``seconds`` — set by :func:`apple_roofline.measure`, ``None``
            otherwise; not part of equality.
        dtype: the precision the work is done in (``"fp32"``, ``"fp16"`` ...:
            :data:`~.roofs.PRECISIONS`), or None when unknown; it chooses the roof the point is
            judged against by default (:meth:`RooflineModel.roof`).
        samples: the timing samples (seconds per call) ``summary`` is of, where known (set by
            :func:`apple_roofline.measure`; a kernels file keeps them); not part of equality.
        pipe: what does the work, where known: ``"fma"`` (the FMA pipes: an elementwise or FMA
            kernel, judged against the vector and scalar ceilings of its precision) or ``"tensor"``
            (the matrix units: a GEMM, judged against the GEMM ceilings), else None (the highest
            ceiling of its precision).
        working_set: the bytes the work touches (its arrays' size), where known: the memory level
            whose working-set range holds it sets the bandwidth it is judged against (the
            cache-aware roofline); None: DRAM's.

    Raises:
        ValueError: on construction, for non-finite values, negative
            ``flops``, ``bytes <= 0``, ``seconds <= 0``, an unknown ``dtype`` or ``pipe``, or a
            ``working_set`` that is not a finite number > 0; also for a FLOP/s or FLOP/byte that is
            not finite (1e308 FLOPs in 1e-3 s).
    """

    name: str
    flops: float
    bytes: float
    seconds: float
    summary: Optional[Summary] = field(default=None, compare=False, repr=False)
    dtype: Optional[str] = None
    samples: Tuple[float, ...] = field(default=(), compare=False, repr=False)
    pipe: Optional[str] = None
    working_set: Optional[float] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples", tuple(float(s) for s in self.samples))
        self._check_amounts()
        self._check_kind()

    def _check_amounts(self) -> None:
        """Raise ValueError unless flops, bytes and seconds are finite numbers in range, and so the
        FLOP/s and FLOP/byte they give."""
        for attr in ("flops", "bytes", "seconds"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise ValueError(f"point {self.name!r}: {attr} must be a number, not {v!r}")
            if not math.isfinite(float(v)):
                raise ValueError(f"point {self.name!r}: {attr} must be finite, not {v!r}")
        if self.flops < 0:
            raise ValueError(f"point {self.name!r}: flops must be >= 0, not {self.flops!r}")
        if self.bytes <= 0:
            raise ValueError(f"point {self.name!r}: bytes must be > 0, not {self.bytes!r}")
        if self.seconds <= 0:
            raise ValueError(f"point {self.name!r}: seconds must be > 0, not {self.seconds!r}")
        for what, v in (("FLOP/s", float(self.flops) / float(self.seconds)), ("FLOP/byte", self.intensity)):
            if not math.isfinite(v):
                raise ValueError(
                    f"point {self.name!r}: {what} = {v} is not finite "
                    f"(flops {self.flops!r}, bytes {self.bytes!r}, seconds {self.seconds!r})"
                )

    def _check_kind(self) -> None:
        """Raise ValueError for an unknown dtype or pipe, or a working set that is not a finite number
        of bytes > 0."""
        if self.dtype is not None and self.dtype not in PRECISIONS:
            raise ValueError(f"point {self.name!r}: dtype {self.dtype!r} is unknown (valid: {', '.join(PRECISIONS)})")
        if self.pipe is not None and self.pipe not in PIPES:
            raise ValueError(f"point {self.name!r}: pipe {self.pipe!r} is unknown (valid: {', '.join(PIPES)})")
        ws = self.working_set
        if ws is not None and (
            isinstance(ws, bool) or not isinstance(ws, (int, float, np.integer, np.floating)) or not 0 < ws < math.inf
        ):
            raise ValueError(f"point {self.name!r}: working_set must be a finite number of bytes > 0, not {ws!r}")

    @classmethod
    def from_measurement(cls, m: Measurement, *, name: Optional[str] = None) -> "Point":
        """The point of a measurement at its median time (name defaults to its label)."""
        return cls(name=name if name is not None else m.label, flops=m.flops, bytes=m.bytes, seconds=m.median_s)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity, FLOP/byte."""
        return float(self.flops) / float(self.bytes)

    @property
    def gflops(self) -> float:
        """Achieved GFLOP/s (1e9 FLOP/s)."""
        return float(self.flops) / float(self.seconds) / 1e9

    @property
    def gbps(self) -> float:
        """Achieved GB/s (1e9 B/s)."""
        return float(self.bytes) / float(self.seconds) / 1e9


def derive_ceilings(measurements: Sequence[Measurement]) -> List[Ceiling]:
    """Measured ceilings from a run's measurements (docs/design/model.md, "The roofline model and its views").

    Only usable measurements (:attr:`~.records.Measurement.usable`: valid, and not above the
    physical limit of what they are labelled with, :mod:`.limits`) with a ``ceiling_class`` count;
    an invalid or over-limit measurement is never a ceiling. For each ``ceiling_class`` the
    best measurement wins: bandwidth classes by median GB/s, compute classes
    by median GFLOP/s (first one wins a tie). A winner whose samples are noisy
    (:attr:`Measurement.noisy`) still sets the ceiling, its ``from_`` saying so
    (docs/design/measurement.md, "Noisy samples").

    Args:
        measurements: any sequence of :class:`Measurement`.

    Returns:
        One ``source="measured"`` :class:`Ceiling` per class, named after the
        class, with ``from_`` the winner's label, its parameters and the sample
        count, e.g. ``"stream/triad/fp32 n=67108864 (median of 10)"``; a class whose
        winner records a working set (``working_set_bytes``: threadgroup memory) is a level
        ceiling of that working set. Then the ceilings the suites' own rules make
        (:func:`~apple_roofline.suites.registry.suite_ceilings`: the cache levels the ``hierarchy``
        suite's working-set sweep shows, docs/design/hierarchy.md, "The memory hierarchy"). Bandwidth
        ceilings come first, each kind sorted by descending value. Empty when nothing qualifies.

    Raises:
        ValueError: if one ``ceiling_class`` is used with both kinds.
    """
    best: Dict[str, Measurement] = {}
    kinds: Dict[str, str] = {}
    for m in measurements:
        if not m.usable or m.ceiling_class is None or m.ceiling_kind is None:
            continue
        cls = m.ceiling_class
        if cls in kinds and kinds[cls] != m.ceiling_kind:
            raise ValueError(f"ceiling class {cls!r} is used as both {kinds[cls]} and {m.ceiling_kind}")
        kinds[cls] = m.ceiling_kind

        def rate(x: Measurement) -> float:
            return x.gbps if x.ceiling_kind == "bandwidth" else x.gflops

        if cls not in best or rate(m) > rate(best[cls]):
            best[cls] = m
    out: List[Ceiling] = []
    for cls, m in best.items():
        kind = kinds[cls]
        value = m.gbps if kind == "bandwidth" else m.gflops
        if not (value > 0 and math.isfinite(value)):
            continue  # e.g. a zero-FLOP kernel tagged as compute: cannot be a ceiling
        params = format_params(m.params)
        where = f"{m.label} {params}" if params else m.label
        out.append(
            Ceiling(
                name=cls,
                kind=kind,
                value=value,
                unit="GB/s" if kind == "bandwidth" else "GFLOP/s",
                source="measured",
                from_=f"{where} (median of {m.summary.n}"
                + (f"; noisy samples, CV {m.cv:.0%}" if m.noisy else "")
                + ")",
                working_set=(int(m.params[WORKING_SET]),) * 2
                if kind == "bandwidth" and WORKING_SET in m.params
                else None,
            )
        )
    out += suite_ceilings(measurements)
    out.sort(key=lambda c: (c.kind != "bandwidth", -c.value))
    return out


@dataclass(frozen=True)
class RidgeRow:
    """The ridge points of one compute ceiling name.

    Attributes:
        name: the compute ceiling's name (``"FP32 vector"``, ``"GEMM FP16"`` ...).
        measured: the measured ceiling of that name, or None.
        theoretical: the theoretical ceiling of that name, or None.
        measured_ridge: ``measured.value / measured bandwidth`` (FLOP/byte), or None when either
            is missing.
        theoretical_ridge: ``theoretical.value / theoretical bandwidth`` (FLOP/byte), or None.
    """

    name: str
    measured: Optional[Ceiling]
    theoretical: Optional[Ceiling]
    measured_ridge: Optional[float]
    theoretical_ridge: Optional[float]

    @property
    def fraction_of_theoretical(self) -> Optional[float]:
        """Measured over theoretical value of this ceiling (a fraction), or None."""
        if self.measured is None or self.theoretical is None:
            return None
        return self.measured.value / self.theoretical.value


@dataclass(frozen=True)
class RidgeTable:
    """Every ridge point of a roofline (:meth:`RooflineModel.ridge_table`).

    Attributes:
        measured_bandwidth: the highest measured bandwidth ceiling (not a cache level's), or None.
        theoretical_bandwidth: the highest theoretical bandwidth ceiling, or None.
        rows: one :class:`RidgeRow` per compute ceiling name: measured ones first, highest value
            first, then the names that only have a theoretical ceiling.
        default: the ridge points the model's defaults give (``ridge_point()`` with no
            arguments): every compute ceiling of the default source against the default bandwidth,
            as ``(compute ceiling, ridge point)``, highest first. The default source of each kind
            is measured when the roofline has a measured ceiling of that kind, else theoretical.
        default_bandwidth: the bandwidth ceiling behind ``default`` (None without any).
    """

    measured_bandwidth: Optional[Ceiling]
    theoretical_bandwidth: Optional[Ceiling]
    rows: Tuple[RidgeRow, ...]
    default: Tuple[Tuple[Ceiling, float], ...]
    default_bandwidth: Optional[Ceiling]

    def ridge(self, ceiling: Ceiling) -> Optional[float]:
        """The ridge point of ``ceiling`` against the highest bandwidth of its own source, or None
        when that source has no bandwidth ceiling."""
        bw = self.measured_bandwidth if ceiling.source == "measured" else self.theoretical_bandwidth
        return ridge_point_of(ceiling, bw) if bw is not None else None


class RooflineModel:
    """A roofline: bandwidth ceilings (GB/s) and compute ceilings (GFLOP/s).

    Ceilings are measured or theoretical (:attr:`Ceiling.source`). Where a
    method takes ``compute`` or ``bandwidth`` it accepts a :class:`Ceiling`, a
    ceiling name (looked up among measured ceilings first, then theoretical)
    or ``None`` for the default: the measured peak compute ceiling and the
    highest measured bandwidth ceiling (DRAM's, not a cache level's), falling back to theoretical ones when
    the roofline has no measured ceiling of that kind. When ``compute`` is
    given and ``bandwidth`` is not, the bandwidth of the compute ceiling's own
    source is used if there is one.

    Methodology: Williams, Waterman, Patterson 2009; ridge point as in the M5
    GPU roofline analysis (compute ceiling / bandwidth).

    Raises:
        ValueError: from the constructor if there is no bandwidth ceiling or
            no compute ceiling at all.
    """

    def __init__(
        self,
        ceilings: Sequence[Ceiling],
        *,
        measurements: Sequence[Measurement] = (),
        title: Optional[str] = None,
        theoretical_mhz: Optional[float] = None,
    ) -> None:
        self.ceilings: Tuple[Ceiling, ...] = tuple(ceilings)
        #: the measurements behind the measured ceilings (a run's), drawn and tabled by the views
        self.measurements: Tuple[Measurement, ...] = tuple(measurements)
        #: what the views call this roofline (``"<device> (<backend>) — <date>"`` for a run), or None
        self.title: Optional[str] = title
        #: the clock (MHz) the theoretical compute ceilings are given at (a run's maximum clock), or None;
        #: the figure draws them also at each measured ceiling's effective clock (docs/design/clocks.md, "Clocks")
        self.theoretical_mhz: Optional[float] = theoretical_mhz
        if not any(c.kind == "bandwidth" for c in self.ceilings):
            raise ValueError("a roofline needs at least one bandwidth ceiling (GB/s); none given")
        if not any(c.kind == "compute" for c in self.ceilings):
            raise ValueError("a roofline needs at least one compute ceiling (GFLOP/s); none given")

    @classmethod
    def from_run(cls, run: RunLike) -> Any:
        """The roofline of ``run``: its ceilings, its measurements (which the views draw) and the
        title ``"<device> (<backend>) — <date>"``. Returns an instance of ``cls``; raises
        ValueError as the constructor."""
        return cls(
            run.ceilings,
            measurements=run.measurements,
            title=f"{run.device_name} ({run.backend}) — {date_of(run.created)}",
            theoretical_mhz=theoretical_clock_mhz(run.device),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self.ceilings)!r})"

    def with_ceilings(self, ceilings: Sequence[Ceiling]) -> Any:
        """A roofline of the same class, measurements and title with ``ceilings`` instead.
        Raises ValueError as the constructor."""
        return type(self)(
            ceilings, measurements=self.measurements, title=self.title, theoretical_mhz=self.theoretical_mhz
        )

    # -- lookup --------------------------------------------------------------

    def _of(self, kind: str, source: str) -> List[Ceiling]:
        """Ceilings of ``kind`` and ``source``, highest first; the bandwidths of cache levels
        (:attr:`Ceiling.is_level`) after every other bandwidth, so DRAM's stays the default
        (docs/design/hierarchy.md, "The memory hierarchy")."""
        if source not in ("measured", "theoretical"):
            raise ValueError(f"source must be 'measured' or 'theoretical', not {source!r}")
        return sorted(
            (c for c in self.ceilings if c.kind == kind and c.source == source),
            key=lambda c: (c.is_level, -c.value),
        )

    def has(self, kind: str, source: str) -> bool:
        """Whether there is a ceiling of ``kind`` ("bandwidth"/"compute") and ``source``."""
        return bool(self._of(kind, source))

    def _default_source(self, kind: str) -> str:
        return "measured" if self._of(kind, "measured") else "theoretical"

    def bandwidth(self, source: str = "measured") -> Ceiling:
        """The highest bandwidth ceiling (GB/s) of ``source`` that is not a cache level's (DRAM's),
        or the highest level's where the roofline has nothing else.

        Raises:
            LookupError: if there is none of that source.
            ValueError: for a source other than "measured"/"theoretical".
        """
        found = self._of("bandwidth", source)
        if not found:
            raise LookupError(f"no {source} bandwidth ceiling in this roofline")
        return found[0]

    def compute(self, source: str = "measured") -> List[Ceiling]:
        """Compute ceilings (GFLOP/s) of ``source``, highest first (may be empty)."""
        return self._of("compute", source)

    def peak(self, source: str = "measured") -> Ceiling:
        """The highest compute ceiling (GFLOP/s) of ``source``.

        Raises:
            LookupError: if there is none of that source.
        """
        found = self._of("compute", source)
        if not found:
            raise LookupError(f"no {source} compute ceiling in this roofline")
        return found[0]

    def _resolve(self, ref: CeilingRef, kind: str, like: Optional[Ceiling] = None) -> Ceiling:
        if isinstance(ref, Ceiling):
            if ref.kind != kind:
                raise ValueError(f"ceiling {ref.name!r} is a {ref.kind} ceiling, not {kind}")
            return ref
        if isinstance(ref, str):
            for source in ("measured", "theoretical"):
                for c in self._of(kind, source):
                    if c.name == ref:
                        return c
            names = sorted({c.name for c in self.ceilings if c.kind == kind})
            raise LookupError(f"no {kind} ceiling named {ref!r} (have: {', '.join(names) or 'none'})")
        if kind == "bandwidth" and like is not None and self._of("bandwidth", like.source):
            return self.bandwidth(like.source)
        source = self._default_source(kind)
        return self.bandwidth(source) if kind == "bandwidth" else self.peak(source)

    # -- the model -----------------------------------------------------------

    def gemm_ceiling(self, dtype: str) -> Optional[Ceiling]:
        """The GEMM compute ceiling of ``dtype`` ("fp32" -> the ceiling named "GEMM FP32"), measured
        if the run has it, else theoretical; None when it has neither.

        Pass it as ``compute=`` to :meth:`attainable`, :meth:`classify` and :meth:`efficiency` to judge
        a matmul against its own precision: by default they use the highest compute ceiling, which on
        a GPU with tensor cores is another precision's (INT8 on an H100).
        """
        name = f"GEMM {dtype.upper()}"
        for source in ("measured", "theoretical"):
            for c in self._of("compute", source):
                if c.name == name:
                    return c
        return None

    def ridge_point(self, compute: CeilingRef = None, bandwidth: CeilingRef = None) -> float:
        """Ridge point, FLOP/byte: compute ceiling (GFLOP/s) / bandwidth (GB/s).

        The arithmetic intensity at which the bandwidth roof meets the compute
        roof; e.g. 815 GFLOP/s over 126 GB/s gives 6.47 FLOP/byte.

        Raises:
            LookupError: if a named or default ceiling does not exist.
            ValueError: if a Ceiling of the wrong kind is passed.
        """
        c = self._resolve(compute, "compute")
        return ridge_point_of(c, self._resolve(bandwidth, "bandwidth", like=c))

    def ridge_table(self) -> RidgeTable:
        """Every ridge point of this roofline, computed here once for every view (the report's
        table, the CLI summary, the ridge markers of the plot). See :class:`RidgeTable`."""
        bw: Dict[str, Optional[Ceiling]] = {
            s: next(iter(self._of("bandwidth", s)), None) for s in ("measured", "theoretical")
        }
        measured = self._of("compute", "measured")
        theoretical = {c.name: c for c in self._of("compute", "theoretical")}

        def ratio(c: Optional[Ceiling], b: Optional[Ceiling]) -> Optional[float]:
            return ridge_point_of(c, b) if c is not None and b is not None else None

        rows = [
            RidgeRow(
                c.name,
                c,
                theoretical.get(c.name),
                ratio(c, bw["measured"]),
                ratio(theoretical.get(c.name), bw["theoretical"]),
            )
            for c in measured
        ]
        seen = {c.name for c in measured}
        rows += [
            RidgeRow(t.name, None, t, None, ratio(t, bw["theoretical"]))
            for t in theoretical.values()
            if t.name not in seen
        ]
        default_bw = bw[self._default_source("bandwidth")]
        default_compute = self._of("compute", self._default_source("compute")) if default_bw is not None else []
        default = tuple((c, ridge_point_of(c, default_bw)) for c in default_compute if default_bw is not None)
        return RidgeTable(bw["measured"], bw["theoretical"], tuple(rows), default, default_bw)

    def ridge_points(self, source: str = "measured") -> Dict[str, float]:
        """Ridge point (FLOP/byte) of every compute ceiling of ``source`` against
        the highest bandwidth ceiling of the same source, keyed by ceiling name,
        highest compute ceiling first.

        Raises:
            LookupError: if there is no bandwidth ceiling of that source.
        """
        b = self.bandwidth(source)
        return {c.name: ridge_point_of(c, b) for c in self.compute(source)}

    @overload
    def attainable(self, ai: float, compute: CeilingRef = ..., bandwidth: CeilingRef = ...) -> float: ...

    @overload
    def attainable(
        self, ai: npt.ArrayLike, compute: CeilingRef = ..., bandwidth: CeilingRef = ...
    ) -> npt.NDArray[np.float64]: ...

    def attainable(
        self, ai: Union[float, npt.ArrayLike], compute: CeilingRef = None, bandwidth: CeilingRef = None
    ) -> Union[float, npt.NDArray[np.float64]]:
        """Attainable GFLOP/s at arithmetic intensity ``ai`` (FLOP/byte).

        ``min(compute, bandwidth * ai)``, and exactly ``compute`` for ``ai`` at or
        beyond the ridge point (so the result is monotone in ``ai`` despite
        rounding). A Python or NumPy scalar gives a
        float; an array-like gives a float64 array of the same shape.

        Raises:
            ValueError: if any ``ai`` is <= 0 or not finite.
            LookupError: if a named or default ceiling does not exist.
        """
        c = self._resolve(compute, "compute")
        b = self._resolve(bandwidth, "bandwidth", like=c)
        arr = np.asarray(ai, dtype=np.float64)
        if not np.all(np.isfinite(arr)):
            raise ValueError("arithmetic intensity must be finite")
        if np.any(arr <= 0):
            raise ValueError("arithmetic intensity must be > 0 FLOP/byte")
        # exactly the compute ceiling at and beyond the ridge point, even where
        # bandwidth * (compute / bandwidth) rounds to one ulp below compute
        ridge = ridge_point_of(c, b)
        out = np.where(arr >= ridge, c.value, np.minimum(c.value, b.value * arr))
        if arr.ndim == 0:
            return float(out)
        return out

    def _judged(self, point: Point, compute: CeilingRef, source: Optional[str]) -> Binding:
        if point.flops <= 0:
            raise ValueError(f"point {point.name!r} has no FLOPs: intensity 0 has no place on the roofline")
        ref = self._resolve(compute, "compute") if compute is not None else None
        src = ref.source if ref is not None else (source if source is not None else judged_source(self.ceilings))
        if ref is None:
            ref = compute_roof(self.ceilings, src, precision=point.dtype, pipe=point.pipe)
        found = judge(
            self.ceilings,
            src,
            gflops=point.gflops,
            intensity=point.intensity,
            compute=ref,
            working_set=point.working_set,
        )
        if found is None:
            raise LookupError(f"point {point.name!r}: this roofline has no {src} compute ceiling and bandwidth")
        return found

    def judge(self, point: Point, compute: CeilingRef = None, *, source: Optional[str] = None) -> Binding:
        """The one roof that binds ``point`` (docs/design/model.md, "One roof per point";
        :mod:`.binding`): the compute ceiling of its kind (``compute`` where given, else the highest of
        its ``dtype`` and ``pipe``, else the roofline's peak) against the bandwidth of the level its
        ``working_set`` lives in (DRAM's without one). A point above that level's roof is judged
        against the faster level whose roof holds it (:attr:`~.binding.Binding.reading`: "consistent
        with L2-resident data"); a point above every roof is flagged
        (:attr:`~.binding.Binding.above`) and has no share (``fraction`` None). ``source``: the roofs of
        ``"measured"`` or ``"theoretical"`` ceilings (default: measured where the roofline has both
        kinds measured; a ``compute`` Ceiling's own source when one is given).

        Every view (the CLI's ``--point`` line, :meth:`roof`, :meth:`classify`, :meth:`efficiency`,
        the tables and the hover) gives this verdict.

        Raises:
            ValueError: a point without FLOPs, or an unknown ``source``.
            LookupError: a named ``compute`` ceiling that does not exist, or no compute ceiling and
                bandwidth in the source judged.
        """
        return self._judged(point, compute, source)

    def roof(self, point: Point) -> Ceiling:
        """The ceiling that binds ``point`` (:meth:`judge`): a bandwidth ceiling where it is
        memory-bound (the level its data lives in), else the compute ceiling of its kind (an FP32
        matmul under an FP32 GEMM ceiling, not the FP16 peak).

        Raises:
            ValueError, LookupError: as :meth:`judge`.
        """
        return self._judged(point, None, None).ceiling

    def classify(self, point: Point, compute: CeilingRef = None) -> str:
        """``"memory-bound"`` where the bandwidth of the point's level gives the lower roof at its
        intensity (:meth:`judge`, ``compute`` as there), else ``"compute-bound"``.

        Raises:
            ValueError, LookupError: as :meth:`judge`.
        """
        return self._judged(point, compute, None).bound

    def efficiency(self, point: Point, compute: CeilingRef = None) -> Optional[float]:
        """The share of the binding roof ``point`` reaches (:meth:`judge`, ``compute`` as there):
        its GFLOP/s over the attainable GFLOP/s there, a fraction in (0, 1]; None for a point above
        every roof (:attr:`~.binding.Binding.above` says why: no share above 100 % is a result).

        Raises:
            ValueError: for a zero-FLOP point (intensity 0 has no attainable rate).
            LookupError: as :meth:`judge`.
        """
        return self._judged(point, compute, None).fraction
