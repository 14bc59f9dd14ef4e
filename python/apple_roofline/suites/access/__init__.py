"""The ``access`` suite: the guide's memory-access rules (stride, load width). Kernel table, counting
and reference: :mod:`.kernels`; cases: :mod:`.suite`; report table: :mod:`.table`; figure:
:mod:`.plot`; registration: :mod:`.spec`."""
