"""Measuring a device in the dispatch-latency study (:func:`~.runner.run_dispatch`): above the study's
model (:mod:`..kernels`, :mod:`..model`, :mod:`..paired`) and the peer libraries (:mod:`..peers`),
which it runs after the native and python paths (docs/design/studies.md, "Dispatch latency")."""
