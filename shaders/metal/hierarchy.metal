// The hierarchy suite's kernels: bandwidth at every level of the memory hierarchy
// (docs/design/hierarchy.md, "The memory hierarchy"; python/apple_roofline/suites/hierarchy/suite.py holds the NumPy
// references and the FLOP/byte counts). The CUDA twins are shaders/cuda/hierarchy.cu (same names,
// same arguments, the same operations, documented there); the CPU twins native/cpu/hierarchy.cpp.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0); PASSES (passes per launch), ROTATE
// (hier_read: move each pass's start) and BLOCK (threads per threadgroup, which the backend also
// dispatches) are the function constants below (hierarchy.cu's -DPASSES, -DROTATE, -DBLOCK). Arguments,
// bound at [[buffer(i)]] in the order the suite passes them (core/backend.h): in (n uint4 words),
// out (one uint4 per work item), the working set's size n in uint4 words (constant long&), then
// the number of work items T (constant ulong&). The backend dispatches exactly T threads.

#include <metal_stdlib>
using namespace metal;

// Passes over the working set per launch (hierarchy.cu's -DPASSES).
constant int PASSES [[function_constant(0)]];
// hier_read: 1 moves each pass's start by STEP(n), 0 keeps it (hierarchy.cu's -DROTATE).
constant int ROTATE [[function_constant(1)]];
// Threads per threadgroup (hierarchy.cu's -DBLOCK; hier_shared's tile is split among them).
constant uint BLOCK [[function_constant(2)]];

// hier_shared's tile: 16 KiB of threadgroup memory (the guide's "keep threadgroup memory under 16 KB").
constant uint AR_TILE = 1024;
// hier_rmw's mask, applied once per pass.
constant uint AR_MASK = 0x5A5A5A5Au;

// STEP(n) = floor(n × 40503 / 2^16) mod n: about 0.618 n (hierarchy.cu says why not a simple fraction).
inline uint ar_step(uint n) { return uint((ulong(n) * 40503u) >> 16) % n; }

kernel void hier_read(const device uint4* in [[buffer(0)]], device uint4* out [[buffer(1)]],
                      constant long& n_words [[buffer(2)]], constant ulong& lanes [[buffer(3)]],
                      uint t [[thread_position_in_grid]]) {
  if (ulong(t) >= lanes) return;
  const uint n = uint(n_words);                               // 32-bit index arithmetic, as hierarchy.cu's
  const uint e = uint((ulong(n_words) + lanes - 1) / lanes);  // words per lane per pass
  const uint stride = uint(lanes % ulong(n));                 // the step between a lane's words
  const uint step = ROTATE ? ar_step(n) : 0u;
  uint base = uint(ulong(t) % ulong(n));
  uint4 acc = uint4(0u, 0u, 0u, 0u);
  if (e == 1) {
#pragma clang loop unroll_count(4)
    for (int pass = 0; pass < PASSES; ++pass) {
      acc = acc + in[base];
      base += step;
      if (base >= n) base -= n;
    }
  } else {
    for (int pass = 0; pass < PASSES; ++pass) {
      uint i = base;
#pragma clang loop unroll_count(4)
      for (uint k = 0; k < e; ++k) {
        acc = acc + in[i];
        i += stride;
        if (i >= n) i -= n;
      }
      base += step;
      if (base >= n) base -= n;
    }
  }
  out[t] = acc;
}

kernel void hier_rmw(device uint4* in [[buffer(0)]], device uint4* out [[buffer(1)]],
                     constant long& n_words [[buffer(2)]], constant ulong& lanes [[buffer(3)]],
                     uint t [[thread_position_in_grid]]) {
  if (ulong(t) >= lanes) return;
  const ulong n = ulong(n_words);
  const ulong e = n / lanes;  // the suite launches n / E lanes, n a multiple of E
  uint4 acc = uint4(0u, 0u, 0u, 0u);
  for (int pass = 0; pass < PASSES; ++pass) {
#pragma clang loop unroll_count(4)
    for (ulong k = 0; k < e; ++k) {
      const ulong i = ulong(t) + k * lanes;
      const uint4 v = in[i];
      acc = acc + v;
      in[i] = uint4(v.x ^ AR_MASK, v.y ^ AR_MASK, v.z ^ AR_MASK, v.w ^ AR_MASK);
    }
  }
  out[t] = acc;
}

kernel void hier_shared(const device uint4* in [[buffer(0)]], device uint4* out [[buffer(1)]],
                        constant long& n_words [[buffer(2)]], constant ulong& lanes [[buffer(3)]],
                        uint g [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]]) {
  threadgroup uint4 tile[AR_TILE];
  const ulong first = ulong(g) * AR_TILE;  // the suite dispatches whole threadgroups, n = groups × TILE
  for (uint k = 0; k < AR_TILE / BLOCK; ++k) tile[tid + k * BLOCK] = in[first + tid + k * BLOCK];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint4 acc = uint4(0u, 0u, 0u, 0u);
#pragma clang loop unroll_count(4)
  for (int pass = 0; pass < PASSES; ++pass) {
    const uint j = (tid + uint(pass)) % BLOCK;
    for (uint k = 0; k < AR_TILE / BLOCK; ++k) acc = acc + tile[j + k * BLOCK];
  }
  out[ulong(g) * BLOCK + tid] = acc;
}
