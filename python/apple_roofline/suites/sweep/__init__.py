"""The ``sweep`` suite: the roofline traced by one kernel family at growing FMA counts. Its kernels,
counting and check: :mod:`.suite`; its registration: :mod:`.spec`."""
