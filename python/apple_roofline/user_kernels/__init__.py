"""Your kernels on a measured roofline (docs/design/model.md, "Your kernels on the roofline").

* :mod:`.model` — a kernel's dot at one memory level, the kernels that cannot be placed, a file's set;
* :mod:`.document` — the embedding API's measurements as a results file (kind ``"kernels"``,
  :func:`save_kernels`);
* :mod:`.ncu` and :mod:`.units` — an Nsight Compute raw CSV export as dots (L1, L2, DRAM);
* :mod:`.load` — ``--kernels FILE``: either of them (:func:`load_kernels`);
* :mod:`.place` — each dot against the measured ceilings: the binding one and the speedup left;
* :mod:`.plot` — the dots on the figure; :mod:`.tables` — the reports' tables, the hover text.
"""

from __future__ import annotations

from .document import KernelsFile, save_kernels
from .load import load_kernels
from .model import KernelDot, KernelSet, Unplaced
from .place import Placement, place

__all__ = ["KernelDot", "KernelSet", "KernelsFile", "Placement", "Unplaced", "load_kernels", "place", "save_kernels"]
