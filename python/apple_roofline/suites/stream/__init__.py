"""The ``stream`` suite: McCalpin's STREAM kernels, the DRAM bandwidth ceiling. Its kernels, counting
and check: :mod:`.suite`; its registration: :mod:`.spec`."""
