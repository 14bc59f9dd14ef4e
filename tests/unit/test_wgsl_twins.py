"""The WGSL twins of the compute kernels (shaders/wgsl/*.wgsl, docs/design/backends.md, "The WebGPU backend"):
every kernel table's wgpu entry exists, takes its arguments as the CUDA twin does (argument i at
@binding(i), the work-item count last) and declares the overrides the backend sets; a kernel WebGPU
cannot express says why."""

from __future__ import annotations

import re
from typing import List

import pytest
from tests.shader_twins import cuda_entries, cuda_kind, read_shader, required_macros

from apple_roofline.shaders import resolve
from apple_roofline.suites.access.kernels import ACCESS_KERNELS
from apple_roofline.suites.base import UNREACHABLE, KernelDef
from apple_roofline.suites.gemm.precisions import TILED_GEMM
from apple_roofline.suites.hierarchy.suite import HIERARCHY_KERNELS, SHARED_KERNEL
from apple_roofline.suites.idiv.kernels import IDIV_KERNELS
from apple_roofline.suites.peak.suite import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream.suite import STREAM_KERNELS
from apple_roofline.suites.sweep.suite import SWEEP_KERNELS
from apple_roofline.webgpu.layout import bindings, overrides, strip_comments


def _tables() -> List[KernelDef]:
    kdefs = [kernel_def(d, v) for d, v in PEAK_VARIANTS] + [sk.kernel_def() for sk in STREAM_KERNELS]
    kdefs += [
        KernelDef("sweep", name, "fp32", fk.sources("fp32"), constants=fk.constants()) for name, fk in SWEEP_KERNELS
    ]
    kdefs += [hk.kernel_def() for hk in (*HIERARCHY_KERNELS, SHARED_KERNEL)]
    kdefs += [ik.kernel_def() for ik in IDIV_KERNELS]
    kdefs += [ak.kernel_def() for ak in ACCESS_KERNELS]
    kdefs.append(TILED_GEMM)
    return kdefs


#: Overrides a suite sets per case rather than its kernel table: the FMA chains' length F and the
#: hierarchy's passes per launch PASSES.
CASE_OVERRIDES = {"F", "PASSES"}
#: Constants a CUDA file requires that a WGSL file of some of its kernels has no use for, and why.
UNUSED_CONSTANTS = {"idiv_argument.wgsl": {"DIVISOR"}}  # the argument kernels take the divisor as an argument


def _entries(src: str) -> List[str]:
    return re.findall(r"@compute\s+@workgroup_size\(\s*BLOCK\s*\)\s*fn\s+(\w+)\s*\(", strip_comments(src))


@pytest.mark.parametrize("kdef", _tables(), ids=lambda k: f"{k.suite}/{k.name}/{k.dtype}")
def test_wgsl_twin_takes_the_cuda_arguments(kdef: KernelDef) -> None:
    source, entry = kdef.sources["wgpu"]
    if source == UNREACHABLE:
        assert kdef.dtype == "fp64" and "f64" in entry, f"{kdef} is unreachable for no stated reason: {entry!r}"
        return
    text, _ = resolve(source, entry)
    assert entry in _entries(text), f"{source} has no @compute @workgroup_size(BLOCK) fn {entry}"
    cuda_file, cuda_entry = kdef.sources["cuda"]
    cuda_src = read_shader(cuda_file)
    cuda = [cuda_kind(p) for p in cuda_entries(cuda_src)[cuda_entry]]
    wgsl = [b.kind for b in bindings(text)][:-1] + ["count"]
    assert bindings(text)[-1].type == "u32", f"{source}: the last binding is not the work-item count"
    assert wgsl == cuda, f"{source}:{entry} takes {wgsl}, its CUDA twin {cuda_file}:{cuda_entry} {cuda}"
    declared = overrides(text)
    assert "BLOCK" in declared
    required = required_macros(cuda_src) - UNUSED_CONSTANTS.get(source, set())
    assert required <= set(declared), f"{source} lacks overrides {required - set(declared)}"
    table = set(kdef.constants.get("wgpu", {}))
    assert set(declared) - CASE_OVERRIDES <= table, f"{source} declares overrides its kernel table does not set"


def test_every_wgsl_compute_file_is_a_table_source() -> None:
    used = {k.sources["wgpu"][0] for k in _tables()} - {UNREACHABLE}
    for name in used:
        for entry in _entries(read_shader(name)):
            assert any(k.sources["wgpu"] == (name, entry) for k in _tables()), f"{name}:{entry} is in no kernel table"


def test_idiv_argument_chains_are_idiv_chains() -> None:
    """idiv_argument.wgsl's steps and chains are idiv.wgsl's, character for character (WGSL has no
    include): the argument variant differs from the others only in where the divisor comes from."""

    def chains(name: str) -> str:
        text = read_shader(name)
        return text[text.index("// One step of each chain") : text.index("// ---- unsigned")]

    assert "fn chain_div_i32" in chains("idiv.wgsl")
    assert chains("idiv_argument.wgsl") == chains("idiv.wgsl")


def test_layout_refuses_gaps_and_repeats() -> None:
    ok = "@group(0) @binding(0) var<storage, read> x: array<f32>;\n@group(0) @binding(1) var<uniform> n: u32;"
    assert [b.kind for b in bindings(ok)] == ["const-ptr", "int"]
    with pytest.raises(ValueError, match="not 0 to"):
        bindings(ok.replace("@binding(1)", "@binding(2)"))
    with pytest.raises(ValueError, match="declared twice"):
        bindings(ok.replace("@binding(1)", "@binding(0)"))
    assert bindings("// @group(0) @binding(0) var<uniform> n: u32;") == ()
