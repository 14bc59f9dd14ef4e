"""The ``dualissue`` suite: whether FP32 issues with FP16 or integer work. Kernel table, counting and
references: :mod:`.kernels`; cases: :mod:`.suite`; report table: :mod:`.table`; figure: :mod:`.plot`;
registration: :mod:`.spec`."""
