// The occupancy suite's kernel (python/apple_roofline/suites/occupancy/suite.py documents it and holds the
// NumPy reference every output is checked against). One work item is one thread. The CUDA twin is
// shaders/cuda/occupancy.cu (same name, same arguments, the same operations).
//
// The suite prepends two macros to this source (a threadgroup array's size must be a compile-time
// constant; matrix_mpp.metal takes its tile the same way): AR_TG_FLOAT4S, the float4s of threadgroup
// memory the threadgroup declares (0: none), and AR_TG_SPREAD = AR_TG_FLOAT4S / threads per
// threadgroup, the distance between two threads' slots. Arguments, bound at [[buffer(i)]] in order
// (core/backend.h): in, out (float4), then n (constant ulong&; even, a multiple of the threadgroup
// size). Thread i writes its element into its slot, waits at the barrier, and stores its
// neighbour's (thread i ^ 1's): out[i] = in[i ^ 1]. Without threadgroup memory it reads in[i ^ 1]
// directly.

#include <metal_stdlib>
using namespace metal;

#ifndef AR_TG_FLOAT4S
#error "the suite prepends #define AR_TG_FLOAT4S <float4s of threadgroup memory>"
#endif
#ifndef AR_TG_SPREAD
#error "the suite prepends #define AR_TG_SPREAD <AR_TG_FLOAT4S / threads per threadgroup>"
#endif

kernel void occupancy_copy(const device float4* in [[buffer(0)]], device float4* out [[buffer(1)]],
                           constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]],
                           uint t [[thread_index_in_threadgroup]]) {
#if AR_TG_FLOAT4S > 0
  threadgroup float4 tg[AR_TG_FLOAT4S];
  if (i < n) tg[t * AR_TG_SPREAD] = in[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i < n) out[i] = tg[(t ^ 1u) * AR_TG_SPREAD];
#else
  if (i < n) out[i] = in[i ^ 1u];
#endif
}
