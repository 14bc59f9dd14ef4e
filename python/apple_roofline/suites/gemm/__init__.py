"""The ``gemm`` suite: vendor GEMM libraries over a size ladder, the GEMM ceilings. Its kernels,
counting and check: :mod:`.suite`; its registration: :mod:`.spec`."""
