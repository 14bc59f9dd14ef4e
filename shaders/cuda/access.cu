// Access-pattern kernels of the access suite (python/apple_roofline/suites/access/kernels.py
// documents them and holds the NumPy reference every output is checked against). One work item is
// one thread. The Metal twins are shaders/metal/access.metal (same names, same arguments, the same
// operations); the CPU twins native/cpu/rules.cpp.
//
// Compiled at run time with NVRTC: -DBLOCK=<threads per block>. Arguments: in, out (device
// pointers to elements of 1, 2 or 4 32-bit words), the stride S (long long, a power of two), then
// the number of elements n (a power of two, S <= n). Thread i copies element
//
//   j(i) = (i mod M)·S + i div M,   M = n / S
//
// to out[i]: adjacent threads read elements S apart, and every element is read exactly once. The
// index is a mask, two shifts and an or; __ffsll gives log2 of a power of two.

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)

__device__ __forceinline__ unsigned long long strided_index(unsigned long long i, unsigned long long n, long long s) {
  const int sh = __ffsll(s) - 1;             // log2 S
  const unsigned long long m = n >> sh;      // M
  const int lm = __ffsll((long long)m) - 1;  // log2 M
  return ((i & (m - 1)) << sh) | (i >> lm);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    access_u32(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long stride,
               unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    access_u32x2(const uint2* __restrict__ in, uint2* __restrict__ out, long long stride, unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    access_u32x4(const uint4* __restrict__ in, uint4* __restrict__ out, long long stride, unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}
