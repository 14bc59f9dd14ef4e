"""The CPU kernels of the suites' tables are named by the file of native/cpu/ that implements them
(kernels.cpp, idiv.cpp, rules.cpp, hierarchy.cpp), as a CUDA kernel is named by its file of
shaders/cuda/: the CPU backend compiles every table entry from the file it names, and refuses a
source that is none of those files (naming the valid ones) or a kernel of another file (naming it)."""

from __future__ import annotations

from typing import List

import pytest

from apple_roofline.suites.access.kernels import ACCESS_KERNELS
from apple_roofline.suites.base import KernelDef
from apple_roofline.suites.dualissue.kernels import DUAL_KERNELS
from apple_roofline.suites.hierarchy.suite import HIERARCHY_KERNELS
from apple_roofline.suites.idiv.kernels import IDIV_KERNELS
from apple_roofline.suites.peak.suite import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream.suite import STREAM_KERNELS

_core = pytest.importorskip("apple_roofline._native")._core

CPU_SOURCES = ("kernels.cpp", "idiv.cpp", "rules.cpp", "hierarchy.cpp")


def _cpu_kernel_defs() -> List[KernelDef]:
    kdefs = [kernel_def(d, v) for d, v in PEAK_VARIANTS] + [sk.kernel_def() for sk in STREAM_KERNELS]
    kdefs += [ik.kernel_def() for ik in IDIV_KERNELS] + [ak.kernel_def() for ak in ACCESS_KERNELS]
    kdefs += [dk.kernel_def() for dk in DUAL_KERNELS] + [hk.kernel_def() for hk in HIERARCHY_KERNELS]
    return [k for k in kdefs if "cpu" in k.sources]


def test_every_cpu_entry_of_the_tables_compiles_from_the_file_it_names() -> None:
    backend = _core.Backend("cpu", 0)
    kdefs = _cpu_kernel_defs()
    assert {k.sources["cpu"][0] for k in kdefs} == set(CPU_SOURCES)
    for k in kdefs:
        source, entry = k.sources["cpu"]
        try:
            assert backend.compile(source, entry, {}).entry == entry
        except _core.UnsupportedError:
            pass  # an FP16 kernel on a CPU without FP16 arithmetic: the file has it, not this build


def test_a_source_that_names_no_cpu_file_is_refused_with_the_valid_ones() -> None:
    backend = _core.Backend("cpu", 0)
    for source in ("builtin", "", "stream.cu"):
        with pytest.raises(_core.CompileError, match=", ".join(CPU_SOURCES)):
            backend.compile(source, "stream_copy_f32", {})


def test_a_kernel_of_another_file_is_refused_naming_its_file() -> None:
    backend = _core.Backend("cpu", 0)
    with pytest.raises(_core.CompileError, match=r"not in kernels\.cpp \(it is in idiv\.cpp\)"):
        backend.compile("kernels.cpp", "idiv_div_u32_literal", {})
    with pytest.raises(_core.CompileError) as err:
        backend.compile("rules.cpp", "no_such_kernel", {})
    assert "no_such_kernel" in str(err.value) and "access_u32" in err.value.log
