"""The CUDA kernel sources compile, and define every entry the kernel tables name, wherever nvcc is
installed (CI has it, without a GPU): the same front end NVRTC uses at run time, with the same -D
constants. The device tier runs them (tests/device/test_cuda.py, tests/backend/)."""

from __future__ import annotations

import os
import re
import subprocess
from typing import Dict, List, Set

import pytest

from apple_roofline.shaders import shader_path
from apple_roofline.suites.fma import FMA_KERNELS, FmaKernel
from apple_roofline.suites.hierarchy.suite import HIERARCHY_KERNELS, SHARED_KERNEL
from apple_roofline.suites.idiv.kernels import IDIV_DIVISOR, IDIV_KERNELS
from apple_roofline.suites.peak.suite import PEAK_VARIANTS, kernel_def
from apple_roofline.suites.stream.suite import STREAM_KERNELS
from shader_twins import NVCC, TWIN_STEMS, cuda_entries, read_shader

pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not installed")


def _entries_in_tables() -> Dict[str, Set[str]]:
    want: Dict[str, Set[str]] = {}
    kdefs = [kernel_def(d, v) for d, v in PEAK_VARIANTS] + [sk.kernel_def() for sk in STREAM_KERNELS]
    kdefs += [ik.kernel_def() for ik in IDIV_KERNELS]
    kdefs += [hk.kernel_def() for hk in (*HIERARCHY_KERNELS, SHARED_KERNEL)]
    for k in kdefs:
        src = k.sources.get("cuda")
        assert src is not None, f"{k.suite}/{k.name}/{k.dtype} has no CUDA source"
        want.setdefault(src[0], set()).add(src[1])
    return want


def _ptx_entries(path: str, defines: Dict[str, object], tmp_path: "os.PathLike[str]") -> Set[str]:
    out = os.path.join(str(tmp_path), os.path.basename(path) + ".ptx")
    cmd = [str(NVCC), "-ptx", "-arch=sm_90", "-std=c++17", "-x", "cu", path, "-o", out]
    cmd[1:1] = [f"-D{k}={v}" for k, v in defines.items()]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        return set(re.findall(r"\.entry\s+(\w+)", f.read()))


@pytest.mark.parametrize("specialised", [False, True], ids=["runtime-a", "literal-a"])
def test_every_table_entry_compiles(tmp_path: "os.PathLike[str]", specialised: bool) -> None:
    for name, entries in _entries_in_tables().items():
        defines: Dict[str, object] = {"BLOCK": 256}
        if name == "fma.cu":
            defines["F"] = 4
            if specialised:
                defines.update(FmaKernel.constants()["cuda"])
        if name == "hierarchy.cu":
            defines["PASSES"] = 4
        if name == "idiv.cu":
            defines.update({"F": 4, **IDIV_KERNELS[0].kernel_def().constants["cuda"]})
        got = _ptx_entries(shader_path(name), defines, tmp_path)
        assert entries <= got, f"{name} lacks {sorted(entries - got)}"


def test_sweep_kernels_are_in_the_table() -> None:
    """The sweep's two kernels (vec4 = vec4_cross4, scalar8 = scalar_indep8) use the same sources."""
    for name in ("vec4_cross4", "scalar_indep8"):
        assert FMA_KERNELS[name].sources("fp32")["cuda"] == ("fma.cu", f"{name}_f32")


# ---- the twins of the Metal kernels: gemm.cu and every twin file's entries --------------------


