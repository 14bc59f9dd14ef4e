"""The Metal kernel sources (shaders/metal/*.metal) against their CUDA twins (shaders/cuda/*.cu), read
as text: Metal Shading Language cannot be compiled off a Mac, so what can be checked without one and
without a compiler is checked here (the compiled checks are in tests/toolchain).

- Twins: every CUDA entry of the twin files has a Metal kernel of the same name (fp64 ones
  excepted, by an explicit list), every Metal kernel a CUDA one, and every entry a kernel table
  names on Metal exists.
- Arguments: [[buffer(i)]] indices 0..k-1 in order, and the same arguments as the CUDA twin
  (core/backend.h: a device pointer for a pointer, `constant float&` for a double, `constant long&`
  for a long long, `constant ulong&` for the work-item count).
- Function constants: declared at file scope with distinct indices, every -D constant the CUDA twin
  requires (BLOCK aside: on Metal it is the threadgroup size) among them; no `double` anywhere.
- The graphics shaders: graphics.metal has the vertex and fragment functions of its WGSL twin
  (graphics.wgsl), with the same stages, and the WGSL overrides as function constants of the
  matching types (u32 -> uint, bool -> bool).
- The tiled GEMM's index mapping covers C exactly once, and a NumPy emulation of its tile loop
  meets the fp32 GEMM bound.
"""

from __future__ import annotations

import os
import re
from typing import List, Optional, Set

import numpy as np
import pytest

from apple_roofline.suites.access.kernels import ACCESS_KERNELS
from apple_roofline.suites.base import KernelDef
from apple_roofline.suites.dualissue.kernels import DUAL_KERNELS
from apple_roofline.suites.gemm import precisions as gemm_precisions
from apple_roofline.suites.gemm.checks import check_gemm
from apple_roofline.suites.hierarchy.suite import HIERARCHY_KERNELS, SHARED_KERNEL
from apple_roofline.suites.idiv.kernels import IDIV_KERNELS
from apple_roofline.suites.occupancy.suite import KERNEL as OCCUPANCY_KERNEL
from apple_roofline.suites.peak.suite import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream.suite import STREAM_KERNELS
from shader_twins import (
    GROUP,
    NO_METAL_TWIN,
    PREFIXED_TWINS,
    PREPENDED_MACROS,
    TILE,
    TWIN_STEMS,
    WGSL_TWINS,
    cuda_entries,
    cuda_kind,
    emulate_tiled16,
    function_constants,
    metal_args,
    metal_compute_files,
    metal_files,
    metal_kernels,
    metal_stage_functions,
    read_shader,
    required_macros,
    strip_comments,
    tiled16_element,
    twins,
    wgsl_overrides,
    wgsl_stage_functions,
)


def test_every_cuda_entry_has_a_metal_twin() -> None:
    all_cuda: Set[str] = set()
    for stem, cuda, metal in twins():
        assert cuda, f"no CUDA entries parsed from {stem}.cu"
        all_cuda |= set(cuda)
        missing = sorted(set(cuda) - set(metal) - set(NO_METAL_TWIN))
        assert not missing, f"{stem}.metal lacks the twins of {missing}"
        extra = sorted(set(metal) - set(cuda))
        assert not extra, f"{stem}.metal has kernels without a CUDA twin in {stem}.cu: {extra}"
        excused = sorted(set(metal) & set(NO_METAL_TWIN))
        assert not excused, f"{excused} are listed in NO_METAL_TWIN but exist in {stem}.metal"
    stale = sorted(set(NO_METAL_TWIN) - all_cuda)
    assert not stale, f"NO_METAL_TWIN names entries no CUDA file has: {stale}"


def test_every_metal_file_has_a_cuda_twin() -> None:
    assert sorted(f"{s}.metal" for s in TWIN_STEMS) == metal_compute_files()
    assert sorted(set(metal_files()) - set(metal_compute_files())) == sorted([*WGSL_TWINS, *PREFIXED_TWINS])


