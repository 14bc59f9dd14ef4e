"""The journal of a study: every finished measurement on disk as it finishes, and resuming from it
(docs/design/files.md, "Journal and resume").

Every study writes ``DIR/<stem>.journal.jsonl`` beside its results file ``DIR/<stem>.json``
(:func:`journal_path`): JSON Lines, one object a line. The first line is the results header
(:meth:`~.document.Document.header_dict`'s keys, ``complete`` false) with two more keys,
``journal`` (:data:`JOURNAL_VERSION`) and ``options`` (the study's options, which a resumed study
must repeat), and where the study made one, a decision a resume repeats (:meth:`Journal.decided`: a
quick run's ``quick_plan``); then one line ``{"key": KEY, "record": {...}}`` per finished measurement, ``KEY``
the measurement's stable name in its study (suite/kernel/dtype and parameters, a path and a shape)
and ``record`` what the results file holds for it. Each line is written in one call, then flushed
and fsync'ed before the study goes on, so a study that dies in any way (SIGKILL, out of memory, a
driver fault, a power cut) leaves every measurement that finished before it; the measurement in
flight, if any, is a truncated last line, dropped with a warning on reading.

A runner takes a :class:`Journal` (``Journal()`` keeps none), calls :meth:`Journal.begin` once it
knows its device and options, then :meth:`Journal.keep` for each measurement: a measurement the
resumed journal holds is loaded from it, not measured again; any other is measured and appended.
"""

from __future__ import annotations

import errno
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Type, TypeVar, Union

from ..errors import OptionError
from ..host import provenance
from .document import Document, ToolInfo
from .files import JOURNAL_CAP, RepeatedKey, ResultsError, decode_json, decode_text, read_capped
from .reader import Reader

__all__ = [
    "JOURNAL_VERSION",
    "SUFFIX",
    "journal_path",
    "JournalContents",
    "read_journal",
    "Journal",
    "JournalWriteError",
    "record_key",
]

#: The ``journal`` key of a journal's first line: the layout version of the journal itself.
JOURNAL_VERSION = 1
#: What a journal's name ends with: ``DIR/<stem>.journal.jsonl`` beside ``DIR/<stem>.json``.
SUFFIX = ".journal.jsonl"

R = TypeVar("R")
PathLike = Union[str, "os.PathLike[str]"]


class JournalWriteError(OSError):
    """The journal could not be written (a full disk, a directory made read-only): ``strerror`` names
    the journal and why, on one line."""


def _write_error(path: Optional[Path], exc: OSError) -> JournalWriteError:
    return JournalWriteError(exc.errno, f"cannot write the journal {path}: {exc.strerror or exc}")


def journal_path(out: PathLike, stem: str) -> Path:
    """``out/<stem>.journal.jsonl``: the journal beside the results file ``out/<stem>.json``."""
    return Path(out) / f"{stem}{SUFFIX}"


def record_key(*parts: object, params: Optional[Mapping[str, Any]] = None) -> str:
    """A measurement's key: ``parts`` joined by spaces, then ``params`` as compact JSON with sorted keys
    (``record_key("stream/copy/fp32", params={"n": 4})`` -> ``'stream/copy/fp32 {"n":4}'``)."""
    text = " ".join(str(p) for p in parts)
    if params is not None:
        text += " " + json.dumps(dict(params), sort_keys=True, separators=(",", ":"))
    return text


def _plain(value: Any) -> Any:
    """``value`` as JSON reads it back (tuples as lists), for comparing options."""
    return json.loads(json.dumps(value, sort_keys=True))


@dataclass(frozen=True)
class JournalContents:
    """A journal read back (:func:`read_journal`).

    Attributes:
        path: the file.
        header: its first line, checked as the results header of its kind.
        records: key -> record, in the order written (a key written twice keeps its first record).
        end: bytes of the file up to the end of the last complete line (where appending resumes).
        dropped: the warning about a truncated last line that was dropped, or "".
    """

    path: Path
    header: Mapping[str, Any]
    records: Mapping[str, Any] = field(default_factory=dict)
    end: int = 0
    dropped: str = ""


