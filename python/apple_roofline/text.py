"""Numbers and tables as text: the formatting every report, figure label and CLI table shares.

Figures are given to three significant figures (:func:`sig_figs`), frequencies in GHz/MHz/kHz
(:func:`frequency`), dates as ``YYYY-MM-DD`` (:func:`date_of`). Markdown tables escape ``|`` and
newlines in cells (:func:`markdown_table`); plain-text tables pad columns (:func:`text_table`).
Nothing here depends on any other module of the package.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import List, Mapping, Optional, Sequence

__all__ = [
    "DASH",
    "sig_figs",
    "percent",
    "frequency",
    "format_value",
    "key_value_pairs",
    "date_of",
    "one_line",
    "markdown_table",
    "text_table",
]

#: What a report shows for a figure that does not exist.
DASH = "—"


def sig_figs(x: float) -> str:
    """``x`` to three significant figures, for reports and labels.

    Plain notation for 1e-3 <= |x| < 1e6, where numbers >= 1000 keep every integer digit with
    thousands separators (``3849.2 -> "3,849"``); ``%.3g`` outside that range; 0, NaN and infinities
    as ``%g``.
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


def percent(fraction: float) -> str:
    """A fraction as a percentage to three significant figures (``0.0512 -> "5.12 %"``)."""
    return f"{sig_figs(100.0 * fraction)} %"


def frequency(hz: float) -> str:
    """A frequency in Hz as ``"3.44 GHz"``, ``"800 MHz"``, ``"32.8 kHz"`` or ``"50 Hz"``."""
    for scale, unit in ((1e9, "GHz"), (1e6, "MHz"), (1e3, "kHz")):
        if abs(hz) >= scale:
            return f"{hz / scale:.2f} {unit}" if unit == "GHz" else f"{sig_figs(hz / scale)} {unit}"
    return f"{sig_figs(hz)} Hz"


def format_value(key: str, value: object) -> str:
    """One figure of a provenance block: ``None`` as a dash, booleans as yes/no, keys ending in
    ``_hz`` as a frequency, integral floats as integers (``2.0 -> "2"``), other floats to three
    significant figures, anything else as ``str``."""
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        x = float(value)
        if key.endswith("_hz") and math.isfinite(x):
            return frequency(x)
        if isinstance(value, float):
            if math.isfinite(x) and x.is_integer() and abs(x) < 1e15:
                return str(int(x))
            return sig_figs(x)
        return str(value)
    return str(value)


def key_value_pairs(d: Mapping[str, object]) -> str:
    """``"k=v, k=v"`` of the scalar entries of ``d`` (nested objects and lists are left out: they
    get sections of their own); a dash when there are none."""
    pairs = [f"{k}={format_value(k, v)}" for k, v in d.items() if not isinstance(v, (Mapping, list, tuple))]
    return ", ".join(pairs) or DASH


def date_of(timestamp: str) -> str:
    """The date (``YYYY-MM-DD``) of an ISO 8601 timestamp; the text itself, stripped, when it does
    not parse."""
    text = timestamp.strip()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return text


def one_line(text: object) -> str:
    """``text`` as one line: its first non-empty line, with ``" (...)"`` when more followed; an
    exception with no message gives its type's name."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    if not lines:
        return type(text).__name__ if isinstance(text, BaseException) else ""
    return lines[0] + (" (...)" if len(lines) > 1 else "")


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]], align: Optional[str] = None) -> List[str]:
    """The lines of a Markdown table. ``align`` has one character per column, ``"l"`` or ``"r"``
    (default: all left); ``|`` in a cell is escaped and newlines become spaces."""
    spec = align or "l" * len(header)
    seps = ["---:" if a == "r" else "---" for a in spec]
    out = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(seps) + " |"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> List[str]:
    """The lines of a plain-text table: columns padded to their widest cell, a dashed rule under
    the header, trailing spaces stripped."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]
