"""A table as data, the form every study's report tables take: the Markdown, HTML and CLI views
render the same rows (:func:`apple_roofline.text.markdown_table`, :mod:`apple_roofline.roofline.views.html`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

__all__ = ["Table"]


@dataclass(frozen=True)
class Table:
    """A table: ``header`` cells, ``rows`` of cells, ``align`` one ``"l"``/``"r"`` per column, and
    sentences that go before it (``notes``)."""

    header: Tuple[str, ...]
    rows: Tuple[Tuple[str, ...], ...]
    align: str
    notes: Tuple[str, ...] = ()
