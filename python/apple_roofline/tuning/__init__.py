"""The threadgroup-size tuning study (kind ``"tune"``): throughput of the suites' kernels against
their block / threadgroup size, and the best size of each (docs/design/studies.md, "Threadgroup-size tuning").

* :mod:`.model` — the results file, candidate sizes, the best size of each kernel;
* :mod:`.runner` — tuning a GPU (:func:`run_tune` with its :class:`TuneOptions`) and the tuners of
  ``run --tune``;
* :mod:`.report`, :mod:`.plot`, :mod:`.outputs` — the views and the files written.
"""

from __future__ import annotations

from .model import Rejected, TuneStudy
from .runner import FileTuner, QuickTuner, TuneInterrupted, TuneOptions, run_tune

__all__ = ["TuneStudy", "Rejected", "TuneInterrupted", "TuneOptions", "run_tune", "QuickTuner", "FileTuner"]
