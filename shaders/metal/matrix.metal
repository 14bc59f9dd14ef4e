// Tile products of the matrix suite on simdgroup_matrix (python/apple_roofline/suites/matrix/kernels.py
// documents the sweep, the inputs and the NumPy reference every output is checked against). One work
// group is one simdgroup (32 threads). The CUDA twins are shaders/cuda/matrix.cu (same entries, same
// arguments, the same tile product on tensor cores); the Neural Accelerator variant is
// shaders/metal/matrix_mpp.metal.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0); the tile TM x TN x TK and the chain
// ITERS x REPS are the function constants below (matrix.cu's -D constants). Arguments, bound at
// [[buffer(i)]] in the order the suite passes them (core/backend.h): A (TM x TK, row-major), B (TK x
// TN, row-major), C (TM x TN per simdgroup, simdgroup s's tile at s * TM * TN), then the number of
// work items n (a multiple of the threadgroup size, itself a multiple of 32).
//
//   per simdgroup: load A, B into 8x8 simdgroup matrices;  ITERS x REPS times: C += A * B;  store C
//
// simdgroup_matrix (MSL specification, "SIMD-group matrix functions", MSL 2.3+; every Apple GPU since
// M1): simdgroup_load / simdgroup_store with elements per row, make_filled_simdgroup_matrix, and
// simdgroup_multiply_accumulate(d, a, b, c), d = a * b + c, with half inputs and a half or float
// accumulator. MSL has no integer simdgroup_matrix, and simdgroup_bfloat8x8 needs MSL 3.1: those
// precisions are skipped with the reason (matrix_kernels.APIS). The fragment arrays are sized for the
// largest tile (32 x 32 x 128); the loops' bounds are function constants, so the compiler unrolls
// them when the pipeline is built and keeps the fragments in registers.

#include <metal_stdlib>
using namespace metal;

constant int TM [[function_constant(0)]];
constant int TN [[function_constant(1)]];
constant int TK [[function_constant(2)]];
constant int ITERS [[function_constant(3)]];
constant int REPS [[function_constant(4)]];

// The tile product of one simdgroup: T the input element, Acc the accumulator's.
template <typename T, typename Acc>
inline void ar_tile(const device T* A, const device T* B, device Acc* C, ulong n, uint i) {
  const ulong group = i / 32;
  if (group * 32 >= n) return;  // whole simdgroups: n is a multiple of 32
  const int MF = TM / 8, NF = TN / 8, KF = TK / 8;
  simdgroup_matrix<T, 8, 8> a[4][16];
  simdgroup_matrix<T, 8, 8> b[16][4];
  simdgroup_matrix<Acc, 8, 8> c[4][4];
  for (int mf = 0; mf < MF; ++mf)
    for (int kf = 0; kf < KF; ++kf) simdgroup_load(a[mf][kf], A + (mf * 8) * TK + kf * 8, ulong(TK));
  for (int kf = 0; kf < KF; ++kf)
    for (int nf = 0; nf < NF; ++nf) simdgroup_load(b[kf][nf], B + (kf * 8) * TN + nf * 8, ulong(TN));
  for (int mf = 0; mf < MF; ++mf)
    for (int nf = 0; nf < NF; ++nf) c[mf][nf] = make_filled_simdgroup_matrix<Acc, 8, 8>(Acc(0));
  // The chain: every step reads the accumulator the previous one wrote.
  for (int it = 0; it < ITERS; ++it)
    for (int rep = 0; rep < REPS; ++rep)
      for (int kf = 0; kf < KF; ++kf)
        for (int mf = 0; mf < MF; ++mf)
          for (int nf = 0; nf < NF; ++nf) simdgroup_multiply_accumulate(c[mf][nf], a[mf][kf], b[kf][nf], c[mf][nf]);
  device Acc* out = C + group * ulong(TM * TN);
  for (int mf = 0; mf < MF; ++mf)
    for (int nf = 0; nf < NF; ++nf) simdgroup_store(c[mf][nf], out + (mf * 8) * TN + nf * 8, ulong(TN));
}

kernel void matrix_f16_f32(const device half* A [[buffer(0)]], const device half* B [[buffer(1)]],
                           device float* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
  ar_tile<half, float>(A, B, C, n, i);
}

kernel void matrix_f16_f16(const device half* A [[buffer(0)]], const device half* B [[buffer(1)]],
                           device half* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
  ar_tile<half, half>(A, B, C, n, i);
}