def test_graphics_metal_matches_its_wgsl_twin() -> None:
    for metal_name, wgsl_name in WGSL_TWINS.items():
        metal, wgsl = read_shader(metal_name), read_shader(wgsl_name)
        stages = metal_stage_functions(metal)
        assert stages and stages == wgsl_stage_functions(wgsl), f"{metal_name} vs {wgsl_name}: {stages}"
        assert not metal_kernels(metal), f"{metal_name} has compute kernels"
        types = {"u32": "uint", "i32": "int", "f32": "float", "bool": "bool"}
        want = {name: types[t] for name, t in wgsl_overrides(wgsl).items()}
        got = {name: t for t, name, _ in function_constants(metal)}
        assert got == want, f"{metal_name}'s function constants {got}, {wgsl_name}'s overrides {want}"
        code = strip_comments(metal)
        for binding in ("[[buffer(0)]]", "[[texture(0)]]", "[[sampler(0)]]", "[[vertex_id]]", "[[position]]"):
            assert binding in code, f"{metal_name} binds nothing at {binding} (core/backend.h, RenderSpec)"


def _table_kernel_defs() -> List[KernelDef]:
    kdefs = [kernel_def(d, v) for d, v in PEAK_VARIANTS] + [sk.kernel_def() for sk in STREAM_KERNELS]
    kdefs += [ik.kernel_def() for ik in IDIV_KERNELS]
    kdefs += [ak.kernel_def() for ak in ACCESS_KERNELS] + [dk.kernel_def() for dk in DUAL_KERNELS] + [OCCUPANCY_KERNEL]
    kdefs += [hk.kernel_def() for hk in (*HIERARCHY_KERNELS, SHARED_KERNEL)]
    tiled: Optional[KernelDef] = getattr(gemm_precisions, "TILED_GEMM", None)
    return kdefs + ([tiled] if tiled is not None else [])


def test_every_metal_entry_of_the_tables_exists() -> None:
    """Entries the kernel tables name on Metal are kernels of the named file; every Metal-capable
    dtype (not fp64) of a table entry with a CUDA twin file has a Metal kernel to name."""
    kernels = {f: metal_kernels(read_shader(f)) for f in metal_compute_files()}
    for k in _table_kernel_defs():
        src = k.sources.get("metal")
        if src is not None:
            assert src[0] in kernels, f"{k.suite}/{k.name}/{k.dtype} names {src[0]}, which does not exist"
            assert src[1] in kernels[src[0]], f"{src[0]} has no kernel {src[1]} ({k.suite}/{k.name}/{k.dtype})"
        cuda = k.sources.get("cuda")
        if cuda is not None and cuda[1] not in NO_METAL_TWIN:
            stem = os.path.splitext(cuda[0])[0]
            assert cuda[1] in kernels[f"{stem}.metal"], f"{cuda[1]} ({cuda[0]}) has no Metal twin"


# ---- (b) arguments ----------------------------------------------------------------------------------


def test_metal_arguments_match_the_cuda_twins() -> None:
    for stem, cuda, metal in twins():
        for name, params in metal.items():
            args = metal_args(params)
            where = f"{stem}.metal:{name}"
            assert [i for i, _ in args] == list(range(len(args))), f"{where}: buffer indices {[i for i, _ in args]}"
            want = [cuda_kind(p) for p in cuda[name]]
            got = [kind for _, kind in args]
            assert got == want, f"{where}: arguments {got}, CUDA twin {want}"
            assert want[-1] == "count" and "count" not in want[:-1], f"{name}: the work-item count must come last"
            assert any("thread_position_in_grid" in p or "threadgroup_position_in_grid" in p for p in params), where


# ---- (c) function constants, (f) no double ----------------------------------------------------------


