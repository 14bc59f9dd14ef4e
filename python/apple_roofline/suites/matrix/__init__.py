"""The ``matrix`` suite: the peak of the matrix units over tile shapes and precisions. Kernel table,
counting and reference: :mod:`.kernels`; cases and sweep forms: :mod:`.suite`; report tables:
:mod:`.table`; registration: :mod:`.spec`."""
