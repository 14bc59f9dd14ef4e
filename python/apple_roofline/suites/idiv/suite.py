"""The ``idiv`` suite: what one 32-bit integer divide or modulo costs, by where the divisor comes from
(a power-of-two literal, a literal, a specialisation constant, a kernel argument), unsigned and
signed. The kernels, their counting and their NumPy reference are :mod:`.kernels`'.

Opt-in: ``--suite idiv`` (not a default suite: its :mod:`.spec`): it sets no
roofline ceiling, and a run of every default suite should not grow by sixteen kernels few users ask
for. Every kernel runs IDIV_F = 256 dependent operations per work item over IDIV_ITEMS work items
(IDIV_ITEMS_QUICK with ``--quick``), rounded up on GPUs to whole waves, at least MIN_WAVES, as the
peak suite does (an H100 holds 270 336 threads at once): enough threads to fill the device, so the
time is the divides' throughput, not memory traffic (8 bytes per 256 operations), a partial last
wave or launch overhead. Every
output word is checked for equality with the reference; the output is first filled with the
complement of the reference, so a word the kernel does not write cannot pass. A case rebound to
another block size (when tuning) is sized again in whole waves of that size, with the same reference.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, Optional, Tuple

import numpy as np

from ..base import BufferPair, Case, Constants, Suite, fill, read
from ..build import KernelBuild
from ..waves import MIN_WAVES, wave_items
from .kernels import IDIV_DIVISOR, IDIV_F, IDIV_KERNELS, IdivKernel, check_divisor, check_exact, idiv_input

__all__ = ["IdivSuite", "IDIV_ITEMS", "IDIV_ITEMS_QUICK", "idiv_case"]

#: Work items per launch (4 MiB in, 4 MiB out), and with ``--quick``.
IDIV_ITEMS = 1 << 20
IDIV_ITEMS_QUICK = 1 << 18


def idiv_case(
    ik: IdivKernel,
    F: int,
    items: int,
    bufs: Tuple[Any, Any],
    build: KernelBuild,
    d: int = IDIV_DIVISOR,
    extra: Optional[Dict[str, Any]] = None,
    ref: Optional[np.ndarray] = None,
) -> Case:
    """Write the input pattern, fill the output with the reference's complement and describe one
    timed launch of ``items`` work items of ``ik`` at chain length F, divisor ``d``, compiled by
    ``build`` with F added to its constants. ``ref`` is the
    reference over one period of :func:`.kernels.idiv_input` when already computed (a case
    rebound to another block size keeps its own).

    Raises:
        ValueError: ``d`` is 0 or outside 3 to 2^31-1 (:func:`.kernels.check_divisor`), before
            any buffer is written. ``extra`` adds to the recorded parameters (e.g. ``waves``).
    """
    d = check_divisor(d)
    kdef = ik.kernel_def(d)
    x = idiv_input()
    want = ik.reference(x, F, d) if ref is None else ref
    fill(bufs[0], x, items)
    fill(bufs[1], ~want, items)

    def check() -> Tuple[bool, str]:
        return check_exact(read(bufs[1], "int32", items).view(np.uint32), want)

    return Case(
        kernel=kdef,
        params={"F": F, "divisor": ik.divisor(d), "n": items, **(extra or {})},
        work_items=items,
        flops=ik.ops_per_item(F) * items,
        bytes=ik.bytes_per_item() * items,
        args=[bufs[0], bufs[1], *ik.args(d)],
        make_kernel=partial(build.compile, F=F),
        check=check,
        reset=partial(fill, bufs[1], ~want, items),
    )


class IdivSuite(Suite):
    """Every IDIV_KERNELS kernel at F = IDIV_F, divisor IDIV_DIVISOR (256 for ``pow2_literal``)."""

    name = "idiv"

    def total(self) -> int:
        return len(IDIV_KERNELS)

    def cases(self) -> Iterator[Case]:
        pair = BufferPair(self.ctx.backend)
        for ik in IDIV_KERNELS:
            kdef = ik.kernel_def()
            src = self.source(kdef)
            if src is None:
                continue
            yield self._case(ik, src, self.constants(kdef), pair, ik.reference(idiv_input(), IDIV_F))

    def _case(self, ik: IdivKernel, src: Tuple[str, str], consts: Constants, pair: BufferPair, ref: np.ndarray) -> Case:
        """The case of ``ik`` built with ``consts``, in whole waves where the kernel reports them;
        rebound to another BLOCK, planned again here (its waves depend on the block)."""
        items: int = IDIV_ITEMS_QUICK if self.ctx.quick else IDIV_ITEMS
        extra: Dict[str, Any] = {}
        wave = wave_items(self.ctx.backend, src, {**consts, "F": IDIV_F})
        if wave:
            waves = max(MIN_WAVES, -(-items // wave))
            items, extra = waves * wave, {"waves": waves}
        build = KernelBuild(src, self.ctx.backend, consts)
        case = idiv_case(ik, IDIV_F, items, pair.get(items * 4), build, extra=extra, ref=ref)
        case.rebind = lambda block: self._case(ik, src, {**consts, "BLOCK": block}, pair, ref)
        return case
