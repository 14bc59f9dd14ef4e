// Tile products of the matrix suite on tensor cores (python/apple_roofline/suites/matrix/kernels.py
// documents the sweep, the inputs and the NumPy reference every output is checked against). One work
// group is one warp. The Metal twins are shaders/metal/matrix.metal (simdgroup_matrix, FP16 inputs)
// and shaders/metal/matrix_mpp.metal (matmul2d): same entries, arguments and operations.
//
// Compiled at run time with NVRTC: -DTM, -DTN, -DTK (the logical tile), -DITERS, -DREPS (the chain
// is ITERS x REPS multiply-accumulates of the tile), -DBLOCK (threads per block, a multiple of 32).
// Arguments: A (TM x TK, row-major), B (TK x TN, row-major), C (TM x TN per warp, row-major, warp w's
// tile at w * TM * TN), then the number of work items n (a multiple of 32).
//
//   per warp: load A, B into registers;  ITERS x REPS times: C += A * B;  store C
//
// The tile is built from the instruction's native fragments, with inline PTX (PTX ISA, "Warp-level
// matrix multiply-accumulate instructions", mma.sync.aligned, sm_80+), so NVRTC needs no header:
// f16/bf16 m16n8k16 (m16n8k8 where TK = 8), s8 m16n8k32 (m16n8k16 where TK = 16). The fragment
// layouts are the PTX ISA's "Matrix Fragments for mma.m16n8k16 / m16n8k8 / m16n8k32": with
// g = lane / 4 and t = lane % 4, register r of A holds row g + 8 (r & 1), columns t EPR + e +
// 4 EPR (r >> 1) (e < EPR elements of EPR per 32-bit register: 2 for 16-bit types, 4 for s8); register
// r of B holds rows t EPR + e + 4 EPR r of column g; accumulator element i is row g + 8 (i >> 1),
// column 2 t + (i & 1). tests/shader_twins.py models these indices in NumPy and the toolchain tests
// compare that model with the functions below compiled for the host.

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#ifndef TM
#error "compile with -DTM=<tile rows>"
#endif
#ifndef TN
#error "compile with -DTN=<tile columns>"
#endif
#ifndef TK
#error "compile with -DTK=<tile depth>"
#endif
#ifndef ITERS
#error "compile with -DITERS=<repetition blocks>"
#endif
#ifndef REPS
#error "compile with -DREPS=<multiply-accumulates per block>"
#endif
#ifndef BLOCK
#define BLOCK 128
#endif

// ---- fragment indices (host and device: the toolchain tests run them on the host) ------------------

