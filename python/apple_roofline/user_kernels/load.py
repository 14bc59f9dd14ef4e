"""``--kernels FILE``: a kernels file or an Nsight Compute export, read into a :class:`~.model.KernelSet`."""

from __future__ import annotations

import os
from typing import Union

from ..sizes import format_size
from ..study.files import KERNELS_CAP, NCU_CAP, ResultsError, decode_text, read_capped
from .document import KernelsFile
from .model import KernelSet
from .ncu import looks_like_ncu, read_ncu_csv

__all__ = ["load_kernels"]


def load_kernels(path: Union[str, "os.PathLike[str]"]) -> KernelSet:
    """The kernels of ``path``: a kernels file (:func:`~.document.save_kernels`, JSON) or an
    Nsight Compute raw CSV export (``ncu --csv --page raw``, :func:`~.ncu.read_ncu_csv`), told
    apart by their content.

    Raises:
        ResultsError: one line naming ``path``: missing, unreadable, not a regular file, larger than
            :data:`~apple_roofline.study.files.NCU_CAP` (a kernels file: than
            :data:`~apple_roofline.study.files.KERNELS_CAP`), not UTF-8; a JSON file that is no
            kernels file (another kind, a bad field); or text that is neither (not an ncu raw export).
    """
    source = os.fspath(path)
    raw = read_capped(path, NCU_CAP, "kernels file or Nsight Compute export")
    text = decode_text(raw, source)
    if text.lstrip(" \t\r\n").startswith("{"):
        if len(raw) > KERNELS_CAP:
            raise ResultsError(
                f"{source}: {len(raw):,} bytes ({format_size(len(raw))}) is larger than a kernels file can be "
                f"(valid: at most {KERNELS_CAP:,} bytes, {format_size(KERNELS_CAP)})"
            )
        return KernelsFile.from_json(text, source=source).kernel_set(source)
    if not looks_like_ncu(text):
        raise ResultsError(
            f"{source}: neither a kernels file (JSON, from apple_roofline.save_kernels) nor an "
            f"Nsight Compute raw CSV export (`ncu --csv --page raw`)"
        )
    return read_ncu_csv(text, source=source)
