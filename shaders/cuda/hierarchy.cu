// The hierarchy suite's kernels: bandwidth at every level of the memory hierarchy
// (docs/design.md, "The memory hierarchy"; python/apple_roofline/suites/hierarchy.py holds the NumPy
// references and the FLOP/byte counts). The Metal twins are shaders/metal/hierarchy.metal (same names,
// same arguments, the same operations); the CPU twins native/cpu/hierarchy.cpp.
//
// Compiled at run time with NVRTC: -DBLOCK (threads per block), -DF (passes over the working set
// per launch, at least 1; hier_rmw needs an even F) and -DROTATE (hier_read: 1 moves each pass's
// start, 0 keeps it). Arguments, as the backend passes them (core/backend.h): in (n 16-byte
// words: uint4), out (one uint4 per work item), the working set's size n in uint4 words (long
// long), then the number of work items T (the launch's lanes).
//
// Per pass every lane reads E = n / T words (n >= T, n a multiple of T) or one word (n < T: lanes
// share words); lane t reads the words start + t, start + t + T, ... (mod n), so a warp's loads
// are coalesced. The pass's start is 0, or with ROTATE the previous one plus STEP(n) (mod n): the
// lanes of one SM then move across the whole working set from pass to pass, so each SM's L1 holds
// all of it (its level capacity is one SM's L1, not the sum over SMs) and no load repeats an
// address of the pass before it (a compiler cannot keep a pass's words in registers).
//
//   hier_read:   acc += in[i] over every word a lane reads, wrapping mod 2^32 per component;
//                out[t] = acc. The sum over t of out[t] is R × (the cyclic range sum of each pass).
//   hier_rmw:    acc += in[i]; in[i] ^= MASK for every word of the lane's own slice (no ROTATE: no
//                two lanes ever touch one word), out[t] = acc. With an even F the buffer ends each
//                launch as it began, and the odd passes read the even passes' writes.
//   hier_shared: each block copies its TILE words of in into shared memory, then for F passes
//                each thread reads TILE / BLOCK words of it at (tid + pass) mod BLOCK + k × BLOCK
//                (conflict-free: consecutive threads read consecutive 16-byte words), out[t] = acc.

#ifndef ROTATE
#define ROTATE 1
#endif
// hier_shared's tile: 16 KiB of shared memory per block (the guide's "keep threadgroup memory under 16 KB").
#define AR_TILE 1024
// hier_rmw's mask, applied once per pass.
#define AR_MASK 0x5A5A5A5Au

typedef unsigned long long u64;

// STEP(n) = (5n / 8 + 1) mod n: a pass's start moves by about 5/8 of the working set.
__device__ __forceinline__ u64 ar_step(u64 n) { return ((5 * n) / 8 + 1) % n; }

__device__ __forceinline__ void ar_add(uint4& acc, const uint4 v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
hier_read(const uint4* __restrict__ in, uint4* __restrict__ out, long long n_words, unsigned long long lanes) {
  const u64 t = blockIdx.x * (u64)BLOCK + threadIdx.x;
  if (t >= lanes) return;
  const u64 n = (u64)n_words;
  const u64 e = n >= lanes ? n / lanes : 1;   // words per lane per pass
  const u64 stride = lanes % n;               // lanes mod n: the step between a lane's words
  const u64 step = ROTATE ? ar_step(n) : 0;
  u64 base = t % n;                           // this lane's first word of pass 0
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll 1
  for (int pass = 0; pass < F; ++pass) {
    u64 i = base;
#pragma unroll 4
    for (u64 k = 0; k < e; ++k) {
      ar_add(acc, in[i]);
      i += stride;
      if (i >= n) i -= n;
    }
    base += step;
    if (base >= n) base -= n;
  }
  out[t] = acc;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
hier_rmw(uint4* __restrict__ in, uint4* __restrict__ out, long long n_words, unsigned long long lanes) {
  const u64 t = blockIdx.x * (u64)BLOCK + threadIdx.x;
  if (t >= lanes) return;
  const u64 n = (u64)n_words;
  const u64 e = n / lanes;  // the suite launches n >= T lanes, n a multiple of T
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll 1
  for (int pass = 0; pass < F; ++pass) {
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
  __shared__ uint4 tile[AR_TILE];
  const unsigned tid = threadIdx.x;
  const u64 first = (u64)blockIdx.x * AR_TILE;  // the suite launches whole blocks, n = blocks × TILE
#pragma unroll
  for (int k = 0; k < AR_TILE / BLOCK; ++k) tile[tid + k * BLOCK] = in[first + tid + k * BLOCK];
  __syncthreads();
  uint4 acc = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll 4
  for (int pass = 0; pass < F; ++pass) {
    const unsigned j = (tid + (unsigned)pass) % BLOCK;
#pragma unroll
    for (int k = 0; k < AR_TILE / BLOCK; ++k) ar_add(acc, tile[j + k * BLOCK]);
  }
  out[blockIdx.x * (u64)BLOCK + tid] = acc;
}
