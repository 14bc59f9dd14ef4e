"""The ``occupancy`` suite: throughput against threadgroup memory. Kernels, counting and check:
:mod:`.suite`; report table: :mod:`.table`; figure: :mod:`.plot`; registration: :mod:`.spec`."""
