"""The ``matrix`` suite: the peak of the GPU's matrix hardware, one tile product repeated in registers
over a sweep of tile shapes and precisions (the kernels, counting and reference are
:mod:`.kernels`'; docs/design/matrix.md, "Matrix units").

A plain ``run`` measures one tile per precision and instruction (:data:`SHAPES_OPTION` =
:data:`LARGEST`: :func:`~.kernels.largest_shape`'s rule, seconds instead of the sweep's half
minute), so the first figure a user gets shows the matrix units' ceilings; ``--suite matrix`` measures
the whole sweep (:data:`SWEEP`). Every shape of every precision is reported: measured
(valid, or invalid with the first wrong element), or skipped with the reason (the instruction cannot
compose the shape, the OS, GPU family or compiler lacks the API, or the compiler's message); a
precision the API lacks altogether (FP8 on mma.sync and Metal, INT8 on simdgroup_matrix) is one skip
with the reason, not one per shape. The best valid shape of each precision and API sets the compute ceiling
"Matrix <in>→<acc> (<instruction>)": on CUDA ``mma.sync`` everywhere and ``wgmma`` on Hopper
(:func:`wgmma_reason` says why not elsewhere), on Metal ``simdgroup_matrix`` and ``matmul2d``.

Launch: work groups of the API's threads (32: a warp, a simdgroup; 128: a warpgroup), the API's
``groups`` of them (fewer with ``--quick``), rounded up on GPUs to whole waves, at least MIN_WAVES, as
the peak suite does; the kernels of an API are compiled on threads before it is measured
(:func:`~.base.prebuild`). The CPU has no matrix unit this tool programs portably (AMX, SME and
AVX-512 tiles each need their own intrinsics), so on the CPU the suite yields one skip saying so.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, Iterator, NoReturn, Optional, Tuple, Union

import numpy as np

from ...shaders import resolve
from ..base import Case, KernelDef, OutputCheck, Suite, fill_constant, poison, prebuild
from ..waves import MIN_WAVES, wave_items
from .kernels import (
    API_BY_NAME,
    APIS,
    ITERS,
    MPP_MIN_FAMILY,
    PRECISIONS,
    REPS,
    MatrixApi,
    MatrixPrecision,
    bytes_per_launch,
    check_tile_output,
    compose,
    kernel_def,
    largest_shape,
    matrix_inputs,
    matrix_reference,
    ops_per_group,
    to_storage,
)

__all__ = [
    "MatrixSuite",
    "GROUPS",
    "GROUPS_QUICK",
    "BLOCK",
    "CPU_REASON",
    "mpp_reason",
    "wgmma_reason",
    "unsupported",
    "SHAPES_OPTION",
    "SWEEP",
    "LARGEST",
]

#: Work groups per launch of the mma.sync and Metal APIs before rounding to whole waves, and with
#: ``--quick`` (each API's :attr:`~.kernels.MatrixApi.groups`).
GROUPS, GROUPS_QUICK = API_BY_NAME["mma"].groups
#: Threads per block / threadgroup of those APIs (4 work groups).
BLOCK = API_BY_NAME["mma"].block
#: ``SuiteContext.options`` key: which tiles the suite measures, :data:`SWEEP` (every shape of each
#: API, the default) or :data:`LARGEST` (one per precision and API, :func:`~.kernels.largest_shape`;
#: what a run with no suites named measures).
SHAPES_OPTION = "matrix_shapes"
SWEEP, LARGEST = "sweep", "largest"
#: Why the CPU measures nothing here.
CPU_REASON = (
    "the CPU has no matrix unit this tool programs portably (AMX, SME and AVX-512 tiles each need "
    "their own intrinsics): the matrix suite measures GPUs only"
)


def unsupported(reason: str) -> NoReturn:
    """Raise the backend's UnsupportedError with ``reason`` (the runner records it as skipped)."""
    from ..._native import _core

    raise _core.UnsupportedError(reason)


