"""Device tier, the on-disk kernel cache (docs/design/backends.md, "The kernel cache") on a GPU: a second
process measuring the same suites compiles no kernel (NVRTC programs on CUDA, pipelines on Metal),
and a corrupted entry is rebuilt with a warning, the kernels still computing the right answer.
Each process has a fresh cache folder of its own. Skips where this build has no CUDA or Metal device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

_core = pytest.importorskip("apple_roofline._native")._core

GPUS = [b["name"] for b in _core.backends() if b["name"] in ("cuda", "metal") and b["compiled"] and b["devices"] > 0]
if not GPUS:
    pytest.skip("no CUDA or Metal device", allow_module_level=True)

# A quick run of two suites (their kernels include CUDA's probed builds; 3 samples of 16 MiB arrays: what is
# compiled is the point, not what is measured), then a kernel whose result is checked, then the cache's
# counts: all in a process of its own, as a user's second run is.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import apple_roofline as ar
    from apple_roofline._native import _core
    device = sys.argv[1]
    options = ar.RunOptions(
        device=device + ":0", suites=["stream", "peak"], quick=True, telemetry=False, reps=3, array_bytes=1 << 24
    )
    run = ar.run_roofline(options)
    src = {
        "cuda": 'extern "C" __global__ void fill(float* y, double a, unsigned long long n) {'
                ' unsigned long long i = blockIdx.x * (unsigned long long)BLOCK + threadIdx.x;'
                ' if (i < n) y[i] = (float)a + SHIFT; }',
        "metal": '#include <metal_stdlib>\\nusing namespace metal;\\nconstant float SHIFT [[function_constant(0)]];\\n'
                 'kernel void fill(device float* y [[buffer(0)]], constant float& a [[buffer(1)]],'
                 ' constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]])'
                 ' { if (i < n) y[i] = a + SHIFT; }',
    }[device]
    b = _core.Backend(device, 0)
    k = b.compile(src, "fill", {"SHIFT": 0.5} if device == "metal" else {"SHIFT": 1})
    y = b.alloc(4 * 256)
    k.time([y, 2.0], 256, 1, 1)
    values = sorted(set(float(v) for v in y.read("float32")))
    print(json.dumps({"stats": _core.kernel_cache_stats(), "ceilings": len(run.ceilings), "values": values}))
""")


def _child(device: str, cache: Path) -> Dict[str, Any]:
    env = dict(os.environ, APPLE_ROOFLINE_CACHE=str(cache))
    out = subprocess.run([sys.executable, "-c", CHILD, device], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-4000:]
    result: Dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _entries(cache: Path) -> List[Path]:
    return sorted((cache / "kernels").glob("*.arkc"))


@pytest.mark.parametrize("device", GPUS)
def test_a_second_run_compiles_no_kernel_and_a_corrupt_entry_is_rebuilt(device: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    expected = [2.5] if device == "metal" else [3.0]

    first = _child(device, cache)
    s = first["stats"]
    assert s["dir"] == str(cache / "kernels") and s["warnings"] == []
    assert s["compiles"] > 1 and s["stored"] == s["compiles"] and s["hits"] == 0, s
    assert first["values"] == expected and first["ceilings"] > 0
    entries = _entries(cache)
    assert 1 < len(entries) <= s["stored"]  # two threads may compile one kernel at once: one entry

    second = _child(device, cache)
    s = second["stats"]
    assert s["compiles"] == 0, f"the second run compiled {s['compiles']} kernels: {s}"
    assert s["hits"] >= len(entries) and s["misses"] == 0 and s["rebuilt"] == 0 and s["warnings"] == [], s
    assert second["values"] == expected and second["ceilings"] > 0
    assert _entries(cache) == entries  # nothing new written

    # Flip one byte in the middle of every entry: each is rebuilt, with a warning naming it.
    for path in entries:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    third = _child(device, cache)
    s = third["stats"]
    assert s["rebuilt"] >= len(entries) and s["compiles"] == s["rebuilt"] and s["misses"] == 0, s
    assert len(s["warnings"]) == min(s["rebuilt"], 64)
    assert all("rebuilt" in w and ".arkc" in w for w in s["warnings"])
    assert {w.split(":")[1].strip() for w in s["warnings"]} <= {str(p) for p in entries}
    assert third["values"] == expected

    fourth = _child(device, cache)  # the rebuilt entries are whole again
    assert fourth["stats"]["compiles"] == 0 and fourth["stats"]["warnings"] == []


@pytest.mark.parametrize("device", GPUS)
def test_off_compiles_every_time_and_writes_nothing(device: str, tmp_path: Path) -> None:
    for _ in range(2):
        result = _child(device, Path("off"))
        s = result["stats"]
        assert s["dir"] == "" and s["compiles"] > 1 and s["hits"] == 0 and s["stored"] == 0, s
