"""The ``matrix`` suite: the peak of the GPU's matrix hardware, one tile product repeated in registers
over a sweep of tile shapes and precisions (the kernels, counting and reference are
:mod:`.matrix_kernels`'; docs/design.md, "Matrix units").

Opt-in: ``--suite matrix`` (not among :data:`~apple_roofline.suites.DEFAULT_SUITES`: 180 tile
products a plain run should not grow by). Every shape of every precision is reported: measured
(valid, or invalid with the first wrong element), or skipped with the reason (the instruction cannot
compose the shape, the API lacks the precision, the OS or GPU family lacks the API, or the compiler's
message). The best valid shape of each precision sets the compute ceiling "Matrix <in>→<acc>".

Launch: work groups of 32 threads (a warp, a simdgroup), ``GROUPS`` of them (``GROUPS_QUICK`` with
``--quick``), rounded up on GPUs to whole waves, at least MIN_WAVES, as the peak suite does. The CPU
has no matrix unit this tool programs portably (AMX, SME and AVX-512 tiles each need their own
intrinsics), so on the CPU the suite yields one skip saying so.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, NoReturn, Optional, Tuple, Union

import numpy as np

from ..shaders import resolve
from .base import Case, KernelDef, Suite, poison, read
from .matrix_kernels import (
    APIS, GROUP_THREADS, ITERS, MPP_MIN_FAMILY, PRECISIONS, REPS, TILE_SHAPES, MatrixApi, MatrixPrecision,
    bytes_per_launch, compose, kernel_def, matrix_inputs, matrix_reference, ops_per_group, to_storage,
    check_tile_output,
)
from .peak import MIN_WAVES, wave_items

__all__ = ["MatrixSuite", "GROUPS", "GROUPS_QUICK", "BLOCK", "CPU_REASON", "mpp_reason", "unsupported"]

#: Work groups per launch before rounding to whole waves, and with ``--quick``.
GROUPS = 4096
GROUPS_QUICK = 1024
#: Threads per block / threadgroup (4 work groups).
BLOCK = 128
#: Why the CPU measures nothing here.
CPU_REASON = ("the CPU has no matrix unit this tool programs portably (AMX, SME and AVX-512 tiles each need "
              "their own intrinsics): the matrix suite measures GPUs only")


def unsupported(reason: str) -> NoReturn:
    """Raise the backend's UnsupportedError with ``reason`` (the runner records it as skipped)."""
    from .._native import _core

    raise _core.UnsupportedError(reason)


def mpp_reason(info: Any) -> str:
    """Why Metal Performance Primitives' ``matmul2d`` is not measured on the device ``info``
    describes, or "" when it is: it needs an Apple10-family GPU (M5, A19: the Neural Accelerators),
    which only macOS 26 drives."""
    raw = int(info.get("gpu_family_raw", 0) or 0)
    if raw >= MPP_MIN_FAMILY:
        return ""
    have = str(info.get("gpu_family") or "no Apple GPU family")
    return (f"matmul2d (Metal 4 Performance Primitives, MSL 4.0) runs on the Neural Accelerators of Apple10-family "
            f"GPUs (M5, A19) under macOS 26; this GPU is {have}")


def _compile(backend: Any, src: Tuple[str, str], constants: Dict[str, Union[int, float]]) -> Any:
    """Compile, turning a compile failure into a skip carrying the compiler's message."""
    from .._native import _core

    try:
        return backend.compile(src[0], src[1], constants)
    except _core.CompileError as exc:
        unsupported(f"the compiler rejected this tile: {' '.join(str(exc).split())[:300]}")


def _mpp_source(text: str, m: int, n: int, k: int) -> str:
    """matrix_mpp.metal with the tile as macros: matmul2d_descriptor is a template argument, so M, N
    and K must be compile-time constants, which function constants are not."""
    head = "".join(f"#define {name} {v}\n" for name, v in (("TM", m), ("TN", n), ("TK", k), ("ITERS", ITERS),
                                                             ("REPS", REPS)))
    return head + text