def mpp_reason(info: Any) -> str:
    """Why Metal Performance Primitives' ``matmul2d`` is not measured on the device ``info``
    describes, or "" when it is: it needs an Apple10-family GPU (M5, A19: the Neural Accelerators),
    which only macOS 26 drives."""
    raw = int(info.get("gpu_family_raw", 0) or 0)
    if raw >= MPP_MIN_FAMILY:
        return ""
    have = str(info.get("gpu_family") or "no Apple GPU family")
    return (
        f"matmul2d (Metal 4 Performance Primitives, MSL 4.0) runs on the Neural Accelerators of Apple10-family "
        f"GPUs (M5, A19) under macOS 26; this GPU is {have}"
    )


def wgmma_reason(info: Any) -> str:
    """Why ``wgmma`` is not measured on the CUDA device ``info`` (the backend's info dict)
    describes, or "" when it is: it needs a Hopper GPU (compute capability 9.0, the arch-specific
    target sm_90a) and an NVRTC that compiles for sm_90a (the backend's ``nvrtc_arch_target``)."""
    major, minor = info.get("cc_major"), info.get("cc_minor")
    if (major, minor) != (9, 0):
        have = f"sm_{major}{minor}" if major is not None and minor is not None else "of unknown compute capability"
        return f"wgmma needs an sm_90a (Hopper) GPU; this is {have}"
    target = str(info.get("nvrtc_arch_target", "sm_90a"))
    if target != "sm_90a":
        why = target[len("unavailable: ") :] if target.startswith("unavailable: ") else f"NVRTC targets {target}"
        return f"wgmma needs NVRTC for the arch-specific target sm_90a: {why}"
    return ""


def _gate(api: MatrixApi, info: Any) -> str:
    """Why ``api`` measures nothing on this device, or ""."""
    if api.name == "mpp":
        return mpp_reason(info)
    if api.name == "wgmma":
        return wgmma_reason(info)
    return ""


def _lacks(api: MatrixApi, p: MatrixPrecision) -> str:
    """Why ``api`` has no instruction for precision ``p`` at any shape, or ""."""
    if p.suffix in api.missing:
        return api.missing[p.suffix]
    if not api.whole_tile and not api.fragments.get(p.suffix):
        return f"{api.name} has no {p.dtype} fragment"
    return ""


def _compile(backend: Any, src: Tuple[str, str], constants: Dict[str, Union[int, float]]) -> Any:
    """Compile, turning a compile failure into a skip carrying the compiler's message."""
    from ..._native import _core

    try:
        return backend.compile(src[0], src[1], constants)
    except _core.CompileError as exc:
        unsupported(f"the compiler rejected this tile: {' '.join(str(exc).split())[:300]}")


def _mpp_source(text: str, m: int, n: int, k: int) -> str:
    """matrix_mpp.metal with the tile as macros: matmul2d_descriptor is a template argument, so M, N
    and K must be compile-time constants, which function constants are not."""
    head = "".join(
        f"#define {name} {v}\n" for name, v in (("TM", m), ("TN", n), ("TK", k), ("ITERS", ITERS), ("REPS", REPS))
    )
    return head + text


