// Access-pattern kernels of the access suite (python/apple_roofline/suites/access/kernels.py
// documents them and holds the NumPy reference every output is checked against). One work item is
// one thread. The CUDA twins are shaders/cuda/access.cu (same names, same arguments, the same
// operations); the CPU twins native/cpu/rules.cpp.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0). Arguments, bound at [[buffer(i)]] in
// the order the suite passes them (core/backend.h): in, out (device pointers to elements of 1, 2 or
// 4 32-bit words: uint, uint2, uint4), the stride S (constant long&, a power of two), then the
// number of elements n (constant ulong&, a power of two, S <= n). Thread i copies element
//
//   j(i) = (i mod M)·S + i div M,   M = n / S
//
// to out[i]: adjacent threads read elements S apart (the guide's x[gid * stride]), and every
// element is read exactly once. The index is a mask, two shifts and an or: ctz gives log2 of a
// power of two (no integer divide, which Apple GPUs run in software).

#include <metal_stdlib>
using namespace metal;

// n < 2^32 (Metal dispatches fewer than 2^32 threads), so log2 is taken on 32-bit words.
inline ulong strided_index(ulong i, ulong n, long s) {
  const uint sh = ctz(uint(s));  // log2 S
  const ulong m = n >> sh;       // M
  const uint lm = ctz(uint(m));  // log2 M
  return ((i & (m - 1)) << sh) | (i >> lm);
}

kernel void access_u32(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                       constant long& stride [[buffer(2)]], constant ulong& n [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}

kernel void access_u32x2(const device uint2* in [[buffer(0)]], device uint2* out [[buffer(1)]],
                         constant long& stride [[buffer(2)]], constant ulong& n [[buffer(3)]],
                         uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}

kernel void access_u32x4(const device uint4* in [[buffer(0)]], device uint4* out [[buffer(1)]],
                         constant long& stride [[buffer(2)]], constant ulong& n [[buffer(3)]],
                         uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = in[strided_index(i, n, stride)];
}
