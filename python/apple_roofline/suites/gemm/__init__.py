"""The ``gemm`` suite: vendor GEMM libraries over a size ladder, the GEMM ceilings. Its precisions
and counting: :mod:`.precisions`; its operands: :mod:`.inputs`; its check: :mod:`.checks`; its
ladders: :mod:`.suite`; its registration: :mod:`.spec`."""