def test_function_constants_are_declared() -> None:
    for f in metal_files():
        code = strip_comments(read_shader(f))
        fcs = function_constants(read_shader(f))
        names = [n for _, n, _ in fcs]
        indices = [i for _, _, i in fcs]
        assert len(set(indices)) == len(indices), f"{f}: function constant indices {indices} repeat"
        assert len(set(names)) == len(names), f"{f}: function constants {names} repeat"
        for _, name, _ in fcs:
            assert len(re.findall(rf"\b{name}\b", code)) > 1, f"{f}: function constant {name} is never used"
        stem = os.path.splitext(f)[0]
        if f in WGSL_TWINS or f in PREFIXED_TWINS:
            continue  # WGSL overrides (test_graphics_metal_matches_its_wgsl_twin); macros the suite prepends
        for macro in required_macros(read_shader(f"{stem}.cu")) - {"BLOCK"} - PREPENDED_MACROS.get(stem, set()):
            assert macro in names, f"{f} does not declare {stem}.cu's -D{macro} as a function constant"
    # the FMA iteration count: int, as the backend sets integer constants
    assert ("int", "F", 0) in function_constants(read_shader("fma.metal"))
    assert function_constants(read_shader("idiv.metal")) == [("int", "F", 0), ("int", "DIVISOR", 1)]
    assert function_constants(read_shader("dualissue.metal")) == [("int", "F", 0)]
    assert function_constants(read_shader("access.metal")) == function_constants(read_shader("occupancy.metal")) == []


def test_idiv_twins_take_the_divisor_where_the_table_says() -> None:
    """Each idiv entry exists in both files with the same arguments, and exactly the argument
    variants take the divisor (an integer) between the buffers and the count."""
    cuda = cuda_entries(read_shader("idiv.cu"))
    metal = metal_kernels(read_shader("idiv.metal"))
    assert set(cuda) == set(metal) == {ik.entry for ik in IDIV_KERNELS}
    for ik in IDIV_KERNELS:
        want = ["const-ptr", "ptr"] + (["int"] if ik.takes_divisor else []) + ["count"]
        assert [cuda_kind(p) for p in cuda[ik.entry]] == want, ik.entry
        assert [kind for _, kind in metal_args(metal[ik.entry])] == want, ik.entry


def test_no_metal_file_uses_double() -> None:
    for f in metal_files():
        code = strip_comments(read_shader(f))
        assert not re.search(r"\bdouble\b", code), f"{f} uses double (MSL has none)"
        for cuda_only in ("__global__", "__shared__", "__syncthreads", "threadIdx", "blockIdx", "fmaf", "make_float4"):
            assert cuda_only not in code, f"{f} uses CUDA's {cuda_only}"
        # Metal 4's tensors and Performance Primitives (matrix_mpp.metal only, compiled as MSL 4.0)
        extra = (
            ["metal_tensor", "MetalPerformancePrimitives/MetalPerformancePrimitives.h"] if f in PREFIXED_TWINS else []
        )
        assert re.findall(r"#include\s*<([^>]+)>", code) == ["metal_stdlib", *extra], (
            f"{f} includes more than <metal_stdlib>"
        )


# ---- (e) the tiled GEMM's indexing ------------------------------------------------------------------


@pytest.mark.parametrize("N", [16, 32, 48])
def test_tiled16_mapping_is_a_bijection(N: int) -> None:
    n = N * N
    groups = -(-n // GROUP)
    assert n % GROUP == 0, "N a multiple of 16 makes N·N a whole number of groups"
    cells = [tiled16_element(g, t, N) for g in range(groups) for t in range(GROUP) if g * GROUP + t < n]
    assert len(cells) == n and set(cells) == {(r, c) for r in range(N) for c in range(N)}


@pytest.mark.parametrize("N", [16, 32, 48])
def test_tiled16_emulation_meets_the_fp32_bound(N: int) -> None:
    rng = np.random.default_rng(N)
    a = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, (N, N)).astype(np.float32)
    ok, msg = check_gemm(a, b, emulate_tiled16(a, b), "fp32")
    assert ok, msg
    if N > TILE:
        assert not check_gemm(a, b, emulate_tiled16(a, b, transpose_b_tile=True), "fp32")[0]


# ---- the matrix suite: matrix.metal (simdgroup_matrix) and matrix_mpp.metal (matmul2d) ---------------