// A register r, element e: row and column within the 16 x FK fragment.
__host__ __device__ inline int ar_a_row(int lane, int r) { return (lane >> 2) + 8 * (r & 1); }
__host__ __device__ inline int ar_a_col(int lane, int r, int e, int epr) {
  return (lane & 3) * epr + e + 4 * epr * (r >> 1);
}
// B register r, element e: row (k) and column (n) within the FK x 8 fragment.
__host__ __device__ inline int ar_b_row(int lane, int r, int e, int epr) { return (lane & 3) * epr + e + 4 * epr * r; }
__host__ __device__ inline int ar_b_col(int lane) { return lane >> 2; }
// Accumulator element i: row and column within the 16 x 8 fragment.
__host__ __device__ inline int ar_c_row(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
__host__ __device__ inline int ar_c_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

// ---- one mma.sync per precision and fragment K -------------------------------------------------------
// T: the stored input element (16-bit bits or signed char); EPR elements per register; AREGS, BREGS
// registers of A and B per fragment; Acc the accumulator element as stored; CREGS its registers.

template <int FK>
struct F16F32 {
  typedef unsigned short T;
  typedef float Acc;
  typedef float Reg;
  static const int EPR = 2, AREGS = FK / 4, BREGS = FK / 8, CREGS = 4;
  __device__ static inline void mma(Reg* c, const unsigned* a, const unsigned* b);
  __device__ static inline Acc out(const Reg* c, int i) { return c[i]; }
};
template <>
__device__ inline void F16F32<16>::mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ inline void F16F32<8>::mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

template <int FK>
struct BF16F32 {
  typedef unsigned short T;
  typedef float Acc;
  typedef float Reg;
  static const int EPR = 2, AREGS = FK / 4, BREGS = FK / 8, CREGS = 4;
  __device__ static inline void mma(Reg* c, const unsigned* a, const unsigned* b);
  __device__ static inline Acc out(const Reg* c, int i) { return c[i]; }
};
template <>
__device__ inline void BF16F32<16>::mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ inline void BF16F32<8>::mma(float* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

// FP16 accumulator: two f16x2 registers hold elements (0, 1) and (2, 3), the lower index in the low half.
template <int FK>
struct F16F16 {
  typedef unsigned short T;
  typedef unsigned short Acc;
  typedef unsigned Reg;
  static const int EPR = 2, AREGS = FK / 4, BREGS = FK / 8, CREGS = 2;
  __device__ static inline void mma(Reg* c, const unsigned* a, const unsigned* b);
  __device__ static inline Acc out(const Reg* c, int i) { return (unsigned short)(c[i >> 1] >> (16 * (i & 1))); }
};
template <>
__device__ inline void F16F16<16>::mma(unsigned* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
               : "+r"(c[0]), "+r"(c[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ inline void F16F16<8>::mma(unsigned* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};"
               : "+r"(c[0]), "+r"(c[1])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

template <int FK>
struct S8S32 {
  typedef signed char T;
  typedef int Acc;
  typedef int Reg;
  static const int EPR = 4, AREGS = FK / 8, BREGS = FK / 16, CREGS = 4;
  __device__ static inline void mma(Reg* c, const unsigned* a, const unsigned* b);
  __device__ static inline Acc out(const Reg* c, int i) { return c[i]; }
};
template <>
__device__ inline void S8S32<32>::mma(int* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ inline void S8S32<16>::mma(int* c, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]));
}

// EPR consecutive elements (stored as T) packed into one 32-bit register, element e at bits
// [e * 32 / EPR, (e + 1) * 32 / EPR) (PTX: the lower-indexed element in the lower bits).
template <typename T, int EPR>
__device__ inline unsigned ar_pack(const T* v) {
  unsigned r = 0;
#pragma unroll
  for (int e = 0; e < EPR; ++e)
    r |= (unsigned)(sizeof(T) == 1 ? (unsigned char)v[e] : (unsigned short)v[e]) << (e * (32 / EPR));
  return r;
}

// The tile product of one warp with fragments of depth FK.
template <template <int> class P, int FK>
__device__ inline void ar_tile(const void* A_, const void* B_, void* C_, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();  // clock.cuh: every entry of this file runs this function
  typedef P<FK> Op;
  typedef typename Op::T T;
  const T* A = (const T*)A_;
  const T* B = (const T*)B_;
  typename Op::Acc* C = (typename Op::Acc*)C_;
  const unsigned long long thread = blockIdx.x * (unsigned long long)BLOCK + threadIdx.x;
  const unsigned long long warp = thread / 32;
  const int lane = (int)(threadIdx.x & 31);
  if (warp * 32 >= n) return;  // whole warps: n is a multiple of 32
  // A tile the fragments cannot compose (the suite skips it before compiling) writes nothing, so its
  // poisoned output fails validation; the sizes below stay >= 1 so that the other entries of the
  // file still compile for it.
  if (TM % 16 != 0 || TN % 8 != 0 || TK % FK != 0) return;
  const int MF = TM >= 16 ? TM / 16 : 1, NF = TN >= 8 ? TN / 8 : 1, KF = TK >= FK ? TK / FK : 1;
  const int EPR = Op::EPR;
  unsigned a[MF][KF][Op::AREGS];
  unsigned b[KF][NF][Op::BREGS];
  typename Op::Reg c[MF][NF][Op::CREGS];
#pragma unroll
  for (int mf = 0; mf < MF; ++mf)
#pragma unroll
    for (int kf = 0; kf < KF; ++kf)
#pragma unroll
      for (int r = 0; r < Op::AREGS; ++r) {
        T v[EPR];
#pragma unroll
        for (int e = 0; e < EPR; ++e)
          v[e] = A[(mf * 16 + ar_a_row(lane, r)) * TK + kf * FK + ar_a_col(lane, r, e, EPR)];
        a[mf][kf][r] = ar_pack<T, EPR>(v);
      }
#pragma unroll
  for (int kf = 0; kf < KF; ++kf)
#pragma unroll
    for (int nf = 0; nf < NF; ++nf)
#pragma unroll
      for (int r = 0; r < Op::BREGS; ++r) {
        T v[EPR];
#pragma unroll
        for (int e = 0; e < EPR; ++e) v[e] = B[(kf * FK + ar_b_row(lane, r, e, EPR)) * TN + nf * 8 + ar_b_col(lane)];
        b[kf][nf][r] = ar_pack<T, EPR>(v);
      }
#pragma unroll
  for (int mf = 0; mf < MF; ++mf)
#pragma unroll
    for (int nf = 0; nf < NF; ++nf)
#pragma unroll
      for (int i = 0; i < Op::CREGS; ++i) c[mf][nf][i] = 0;
  // The chain: every mma reads the accumulator the previous one wrote (read-write asm operands).
#pragma unroll 1
  for (int it = 0; it < ITERS; ++it) {
#pragma unroll 4
    for (int rep = 0; rep < REPS; ++rep)
#pragma unroll
      for (int kf = 0; kf < KF; ++kf)
#pragma unroll
        for (int mf = 0; mf < MF; ++mf)
#pragma unroll
          for (int nf = 0; nf < NF; ++nf) Op::mma(c[mf][nf], a[mf][kf], b[kf][nf]);
  }
  typename Op::Acc* out = C + warp * (unsigned long long)(TM * TN);
#pragma unroll
  for (int mf = 0; mf < MF; ++mf)
#pragma unroll
    for (int nf = 0; nf < NF; ++nf)
#pragma unroll
      for (int i = 0; i < 4; ++i)
        out[(mf * 16 + ar_c_row(lane, i)) * TN + nf * 8 + ar_c_col(lane, i)] = Op::out(c[mf][nf], i);
}

// FK: the largest native fragment depth dividing TK (the suite skips shapes none divides).
#define AR_FK16 ((TK % 16) == 0 ? 16 : 8)
#define AR_FK8 ((TK % 32) == 0 ? 32 : 16)

extern "C" __global__ void __launch_bounds__(BLOCK)
    matrix_f16_f32(const unsigned short* A, const unsigned short* B, float* C, unsigned long long n) {
  ar_tile<F16F32, AR_FK16>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    matrix_f16_f16(const unsigned short* A, const unsigned short* B, unsigned short* C, unsigned long long n) {
  ar_tile<F16F16, AR_FK16>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    matrix_s8_s32(const signed char* A, const signed char* B, int* C, unsigned long long n) {
  ar_tile<S8S32, AR_FK8>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    matrix_bf16_f32(const unsigned short* A, const unsigned short* B, float* C, unsigned long long n) {
  ar_tile<BF16F32, AR_FK16>(A, B, C, n);
}
