"""The results document: the header every kind of study writes, and its JSON round trip.

Every results file is one JSON object whose header keys are the same for every kind::

    schema_version   int: the layout version of this kind (1 for every kind so far)
    kind             str: "roofline", "dispatch", ... (absent in roofline files written before it
                     was added: a file without it is a roofline run)
    tool             {name, version, git_revision}
    created          ISO 8601 time the study started
    finished         ISO 8601 time it ended (absent while unknown)
    host             object: host provenance (provenance.host())
    device           object: must contain "backend" and "name"
    command          [str]: the command line
    warnings         [str]
    complete         bool: false when the study is partial: interrupted, or a suite cut by its
                     time budget (``status`` says which)
    status           str: the study's status (:attr:`Document.status`): "complete";
                     "interrupted" (partial results); "cut by budget" (partial results: a
                     suite's time budget ran out before its last case; its ``suite_times``
                     record says which cases were not measured). Absent in files written
                     before it, where ``complete`` false meant interrupted; "files missing":
                     measured, but the files ``missing_files`` names were not written (the write
                     phase was cut: ``apple-roofline report DIR`` makes them)
    missing_files    [str], only while files of the study are missing: their names in its folder
    resumed          object, only in a resumed study (docs/design/files.md, "Journal and resume"): where
                     the kept measurements were made (created, host, device {backend, name}) and
                     their keys (measurements: [str])

A kind adds its own keys beside these. Subclasses of :class:`Document` set :attr:`Document.KIND`
and :attr:`Document.SCHEMA_VERSION`, write their keys in ``to_dict`` after :meth:`header_dict`, and
read them in ``from_dict`` after :meth:`read_header`; saving, loading and the JSON text are shared.
A study's runner builds its document from its own fields and :func:`finished_header`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

from ..host import provenance
from .files import check_finite, dump_json, parse_results_json, read_results_text, write_text_atomic
from .reader import Reader, json_type
from .timing import SuiteTime

__all__ = [
    "ToolInfo",
    "Document",
    "Skipped",
    "finished_header",
    "COMPLETE",
    "INTERRUPTED_STATUS",
    "CUT_BY_BUDGET",
    "FILES_MISSING",
    "STATUSES",
]

#: :attr:`Document.status` of a study that measured everything it planned.
COMPLETE = "complete"
#: :attr:`Document.status` of a study stopped by a signal (Ctrl-C, SIGTERM, SIGHUP) or by a device that
#: stopped responding (its warnings say so): partial results.
INTERRUPTED_STATUS = "interrupted"
#: :attr:`Document.status` of a study one of whose suites was cut short by its time budget: partial results.
CUT_BY_BUDGET = "cut by budget"
#: :attr:`Document.status` of a study whose files were not all written (:attr:`Document.missing`): its
#: measurements are whole, the files it lists missing are made from it by ``apple-roofline report DIR``.
FILES_MISSING = "files missing"
#: Every :attr:`Document.status`.
STATUSES = (COMPLETE, INTERRUPTED_STATUS, CUT_BY_BUDGET, FILES_MISSING)

D = TypeVar("D", bound="Document")


@dataclass(frozen=True)
class ToolInfo:
    """The tool that produced a results file: name, version and git revision (or None)."""

    name: str
    version: str
    git_revision: Optional[str]

    @classmethod
    def current(cls) -> "ToolInfo":
        """This installation: :data:`provenance.TOOL_NAME`, its version and build revision."""
        return cls(provenance.TOOL_NAME, provenance.tool_version(), provenance.git_revision())

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys name, version, git_revision."""
        return {"name": self.name, "version": self.version, "git_revision": self.git_revision}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, source: str = "<dict>", where: str = "tool") -> "ToolInfo":
        """Build from :meth:`to_dict` output. Raises :class:`~.files.ResultsError`."""
        r = Reader(source)
        d = r.obj(d, where)
        return cls(
            name=r.string(d, "name", where),
            version=r.string(d, "version", where),
            git_revision=r.opt_string(d, "git_revision", where),
        )


