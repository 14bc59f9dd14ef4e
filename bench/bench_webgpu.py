"""WebGPU against the CUDA backend on one GPU, beyond the run's ceilings (bench/README.md, "WebGPU").

* ``checks``: STREAM triad and the FP32/FP16 ``vec4_indep8`` chains through wgpu, built with and
  without naga's runtime checks (``AR_RUNTIME_CHECKS`` 1: what every WebGPU program gets; 0: the
  trusted module the kernel tables use), and the chains on the peak suite's 4 MiB buffer and on 4x
  that (a launch of 4x the work items: whether the launch's size bounds the ceiling). Every output
  is checked against the suites' NumPy references before its number is written.
* ``stream``: the triad through wgpu at other workgroup sizes and on 1 GiB arrays, and through the
  other devices named at 256 and 1024 threads a block: what bounds WebGPU's STREAM.
* ``dispatch``: what one launch costs through ``Kernel.launch`` from a Python loop, ``launches``
  launches then one ``synchronize``, host clock, the tiny kernel (``dispatch.cu`` / ``dispatch.wgsl``:
  one block of 256 threads adding 1 to a float4 each) validated by its count, on every device named.

Writes one JSON file (``--out``) and prints it. Usage:
``python bench/bench_webgpu.py --devices wgpu:0,cuda:0 --out bench/results/bench_webgpu-X.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any, Dict, List

import numpy as np

from apple_roofline.devices import open_device
from apple_roofline.dispatch.kernels import TINY_BYTES, TINY_ITEMS, check_tiny_counts
from apple_roofline.shaders import resolve
from apple_roofline.suites.base import check_tiled, fill, pattern, poison
from apple_roofline.suites.chains import ChainKernel, chain_case
from apple_roofline.suites.fma import FMA_KERNELS
from apple_roofline.suites.peak.suite import PEAK_BUFFER_BYTES, PEAK_F, kernel_def
from apple_roofline.suites.stream.suite import STREAM_KERNELS, Q
from apple_roofline.timing.measure import time_kernel


def chains(backend: Any, dtype: str, checks: int, scale: int) -> Dict[str, Any]:
    """vec4_indep8 in ``dtype`` at F = PEAK_F on ``scale`` x the peak suite's buffer, validated."""
    kdef = kernel_def(dtype, "vec4_indep8")
    fk = FMA_KERNELS["vec4_indep8"]
    items = scale * PEAK_BUFFER_BYTES // (4 * (2 if dtype == "fp16" else 4))
    nbytes = items * 4 * (2 if dtype == "fp16" else 4)
    src = resolve(*kdef.sources["wgpu"])
    consts = {**kdef.constants["wgpu"], "AR_RUNTIME_CHECKS": checks}
    case = chain_case(
        ChainKernel(kdef, fk, src, backend, consts), PEAK_F, items, (backend.alloc(nbytes), backend.alloc(nbytes))
    )
    t = time_kernel(case.make_kernel(), case.args, case.work_items, reps=20)
    ok, msg = case.check()
    med = statistics.median(t.samples_s)
    return {
        "kernel": f"vec4_indep8/{dtype}",
        "runtime_checks": checks,
        "items": items,
        "valid": ok,
        "check": msg,
        "median_s": med,
        "gflops": case.flops / med / 1e9 if ok else None,
    }


def triad(backend: Any, checks: int, block: int = 256, nbytes: int = 256 << 20) -> Dict[str, Any]:
    """STREAM triad on three arrays of ``nbytes`` (at most a WebGPU adapter's largest binding) in
    blocks of ``block``, through any backend (its kernel table's source), validated."""
    name = str(backend.info()["backend"])
    nbytes = min(nbytes, int(backend.info().get("max_buffer_bytes") or nbytes))
    sk = [k for k in STREAM_KERNELS if k.name == "triad"][0]
    n = nbytes // 4
    bufs = [backend.alloc(nbytes) for _ in range(3)]
    pats = [pattern("fp32", 0.5, 1.5, seed, 4099) for seed in (1, 2, 3)]
    for i in (1, 2):
        fill(bufs[i], pats[i], n)
    poison(bufs[0], "fp32", n)
    kdef = sk.kernel_def()
    consts = {**kdef.constants[name], "BLOCK": block, **({"AR_RUNTIME_CHECKS": checks} if name == "wgpu" else {})}
    kernel = backend.compile(*resolve(*kdef.sources[name]), consts)
    t = time_kernel(kernel, [*bufs, Q], n // 4, reps=20)
    want = sk.ref(pats[0], pats[1], pats[2], np.float32(Q)).astype(np.float32)
    ok, msg = check_tiled(bufs[0].read("float32", n), want, 4 * float(np.finfo(np.float32).eps), 0.0)
    med = statistics.median(t.samples_s)
    return {
        "kernel": "stream/triad",
        "backend": name,
        "block": block,
        "runtime_checks": checks,
        "array_bytes": nbytes,
        "valid": ok,
        "check": msg,
        "median_s": med,
        "gbps": 12 * n / med / 1e9 if ok else None,
    }


def dispatch(device: str, launches: int, reps: int) -> Dict[str, Any]:
    """Per-launch host seconds of a Python loop over Kernel.launch, then synchronize; validated."""
    backend = open_device(device)
    name = "dispatch.wgsl" if device.startswith("wgpu") else "dispatch.cu"
    kernel = backend.compile(*resolve(name, "dispatch_tiny"), {"BLOCK": TINY_ITEMS})
    x = backend.alloc(TINY_BYTES)
    per: List[float] = []
    for _ in range(reps + 1):  # the first is a warm-up
        t0 = time.perf_counter()
        for _ in range(launches):
            kernel.launch([x], TINY_ITEMS)
        backend.synchronize()
        per.append((time.perf_counter() - t0) / launches)
    ok, msg = check_tiny_counts(x.read("float32"), launches * (reps + 1))
    return {
        "device": device,
        "name": backend.info().get("name"),
        "launches": launches,
        "valid": ok,
        "check": msg,
        "median_us": statistics.median(per[1:]) * 1e6,
        "samples_us": [p * 1e6 for p in per[1:]],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default="wgpu:0,cuda:0")
    ap.add_argument("--launches", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out: Dict[str, Any] = {"created": time.strftime("%Y-%m-%dT%H:%M:%S"), "checks": [], "dispatch": []}
    wgpu = [d for d in a.devices.split(",") if d.startswith("wgpu")]
    if wgpu:
        backend = open_device(wgpu[0])
        out["device"] = backend.info()
        for checks in (0, 1):
            out["checks"].append(triad(backend, checks))
            for dtype in ("fp32", "fp16"):
                for scale in (1, 4):
                    out["checks"].append(chains(backend, dtype, checks, scale))
        out["stream"] = [triad(backend, 0, block) for block in (128, 512, 1024)] + [triad(backend, 0, 256, 1 << 30)]
    for d in a.devices.split(","):
        if not d.startswith("wgpu"):
            out.setdefault("stream", []).extend(triad(open_device(d), 0, block) for block in (256, 1024))
        out["dispatch"].append(dispatch(d, a.launches, a.reps))
    text = json.dumps(out, indent=1, default=str)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
