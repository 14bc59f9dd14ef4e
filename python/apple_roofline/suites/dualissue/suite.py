"""The ``dualissue`` suite: whether a core issues an FP32 instruction in the same cycle as an FP16 or
an integer one (docs/design/rules.md, "Dual issue"). The kernels, their counting and their NumPy
references are :mod:`.kernels`'.

Every DUAL_KERNELS kernel at F = DUAL_F on 4 MiB of input (the peak suite's buffer), rounded up on
GPUs to whole waves, at least MIN_WAVES, as the peak suite does, so the time is the issue rate of
the chains, not memory traffic or a partial wave. Opt-in (``--suite dualissue``): it sets no
ceiling. Each output is poisoned (NaN words) before each timing and every plane is checked: the FP
planes against the FMA chains' references within their tolerance, the integer plane word for word.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, Tuple

import numpy as np

from ..base import BufferPair, Case, Constants, Suite, check_tiled, fill, poison, prebuild, read
from ..build import KernelBuild
from ..fma import CHAIN_A
from ..idiv.kernels import check_exact
from ..peak.suite import PEAK_BUFFER_BYTES
from ..waves import MIN_WAVES, wave_items
from .kernels import CHAINS, DUAL_F, DUAL_KERNELS, DualKernel, dual_input, kind_reference, kind_tolerance

__all__ = ["DualIssueSuite", "dual_case"]


def dual_case(
    dk: DualKernel,
    F: int,
    items: int,
    bufs: Tuple[Any, Any],
    build: KernelBuild,
    extra: Dict[str, Any],
    refs: Dict[str, np.ndarray],
) -> Case:
    """Write the input pattern, poison the output and describe one timed launch of ``items`` work
    items of ``dk`` at F steps per chain, compiled by ``build`` with F added to its constants;
    ``extra`` joins the case's parameters; ``refs`` maps each kind to its reference over one period
    of :func:`.kernels.dual_input` (filled here where missing)."""
    x = dual_input()
    for kind in dk.kinds:
        if kind not in refs:
            refs[kind] = kind_reference(kind, x, F)
    words = items * CHAINS
    fill(bufs[0], x, words)
    out_words = items * dk.words_out()
    reset = partial(poison, bufs[1], "fp32", out_words)
    reset()

    def check() -> Tuple[bool, str]:
        got = read(bufs[1], "fp32", out_words)
        msgs = []
        for p, kind in enumerate(dk.kinds):
            plane = got[p * words : (p + 1) * words]
            if kind == "int32":
                ok, msg = check_exact(plane.view(np.uint32), refs[kind])
            else:
                ok, msg = check_tiled(plane, refs[kind], *kind_tolerance(kind))
            if not ok:
                return False, f"{kind} plane: {msg}"
            msgs.append(f"{kind}: {msg}")
        return True, "; ".join(msgs)

    counts = dk.counts(F)
    return Case(
        kernel=dk.kernel_def(),
        params={"F": F, "n": items, **{k: v for k, v in counts.items() if v}, **extra},
        work_items=items,
        flops=dk.flops_per_item(F) * items,
        bytes=dk.bytes_per_item() * items,
        args=[bufs[0], bufs[1], CHAIN_A],
        make_kernel=partial(build.compile, F=F),
        check=check,
        reset=reset,
    )


class DualIssueSuite(Suite):
    """Every DUAL_KERNELS kernel at F = DUAL_F (module docstring)."""

    name = "dualissue"

    def total(self) -> int:
        return len(DUAL_KERNELS)

    def cases(self) -> Iterator[Case]:
        pair = BufferPair(self.ctx.backend)
        refs: Dict[str, np.ndarray] = {}
        kernels = [(dk, src) for dk in DUAL_KERNELS for src in [self.source(dk.kernel_def())] if src is not None]
        prebuild(self.ctx.backend, [(*src, {**self.constants(dk.kernel_def()), "F": DUAL_F}) for dk, src in kernels])
        for dk, src in kernels:
            yield self._case(dk, src, self.constants(dk.kernel_def()), pair, refs)

    def _case(
        self, dk: DualKernel, src: Tuple[str, str], consts: Constants, pair: BufferPair, refs: Dict[str, np.ndarray]
    ) -> Case:
        """The case of ``dk``, in whole waves where the kernel reports them; rebound to another
        BLOCK, planned again here (its waves depend on the block)."""
        items = PEAK_BUFFER_BYTES // (4 * CHAINS)
        extra: Dict[str, Any] = {}
        wave = wave_items(self.ctx.backend, src, {**consts, "F": DUAL_F})
        if wave:
            waves = max(MIN_WAVES, -(-items // wave))
            items, extra = waves * wave, {"waves": waves}
        case = dual_case(
            dk,
            DUAL_F,
            items,
            pair.get(items * 4 * max(CHAINS, dk.words_out())),
            KernelBuild(src, self.ctx.backend, consts),
            extra,
            refs,
        )
        case.rebind = lambda block: self._case(dk, src, {**consts, "BLOCK": block}, pair, refs)
        return case
