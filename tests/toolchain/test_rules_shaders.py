"""nvcc on the access, dualissue and occupancy kernels (shaders/cuda/*.cu): every table entry compiles
as NVRTC would build it, the occupancy kernel declares exactly the shared memory the suite asks for
(none at 0 bytes), and each dual-issue kernel holds the instructions of its kinds and no others
(a mixed kernel both, so its chains were not folded away)."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Dict

import pytest

from apple_roofline.shaders import shader_path
from apple_roofline.suites.access.kernels import ACCESS_KERNELS
from apple_roofline.suites.dualissue.kernels import DUAL_KERNELS
from apple_roofline.suites.fma import FmaKernel
from apple_roofline.suites.occupancy.suite import OCCUPANCY_BLOCK, occupancy_source, tg_sizes

from shader_twins import NVCC  # noqa: E402

pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not installed")


def _ptx(src_path: str, defines: Dict[str, object], tmp: str, name: str) -> str:
    out = os.path.join(tmp, name + ".ptx")
    cmd = [str(NVCC), "-ptx", "-arch=sm_90", "-std=c++17", *[f"-D{k}={v}" for k, v in defines.items()],
           "-x", "cu", src_path, "-o", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        return f.read()


def _bodies(ptx: str) -> Dict[str, str]:
    """Each entry's PTX text, from its .entry line to the next."""
    parts = re.split(r"(?=\.visible \.entry)", ptx)
    return {m.group(1): part for part in parts for m in [re.search(r"\.entry\s+(\w+)", part)] if m}


def test_access_entries_compile(tmp_path: "os.PathLike[str]") -> None:
    ptx = _ptx(shader_path("access.cu"), {"BLOCK": 256}, str(tmp_path), "access")
    bodies = _bodies(ptx)
    assert set(bodies) == {ak.entry for ak in ACCESS_KERNELS}
    for ak in ACCESS_KERNELS:  # the load width the table names: ld.global of 1, 2 or 4 words
        vec = "" if ak.width == 1 else rf"\.v{ak.width}"
        assert re.search(rf"ld\.global(\.nc)?{vec}\.u32", bodies[ak.entry]), ak.entry
        assert "div" not in bodies[ak.entry] and "rem" not in bodies[ak.entry], f"{ak.entry} divides"


@pytest.mark.parametrize("tg_bytes", tg_sizes(48 << 10))
def test_occupancy_declares_the_shared_memory_asked_for(tmp_path: "os.PathLike[str]", tg_bytes: int) -> None:
    src = os.path.join(str(tmp_path), "occupancy.cu")
    with open(shader_path("occupancy.cu")) as f:
        text = occupancy_source(f.read(), tg_bytes)
    with open(src, "w") as f:
        f.write(text)
    ptx = _ptx(src, {"BLOCK": OCCUPANCY_BLOCK}, str(tmp_path), f"occ{tg_bytes}")
    declared = [int(b) for b in re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", ptx)]
    assert declared == ([tg_bytes] if tg_bytes else []), declared
    assert ("bar.sync" in ptx) == (tg_bytes > 0)


def test_dual_kernels_hold_their_kinds(tmp_path: "os.PathLike[str]") -> None:
    defines: Dict[str, object] = {"BLOCK": 512, "F": 64, **FmaKernel.constants()["cuda"]}
    bodies = _bodies(_ptx(shader_path("dualissue.cu"), defines, str(tmp_path), "dual"))
    assert set(bodies) == {dk.entry for dk in DUAL_KERNELS}
    pattern = {"fp32": r"fma\.rn\.f32", "fp16": r"fma\.rn\.f16 ", "int32": r"add\.s32"}
    for dk in DUAL_KERNELS:
        counts = {kind: len(re.findall(p, bodies[dk.entry])) for kind, p in pattern.items()}
        for kind, n in counts.items():
            if kind in dk.kinds:
                assert n >= 8 * 16, f"{dk.entry}: {n} {kind} operations in the unrolled loop"
            elif kind != "int32":  # integer adds also index and count the loop
                assert n == 0, f"{dk.entry} holds {n} {kind} operations"
