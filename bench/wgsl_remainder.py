"""WGSL's signed remainder and quotient through one adapter, one operation at a time (docs/idiv.md,
"Through WebGPU").

The idiv suite's signed remainders came out wrong through an NVIDIA driver's Vulkan (bench/README.md).
This isolates the operation: ``out[i] = in[i] % d`` on i32, with ``d`` a literal (256, 255, 8,
-256), the same divisor as an ``override`` constant and from a storage buffer; ``in[i] / d`` beside
them; the remainder through the quotient (``x - (x / d) * d``, a workaround); and the idiv suite's
chain (x = x + (x % d) + STEP, 64 steps, the divisor a function parameter as
shaders/wgsl/idiv.wgsl passes it) at 256 and 255, a wrong chain tested against the chain of
unsigned remainders. Each is built with naga's runtime checks
(``AR_RUNTIME_CHECKS`` 1, what every WebGPU program gets) and trusted (0). Inputs: the edge values
(0, ±1, ±(d-1), ±d, ±(d+1), INT_MIN, INT_MAX) and 2^20 values of a seeded generator. The reference is
WGSL's rule, truncation toward zero (``np.fmod`` on int64 for the remainder); a remainder that
differs is tested against the unsigned one (``u32 % u32(d)``) and the floored one (Python's ``%``),
which names the rule the device computed instead (for a power-of-two divisor the two agree).

Usage: ``python bench/wgsl_remainder.py --device wgpu:0 --out remainder.json`` (prints the JSON too).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List, Tuple

import numpy as np

from apple_roofline.devices import open_device

#: The kernels: (entry, operator, divisor expression, divisor); DIVISOR and the buffer hold the divisor.
CASES = (
    ("lit256", "%", "256", 256),
    ("lit255", "%", "255", 255),
    ("lit8", "%", "8", 8),
    ("litneg256", "%", "-256", -256),
    ("override256", "%", "DIVISOR", 256),
    ("buffer256", "%", "dbuf[0]", 256),
    ("buffer255", "%", "dbuf[0]", 255),
    ("div256", "/", "256", 256),
    ("div255", "/", "255", 255),
    ("divbuffer255", "/", "dbuf[0]", 255),
    ("sub255", "x-(x/d)*d", "255", 255),
    ("subbuffer255", "x-(x/d)*d", "dbuf[0]", 255),
    ("chain256", "chain", "256", 256),
    ("chain255", "chain", "255", 255),
)
#: Steps of the ``chain256`` kernel: the idiv suite's recurrence x = x + (x % d) + STEP (mod 2^32), the
#: divisor passed to the step as a function parameter, as shaders/wgsl/idiv.wgsl passes it.
CHAIN = 64
STEP = 0x9E3779B9
SOURCE = """
override BLOCK: u32 = 256;
override DIVISOR: i32 = 256;
@group(0) @binding(0) var<storage, read> inp: array<i32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read> dbuf: array<i32>;
@group(0) @binding(3) var<uniform> n: u32;
"""
ENTRY = """
@compute @workgroup_size(BLOCK)
fn {name}(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.y * nwg.x * BLOCK + gid.x;
  if (i < n) {{ out[i] = {body}; }}
}}
"""
CHAIN_ENTRY = """
fn rem_step(x: u32, d: i32) -> u32 {{ return x + bitcast<u32>(bitcast<i32>(x) % d) + {step}u; }}
@compute @workgroup_size(BLOCK)
fn {name}(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.y * nwg.x * BLOCK + gid.x;
  if (i >= n) {{ return; }}
  var x = bitcast<u32>(inp[i]);
  for (var k = 0; k < {chain}; k++) {{ x = rem_step(x, {expr}); }}
  out[i] = bitcast<i32>(x);
}}
"""


def inputs(divisors: List[int], count: int = 1 << 20) -> np.ndarray:
    """The edge values of every divisor and ``count`` seeded random int32 values."""
    edges = [0, 1, -1, 2**31 - 1, -(2**31)]
    for d in divisors:
        a = abs(d)
        edges += [a - 1, a, a + 1, -(a - 1), -a, -(a + 1), 3 * a + 7, -(3 * a + 7)]
    rng = np.random.default_rng(20261202)
    rand = rng.integers(-(2**31), 2**31, size=count, dtype=np.int64)
    return np.concatenate([np.array(edges, dtype=np.int64), rand]).astype(np.int32)


def _unsigned_rem(x: np.ndarray, d: int) -> np.ndarray:
    """The remainder of the same bits read as u32: ``u32(x) % u32(d)``, as int64."""
    u = (x & 0xFFFFFFFF) % (d & 0xFFFFFFFF)
    return np.where(u >= 2**31, u - 2**32, u)


def reference(op: str, x: np.ndarray, d: int, unsigned: bool = False) -> np.ndarray:
    """WGSL's result: the remainder or quotient truncated toward zero, or the chain of :data:`CHAIN`
    steps; ``unsigned``: the chain with the unsigned remainder instead (the rule a device may follow)."""
    x64 = x.astype(np.int64)
    if op in ("%", "x-(x/d)*d"):
        return np.fmod(x64, d).astype(np.int32)
    if op == "/":
        return (np.sign(x64) * np.sign(d) * (np.abs(x64) // abs(d))).astype(np.int32)
    u = x64 & 0xFFFFFFFF
    for _ in range(CHAIN):
        signed = np.where(u >= 2**31, u - 2**32, u)
        rem = _unsigned_rem(signed, d) if unsigned else np.fmod(signed, d)
        u = (u + (rem & 0xFFFFFFFF) + STEP) & 0xFFFFFFFF
    return np.where(u >= 2**31, u - 2**32, u).astype(np.int32)


def body_of(op: str, expr: str) -> str:
    """The WGSL expression of one case: ``in[i] op d``, or the remainder through the quotient."""
    if op == "x-(x/d)*d":
        return f"inp[i] - (inp[i] / {expr}) * {expr}"
    return f"inp[i] {op} {expr}"


def rule_of(x: np.ndarray, d: int, got: np.ndarray) -> str:
    """The rule the mismatching remainders ``got`` follow: unsigned, floored, or none of them."""
    x64 = x.astype(np.int64)
    if np.array_equal(got.astype(np.int64), _unsigned_rem(x64, d)):
        return "unsigned (u32 % u32(d))"
    if np.array_equal(got, np.mod(x64, d).astype(np.int32)):
        return "floored (the sign of the divisor, Python's %)"
    return "none of truncated, unsigned or floored"


def run_case(
    backend: Any, case: Tuple[str, str, str, int], checks: int, x: np.ndarray, want: np.ndarray
) -> Dict[str, Any]:
    """One kernel over ``x``: its mismatches against ``want`` (WGSL's rule, :func:`reference`), and the
    rule they follow."""
    name, op, expr, divisor = case
    body = CHAIN_ENTRY if op == "chain" else ENTRY
    source = SOURCE + body.format(name=name, body=body_of(op, expr), expr=expr, chain=CHAIN, step=STEP)
    kernel = backend.compile(source, name, {"AR_RUNTIME_CHECKS": checks})
    src, dst, dbuf = backend.alloc(x.nbytes), backend.alloc(x.nbytes), backend.alloc(16)
    src.write(x)
    dbuf.write(np.array([divisor, 0, 0, 0], dtype=np.int32))
    dst.fill32(0x7FC00000, x.nbytes)  # poisoned
    kernel.launch([src, dst, dbuf], int(x.size))
    backend.synchronize()
    got = dst.read("int32", int(x.size))
    bad = np.nonzero(got != want)[0]
    out: Dict[str, Any] = {"kernel": name, "divisor": divisor, "runtime_checks": checks, "mismatches": int(bad.size)}
    if bad.size:
        if op == "%":
            out["rule"] = rule_of(x[bad], divisor, got[bad])
        elif op == "chain":
            same = np.array_equal(got[bad], reference(op, x[bad], divisor, unsigned=True))
            out["rule"] = "the chain of unsigned remainders" if same else "not the chain of unsigned remainders"
        out["examples"] = [[int(x[i]), int(got[i]), int(want[i])] for i in bad[:8]]
        out["negative_inputs_among_mismatches"] = int((x[bad] < 0).sum())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="wgpu:0")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    backend = open_device(args.device)
    x = inputs(sorted({c[3] for c in CASES}))
    results = []
    for case in CASES:
        want = reference(case[1], x, case[3])  # once for both builds
        results += [run_case(backend, case, checks, x, want) for checks in (1, 0)]
    info = backend.info()
    doc = {"device": {k: info.get(k) for k in ("name", "api", "driver", "wgpu_version")}, "inputs": int(x.size)}
    doc["results"] = results
    text = json.dumps(doc, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
