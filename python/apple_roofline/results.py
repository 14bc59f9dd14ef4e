"""The kinds of study and the results file of each: one loader for every results file.

Each kind is a :class:`~apple_roofline.study.document.Document` subclass in its own subpackage;
:data:`KINDS` maps the ``kind`` key of a results file to it. A file without ``kind`` is a roofline
run (the first files were written before the key existed).
"""

from __future__ import annotations

import os
from typing import Dict, Type, Union

from .calls.model import CallsStudy
from .dispatch.model import DispatchStudy
from .engines.model import EnginesStudy
from .graphics.model import GraphicsStudy
from .roofline.model.run import Run
from .study.document import Document
from .study.files import ResultsError, parse_results_json, read_results_text
from .tuning.model import TuneStudy
from .user_kernels.document import KernelsFile

__all__ = ["KINDS", "load_results", "parse_results"]

#: Every kind of results file, by its ``kind`` key.
KINDS: Dict[str, Type[Document]] = {Run.KIND: Run, DispatchStudy.KIND: DispatchStudy, GraphicsStudy.KIND: GraphicsStudy}
KINDS[CallsStudy.KIND] = CallsStudy
KINDS[EnginesStudy.KIND] = EnginesStudy
KINDS[TuneStudy.KIND] = TuneStudy
KINDS[KernelsFile.KIND] = KernelsFile


def parse_results(data: object, *, source: str = "<dict>") -> Document:
    """The document of parsed JSON ``data``, of the class its ``kind`` names (a roofline run when
    it has none).

    Raises:
        ResultsError: an unknown kind (the message lists the kinds), or anything the kind's reader
            rejects.
    """
    kind = data.get("kind", Run.KIND) if isinstance(data, dict) else Run.KIND
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ResultsError(f"{source}: kind {kind!r} is not a kind of results file (valid: {', '.join(KINDS)})")
    return cls.from_dict(data, source=source)


def load_results(path: Union[str, "os.PathLike[str]"]) -> Document:
    """Read any results file once and return its document (:class:`~.roofline.model.run.Run`,
    :class:`~.dispatch.model.DispatchStudy` ...).

    Raises:
        ResultsError: one line naming ``path``: missing, unreadable, not UTF-8, not JSON, an unknown
            kind, or a field the kind's reader rejects.
    """
    source = os.fspath(path)
    return parse_results(parse_results_json(read_results_text(path), source=source), source=source)