@dataclass(frozen=True)
class Document:
    """The header of a results file (module docstring), as fields of every study's dataclass.

    Attributes:
        tool: producing tool, version and git revision.
        created: ISO 8601 time the study started.
        host: host provenance, JSON-ready; stored as a dict copy, excluded from hashing.
        device: the device's description; must contain ``"backend"`` and ``"name"``.
        command: the command line, one string per argument.
        warnings: human-readable warnings collected while measuring.
        complete: False when the study was interrupted (partial results): the runner's flag.
            Whether the study is whole is :attr:`status` (and :attr:`partial`), which a suite cut
            by its time budget also makes partial; the file's ``complete`` key is ``not partial``.
        finished: ISO 8601 time it ended, or None.
        resumed: in a study resumed from its journal, where its kept measurements were made and
            their keys (:meth:`~.journal.Journal.resumed`); None otherwise.
        missing: the names of the study's files (in its folder) not written: while the write phase
            runs, and where it was cut (:data:`FILES_MISSING`); empty once every file is written.

    ``warnings``, ``complete``, ``finished``, ``resumed`` and ``missing`` are keyword-only, so that a
    kind's own fields come right after ``command`` when a document is built positionally.

    Raises:
        ValueError: on construction, when ``device`` lacks ``backend`` or ``name``.
    """

    #: The ``kind`` key of this study's files.
    KIND: ClassVar[str] = ""
    #: The layout version this class writes and reads.
    SCHEMA_VERSION: ClassVar[int] = 1
    #: Whether a file must carry ``kind`` (False only for roofline runs, whose first files lack it).
    KIND_REQUIRED: ClassVar[bool] = True
    #: What one document is called in messages ("run", "dispatch study").
    DESCRIPTION: ClassVar[str] = "results"

    tool: ToolInfo
    created: str
    host: Mapping[str, Any] = field(hash=False)
    device: Mapping[str, Any] = field(hash=False)
    command: Tuple[str, ...]
    # keyword-only: a kind's own fields follow ``command`` in its positional order
    warnings: Tuple[str, ...] = field(default=(), kw_only=True)
    complete: bool = field(default=True, kw_only=True)
    finished: Optional[str] = field(default=None, kw_only=True)
    resumed: Optional[Mapping[str, Any]] = field(default=None, kw_only=True, hash=False)
    missing: Tuple[str, ...] = field(default=(), kw_only=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "host", dict(self.host))
        object.__setattr__(self, "missing", tuple(self.missing))
        if self.resumed is not None:
            object.__setattr__(self, "resumed", dict(self.resumed))
        object.__setattr__(self, "device", dict(self.device))
        object.__setattr__(self, "command", tuple(self.command))
        object.__setattr__(self, "warnings", tuple(self.warnings))
        for key in ("backend", "name"):
            if key not in self.device:
                raise ValueError(f"{self.DESCRIPTION}: device must contain {key!r}")

    def budget_cuts(self) -> Tuple[SuiteTime, ...]:
        """The suites cut short by their time budget, in the order measured (none for a kind
        without budgets; a kind with them overrides this)."""
        return ()

    @property
    def status(self) -> str:
        """The study's status, derived here and nowhere else (docs/design/budgets.md, "Time budgets"):
        :data:`INTERRUPTED_STATUS` when it was interrupted (``complete`` False), else
        :data:`FILES_MISSING` when files of it were not written (:attr:`missing`), else
        :data:`CUT_BY_BUDGET` when a suite was cut short by its budget (:meth:`budget_cuts`), else
        :data:`COMPLETE`."""
        if not self.complete:
            return INTERRUPTED_STATUS
        if self.missing:
            return FILES_MISSING
        return CUT_BY_BUDGET if self.budget_cuts() else COMPLETE

    @property
    def partial(self) -> bool:
        """True when the study lacks cases it planned (interrupted, or a suite cut by its budget) or
        files (:attr:`missing`)."""
        return self.status != COMPLETE

    @property
    def backend(self) -> str:
        """``str(device["backend"])``, e.g. ``"metal"``, ``"cpu"``, ``"cuda"``."""
        return str(self.device["backend"])

    @property
    def device_name(self) -> str:
        """``str(device["name"])``."""
        return str(self.device["name"])

    # -- the header's JSON ---------------------------------------------------

    def header_dict(self) -> Dict[str, Any]:
        """The header keys (module docstring) as a JSON-ready dict; ``finished`` only when known (files
        from before it was added lack it, and read the same)."""
        return {
            "kind": self.KIND,
            "schema_version": self.SCHEMA_VERSION,
            "tool": self.tool.to_dict(),
            "created": self.created,
            **({"finished": self.finished} if self.finished is not None else {}),
            "host": dict(self.host),
            "device": dict(self.device),
            "command": list(self.command),
            "warnings": list(self.warnings),
            "complete": not self.partial,
            "status": self.status,
            **({"resumed": dict(self.resumed)} if self.resumed is not None else {}),
            **({"missing_files": list(self.missing)} if self.missing else {}),
        }

    @classmethod
    def read_header(cls, d: Any, r: Reader) -> Dict[str, Any]:
        """Check the header of parsed JSON ``d`` and return the header fields as constructor keywords.

        Checks, in order: a JSON object; every number in it finite; ``kind`` (required when
        :attr:`KIND_REQUIRED`, and equal to :attr:`KIND` when present); ``schema_version`` equal to
        :attr:`SCHEMA_VERSION`; then the header keys' types, and that the integers of ``device`` and ``host``
        are counts and their quantities not negative (:meth:`~.reader.Reader.counts`). ``warnings`` may be
        absent; ``finished`` and ``resumed`` may be absent or null; ``status``, one of the three, may be
        absent (then ``complete`` false means interrupted), and where present it gives the ``complete`` field
        (not interrupted), the file's ``complete`` being ``not partial``.

        Raises:
            ResultsError: one line naming the source and the field.
        """
        if not isinstance(d, Mapping):
            r.fail(f"top level must be a JSON object, not {json_type(d)}")
        d = r.obj(d, "top level")
        check_finite(d, r.source)  # a dict given to a reader, as parsed text is checked when parsed
        kind = d.get("kind")
        if kind != cls.KIND and (kind is not None or cls.KIND_REQUIRED):
            what = f"{kind!r}" if "kind" in d else "missing"
            r.fail(f"kind is {what}, not {cls.KIND!r}; is this an apple-roofline {cls.DESCRIPTION}?")
        if "schema_version" not in d:
            r.fail("schema_version is missing (required key); is this an apple_roofline results file?")
        version = d["schema_version"]
        if version != cls.SCHEMA_VERSION or isinstance(version, bool):
            r.fail(f"schema_version {version!r} is not supported (this tool reads {cls.SCHEMA_VERSION})")
        device = r.obj(r.req(d, "device", ""), "device")
        for key in ("backend", "name"):
            if key not in device:
                r.fail(f"device.{key} is missing (required key)")
        r.counts(device, "device")  # its sizes and counts, clocks and times: never negative
        host = r.obj(r.req(d, "host", ""), "host")
        r.counts(host, "host")
        return {
            "tool": ToolInfo.from_dict(r.req(d, "tool", ""), source=r.source),
            "created": r.string(d, "created", ""),
            "finished": r.opt_string(d, "finished", ""),
            "host": dict(host),
            "device": dict(device),
            "command": r.strings(d, "command", ""),
            "warnings": r.strings(d, "warnings", "", required=False),
            "complete": cls._read_complete(d, r),
            "resumed": cls._read_resumed(d.get("resumed"), r),
            "missing": cls._read_missing(d, r),
        }

    @staticmethod
    def _read_complete(d: Mapping[str, Any], r: Reader) -> bool:
        """The ``complete`` field (not interrupted) of the header keys ``complete`` and ``status``."""
        whole = r.boolean(d, "complete", "")
        if "status" not in d:
            return whole
        status = r.string(d, "status", "")
        if status not in STATUSES:
            r.fail(f"status {status!r} is not a study status (valid: {', '.join(STATUSES)})")
        if whole != (status == COMPLETE):
            r.fail(f"complete is {str(whole).lower()} but status is {status!r}")
        return status != INTERRUPTED_STATUS

    @staticmethod
    def _read_missing(d: Mapping[str, Any], r: Reader) -> Tuple[str, ...]:
        """``missing_files`` checked against ``status``: "files missing" lists one file or more, and a
        complete study (or one cut by its budget) lists none."""
        missing = r.strings(d, "missing_files", "", required=False)
        status = d.get("status")
        if status == FILES_MISSING and not missing:
            r.fail(f"status is {FILES_MISSING!r} but missing_files names no file")
        if missing and status in (COMPLETE, CUT_BY_BUDGET):
            r.fail(f"missing_files names {len(missing)} file(s) but status is {status!r} (valid: {FILES_MISSING!r})")
        return tuple(missing)

    @staticmethod
    def _read_resumed(value: Any, r: Reader) -> Optional[Dict[str, Any]]:
        """The ``resumed`` header key checked: null, or an object with ``created``, ``host`` (object),
        ``device`` (object with ``backend`` and ``name``) and ``measurements`` (strings)."""
        if value is None:
            return None
        d = r.obj(value, "resumed")
        device = r.obj(r.req(d, "device", "resumed"), "resumed.device")
        return {
            "created": r.string(d, "created", "resumed"),
            "host": dict(r.obj(r.req(d, "host", "resumed"), "resumed.host")),
            "device": {
                "backend": r.string(device, "backend", "resumed.device"),
                "name": r.string(device, "name", "resumed.device"),
            },
            "measurements": list(r.strings(d, "measurements", "resumed")),
        }

    # -- the whole document --------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The document as a JSON-ready dict: :meth:`header_dict` and the kind's own keys."""
        return self.header_dict()

    @classmethod
    def from_dict(cls: Type[D], d: Any, *, source: str = "<dict>") -> D:
        """Build from :meth:`to_dict` output. Raises :class:`~.files.ResultsError`."""
        return cls(**cls.read_header(d, Reader(source)))

    @classmethod
    def journal_mismatch(cls, key: str, record: Mapping[str, Any]) -> str:
        """What the journal ``record`` kept under ``key`` holds where it is not that key's
        measurement (``"stream/copy/fp32 {...}"``), else "" (:func:`~.journal.read_journal` fails
        naming its line). A kind whose records say what they measure checks them; this one has
        nothing to compare, so every record passes."""
        return ""

    def to_json(self) -> str:
        """The document as JSON text (indent 2, trailing newline).

        Raises:
            ResultsError: a NaN or infinity anywhere (naming where), or a value JSON cannot hold.
        """
        return dump_json(self.to_dict(), self.DESCRIPTION)

    @classmethod
    def from_json(cls: Type[D], text: str, *, source: str = "<string>") -> D:
        """Parse :meth:`to_json` text.

        Raises:
            ResultsError: empty or truncated text, invalid JSON (line and column), NaN/Infinity
                literals, or anything :meth:`from_dict` rejects.
        """
        return cls.from_dict(parse_results_json(text, source=source), source=source)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the document as JSON to ``path`` atomically (temporary file, then rename).

        Raises:
            ResultsError: the document holds a non-finite number (nothing is written).
            OSError: the file cannot be written.
        """
        write_text_atomic(path, self.to_json())

    @classmethod
    def load(cls: Type[D], path: Union[str, "os.PathLike[str]"]) -> D:
        """Read a document written by :meth:`save`.

        Raises:
            ResultsError: one line naming ``path``: missing or unreadable file, not a regular file,
                larger than :data:`~.files.RESULTS_CAP`, not UTF-8, empty or truncated JSON, a key
                given twice, another kind, wrong ``schema_version``, missing keys or wrong types.
        """
        return cls.from_json(read_results_text(path), source=os.fspath(path))


def finished_header(
    *,
    created: str,
    device: Mapping[str, Any],
    command: Sequence[str],
    complete: bool,
    resumed: Optional[Mapping[str, Any]],
) -> Dict[str, Any]:
    """The header fields of a study that ends now, as :class:`Document` constructor keywords.

    A runner's ``assemble`` passes these beside its kind's own fields (``warnings`` is the kind's:
    each kind collects its own).

    Args:
        created: ISO 8601 time the study started (``provenance.now()`` when it began).
        device: the device's description, with ``"backend"`` and ``"name"``.
        command: the command line, one string per argument.
        complete: False when the study was interrupted (partial results).
        resumed: the journal's :meth:`~.journal.Journal.resumed` (None when not resumed).

    Returns:
        A dict with keys ``tool`` (:meth:`ToolInfo.current`), ``created``, ``finished``
        (``provenance.now()``, read when called), ``host`` (``provenance.host()``), ``device``,
        ``command`` (a tuple), ``complete`` and ``resumed``. Nothing is checked here: the document's
        constructor raises ValueError for a device without ``backend`` or ``name``.
    """
    return {
        "tool": ToolInfo.current(),
        "created": created,
        "finished": provenance.now(),
        "host": provenance.host(),
        "device": device,
        "command": tuple(command),
        "complete": complete,
        "resumed": resumed,
    }


_S = TypeVar("_S", bound="Skipped")


@dataclass(frozen=True)
class Skipped:
    """A path not measured, and why (a study subclasses it under its own name)."""

    path: str
    reason: str

    def to_dict(self) -> Dict[str, Any]:
        """JSON-ready dict with keys path, reason."""
        return {"path": self.path, "reason": self.reason}

    @classmethod
    def from_dict(cls: Type[_S], d: Mapping[str, Any], *, source: str = "<dict>", where: str = "skipped") -> _S:
        """Build from :meth:`to_dict` output. Raises :class:`ResultsError` naming the field."""
        r = Reader(source)
        d = r.obj(d, where)
        return cls(path=r.string(d, "path", where), reason=r.string(d, "reason", where))
