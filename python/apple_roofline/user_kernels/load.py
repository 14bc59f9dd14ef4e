"""``--kernels FILE``: a kernels file or an Nsight Compute export, read into a :class:`~.model.KernelSet`."""

from __future__ import annotations

import os
from typing import Union

from ..study.files import ResultsError, read_results_text
from .document import KernelsFile
from .model import KernelSet
from .ncu import looks_like_ncu, read_ncu_csv

__all__ = ["load_kernels"]


def load_kernels(path: Union[str, "os.PathLike[str]"]) -> KernelSet:
    """The kernels of ``path``: a kernels file (:func:`~.document.save_kernels`, JSON) or an
    Nsight Compute raw CSV export (``ncu --csv --page raw``, :func:`~.ncu.read_ncu_csv`), told
    apart by their content.

    Raises:
        ResultsError: one line naming ``path``: missing, unreadable, not UTF-8; a JSON file that is
            no kernels file (another kind, a bad field); or text that is neither (not an ncu raw
            export).
    """
    source = os.fspath(path)
    text = read_results_text(path)
    if text.lstrip("\ufeff \t\r\n").startswith("{"):
        return KernelsFile.from_json(text, source=source).kernel_set(source)
    if not looks_like_ncu(text):
        raise ResultsError(f"{source}: neither a kernels file (JSON, from apple_roofline.save_kernels) nor an "
                           f"Nsight Compute raw CSV export (`ncu --csv --page raw`)")
    return read_ncu_csv(text, source=source)