def read_journal(path: PathLike, kind: Type[Document]) -> JournalContents:
    """Read the journal at ``path`` of a study of ``kind``.

    A last line without its newline is the record that was being written when the study stopped: it
    is dropped, and :attr:`JournalContents.dropped` says so.

    Raises:
        ResultsError: one line naming ``path``: no such file, not a regular file, larger than
            :data:`~.files.JOURNAL_CAP`, not UTF-8, a first line that is not this tool's journal
            header (another tool, a results file, another kind of study, another journal or schema
            version), a complete line that is not a record, a key given twice in a line's object, or a
            record that is not the measurement of its key (:meth:`~.document.Document.journal_mismatch`).
    """
    source = os.fspath(path)
    raw = read_capped(path, JOURNAL_CAP, "journal")
    text = decode_text(raw, source)
    r = Reader(source)
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends with a newline; else the line in flight
    if not lines:
        r.fail("empty or truncated first line: not an apple_roofline journal")
    head = _line(lines[0], 1, r)
    if (
        not isinstance(head, dict)
        or head.get("journal") != JOURNAL_VERSION
        or not isinstance(head.get("tool"), dict)
        or head["tool"].get("name") != provenance.TOOL_NAME
    ):
        r.fail(f"line 1 is not an apple_roofline journal header (journal version {JOURNAL_VERSION})")
    kind.read_header(head, Reader(f"{source} line 1"))
    r.obj(r.req(head, "options", "line 1"), "line 1.options")
    records: Dict[str, Any] = {}
    for n, line in enumerate(lines[1:], start=2):
        entry = _line(line, n, r)
        if entry is None:
            r.fail(f"line {n} is not JSON: not a journal record")
        where = f"line {n}"
        entry = r.obj(entry, where)
        key = r.string(entry, "key", where)
        record = r.obj(r.req(entry, "record", where), f"{where}.record")
        mismatch = kind.journal_mismatch(key, record)
        if mismatch:
            r.fail(f"{where}.record holds {mismatch}, not the measurement of its key {key!r} (valid: the key's own)")
        records.setdefault(key, record)
    dropped = ""
    if tail:
        dropped = (
            f"{source}: line {len(lines) + 1} is truncated (the measurement in flight when the study stopped): dropped"
        )
    end = len(raw) - len(tail.encode("utf-8"))  # the bytes on disk: a byte-order mark included
    return JournalContents(Path(path), head, records, end, dropped)


def _line(line: str, n: int, r: Reader) -> Any:
    """Line ``n`` of a journal parsed (:func:`~.files.decode_json`), None when it is not JSON; a key
    given twice in one of its objects fails naming the line and the place."""
    try:
        return decode_json(line)
    except (json.JSONDecodeError, RecursionError):
        return None
    except RepeatedKey as e:
        r.fail(e.message(f"line {n}"))


