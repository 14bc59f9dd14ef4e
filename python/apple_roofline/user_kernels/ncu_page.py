"""Nsight Compute's raw CSV page as launches: the header row, the row of units, one row per launch.

``ncu --csv --page raw`` (or ``ncu --import REPORT --csv --page raw``) writes a header row starting
``"ID"`` with a ``Kernel Name`` column and one column per metric, a row of units (no launch ID),
then one row per launch; lines before the header (ncu's ``==PROF==`` log, the application's
output) are skipped. The details page (``--page details``: one row per metric, with ``Metric
Name`` and ``Metric Value`` columns) is refused with the command that writes the raw one. A cell
is read when its metric is asked for (:meth:`Launch.has`, :meth:`Launch.value`): empty, ``n/a``
or ``-`` is a metric not collected; anything else that is no finite number in its base unit is an
error naming the launch's kernel, the metric and the cell.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..study.files import ResultsError
from .units import NumberError, UnitError, parse_number, unit_scale

__all__ = ["Launch", "read_page", "header_index", "RAW_COMMAND"]

KERNEL_NAME = "Kernel Name"
DEVICE = "device__attribute_display_name"
RAW_COMMAND = "`ncu --import REPORT --csv --page raw` (or `ncu --csv --page raw ...`)"
#: The metrics the import reads start so: their units must be ncu's (others are left out).
USED_PREFIXES = (
    "gpu__time_duration",
    "dram__",
    "lts__",
    "l1tex__",
    "derived__l1tex__",
    "derived__lts__",
    "sm__",
    "smsp__",
)
_DETAILS = ("Metric Name", "Metric Value")


@dataclass
class Launch:
    """One launch row: its kernel, row number (1 = the first launch) and metric cells.

    Attributes:
        kernel: the ``Kernel Name`` cell.
        row: the launch's row number among the launches (1-based).
        cells: metric -> cell as written (only columns whose name holds ``__``).
        scales: metric -> the factor of its unit to the base unit (None: a unit no metric read uses).
        source: the file, for messages.
        device: the ``device__attribute_display_name`` cell, or None.
    """

    kernel: str
    row: int
    cells: Dict[str, str]
    scales: Dict[str, Optional[float]]
    source: str
    device: Optional[str] = None
    _parsed: Dict[str, Optional[float]] = field(default_factory=dict, repr=False)

    def _get(self, metric: str) -> Optional[float]:
        if metric not in self._parsed:
            cell = self.cells.get(metric)
            scale = self.scales.get(metric)
            if cell is None or scale is None:
                self._parsed[metric] = None
            else:
                try:
                    v = parse_number(cell)
                except NumberError as exc:
                    raise ResultsError(self.where(metric, str(exc))) from None
                if v is not None and not math.isfinite(v * scale):
                    raise ResultsError(self.where(metric, f"{cell.strip()!r} is out of range in its base unit"))
                self._parsed[metric] = None if v is None else v * scale
        return self._parsed[metric]

    def where(self, metric: str, problem: str) -> str:
        """One line naming the file, the kernel, the launch and the metric, then ``problem``."""
        return (
            f"{self.source}: kernel {self.kernel!r}, launch row {self.row}, {metric}: {problem} "
            f"(valid: a finite number, or empty or n/a for a metric not collected)"
        )

    def has(self, metric: str) -> bool:
        """Whether the launch has a value for ``metric``.

        Raises:
            ResultsError: its cell is no finite number (:meth:`where`).
        """
        return self._get(metric) is not None

    def value(self, metric: str) -> float:
        """The metric's value in its base unit (bytes, seconds, cycles, instructions and ratios).

        Raises:
            KeyError: the launch has no value for it (:meth:`has`).
            ResultsError: its cell is no finite number.
        """
        v = self._get(metric)
        if v is None:
            raise KeyError(metric)
        return v

    def first(self, names: Sequence[str]) -> Optional[str]:
        """The first of ``names`` the launch has a value for, or None."""
        return next((n for n in names if self.has(n)), None)


def header_index(lines: Sequence[str]) -> Optional[int]:
    """The index of the header row (starting ``"ID"`` and naming ``Kernel Name``), or None."""
    for i, line in enumerate(lines):
        s = line.lstrip("\ufeff").strip()
        if s.startswith('"ID"') or s.startswith("ID,"):
            row = next(csv.reader([s]), [])
            if KERNEL_NAME in row:
                return i
    return None


def read_page(text: str, source: str) -> Tuple[List[str], List[Launch]]:
    """The header and the launches of a raw page (module docstring).

    Raises:
        ResultsError: one line naming ``source``: no header row, the details page, a unit ncu
            does not write on a metric the import reads, a row of the wrong length, no launches.
    """
    header, body = _table(text, source)
    units: List[str] = [""] * len(header)
    if body and (not body[0] or not body[0][0].strip()):  # the row of units has no launch ID
        units = [u.strip() for u in body[0]] + [""] * (len(header) - len(body[0]))
        body = body[1:]
    out = _launches(header, body, _scales(header, units, source), source)
    if not out:
        raise ResultsError(f"{source}: an Nsight Compute export without launches (no rows after the header)")
    return header, out


def _table(text: str, source: str) -> Tuple[List[str], List[List[str]]]:
    """The header row (stripped) and the rows below it of a raw page, ncu's ``==`` lines left out.

    Raises:
        ResultsError: no header row, or ncu's details page.
    """
    lines = text.splitlines()
    start = header_index(lines)
    if start is None:
        raise ResultsError(
            f'{source}: not an Nsight Compute raw CSV export (no header row starting "ID" with a '
            f'"Kernel Name" column); write one with {RAW_COMMAND}'
        )
    rows = list(csv.reader(io.StringIO("\n".join(line for line in lines[start:] if not line.startswith("==")))))
    header = [h.strip() for h in rows[0]]
    if all(d in header for d in _DETAILS):
        raise ResultsError(
            f"{source}: this is ncu's details page (one row per metric: Metric Name, Metric Value), not the raw "
            f"page (one row per launch) the import reads; write that with {RAW_COMMAND}"
        )
    return header, rows[1:]


def _scales(header: Sequence[str], units: Sequence[str], source: str) -> Dict[str, Optional[float]]:
    """Each column's factor to the base unit (:func:`~.units.unit_scale`); None for a unit ncu does
    not write on a column this reader does not use.

    Raises:
        ResultsError: such a unit on a column it uses.
    """
    scales: Dict[str, Optional[float]] = {}
    for h, u in zip(header, units):
        try:
            scales[h] = unit_scale(u)
        except UnitError as exc:  # a metric this reader uses must be readable; any other is left out
            if h.startswith(USED_PREFIXES):
                raise ResultsError(
                    f"{source}: column {h}: {exc} (ncu writes byte, Kbyte ..., nsecond ..., inst, cycle/second ...)"
                ) from None
            scales[h] = None
    return scales


def _launches(
    header: Sequence[str], body: Sequence[Sequence[str]], scales: Dict[str, Optional[float]], source: str
) -> List[Launch]:
    """One :class:`Launch` per non-blank row, numbered from 1.

    Raises:
        ResultsError: a row with another number of cells than the header.
    """
    name_col = list(header).index(KERNEL_NAME)
    out: List[Launch] = []
    for row in body:
        if not row or not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ResultsError(
                f"{source}: launch row {len(out) + 1} has {len(row)} cells, the header {len(header)} "
                f"(a truncated or edited export?)"
            )
        cells = {h: c for h, c in zip(header, row) if "__" in h}
        device = cells.get(DEVICE, "").strip() or None
        out.append(Launch(row[name_col].strip(), len(out) + 1, cells, scales, source, device))
    return out
