"""How a suite's kernel is built on a device: :class:`KernelBuild`, what the case functions of the
idiv and dualissue suites (:func:`~.idiv.suite.idiv_case`, :func:`~.dualissue.suite.dual_case`)
compile their kernel from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Tuple, Union

__all__ = ["KernelBuild"]


@dataclass(frozen=True)
class KernelBuild:
    """A kernel's resolved source ``src`` (file or text, entry point), the backend that compiles
    and runs it, and the kernel table's constants on that backend (BLOCK, ...; a case adds its own,
    such as the chain length F)."""

    src: Tuple[str, str]
    backend: Any
    constants: Mapping[str, Union[int, float]] = field(default_factory=dict)

    def compile(self, **more: Union[int, float]) -> Any:
        """The kernel compiled with the table's constants and ``more`` (which win).

        Raises:
            Whatever the backend's ``compile`` raises (``CompileError``, ``UnsupportedError``, ...).
        """
        return self.backend.compile(self.src[0], self.src[1], {**self.constants, **more})
