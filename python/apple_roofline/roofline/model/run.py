"""A roofline run as a results file (kind ``"roofline"``, schema version 1).

The JSON written by :meth:`Run.save` is a contract other tools read: the header every study shares
(:class:`~apple_roofline.study.document.Document`: ``kind``, ``schema_version``, ``tool``,
``created``, ``finished``, ``host``, ``device``, ``command``, ``warnings``, ``complete``) and::

    conventions      {flops, bytes, units}: how FLOPs and bytes are counted
    measurements     [Measurement]: see Measurement.to_dict
    ceilings         [{name, kind, value, unit, source, from}]
    skipped          [{suite, kernel, dtype, reason}]
    suite_times      [{suite, seconds, budget_s, measured, cut}]: each suite's wall time against its
                     budget (:class:`~apple_roofline.study.timing.SuiteTime`; absent in older files)
    phase_times      [{phase, seconds, parts, since}]: the time outside the suites, start-up, between
                     suites and end (:class:`~apple_roofline.study.timing.PhaseTime`; absent in older files)

Files written before ``kind`` was added lack it and are read as roofline runs. Measured ceilings are
derived data: they are recomputed from the valid measurements on reading (:func:`~.model.derive_ceilings`),
never trusted; theoretical ones are read as stored. So is each measurement's ``over_limit`` (its figure
above the physical limit of what it is labelled with, :func:`~.limits.check_limits`): derived again
from the stored theoretical ceilings and the device record before the measured ceilings are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Sequence, Tuple

from ...study.document import Document
from ...study.files import ResultsError
from ...study.reader import Reader, json_type
from ...study.records import CONVENTIONS, Ceiling, Measurement, Skipped, check_repeats, record_mismatch
from ...study.timing import PhaseTime, SuiteTime, read_phase_times, read_suite_times
from .facade import Roofline
from .limits import check_limits
from .model import derive_ceilings

__all__ = ["SCHEMA_VERSION", "Run"]

#: Version of the JSON layout written and read by :class:`Run`.
SCHEMA_VERSION: int = 1


@dataclass(frozen=True)
class Run(Document):
    """Everything one roofline run measured, with its provenance (the header's fields, then these).

    Attributes:
        measurements: every measurement, valid or not.
        ceilings: measured (:func:`~.model.derive_ceilings`) and theoretical ceilings.
        skipped: kernels unsupported on this device, with reasons.
        suite_times: each suite's seconds against its time budget, in run order (empty in files
            written before they were recorded).
        phase_times: the time outside the suites (start-up, between suites, end), in run order
            (empty in files written before they were recorded).
        conventions: counting conventions, default :data:`~.records.CONVENTIONS`.
        schema_version: must equal :data:`SCHEMA_VERSION`.

    Raises:
        ValueError: on construction, if ``device`` lacks ``backend`` or ``name`` or
            ``schema_version`` is not :data:`SCHEMA_VERSION`.
    """

    KIND: ClassVar[str] = "roofline"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    KIND_REQUIRED: ClassVar[bool] = False
    DESCRIPTION: ClassVar[str] = "run"

    measurements: Tuple[Measurement, ...] = ()
    ceilings: Tuple[Ceiling, ...] = ()
    skipped: Tuple[Skipped, ...] = ()
    suite_times: Tuple[SuiteTime, ...] = ()
    phase_times: Tuple[PhaseTime, ...] = ()
    conventions: Mapping[str, str] = field(default_factory=lambda: dict(CONVENTIONS), hash=False)
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "conventions", dict(self.conventions))
        for name in ("measurements", "ceilings", "skipped", "suite_times", "phase_times"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"run: schema_version {self.schema_version!r} is not supported (this tool writes {SCHEMA_VERSION})"
            )

    def budget_cuts(self) -> Tuple[SuiteTime, ...]:
        """The suites of :attr:`suite_times` cut short by their budget: they make the study partial
        (:attr:`~apple_roofline.study.document.Document.status`)."""
        return tuple(t for t in self.suite_times if t.cut)

    @property
    def valid_measurements(self) -> Tuple[Measurement, ...]:
        """The measurements that passed validation, in order."""
        return tuple(m for m in self.measurements if m.valid)

    def with_ceilings(self, ceilings: Sequence[Ceiling]) -> "Run":
        """A copy of this run with ``ceilings`` replacing its ceilings."""
        return dataclasses.replace(self, ceilings=tuple(ceilings))

    def roofline(self) -> Roofline:
        """This run's roofline model (:class:`~.facade.Roofline`): its ceilings and measurements,
        ridge points, ``attainable``/``classify``/``efficiency`` (drawn by
        :func:`apple_roofline.roofline.views.plot.plot_roofline`).

        Raises:
            ValueError: the run has no bandwidth or no compute ceiling.
        """
        model: Roofline = Roofline.from_run(self)
        return model

    # -- JSON --------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict: the header and the keys of the module docstring."""
        return {
            **self.header_dict(),
            "conventions": dict(self.conventions),
            "measurements": [m.to_dict() for m in self.measurements],
            "ceilings": [c.to_dict() for c in self.ceilings],
            "skipped": [s.to_dict() for s in self.skipped],
            # optional, as "finished": written when recorded, absent from older files
            **({"suite_times": [t.to_dict() for t in self.suite_times]} if self.suite_times else {}),
            **({"phase_times": [t.to_dict() for t in self.phase_times]} if self.phase_times else {}),
        }

    @classmethod
    def from_dict(cls, d: Any, *, source: str = "<dict>") -> "Run":
        """Build a run from :meth:`to_dict` output (e.g. parsed JSON).

        The header is checked first (:meth:`Document.read_header`: ``schema_version``, ``kind``
        when present, then the shared keys). Required here: conventions, measurements, ceilings;
        ``skipped``, ``suite_times`` and ``phase_times`` default to empty. Unknown keys are ignored.

        Raises:
            ResultsError: one line naming ``source``, the field and what was expected, e.g.
                ``"run.json: measurements[2].flops must be a non-negative integer, not -1 (valid: 0 to
                2**63 - 1)"``; a measurement given twice (:attr:`~.records.Measurement.key`) names
                both places.
        """
        r = Reader(source)
        header = cls.read_header(d, r)
        conventions: Dict[str, str] = {}
        for k, v in r.obj(r.req(d, "conventions", ""), "conventions").items():
            if not isinstance(v, str):
                r.fail(f"conventions.{k} must be a string, not {json_type(v)}")
            conventions[k] = v
        measurements = tuple(
            Measurement.from_dict(m, source=source, where=f"measurements[{i}]")
            for i, m in enumerate(r.array(d, "measurements", ""))
        )
        check_repeats(measurements, r)
        stored = tuple(
            Ceiling.from_dict(c, source=source, where=f"ceilings[{i}]")
            for i, c in enumerate(r.array(d, "ceilings", ""))
        )
        # each figure against its physical limit, derived again, before the ceilings
        # (docs/design/limits.md, "Physical limits")
        measurements = check_limits(measurements, stored, header["device"])
        try:
            measured = derive_ceilings(measurements)
        except ValueError as e:
            raise ResultsError(f"{source}: measurements: {e}") from None
        skipped = tuple(
            Skipped.from_dict(s, source=source, where=f"skipped[{i}]")
            for i, s in enumerate(r.array(d, "skipped", "", required=False))
        )
        return cls(
            **header,
            measurements=measurements,
            ceilings=tuple(measured) + tuple(c for c in stored if c.source != "measured"),
            skipped=skipped,
            conventions=conventions,
            suite_times=read_suite_times(d, source),
            phase_times=read_phase_times(d, source),
        )

    @classmethod
    def journal_mismatch(cls, key: str, record: Mapping[str, Any]) -> str:
        """The measurement ``record`` holds where it is not the one its journal ``key`` names, else
        "" (:func:`~.records.record_mismatch`)."""
        return record_mismatch(key, record)
