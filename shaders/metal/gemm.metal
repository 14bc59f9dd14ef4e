// A plain tiled SGEMM for comparison with MPS (the gemm suite:
// docs/design/measurement.md, "Counting FLOPs and bytes"): the M5 article's "16×16 tiled shared memory, a
// standard textbook implementation". C = A·B for square N×N row-major fp32 matrices, fp32
// accumulation. The CUDA twin is shaders/cuda/gemm.cu (same name, arguments and operations).
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0, safe math). Arguments, bound at
// [[buffer(i)]] in the order the suite passes them (core/backend.h): A, B (const device float*),
// C (device float*), N (constant long&), then the work-item count n = N·N (constant ulong&).
//
// Launch: one thread per element of C, a 1-D grid of N·N threads in threadgroups of exactly 256
// (the backend's BLOCK, default 256; any other threadgroup size computes garbage, which validation
// reports). Threadgroup g computes the 16×16 tile of C at tile row g / (N/16), tile column
// g % (N/16); thread t of it the element (ty, tx) = (t / 16, t % 16) of that tile. N must be a
// multiple of 16, so N·N is a whole number of threadgroups and every thread is valid; the `valid`
// flag (the CUDA twin's `i < n` guard) only skips the loads and the store, never the barriers.
// 2·N³ FLOPs, 3·N²·4 bytes of compulsory traffic.

#include <metal_stdlib>
using namespace metal;

kernel void gemm_tiled16_f32(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]],
                             device float* C [[buffer(2)]], constant long& N [[buffer(3)]],
                             constant ulong& n [[buffer(4)]], uint g [[threadgroup_position_in_grid]],
                             uint t [[thread_index_in_threadgroup]]) {
  threadgroup float As[16][16];
  threadgroup float Bs[16][16];
  const long nn = N;
  const long tiles = nn / 16;
  const uint ty = t / 16, tx = t % 16;
  const long row = (long(g) / tiles) * 16 + long(ty);
  const long col = (long(g) % tiles) * 16 + long(tx);
  const bool valid = ulong(g) * 256 + ulong(t) < n;
  float acc = 0.0f;
  for (long k0 = 0; k0 < nn; k0 += 16) {
    As[ty][tx] = valid ? A[row * nn + k0 + long(tx)] : 0.0f;
    Bs[ty][tx] = valid ? B[(k0 + long(ty)) * nn + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
#pragma clang loop unroll(full)
    for (int kk = 0; kk < 16; ++kk) acc = fma(As[ty][kk], Bs[kk][tx], acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (valid) C[row * nn + col] = acc;
}
