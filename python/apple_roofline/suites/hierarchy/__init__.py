"""The ``hierarchy`` suite: bandwidth at every level of the memory hierarchy. Kernels, counting,
check and sweep forms: :mod:`.suite`; plateaus (:mod:`.plateaus`) told apart (:mod:`.agreement`)
become level ceilings (:mod:`.levels`); report table: :mod:`.table`; figure: :mod:`.plot`;
registration: :mod:`.spec`."""
