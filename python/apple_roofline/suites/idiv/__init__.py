"""The ``idiv`` suite: what one integer divide costs by where its divisor comes from. Kernel table,
counting and reference: :mod:`.kernels`; cases: :mod:`.suite`; report table: :mod:`.table`;
registration: :mod:`.spec`."""
