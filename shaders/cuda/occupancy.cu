// The occupancy suite's kernel (python/apple_roofline/suites/occupancy/suite.py documents it and holds the
// NumPy reference every output is checked against). One work item is one thread. The Metal twin is
// shaders/metal/occupancy.metal (same name, same arguments, the same operations); the CPU has no
// threadgroup memory, so no CPU twin.
//
// The suite prepends two macros to this source (a static array's size must be a compile-time
// constant on both CUDA and Metal, where a function constant cannot size it): AR_TG_FLOAT4S, the
// float4s of threadgroup (shared) memory the block declares (0: none), and AR_TG_SPREAD =
// AR_TG_FLOAT4S / BLOCK, the distance between two threads' slots, so the threads' slots span the
// whole array. Compiled with -DBLOCK=<threads per block>. Arguments: in, out (float4), then n (even,
// a multiple of BLOCK). Thread i writes its element into its slot, waits at the barrier, and
// stores its neighbour's (thread i ^ 1's) element: out[i] = in[i ^ 1]. Without threadgroup memory
// it reads in[i ^ 1] directly: the same loads and stores, so only the declared memory differs.
#ifndef AR_TG_FLOAT4S
#error "the suite prepends #define AR_TG_FLOAT4S <float4s of shared memory per block>"
#endif
#ifndef AR_TG_SPREAD
#error "the suite prepends #define AR_TG_SPREAD <AR_TG_FLOAT4S / BLOCK>"
#endif

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)

extern "C" __global__ void __launch_bounds__(BLOCK)
    occupancy_copy(const float4* __restrict__ in, float4* __restrict__ out, unsigned long long n) {
  const unsigned long long i = AR_INDEX;
#if AR_TG_FLOAT4S > 0
  __shared__ float4 tg[AR_TG_FLOAT4S];
  const unsigned int t = threadIdx.x;
  if (i < n) tg[t * AR_TG_SPREAD] = in[i];
  __syncthreads();
  if (i < n) out[i] = tg[(t ^ 1u) * AR_TG_SPREAD];
#else
  if (i < n) out[i] = in[i ^ 1ull];
#endif
}
