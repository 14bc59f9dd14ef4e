"""The ``peak`` suite: compute ceilings from FMA chains on a cache-resident buffer. Its kernels,
counting and check: :mod:`.suite`; its registration: :mod:`.spec`."""
