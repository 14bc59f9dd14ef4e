"""Results files on disk: atomic writes, strict reading of the text and the JSON, JSON without NaN.

Every file the tool reads goes through :func:`read_capped`, as a database reads its files: a regular
file (links followed; a FIFO or a device is refused before it is read, never blocked on), no larger
than the cap of its kind (:data:`RESULTS_CAP` ...). Its text is UTF-8, a leading byte-order mark
dropped (:func:`decode_text`); its JSON may not give a key twice in one object (:func:`decode_json`).

A write goes to a temporary file in the target's directory, is flushed and fsync'ed, then renamed
over the target (:func:`os.replace`), so a reader — or an interrupted run — never sees a partial
file. Reading names the file in a one-line :class:`ResultsError` for every failure.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

from ..sizes import format_size

__all__ = [
    "ResultsError",
    "write_bytes_atomic",
    "write_text_atomic",
    "read_capped",
    "decode_text",
    "read_results_text",
    "RepeatedKey",
    "decode_json",
    "parse_results_json",
    "RESULTS_CAP",
    "JOURNAL_CAP",
    "KERNELS_CAP",
    "NCU_CAP",
    "REFERENCE_CAP",
    "dump_json",
    "non_finite",
    "check_finite",
    "json_number",
    "depth",
    "MAX_DEPTH",
]

PathLike = Union[str, "os.PathLike[str]"]

#: The deepest nesting of objects and arrays a results file may have (:func:`depth`): the deepest of
#: any kind is 7 (an engines point's plan: ``points[0].plan.ops[0].supported[0]``); far deeper is no
#: results file, and would exhaust the recursion of the JSON parser and of the readers.
MAX_DEPTH = 32


class ResultsError(ValueError):
    """A results file or dict could not be read or written.

    The message is one line: ``"<source>: <what is wrong>"``, e.g.
    ``"run.json: schema_version 7 is not supported (this tool reads 1)"``.
    """


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same directory, fsync, rename).

    The new file keeps the permission bits of the file it replaces, or gets ``0o644``. If anything
    fails the temporary file is removed and the exception propagates (``OSError`` for the file
    system); the old file, if any, is untouched.
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


def write_text_atomic(path: PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


#: The largest file of each kind the tool reads, bytes: a larger one is refused before it is read
#: (:func:`read_capped`), so that no file, hostile or mistaken, can exhaust the memory of a reader
#: that holds its text and its parsed objects at once (about 20 times the text for JSON).
#: A results file of any kind (``run.json``, a study's file, a tune file given to ``--tune-file``):
#: the largest recorded, a 223-measurement H100 run with power, is 0.34 MB; 64 MiB is 200 times
#: that and still parses in seconds.
RESULTS_CAP = 64 * 2**20
#: A journal holds the records of its results file, one compact line each: the same cap.
JOURNAL_CAP = RESULTS_CAP
#: A kernels file (``--kernels``, JSON): points as small as a results file's measurements.
KERNELS_CAP = RESULTS_CAP
#: An Nsight Compute raw CSV export (``--kernels``): a row of about 10 KB per profiled launch with
#: ``--set full`` (the recorded H200 export), so 256 MiB holds some 25,000 launches; profile fewer
#: (``ncu --launch-count``, ``--kernel-name``) for a larger application.
NCU_CAP = 256 * 2**20
#: A file of the package's own references (``references/data``): the largest, a recorded H200 run, is
#: 0.24 MB.
REFERENCE_CAP = 4 * 2**20

#: What a file that is not a regular one is, by :mod:`stat`'s test.
_FILE_TYPES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(source: str, mode: int, what: str) -> ResultsError:
    kind = next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")
    link = os.path.realpath(source)
    shown = f"links to {link}, {kind}" if os.path.islink(source) else f"is {kind}"
    return ResultsError(f"{source}: {shown}, not a {what} (valid: a regular file)")


def _too_large(source: str, size: str, cap: int, what: str) -> ResultsError:
    return ResultsError(
        f"{source}: {size} is larger than a {what} can be (valid: at most {cap:,} bytes, {format_size(cap)})"
    )


def read_capped(path: PathLike, cap: int = RESULTS_CAP, what: str = "results file") -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``cap`` of them.

    The file is checked before it is opened (:func:`os.stat`), opened without blocking
    (``O_NONBLOCK``: a FIFO put there after the check cannot hang the read) and checked again on
    the open file, so a FIFO, a device (``/dev/zero``, ``/dev/urandom``) or a directory is never
    read; its size is checked before reading and the read stops at ``cap + 1`` bytes, so a file
    that grows meanwhile is refused too. ``what`` names the kind of file in messages.

    Raises:
        ResultsError: one line naming ``path``: no such file, not a regular file (what it is, and
            where a link leads), larger than ``cap`` (its size and the cap), or unreadable.
    """
    source = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(source, mode, what)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ResultsError(f"{source}: no such file") from None
    except OSError as e:
        raise ResultsError(f"{source}: cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(source, st.st_mode, what)
        if st.st_size > cap:
            raise _too_large(source, f"{st.st_size:,} bytes ({format_size(st.st_size)})", cap, what)
        chunks: List[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(cap + 1 - total, 2**24))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > cap:
                raise _too_large(source, f"over {cap:,} bytes (it grew while being read)", cap, what)
    except OSError as e:
        raise ResultsError(f"{source}: cannot be read ({e.strerror or e})") from None
    finally:
        os.close(fd)


def decode_text(raw: bytes, source: str) -> str:
    """``raw`` as UTF-8 text, a leading byte-order mark dropped (read as ``utf-8-sig`` reads it:
    editors on Windows write one).

    Raises:
        ResultsError: ``"<source>: not UTF-8 text (byte N)"``, N the offset in the file.
    """
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[skip:].decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{source}: not UTF-8 text (byte {e.start + skip})") from None


def read_results_text(path: PathLike, cap: int = RESULTS_CAP, what: str = "results file") -> str:
    """The UTF-8 text of a results file (:func:`read_capped`, :func:`decode_text`).

    Raises:
        ResultsError: naming ``path``: no such file, not a regular file, larger than ``cap``,
            unreadable, or not UTF-8.
    """
    return decode_text(read_capped(path, cap, what), os.fspath(path))


class RepeatedKey(ValueError):
    """A JSON object holds a key twice (:func:`decode_json`): ``path`` is the object's place
    (``"measurements[2].params"``; "" for the top level), ``key`` the key."""

    def __init__(self, path: str, key: str) -> None:
        super().__init__(path, key)
        self.path = path
        self.key = key

    def message(self, where: str = "") -> str:
        """``'<where>.<path> holds the key "n" twice (valid: each key once in an object)'``."""
        place = ".".join(p for p in (where, self.path) if p).replace(".[", "[") or "the top level"
        return f"{place} holds the key {json.dumps(self.key)} twice (valid: each key once in an object)"


class _Repeated(Dict[str, Any]):
    """An object of the parsed JSON that held a key twice (the key in ``repeated``)."""

    repeated = ""


def decode_json(text: str) -> Any:
    """Parse JSON ``text`` as every reader here does: ``NaN`` and ``Infinity`` read as floats (for
    :func:`check_finite` to name), and a key given twice in one object an error, where
    :func:`json.loads` keeps the last one silently.

    Raises:
        json.JSONDecodeError: not JSON.
        RecursionError: nested too deeply for the parser.
        RepeatedKey: an object holds a key twice: the first such object, in the file's order.
    """
    repeated: List[_Repeated] = []

    def pairs(items: List[Tuple[str, Any]]) -> Dict[str, Any]:
        d = dict(items)
        if len(d) == len(items):
            return d
        out = _Repeated(d)
        seen: Set[str] = set()
        for k, _ in items:
            if k in seen:
                out.repeated = k
                break
            seen.add(k)
        repeated.append(out)
        return out

    data = json.loads(text, parse_constant=float, object_pairs_hook=pairs)
    if repeated:
        stack: List[Tuple[str, Any]] = [("", data)]
        while stack:
            path, v = stack.pop()
            if isinstance(v, _Repeated):
                raise RepeatedKey(path, v.repeated)
            if isinstance(v, dict):
                stack.extend(reversed([(f"{path}.{k}" if path else str(k), x) for k, x in v.items()]))
            elif isinstance(v, list):
                stack.extend(reversed([(f"{path}[{i}]", x) for i, x in enumerate(v)]))
    return data


def parse_results_json(text: str, *, source: str = "<string>") -> Any:
    """Parse a results file's JSON text (any kind of study; :func:`decode_json`).

    Raises:
        ResultsError: empty or truncated text, invalid JSON (with line and column), a key given twice
            in one object (named with its place), nesting deeper than :data:`MAX_DEPTH`, or a number
            that is not finite (a ``NaN`` or ``Infinity`` literal, or one too large for a double
            such as ``1e999``), named by its path; one line naming ``source``.
    """
    if not text.strip():
        raise ResultsError(f"{source}: empty file, not JSON")
    too_deep = f"{source}: nested too deeply to be a results file (valid: at most {MAX_DEPTH} levels)"
    try:
        data = decode_json(text)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{source}: truncated or not JSON (line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise ResultsError(too_deep) from None
    except RepeatedKey as e:
        raise ResultsError(f"{source}: {e.message()}") from None
    if depth(data) > MAX_DEPTH:  # every reader after this one may recurse through it
        raise ResultsError(too_deep)
    check_finite(data, source)
    return data


def non_finite(value: Any, where: str = "") -> Optional[Tuple[str, float]]:
    """The path (``"measurements[2].median_s"``) and value of the first NaN or infinity in ``value``
    (objects and arrays, nested, visited in order without recursion), or None when every number is
    finite. ``where`` prefixes the path."""
    stack: List[Tuple[str, Any]] = [(where, value)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                return path, v
        elif isinstance(v, Mapping):
            stack.extend(reversed([(f"{path}.{k}" if path else str(k), x) for k, x in v.items()]))
        elif isinstance(v, (list, tuple)):
            stack.extend(reversed([(f"{path}[{i}]", x) for i, x in enumerate(v)]))
    return None


def depth(value: Any) -> int:
    """How deeply objects and arrays nest in ``value`` (a number or string: 0; ``[[1]]``: 2),
    counted without recursion."""
    deepest = 0
    stack: List[Tuple[int, Any]] = [(0, value)]
    while stack:
        level, v = stack.pop()
        deepest = max(deepest, level)
        if isinstance(v, Mapping):
            stack.extend((level + 1, x) for x in v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend((level + 1, x) for x in v)
    return deepest


def json_number(value: float) -> str:
    """A non-finite float as JSON's extensions spell it (``NaN``, ``Infinity``, ``-Infinity``); any
    other number as ``repr``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def check_finite(data: Any, source: str) -> None:
    """Raise :class:`ResultsError` ``"<source>: <path> must be a finite number, not NaN"`` for the
    first NaN or infinity anywhere in ``data`` (parsed JSON or a dict given to a reader)."""
    found = non_finite(data)
    if found is not None:
        path, v = found
        raise ResultsError(f"{source}: {path or 'the top level'} must be a finite number, not {json_number(v)}")


def dump_json(d: Mapping[str, Any], what: str) -> str:
    """``d`` as JSON text (indent 2, trailing newline).

    Raises:
        ResultsError: a NaN or infinity anywhere in ``d`` (named by its path, ``what`` first), or a
            value JSON cannot hold.
    """
    found = non_finite(d, what)
    if found is not None:
        raise ResultsError(f"{found[0]}: {found[1]!r} cannot be written as JSON (not finite)")
    try:
        return json.dumps(d, indent=2, allow_nan=False) + "\n"
    except (TypeError, ValueError) as e:
        raise ResultsError(f"{what}: cannot be written as JSON: {e}") from None