def _same_device(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (str(a.get("backend")), str(a.get("name"))) == (str(b.get("backend")), str(b.get("name")))


def _device_words(d: Mapping[str, Any]) -> str:
    return f"{d.get('name')} ({d.get('backend')})"


class Journal:
    """Where a runner keeps each finished measurement, and finds the ones a resumed study kept.

    Args:
        path: the journal file to write (:func:`journal_path`); None keeps no journal (the Python
            API's default: :meth:`keep` then only measures).
        resume: the journal read back (:func:`read_journal`) whose measurements are kept; the new
            measurements are appended to it (``path`` is then ignored).

    Thread-safe: a study whose checks finish on worker threads may :meth:`record` from them.
    """

    def __init__(self, path: Optional[PathLike] = None, resume: Optional[JournalContents] = None) -> None:
        self.path: Optional[Path] = resume.path if resume is not None else (Path(path) if path is not None else None)
        self.previous = resume
        #: The keys loaded from the resumed journal, in the order the study reached them.
        self.resumed_keys: List[str] = []
        self._file: Optional[IO[bytes]] = None  # unbuffered: nothing waits in memory
        self._header: Optional[Dict[str, Any]] = None  # a new journal's header, until its first record
        self._lock = threading.Lock()

    # -- starting -----------------------------------------------------------------------------------

    def begin(
        self,
        kind: Type[Document],
        *,
        created: str,
        device: Mapping[str, Any],
        command: Sequence[str],
        options: Mapping[str, Any],
        flags: Optional[Mapping[str, str]] = None,
    ) -> None:
        """Start the journal: a new one gets its header (kind, schema version, tool, ``created``, host,
        ``device``, ``command``, ``options``), written with its first record; a resumed one is checked against
        this study and reopened for appending, its truncated last line cut off.

        ``flags`` maps an option to the command-line flag that sets it (``{"quick": "--quick"}``),
        in the order the user would fix them (an option that follows from another, as a run's
        budgets follow from ``--quick``, after it): a differing option with a flag is checked first
        and named as the flag to give (``"it was started with --quick; add --quick"``).

        Raises:
            OptionError: (option ``resume``) the resumed journal is of another device (backend and
                name differ) or of other options; the message names the first that differs.
            JournalWriteError: the journal cannot be written.
        """
        if self.path is None:
            return
        options = _plain(dict(options))
        if self.previous is not None:
            self._check(device, options, flags or {})
            try:
                fh = open(self.path, "r+b", buffering=0)
                fh.truncate(self.previous.end)
                fh.seek(self.previous.end)
            except OSError as exc:
                raise _write_error(self.path, exc) from None
            self._file = fh
            return
        header = {
            "kind": kind.KIND,
            "schema_version": kind.SCHEMA_VERSION,
            "tool": ToolInfo.current().to_dict(),
            "created": created,
            "host": provenance.host(),
            "device": dict(device),
            "command": list(command),
            "warnings": [],
            "complete": False,
            "journal": JOURNAL_VERSION,
            "options": options,
        }
        # Written with the first record: a study that measures nothing (refused, or killed before
        # its first measurement) leaves no header-only journal behind ("no empty study files").
        self._header = header

    def decided(self, key: str, decide: Callable[[], Mapping[str, Any]]) -> Dict[str, Any]:
        """A decision the study makes once, before its first measurement, from what it measured then (a
        quick run's plan, from the machine's rates), which a resume must repeat, not make again: the
        resumed journal's header's ``key`` where it holds one, else ``decide()`` (a JSON object),
        kept under ``key`` in a new journal's header (written with its first record). Call after
        :meth:`begin`. Returns the decision as JSON reads it back.

        Raises:
            ResultsError: the resumed journal's ``key`` is not a JSON object.
        """
        if self.previous is not None and key in self.previous.header:
            kept = self.previous.header[key]
            if not isinstance(kept, Mapping):
                raise ResultsError(f"{self.path}: line 1.{key} must be a JSON object")
            return dict(_plain(kept))
        decision: Dict[str, Any] = _plain(dict(decide()))
        with self._lock:
            if self._header is not None:
                self._header[key] = decision
        return decision

    def _check(self, device: Mapping[str, Any], options: Mapping[str, Any], flags: Mapping[str, str]) -> None:
        assert self.previous is not None
        head = self.previous.header
        shown = str(self.path.parent if self.path is not None else "")
        valid = "a directory whose journal was made on this device with these options"
        if not _same_device(head["device"], device):
            raise OptionError(
                "resume",
                shown,
                valid,
                shown=repr(shown),
                problem="holds a study of another device",
                reason=f"{_device_words(head['device'])} there, {_device_words(device)} here",
            )
        before = head["options"]
        keys = set(before) | set(options)
        for key in [k for k in flags if k in keys] + sorted(keys - set(flags)):
            if before.get(key) != options.get(key):
                reason = (
                    _flag_change(flags[key], before.get(key))
                    if key in flags
                    else f"{key} {json.dumps(before.get(key))} there, {json.dumps(options.get(key))} here"
                )
                raise OptionError(
                    "resume", shown, valid, shown=repr(shown), problem="holds a study with other options", reason=reason
                )

    # -- measuring ----------------------------------------------------------------------------------

    def stored(self, key: str) -> Optional[Mapping[str, Any]]:
        """The record the resumed journal holds for ``key`` (noted as resumed), or None."""
        if self.previous is None or key not in self.previous.records:
            return None
        if key not in self.resumed_keys:
            self.resumed_keys.append(key)
        record: Mapping[str, Any] = self.previous.records[key]
        return record

    def record(self, key: str, record: Mapping[str, Any]) -> None:
        """Append ``{"key": key, "record": record}`` as one line, flushed and fsync'ed (nothing without
        a journal).

        Raises:
            ResultsError: ``record`` holds a NaN or an infinity.
            JournalWriteError: the journal cannot be written.
        """
        if self.path is not None:
            self._write({"key": key, "record": record})

    def keep(
        self,
        key: str,
        measure: Callable[[], R],
        load: Callable[[Mapping[str, Any], str], R],
        dump: Callable[[R], Mapping[str, Any]],
    ) -> R:
        """The measurement ``key``: loaded with ``load(record, where)`` when the resumed journal holds
        it, else ``measure()``, appended as ``dump(result)`` (:meth:`record`) and returned.

        Raises:
            ResultsError: the journal's record cannot be loaded (``load``'s message).
        """
        stored = self.stored(key)
        if stored is not None:
            return load(stored, f"{self.path}: {key}")
        result = measure()
        self.record(key, dump(result))
        return result

    def resumed(self) -> Optional[Dict[str, Any]]:
        """The results' ``resumed`` field (:class:`~.document.Document`): where the kept measurements
        were made (``created``, ``host``, ``device``: the journal's header) and their keys; None when
        the study was not resumed."""
        if self.previous is None:
            return None
        head = self.previous.header
        return {
            "created": head["created"],
            "host": dict(head["host"]),
            "device": {"backend": head["device"]["backend"], "name": head["device"]["name"]},
            "measurements": list(self.resumed_keys),
        }

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _write(self, entry: Mapping[str, Any]) -> None:
        try:
            line = json.dumps(entry, allow_nan=False, separators=(",", ":")) + "\n"
        except ValueError as exc:
            raise ResultsError(f"{self.path}: a record cannot be written as JSON: {exc}") from None
        with self._lock:
            if self._file is None and self._header is not None and self.path is not None:
                header = json.dumps(self._header, allow_nan=False, separators=(",", ":")) + "\n"
                try:
                    self._file = open(self.path, "wb", buffering=0)
                except OSError as exc:
                    raise _write_error(self.path, exc) from None
                self._header = None
                line = header + line
                _fsync_dir(self.path.parent)
            if self._file is None:
                raise ValueError(f"{self.path}: the journal is not open (call begin first)")
            data = memoryview(line.encode("utf-8"))
            try:
                while data:  # unbuffered: each call writes to the file (all of it, but for a full disk)
                    n = self._file.write(data)
                    if not n:
                        raise OSError(errno.EIO, "the file took no bytes")
                    data = data[n:]
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise _write_error(self.path, exc) from None


def _flag_change(flag: str, then: Any) -> str:
    """What to give to repeat the option ``flag`` a journal was started with (``then``, its value
    there): ``"it was started with --quick; add --quick"``, ``"it was started with --reps 3; give
    --reps 3"``, ``"it was started without --sustain; leave out --sustain"``."""
    if then is None or then is False or then == 0:
        return f"it was started without {flag}; leave out {flag}"
    if then is True:
        return f"it was started with {flag}; add {flag}"
    given = f"{flag} {_flag_value(then)}"
    return f"it was started with {given}; give {given}"


def _flag_value(value: Any) -> str:
    """An option's value as it is typed after its flag: lists joined by commas, mappings as
    ``key=value`` pairs (``none`` when every value is 0, as ``--budget none`` records), whole
    numbers without a decimal point."""
    if isinstance(value, Mapping) and value and not any(value.values()):
        return "none"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_flag_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ",".join(_flag_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _fsync_dir(directory: Path) -> None:
    """Make a new file's directory entry durable (where the platform allows opening a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