def _nvcc_ptx(
    path: str, defines: Dict[str, object], out: str, arch: str = "sm_90"
) -> "subprocess.CompletedProcess[str]":
    cmd = [
        str(NVCC),
        "-ptx",
        f"-arch={arch}",
        "-std=c++17",
        *[f"-D{k}={v}" for k, v in defines.items()],
        "-x",
        "cu",
        path,
        "-o",
        out,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_gemm_cu_compiles(tmp_path: "os.PathLike[str]") -> None:
    out = os.path.join(str(tmp_path), "gemm.ptx")
    p = _nvcc_ptx(shader_path("gemm.cu"), {"BLOCK": 256}, out)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        assert set(re.findall(r"\.entry\s+(\w+)", f.read())) == {"gemm_tiled16_f32"}
    p = _nvcc_ptx(shader_path("gemm.cu"), {"BLOCK": 512}, out)
    assert p.returncode != 0 and "BLOCK=256" in p.stderr, "gemm.cu must refuse BLOCK != 256"


@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
def test_cuda_entry_parser_matches_nvcc(tmp_path: "os.PathLike[str]") -> None:
    """The entries this file's parser finds are exactly the kernels nvcc emits."""
    for stem in TWIN_STEMS:
        out = os.path.join(str(tmp_path), f"{stem}.ptx")
        p = _nvcc_ptx(
            shader_path(f"{stem}.cu"),
            {
                "BLOCK": 256,
                "F": 4,
                "PASSES": 4,
                "DIVISOR": IDIV_DIVISOR,
                "TM": 16,
                "TN": 8,
                "TK": 16,
                "ITERS": 1,
                "REPS": 1,
                "AR_TG_FLOAT4S": 256,
                "AR_TG_SPREAD": 1,
            },
            out,
        )
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            assert set(re.findall(r"\.entry\s+(\w+)", f.read())) == set(cuda_entries(read_shader(f"{stem}.cu")))


# ---- idiv.cu: the divisor is folded exactly where it is known ---------------------------------------


def _ptx_bodies(ptx: str) -> Dict[str, str]:
    """entry -> its PTX text, from one .ptx file."""
    parts = re.split(r"(?=\.visible \.entry )", ptx)
    return {m.group(1): p for p in parts if (m := re.match(r"\.visible \.entry (\w+)", p))}


def test_idiv_divides_only_where_the_divisor_is_an_argument(tmp_path: "os.PathLike[str]") -> None:
    """nvcc (NVRTC's front end) folds the literal and the -DDIVISOR divisors into shifts and
    multiply-highs, so only the _argument kernels hold PTX div/rem instructions; and the same
    source refuses to compile without DIVISOR."""
    out = os.path.join(str(tmp_path), "idiv.ptx")
    p = _nvcc_ptx(shader_path("idiv.cu"), {"BLOCK": 256, "F": 64, "DIVISOR": IDIV_DIVISOR}, out)
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        bodies = _ptx_bodies(f.read())
    assert set(bodies) == {ik.entry for ik in IDIV_KERNELS}
    for ik in IDIV_KERNELS:
        divides = re.findall(r"\b(?:div|rem)\.[su]32\b", bodies[ik.entry])
        assert bool(divides) == ik.takes_divisor, f"{ik.entry}: {len(divides)} div/rem instructions"
    p = _nvcc_ptx(shader_path("idiv.cu"), {"BLOCK": 256, "F": 64}, out)
    assert p.returncode != 0 and "DIVISOR" in p.stderr


def _run_on_host(
    name: str, arch: str, defines: Dict[str, object], body: str, tmp_path: "os.PathLike[str]"
) -> List[str]:
    """The stdout lines of a host program that includes shader ``name`` (its ``__host__ __device__``
    functions), compiled by nvcc with the architecture option ``arch`` and ``defines``, whose
    ``main`` runs ``body``."""
    driver = os.path.join(str(tmp_path), "driver.cu")
    with open(driver, "w") as f:
        f.write(f'#include <cstdio>\n#include "{shader_path(name)}"\nint main() {{\n{body}  return 0; }}\n')
    exe = os.path.join(str(tmp_path), "driver")
    p = subprocess.run(
        [str(NVCC), arch, "-std=c++17", *(f"-D{k}={v}" for k, v in defines.items()), driver, "-o", exe],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return subprocess.run([exe], capture_output=True, text=True, timeout=60, check=True).stdout.split("\n")


# ---- matrix.cu: every entry at sm_80 and sm_90, and its fragment indices on the host ------------------


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("shape", [(16, 8, 16), (32, 32, 128), (16, 16, 8), (32, 8, 32)], ids=str)
def test_matrix_entries_compile(tmp_path: "os.PathLike[str]", arch: str, shape: "tuple[int, int, int]") -> None:
    from apple_roofline.suites.matrix.kernels import ITERS, REPS

    m, n, k = shape
    out = os.path.join(str(tmp_path), "matrix.ptx")
    p = _nvcc_ptx(
        shader_path("matrix.cu"), {"TM": m, "TN": n, "TK": k, "ITERS": ITERS, "REPS": REPS, "BLOCK": 128}, out, arch
    )
    assert p.returncode == 0, p.stderr
    ptx = open(out).read()
    assert set(re.findall(r"\.entry\s+(\w+)", ptx)) == set(cuda_entries(read_shader("matrix.cu")))
    # four mma per block of the unrolled chain (#pragma unroll 4) per fragment product of the tile
    fk = 16 if k % 16 == 0 else 8
    assert len(re.findall(r"mma\.sync\.aligned\.m16n8k\d+\.row\.col\.f32\.f16", ptx)) == 4 * (m // 16) * (n // 8) * (
        k // fk
    )


def test_matrix_fragment_indices_on_the_host_equal_the_model(tmp_path: "os.PathLike[str]") -> None:
    """matrix.cu's ar_a_row / ar_a_col / ar_b_row / ar_b_col / ar_c_row / ar_c_col, compiled by nvcc
    for the host, equal tests/shader_twins.py's model (which test_matrix.py holds to the PTX ISA)."""
    from shader_twins import mma_a_index, mma_b_index, mma_c_index

    lines = _run_on_host(
        "matrix.cu",
        "-arch=sm_80",
        {"TM": 16, "TN": 8, "TK": 32, "ITERS": 1, "REPS": 1},
        "for (int l = 0; l < 32; ++l) for (int r = 0; r < 4; ++r) for (int e = 0; e < 4; ++e)\n"
        '  for (int epr = 2; epr <= 4; epr += 2) std::printf("%d %d %d %d %d %d %d %d %d %d\\n", l, r, e, epr,\n'
        "    ar_a_row(l, r), ar_a_col(l, r, e, epr), ar_b_row(l, r, e, epr), ar_b_col(l),\n"
        "    ar_c_row(l, r), ar_c_col(l, r));\n",
        tmp_path,
    )
    rows = [list(map(int, line.split())) for line in lines if line.strip()]
    assert len(rows) == 32 * 4 * 4 * 2
    for lane, r, e, epr, ar, ac, br, bc, cr, cc in rows:
        assert (ar, ac) == mma_a_index(lane, r, e, epr) and (br, bc) == mma_b_index(lane, r, e, epr)
        assert (cr, cc) == mma_c_index(lane, r)


# ---- wgmma.cu: every entry at sm_90a, none elsewhere, and its layout functions on the host -------------


@pytest.mark.parametrize("n", [64, 256])
def test_wgmma_entries_compile_for_sm90a_only(tmp_path: "os.PathLike[str]", n: int) -> None:
    """wgmma.cu's six entries at sm_90a, each chain one commit group of WG_BATCH x K / 16 (K / 32 for
    s8 and the FP8 types) wgmma.mma_async of the tile's N; for plain sm_90 the source refuses with its
    reason."""
    from apple_roofline.suites.matrix.kernels import ITERS, REPS, WGMMA_CONSTANTS

    consts = {k: v for k, v in WGMMA_CONSTANTS.items() if k != "AR_ARCH_SPECIFIC"}
    out = os.path.join(str(tmp_path), "wgmma.ptx")
    defines = {"TM": 64, "TN": n, "TK": 64, "ITERS": ITERS, "REPS": REPS, "BLOCK": 128, **consts}
    p = _nvcc_ptx(shader_path("wgmma.cu"), defines, out, "sm_90a")
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        bodies = _ptx_bodies(f.read())
    assert (
        set(bodies)
        == set(cuda_entries(read_shader("wgmma.cu")))
        == {"wgmma_f16_f32", "wgmma_f16_f16", "wgmma_s8_s32", "wgmma_bf16_f32", "wgmma_e4m3_f32", "wgmma_e5m2_f32"}
    )
    batch = consts["WG_BATCH"]
    for entry, types, ksteps in (
        ("wgmma_f16_f32", "f32.f16.f16", 4),
        ("wgmma_f16_f16", "f16.f16.f16", 4),
        ("wgmma_bf16_f32", "f32.bf16.bf16", 4),
        ("wgmma_s8_s32", "s32.s8.s8", 2),
        ("wgmma_e4m3_f32", "f32.e4m3.e4m3", 2),
        ("wgmma_e5m2_f32", "f32.e5m2.e5m2", 2),
    ):
        k = 16 if types.endswith(("f16", "bf16")) else 32
        found = re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m\d+n\d+k\d+)\.([\w.]+)", bodies[entry])
        assert found == [(f"m64n{n}k{k}", types)] * (batch * ksteps), entry
        assert "fence.proxy.async.shared::cta" in bodies[entry] and "wgmma.commit_group" in bodies[entry]
    p = _nvcc_ptx(shader_path("wgmma.cu"), defines, out, "sm_90")
    assert p.returncode != 0 and "wgmma needs the arch-specific target sm_90a" in p.stderr


def test_wgmma_assembles_for_sm90a(tmp_path: "os.PathLike[str]") -> None:
    """ptxas accepts every wgmma.cu entry for sm_90a (the operand lists of each type, the FP8 ones
    without the transpose immediates), at the largest N: a cubin holding all six kernels."""
    from apple_roofline.suites.matrix.kernels import ITERS, REPS, WGMMA_CONSTANTS

    consts = {k: v for k, v in WGMMA_CONSTANTS.items() if k != "AR_ARCH_SPECIFIC"}
    out = os.path.join(str(tmp_path), "wgmma.cubin")
    cmd = [
        str(NVCC),
        "-cubin",
        "-arch=sm_90a",
        "-std=c++17",
        "-x",
        "cu",
        shader_path("wgmma.cu"),
        "-o",
        out,
        *[
            f"-D{k}={v}"
            for k, v in {"TM": 64, "TN": 256, "TK": 64, "ITERS": ITERS, "REPS": REPS, "BLOCK": 128, **consts}.items()
        ],
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with open(out, "rb") as f:
        image = f.read()
    for entry in cuda_entries(read_shader("wgmma.cu")):
        assert entry.encode() in image, entry


def test_wgmma_layout_functions_on_the_host_equal_the_model(tmp_path: "os.PathLike[str]") -> None:
    """wgmma.cu's wg_offset / wg_desc / wg_c_row / wg_c_col, compiled by nvcc for the host, equal
    tests/shader_twins.py's model (which test_matrix.py holds to the PTX ISA's definitions)."""
    from shader_twins import wg_c_index, wg_desc, wg_offset

    lines = _run_on_host(
        "wgmma.cu",
        "-gencode=arch=compute_90a,code=sm_90a",
        {"TN": 64, "TK": 32, "ITERS": 1, "REPS": 1},
        "for (int r = 0; r < 256; r += 3) for (int kb = 0; kb < 128; kb += 5)\n"
        "  for (int kbytes = 32; kbytes <= 128; kbytes *= 2)\n"
        '  std::printf("o %d %d %d %u\\n", r, kb, kbytes, wg_offset(r, kb, kbytes));\n'
        'for (unsigned a = 0; a < 0x40000; a += 0x1230) std::printf("d %u %llu %llu\\n", a, wg_desc(a, 128, 1024),\n'
        "  wg_desc(a, 2048, 128));\n"
        "for (int w = 0; w < 4; ++w) for (int t = 0; t < 32; ++t) for (int i = 0; i < 128; ++i)\n"
        '  std::printf("c %d %d %d %d %d\\n", w, t, i, wg_c_row(w, t, i), wg_c_col(t, i));\n',
        tmp_path,
    )
    counts = {"o": 0, "d": 0, "c": 0}
    for line in filter(None, lines):
        kind, *v = line.split()
        x = list(map(int, v))
        counts[kind] += 1
        if kind == "o":
            assert x[3] == wg_offset(x[0], x[1], x[2])
        elif kind == "d":
            assert (x[1], x[2]) == (wg_desc(x[0], 128, 1024), wg_desc(x[0], 2048, 128))
        else:
            assert (x[3], x[4]) == wg_c_index(x[0], x[1], x[2])
    assert counts["o"] > 1000 and counts["d"] > 50 and counts["c"] == 4 * 32 * 128


# ---- clock.cuh: the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks") ----------


@pytest.mark.parametrize("name", ["fma.cu", "stream.cu", "idiv.cu", "gemm.cu", "matrix.cu"])
def test_every_timed_kernel_reads_both_clocks_and_the_probe_compiles_out(
    tmp_path: "os.PathLike[str]", name: str
) -> None:
    """Each entry of the file, compiled from the text NVRTC gets (apple_roofline.shaders.resolve: the
    header inlined, written away from shaders/cuda so nothing is found beside it), reads %clock64 and
    %globaltimer twice with its SM's id (%smid) and keeps its SM's window in ar_clock (atomic min at
    entry, max at exit); with -DAR_CLOCK_PROBE=0 no entry does and ar_clock is gone."""
    from apple_roofline.shaders import resolve

    text, _ = resolve(name, "")
    assert '#include "clock.cuh"' not in text and '#line 1 "clock.cuh"' in text
    src = os.path.join(str(tmp_path), name)
    with open(src, "w") as f:
        f.write(text)
    defines = {"BLOCK": 256, "F": 4, "DIVISOR": IDIV_DIVISOR, "TM": 16, "TN": 8, "TK": 16, "ITERS": 1, "REPS": 1}
    for probe in (1, 0):
        out = os.path.join(str(tmp_path), f"{name}.{probe}.ptx")
        p = _nvcc_ptx(src, {**defines, "AR_CLOCK_PROBE": probe}, out, "sm_80" if name == "matrix.cu" else "sm_90")
        assert p.returncode == 0, p.stderr
        with open(out) as f:
            bodies = _ptx_bodies(f.read())
        assert set(bodies) == set(cuda_entries(read_shader(name)))
        for entry, body in bodies.items():
            reads = (body.count("%clock64"), body.count("%globaltimer"), body.count("ar_clock"), body.count("%smid"))
            if probe:
                assert reads[0] >= 2 and reads[0] == reads[1] == reads[3] and reads[2] >= 1, (
                    entry,
                    reads,
                )  # entry, every exit
                assert "atom.global.min.u64" in body and "atom.global.max.u64" in body, entry
            else:
                assert reads == (0, 0, 0, 0), (entry, reads)