def test_matrix_twins_cover_the_table() -> None:
    """Every API's entry for every precision it has exists in its file; matrix_mpp.metal's kernels are
    matrix.cu's under the mpp_ prefix, with the same arguments; matrix.metal lacks exactly the
    precisions the table says simdgroup_matrix lacks."""
    from apple_roofline.suites.matrix.kernels import APIS, PRECISIONS

    for api in APIS:
        kernels = (
            cuda_entries(read_shader(api.source))
            if api.source.endswith(".cu")
            else metal_kernels(read_shader(api.source))
        )
        for p in PRECISIONS:
            has = p.suffix not in api.missing
            assert (api.entry(p) in kernels) == has, f"{api.source}: {api.entry(p)} present {not has}, table says {has}"
    cuda = cuda_entries(read_shader("matrix.cu"))
    for metal_file, (cuda_file, cprefix, mprefix) in PREFIXED_TWINS.items():
        metal = metal_kernels(read_shader(metal_file))
        want = cuda_entries(read_shader(cuda_file))
        assert {mprefix + n[len(cprefix) :] for n in want} == set(metal), metal_file
        for name, params in metal.items():
            got = [kind for _, kind in metal_args(params)]
            assert got == [cuda_kind(p) for p in want[cprefix + name[len(mprefix) :]]], name
    simd = metal_kernels(read_shader("matrix.metal"))
    assert set(simd) == {n for n in cuda if n not in NO_METAL_TWIN}


def test_matrix_mpp_asks_for_msl_4_and_the_tile_as_macros() -> None:
    src = read_shader("matrix_mpp.metal")
    code = strip_comments(src)
    assert "#define AR_MSL_VERSION_4_0" in code  # compile.mm's switch to MSL 4.0
    assert "matmul2d_descriptor::mode::multiply_accumulate" in code and "execution_simdgroup>" in code
    assert not function_constants(src)
    for macro in ("TM", "TN", "TK", "ITERS", "REPS"):
        assert re.search(rf"\b{macro}\b", code), macro


#: The members of Metal 4's tensor ops and cooperative tensors that public Metal 4 kernels call
#: (matmul, flash-attention and MoE kernels built on MetalPerformancePrimitives): what
#: matrix_mpp.metal may name. MPPTensorOpsMatMul2d.h's doc-comment example guards elements with a
#: get_mask that no such kernel calls; they call is_valid_element(i) over get_capacity().
PUBLIC_MPP_MEMBERS = {"get_destination_cooperative_tensor", "get_capacity", "is_valid_element", "run", "load", "store"}


def test_matrix_mpp_names_only_members_public_metal4_kernels_use() -> None:
    """Issue 47 row 1: a member that does not exist fails newLibraryWithSource: for every mpp_ kernel
    at once (MSL cannot be compiled off a Mac), so the source keeps to members known to exist."""
    code = strip_comments(read_shader("matrix_mpp.metal"))
    members = set(re.findall(r"\.\s*(?:template\s+)?([A-Za-z_]\w*)\s*[<(]", code))
    assert members and members <= PUBLIC_MPP_MEMBERS, sorted(members - PUBLIC_MPP_MEMBERS)
    assert "is_valid_element(" in code and "get_capacity()" in code


def test_matrix_mpp_declares_its_bfloat_kernel_only_where_the_backend_defines_the_macro() -> None:
    """Issue 47 row 2: bfloat x bfloat -> float is missing from macOS 26.0's MetalPerformancePrimitives,
    and one kernel that does not compile fails the whole source: mpp_bf16_f32 sits inside
    #if defined(AR_MPP_BFLOAT) (metal_rules::kMppBfloatMacro: tests/native/test_metal_rules.py holds the
    two equal), every other kernel outside it."""
    code = strip_comments(read_shader("matrix_mpp.metal"))
    guarded = re.findall(r"#if defined\(AR_MPP_BFLOAT\)\n(.*?)#endif", code, re.S)
    assert len(guarded) == 1 and set(metal_kernels(guarded[0])) == {"mpp_bf16_f32"}
    outside = code.replace(guarded[0], "")
    assert "mpp_bf16_f32" not in outside and {"mpp_f16_f32", "mpp_f16_f16", "mpp_s8_s32"} <= set(metal_kernels(outside))