class MatrixSuite(Suite):
    """Every tile shape of each matrix API of the backend (:data:`~.kernels.APIS`; the
    API's :attr:`~.kernels.MatrixApi.shapes`) for every precision."""

    name = "matrix"

    def total(self) -> int:
        apis = [a for a in APIS if a.backend == self.ctx.backend_name]
        return max(
            1,
            sum(
                1 if _gate(a, self.ctx.info) or _lacks(a, p) else len(self._shapes(a, p))
                for a in apis
                for p in PRECISIONS
            ),
        )

    def _shapes(self, api: MatrixApi, p: MatrixPrecision) -> Tuple[Tuple[int, int, int], ...]:
        """The tiles of ``api`` measured for ``p``: all of its sweep, or with :data:`LARGEST` the one
        :func:`~.kernels.largest_shape` picks (the whole sweep where it picks none, so that
        every shape's reason is still reported)."""
        if self.ctx.options.get(SHAPES_OPTION, SWEEP) == LARGEST:
            best = largest_shape(api, p)
            if best is not None:
                return (best,)
        return api.shapes

    def _skip(self, kdef: KernelDef, params: Dict[str, Any], reason: str) -> Case:
        return Case(
            kernel=kdef,
            params=params,
            work_items=1,
            flops=0,
            bytes=0,
            args=[],
            make_kernel=lambda: unsupported(reason),
            check=lambda: (False, reason),
            reset=lambda: None,
        )

    def cases(self) -> Iterator[Case]:
        apis = [a for a in APIS if a.backend == self.ctx.backend_name]
        if not apis:
            kdef = KernelDef("matrix", "tile_products", "all", {})
            yield self._skip(
                kdef,
                {},
                CPU_REASON
                if self.ctx.backend_name == "cpu"
                else f"no matrix API is known for the {self.ctx.backend_name} backend",
            )
            return
        self._out: Optional[Any] = None
        self._capacity = 0
        # every check reads its output into it (docs/design/budgets.md, "Time budgets")
        self._scratch = self.ctx.scratch
        for api in apis:
            gate = _gate(api, self.ctx.info)
            if not gate:
                self._prebuild(api)
            for p in PRECISIONS:
                why = gate or _lacks(api, p)
                if why:  # one skip for the precision, not one per shape
                    yield self._skip(KernelDef("matrix", api.name, p.dtype, {}), {"scope": api.scope}, why)
                    continue
                for m, n, k in self._shapes(api, p):
                    yield self._case(api, p, m, n, k)

    def _constants(self, api: MatrixApi, m: int, n: int, k: int) -> Dict[str, Union[int, float]]:
        consts: Dict[str, Union[int, float]] = {"BLOCK": api.block, **api.constants}
        if api.name != "mpp":
            consts.update({"TM": m, "TN": n, "TK": k, "ITERS": ITERS, "REPS": REPS})
        return consts

    def _prebuild(self, api: MatrixApi) -> None:
        """Compile the CUDA kernels of every composable shape of ``api`` on threads (one NVRTC
        program per shape and precision)."""
        if api.backend != "cuda":
            return
        builds = [
            (*resolve(api.source, api.entry(p)), self._constants(api, *shape))
            for p in PRECISIONS
            if not _lacks(api, p)
            for shape in self._shapes(api, p)
            if compose(api, p, *shape).ok
        ]
        prebuild(self.ctx.backend, builds)

    def _case(self, api: MatrixApi, p: MatrixPrecision, m: int, n: int, k: int) -> Case:
        comp = compose(api, p, m, n, k)
        params: Dict[str, Any] = {"m": m, "n": n, "k": k, "reps": REPS, "iters": ITERS, "scope": api.scope}
        if self.ctx.options.get(SHAPES_OPTION, SWEEP) == LARGEST:
            params["shapes"] = "largest tile"  # the default run's one tile, not the sweep's best
        consts = self._constants(api, m, n, k)
        kdef = kernel_def(api, p, m, n, k, consts)
        if not comp.ok:
            return self._skip(kdef, params, comp.reason)
        params["instruction"] = comp.instruction
        text, entry = resolve(api.source, api.entry(p))
        src = (_mpp_source(text, m, n, k) if api.name == "mpp" else text, entry)
        backend = self.ctx.backend
        groups = api.groups[1] if self.ctx.quick else api.groups[0]
        items = groups * api.group_threads
        wave = wave_items(backend, src, consts)
        if wave:
            waves = max(MIN_WAVES, -(-items // wave))
            items = waves * wave
            params["waves"] = waves
        items = -(-items // api.block) * api.block  # whole threadgroups, whole work groups
        groups = items // api.group_threads
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
        out, scratch = self._out, self._scratch
        _poison(out, p.acc, count)

        check = OutputCheck.of_output(out, p.acc, count, scratch, lambda got: check_tile_output(got, want, groups))
        return Case(
            kernel=kdef,
            params=params,
            work_items=items,
            flops=ops_per_group(m, n, k) * groups,
            bytes=bytes_per_launch(p, m, n, k, groups),
            args=[abuf, bbuf, out],
            make_kernel=lambda: _compile(backend, src, consts),
            check=check,
            reset=partial(_poison, out, p.acc, count),
        )


def _poison(buf: Any, acc: str, count: int) -> None:
    """NaN for a float accumulator; for int32, a value no tile can hold (|C| < 2^31 - 1)."""
    if acc == "int32":
        fill_constant(buf, "int32", float(np.iinfo(np.int32).min), count)
    else:
        poison(buf, acc, count)