class MatrixSuite(Suite):
    """Every tile shape of :data:`~.matrix_kernels.TILE_SHAPES` for every precision and every matrix
    API of the backend (:data:`~.matrix_kernels.APIS`)."""

    name = "matrix"

    def total(self) -> int:
        apis = [a for a in APIS if a.backend == self.ctx.backend_name]
        return max(1, len(apis) * len(PRECISIONS) * len(TILE_SHAPES))

    def _skip(self, kdef: KernelDef, params: Dict[str, Any], reason: str) -> Case:
        return Case(kernel=kdef, params=params, launch=1, flops=0, bytes=0, args=[],
                    make_kernel=lambda: unsupported(reason), check=lambda: (False, reason), reset=lambda: None)

    def cases(self) -> Iterator[Case]:
        apis = [a for a in APIS if a.backend == self.ctx.backend_name]
        if not apis:
            kdef = KernelDef("matrix", "tile_products", "all", {})
            yield self._skip(kdef, {}, CPU_REASON if self.ctx.backend_name == "cpu" else
                             f"no matrix API is known for the {self.ctx.backend_name} backend")
            return
        self._out: Optional[Any] = None
        self._capacity = 0
        for api in apis:
            gate = mpp_reason(self.ctx.info) if api.name == "mpp" else ""
            for p in PRECISIONS:
                if gate:
                    yield self._skip(KernelDef("matrix", api.name, p.dtype, {}), {"scope": api.scope}, gate)
                    continue
                for m, n, k in TILE_SHAPES:
                    yield self._case(api, p, m, n, k)

    def _case(self, api: MatrixApi, p: MatrixPrecision, m: int, n: int, k: int) -> Case:
        comp = compose(api, p, m, n, k)
        params: Dict[str, Any] = {"m": m, "n": n, "k": k, "reps": REPS, "iters": ITERS, "scope": api.scope}
        consts: Dict[str, Union[int, float]] = {"BLOCK": BLOCK}
        if api.name != "mpp":
            consts.update({"TM": m, "TN": n, "TK": k, "ITERS": ITERS, "REPS": REPS})
        kdef = kernel_def(api, p, m, n, k, consts)
        if not comp.ok:
            return self._skip(kdef, params, comp.reason)
        params["instruction"] = comp.instruction
        text, entry = resolve(api.source, api.entry(p))
        src = (_mpp_source(text, m, n, k) if api.name == "mpp" else text, entry)
        backend = self.ctx.backend
        groups = GROUPS_QUICK if self.ctx.quick else GROUPS
        items = groups * GROUP_THREADS
        wave = wave_items(backend, src, consts)
        if wave:
            waves = max(MIN_WAVES, -(-items // wave))
            items = waves * wave
            params["waves"] = waves
        items = -(-items // BLOCK) * BLOCK  # whole threadgroups, whole work groups
        groups = items // GROUP_THREADS
        params["groups"] = groups
        a, b = matrix_inputs(p, m, n, k)
        want = matrix_reference(a, b)
        abuf, bbuf = backend.alloc(max(a.size * 4, 64)), backend.alloc(max(b.size * 4, 64))
        abuf.write(to_storage(a, p.input).ravel())
        bbuf.write(to_storage(b, p.input).ravel())
        count = groups * m * n
        if self._out is None or count * 4 > self._capacity:
            self._out = None  # release the smaller buffer first
            self._capacity = count * 4
            self._out = backend.alloc(self._capacity)
        out = self._out
        _poison(out, p.acc, count)

        def check() -> Tuple[bool, str]:
            return check_tile_output(read(out, p.acc, count), want, groups)

        return Case(kernel=kdef, params=params, launch=items, flops=ops_per_group(m, n, k) * groups,
                    bytes=bytes_per_launch(p, m, n, k, groups), args=[abuf, bbuf, out],
                    make_kernel=lambda: _compile(backend, src, consts), check=check,
                    reset=partial(_poison, out, p.acc, count))


def _poison(buf: Any, acc: str, count: int) -> None:
    """NaN for a float accumulator; for int32, a value no tile can hold (|C| < 2^31 - 1)."""
    if acc == "int32":
        block = np.full(min(count, 1 << 20), np.iinfo(np.int32).min, np.int32)
        for start in range(0, count, block.size):
            n = min(block.size, count - start)
            buf.write(block[:n], start * 4)
    else:
        poison(buf, acc, count)
