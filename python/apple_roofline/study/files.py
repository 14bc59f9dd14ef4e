"""Results files on disk: atomic writes, strict reading of the text and the JSON, JSON without NaN.

A write goes to a temporary file in the target's directory, is flushed and fsync'ed, then renamed
over the target (:func:`os.replace`), so a reader — or an interrupted run — never sees a partial
file. Reading names the file in a one-line :class:`ResultsError` for every failure.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, List, Mapping, Optional, Tuple, Union

__all__ = [
    "ResultsError",
    "write_bytes_atomic",
    "write_text_atomic",
    "read_results_text",
    "parse_results_json",
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


def read_results_text(path: PathLike) -> str:
    """The UTF-8 text of a results file.

    Raises:
        ResultsError: naming ``path``: no such file, a directory, unreadable, or not UTF-8.
    """
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


def parse_results_json(text: str, *, source: str = "<string>") -> Any:
    """Parse a results file's JSON text (any kind of study).

    Raises:
        ResultsError: empty or truncated text, invalid JSON (with line and column), nesting deeper
            than :data:`MAX_DEPTH`, or a number that is not finite (a ``NaN`` or ``Infinity``
            literal, or one too large for a double such as ``1e999``), named by its path; one line
            naming ``source``.
    """
    if not text.strip():
        raise ResultsError(f"{source}: empty file, not JSON")
    too_deep = f"{source}: nested too deeply to be a results file (valid: at most {MAX_DEPTH} levels)"
    try:
        # NaN and Infinity literals parse to floats here, so that the check below names their field
        data = json.loads(text, parse_constant=float)
    except json.JSONDecodeError as e:
        raise ResultsError(f"{source}: truncated or not JSON (line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise ResultsError(too_deep) from None
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
