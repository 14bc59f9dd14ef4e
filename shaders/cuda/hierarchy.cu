// The hierarchy suite's kernels: bandwidth at every level of the memory hierarchy
// (docs/design/hierarchy.md, "The memory hierarchy"; python/apple_roofline/suites/hierarchy/suite.py holds the NumPy
// references and the FLOP/byte counts). The Metal twins are shaders/metal/hierarchy.metal (same names,
// same arguments, the same operations); the CPU twins native/cpu/hierarchy.cpp.
//
// Compiled at run time with NVRTC: -DBLOCK (threads per block), -DPASSES (passes over the working
// set per launch, at least 1; hier_rmw needs an even PASSES) and -DROTATE (hier_read: 1 moves each
// pass's start, 0 keeps it). Arguments, as the backend passes them (core/backend.h): in (n 16-byte
// words: uint4), out (one uint4 per work item), the working set's size n in uint4 words (long
// long), then the number of work items T (the launch's lanes).
//
// hier_read: per pass every lane reads E = ceil(n / T) words, lane t the words start + t,
// start + t + T, ... (mod n), so a warp's loads are coalesced and the T·E words a pass reads are the
// cyclic range [start, start + T·E) (each word once or, with lanes to spare, twice; with fewer words
// than lanes, lanes share words). The pass's start is 0, or with ROTATE the previous one plus
// STEP(n) (mod n): the lanes of one SM then move across the whole working set from pass to pass,
// so each SM's L1 holds all of it (its level capacity is one SM's L1, not the sum over SMs) and no
// load repeats an address of the pass before it (a compiler cannot keep a pass's words in registers).
// hier_rmw: E = n / T words per lane (the suite launches n / E lanes for n a multiple of E).
//
//   hier_read:   acc += in[i] over every word a lane reads, wrapping mod 2^32 per component;
//                out[t] = acc. The sum over t of out[t] is the sum over the passes of each pass's cyclic range.
//   hier_rmw:    acc += in[i]; in[i] ^= MASK for every word of the lane's own slice (no ROTATE: no
//                two lanes ever touch one word), out[t] = acc. With an even PASSES the buffer ends each
//                launch as it began, and the odd passes read the even passes' writes.
//   hier_shared: each block copies its TILE words of in into shared memory, then for PASSES passes
//                each thread reads TILE / BLOCK words of it at (tid + pass) mod BLOCK + k × BLOCK
//                (conflict-free: consecutive threads read consecutive 16-byte words), out[t] = acc.

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#ifndef ROTATE
#define ROTATE 1
#endif
// hier_shared's tile: 16 KiB of shared memory per block (the guide's "keep threadgroup memory under 16 KB").
#define AR_TILE 1024
// hier_rmw's mask, applied once per pass.
#define AR_MASK 0x5A5A5A5Au

typedef unsigned long long u64;

// STEP(n) = floor(n × 40503 / 2^16) mod n: about 0.618 n (the golden ratio's fraction), so that the
// start of a pass falls at no simple fraction of the working set; a step of 5n/8 moved every SM's
// lanes onto words the same SM had read the pass before on an H100 (whose lanes, 132 SMs × 2048,
// divide n/8), and 20 % of an L2-sized sweep's reads hit L1 (Nsight Compute's lts__t_bytes).
__device__ __forceinline__ unsigned ar_step(unsigned n) { return (unsigned)(((u64)n * 40503u) >> 16) % n; }

__device__ __forceinline__ void ar_add(uint4& acc, const uint4 v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    hier_read(const uint4* __restrict__ in, uint4* __restrict__ out, long long n_words, unsigned long long lanes) {
  AR_CLOCK_PROBE_HERE();
  const u64 t = blockIdx.x * (u64)BLOCK + threadIdx.x;
  if (t >= lanes) return;
  // 32-bit index arithmetic: the suite keeps n below 2^31 words, so i + stride never wraps
  const unsigned n = (unsigned)n_words;
  const unsigned e = (unsigned)(((u64)n_words + lanes - 1) / lanes);  // words per lane per pass
  const unsigned stride = (unsigned)(lanes % (u64)n);                 // the step between a lane's words
  const unsigned step = ROTATE ? ar_step(n) : 0u;
  unsigned base = (unsigned)(t % (u64)n);  // this lane's first word of pass 0
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
  if (e == 1) {  // one word per lane per pass (working sets below a word per lane): passes unrolled
#pragma unroll 4
    for (int pass = 0; pass < PASSES; ++pass) {
      ar_add(acc, in[base]);
      base += step;
      if (base >= n) base -= n;
    }
  } else {
#pragma unroll 1
    for (int pass = 0; pass < PASSES; ++pass) {
      unsigned i = base;
#pragma unroll 4
      for (unsigned k = 0; k < e; ++k) {
        ar_add(acc, in[i]);
        i += stride;
        if (i >= n) i -= n;
      }
      base += step;
      if (base >= n) base -= n;
    }
  }
  out[t] = acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    hier_rmw(uint4* __restrict__ in, uint4* __restrict__ out, long long n_words, unsigned long long lanes) {
  AR_CLOCK_PROBE_HERE();
  const u64 t = blockIdx.x * (u64)BLOCK + threadIdx.x;
  if (t >= lanes) return;
  const u64 n = (u64)n_words;
  const u64 e = n / lanes;  // the suite launches n / E lanes, n a multiple of E
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll 1
  for (int pass = 0; pass < PASSES; ++pass) {
#pragma unroll 4
    for (u64 k = 0; k < e; ++k) {
      const u64 i = t + k * lanes;
      const uint4 v = in[i];
      ar_add(acc, v);
      in[i] = make_uint4(v.x ^ AR_MASK, v.y ^ AR_MASK, v.z ^ AR_MASK, v.w ^ AR_MASK);
    }
  }
  out[t] = acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    hier_shared(const uint4* __restrict__ in, uint4* __restrict__ out, long long n_words, unsigned long long lanes) {
  AR_CLOCK_PROBE_HERE();
  __shared__ uint4 tile[AR_TILE];
  const unsigned tid = threadIdx.x;
  const u64 first = (u64)blockIdx.x * AR_TILE;  // the suite launches whole blocks, n = blocks × TILE
#pragma unroll
  for (int k = 0; k < AR_TILE / BLOCK; ++k) tile[tid + k * BLOCK] = in[first + tid + k * BLOCK];
  __syncthreads();
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll 4
  for (int pass = 0; pass < PASSES; ++pass) {
    const unsigned j = (tid + (unsigned)pass) % BLOCK;
#pragma unroll
    for (int k = 0; k < AR_TILE / BLOCK; ++k) ar_add(acc, tile[j + k * BLOCK]);
  }
  out[blockIdx.x * (u64)BLOCK + tid] = acc;
}
