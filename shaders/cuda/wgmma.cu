// Tile products of the matrix suite on Hopper tensor cores through wgmma (PTX ISA 8.0+, sm_90a):
// python/apple_roofline/suites/matrix/kernels.py documents the sweep, the inputs and the NumPy
// reference every output is checked against; shaders/cuda/matrix.cu is the mma.sync path of one warp
// (twin of the Metal simdgroup_matrix kernels). wgmma has no Metal twin: it is Hopper's own
// instruction, measured beside mma.sync on sm_90a GPUs only.
//
// One work group is one warpgroup: 4 consecutive warps, 128 threads, starting at a warp index
// divisible by 4 (BLOCK is a multiple of 128, so every warpgroup lies inside one block).
// Compiled at run time with NVRTC for the arch-specific target sm_90a (the backend's compile
// constant AR_ARCH_SPECIFIC, native/cuda/compile.cpp): -DTM (64: wgmma's M), -DTN (64, 128 or 256:
// the instruction's N), -DTK (a multiple of the instruction's K: 16 for f16/bf16, 32 for s8 and the
// FP8 types e4m3 and e5m2),
// -DITERS, -DREPS (the chain is ITERS x REPS multiply-accumulates of the tile), -DBLOCK (threads per
// block, a multiple of 128), -DWG_BATCH (repetition blocks per commit group, dividing REPS; default
// REPS), -DWG_INFLIGHT (commit groups left in flight while the next is issued: 0 or 1; default 0).
// Arguments: A (TM x TK, row-major), B (TK x TN, row-major), C (TM x TN per warpgroup, row-major,
// warpgroup g's tile at g * TM * TN), then the number of work items n (a multiple of 128).
//
//   per block: load A, B once into shared memory (canonical layout below);
//   per warpgroup: ITERS x REPS times: D += A * B (TK / KSTEP wgmma each);  store D
//
// Every warpgroup of a block reads the same shared tiles (the block's copy of the small global A and
// B; the suite launches one warpgroup per block) into its own accumulators; the tiles stay in shared
// memory for the whole chain, so the kernel is bound by the tensor cores, not by memory.
//
// Shared-memory layout (PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout", no
// swizzle, K-major): A (TM x TK) and B transposed (TN x TK: B's column n is row n) are cut into core
// matrices of 8 rows x 16 bytes (128 contiguous bytes, row r of the core matrix at 16 r). With
// KB = TK * sizeof(element) bytes per row, element (row, k) is at byte
//     (row / 8) * SBO + (k_byte / 16) * LBO + (row % 8) * 16 + k_byte % 16,   k_byte = k * sizeof
// with LBO = 128 (the leading dimension byte offset: between core matrices adjacent in K) and
// SBO = 8 * KB (the stride dimension byte offset: between core matrices adjacent in M or N). One
// wgmma reads 32 bytes of K (k16 of 16-bit inputs, k32 of s8, e4m3, e5m2): step s starts 256 s bytes
// further.
// Matrix descriptor (64 bits, PTX ISA "Matrix Descriptor Format"): bits 0-13 start address >> 4,
// 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset (0), 62-63 swizzle mode (0: none).
//
// Accumulator fragment (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts", wgmma D of
// m64nNk16 / m64nNk32): warp w of the warpgroup holds rows 16 w .. 16 w + 15; with lane t, element
// i (of N / 2 per thread) is row 16 w + t / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4) + i % 2.
// An f16 accumulator packs elements 2 j, 2 j + 1 in register j, the lower index in the low half.
// tests/shader_twins.py models the layout, the descriptor and this fragment in NumPy, and
// tests/unit/test_matrix.py holds the model to the PTX ISA (docs/design/matrix.md, "Matrix units").
//
// WG_SWAP_LBO_SBO=1 swaps the two offsets in the descriptors: a wrong layout the check must reject
// (tests/backend/test_matrix_kernels.py runs it on Hopper GPUs).

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "wgmma needs the arch-specific target sm_90a (compile for a Hopper GPU with --gpu-architecture=sm_90a)"
#endif
#ifndef TM
#define TM 64
#endif
#if TM != 64
#error "wgmma tiles have TM = 64 rows"
#endif
#ifndef TN
#error "compile with -DTN=<tile columns: 64, 128 or 256>"
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
#ifndef WG_BATCH
#define WG_BATCH REPS
#endif
#ifndef WG_INFLIGHT
#define WG_INFLIGHT 0
#endif
#ifndef WG_SWAP_LBO_SBO
#define WG_SWAP_LBO_SBO 0
#endif
#if BLOCK % 128 != 0
#error "BLOCK must be a multiple of 128 (whole warpgroups)"
#endif
#if REPS % WG_BATCH != 0
#error "WG_BATCH must divide REPS"
#endif

typedef unsigned long long wg_u64;

// ---- layout, descriptor and fragment indices (host and device) --------------------------------------

// Byte offset of element (row, byte kb of its row) in the canonical no-swizzle K-major layout of a
// tile with kbytes bytes per row.
__host__ __device__ inline unsigned wg_offset(int row, int kb, int kbytes) {
  return (unsigned)((row >> 3) * (kbytes * 8) + (kb >> 4) * 128 + (row & 7) * 16 + (kb & 15));
}
// The matrix descriptor of a tile at shared address addr (no swizzle, base offset 0).
__host__ __device__ inline wg_u64 wg_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return (wg_u64)((addr & 0x3FFFF) >> 4) | ((wg_u64)((lbo >> 4) & 0x3FFF) << 16) |
         ((wg_u64)((sbo >> 4) & 0x3FFF) << 32);
}
// Accumulator element i of lane t in warp w of the warpgroup: row and column of the 64 x N tile.
__host__ __device__ inline int wg_c_row(int w, int t, int i) { return 16 * w + (t >> 2) + 8 * ((i >> 1) & 1); }
__host__ __device__ inline int wg_c_col(int t, int i) { return 8 * (i >> 2) + 2 * (t & 3) + (i & 1); }

// ---- one wgmma per precision and N ---------------------------------------------------------------------
// The accumulator is an array d of NREG registers; the asm operands name each one (read-write), so
// the chain stays in registers and every wgmma reads what the previous one wrote.

// clang-format off: the PTX operand lists sixteen to a line and the asm template of WG_MMA as PTX reads;
// clang-format would split the template between string pieces and fold the lists.
#define WG_D16 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15"
#define WG_D32 WG_D16 ",%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define WG_D64 WG_D32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47" \
  ",%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define WG_D128 WG_D64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79" \
  ",%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95" \
  ",%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111" \
  ",%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define WG_X16 "%16, %17"
#define WG_P16 "%18"
#define WG_X32 "%32, %33"
#define WG_P32 "%34"
#define WG_X64 "%64, %65"
#define WG_P64 "%66"
#define WG_X128 "%128, %129"
#define WG_P128 "%130"
#define WG_O8(C, i) C(d[(i)]), C(d[(i) + 1]), C(d[(i) + 2]), C(d[(i) + 3]), C(d[(i) + 4]), C(d[(i) + 5]), \
                    C(d[(i) + 6]), C(d[(i) + 7])
#define WG_O16(C, i) WG_O8(C, i), WG_O8(C, (i) + 8)
#define WG_O32(C, i) WG_O16(C, i), WG_O16(C, (i) + 16)
#define WG_O64(C, i) WG_O32(C, i), WG_O32(C, (i) + 32)
#define WG_O128(C, i) WG_O64(C, i), WG_O64(C, (i) + 64)

// scale-d is the predicate p (1: D = A B + D); TAIL: imm-scale-a, imm-scale-b (1: no negation) where
// the type takes them (not s8) and imm-trans-a, imm-trans-b (0: both K-major) where it takes those
// too (f16, bf16; the FP8 types are K-major only).
#define WG_MMA(OP, N, NR, C, INSTR, TAIL)                                                              \
  template <> __device__ inline void OP<N>::mma(Reg* d, wg_u64 a, wg_u64 b) {                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " WG_P##NR ", 0;\n" INSTR " {" WG_D##NR "}, " WG_X##NR \
                 ", p" TAIL ";\n}\n"                                                                   \
                 : WG_O##NR(C, 0)                                                                      \
                 : "l"(a), "l"(b), "r"(1));                                                            \
  }
// clang-format on

template <int N>
struct WgF16F32 {
  typedef unsigned short T;
  typedef float Acc;
  typedef float Reg;
  static const int KSTEP = 16, NREG = N / 2;
  __device__ static inline void mma(Reg* d, wg_u64 a, wg_u64 b);
  __device__ static inline Acc out(const Reg* d, int i) { return d[i]; }
};
template <int N>
struct WgBF16F32 {
  typedef unsigned short T;
  typedef float Acc;
  typedef float Reg;
  static const int KSTEP = 16, NREG = N / 2;
  __device__ static inline void mma(Reg* d, wg_u64 a, wg_u64 b);
  __device__ static inline Acc out(const Reg* d, int i) { return d[i]; }
};
template <int N>
struct WgF16F16 {
  typedef unsigned short T;
  typedef unsigned short Acc;
  typedef unsigned Reg;
  static const int KSTEP = 16, NREG = N / 4;
  __device__ static inline void mma(Reg* d, wg_u64 a, wg_u64 b);
  __device__ static inline Acc out(const Reg* d, int i) { return (unsigned short)(d[i >> 1] >> (16 * (i & 1))); }
};
template <int N>
struct WgS8S32 {
  typedef signed char T;
  typedef int Acc;
  typedef int Reg;
  static const int KSTEP = 32, NREG = N / 2;
  __device__ static inline void mma(Reg* d, wg_u64 a, wg_u64 b);
  __device__ static inline Acc out(const Reg* d, int i) { return d[i]; }
};
// FP8 inputs (one byte each: the OCP 8-bit formats E4M3 and E5M2) into FP32 accumulators: one
// layout, one instruction per format.
template <int N>
struct WgFp8F32 {
  typedef unsigned char T;
  typedef float Acc;
  typedef float Reg;
  static const int KSTEP = 32, NREG = N / 2;
  __device__ static inline Acc out(const Reg* d, int i) { return d[i]; }
};
template <int N>
struct WgE4M3F32 : WgFp8F32<N> {
  __device__ static inline void mma(float* d, wg_u64 a, wg_u64 b);
};
template <int N>
struct WgE5M2F32 : WgFp8F32<N> {
  __device__ static inline void mma(float* d, wg_u64 a, wg_u64 b);
};

#define WG_F16 ", 1, 1, 0, 0"
WG_MMA(WgF16F32, 64, 32, "+f", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16", WG_F16)
WG_MMA(WgF16F32, 128, 64, "+f", "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", WG_F16)
WG_MMA(WgF16F32, 256, 128, "+f", "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", WG_F16)
WG_MMA(WgBF16F32, 64, 32, "+f", "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", WG_F16)
WG_MMA(WgBF16F32, 128, 64, "+f", "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", WG_F16)
WG_MMA(WgBF16F32, 256, 128, "+f", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", WG_F16)
WG_MMA(WgF16F16, 64, 16, "+r", "wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16", WG_F16)
WG_MMA(WgF16F16, 128, 32, "+r", "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16", WG_F16)
WG_MMA(WgF16F16, 256, 64, "+r", "wgmma.mma_async.sync.aligned.m64n256k16.f16.f16.f16", WG_F16)
WG_MMA(WgS8S32, 64, 32, "+r", "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8", "")
WG_MMA(WgS8S32, 128, 64, "+r", "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", "")
WG_MMA(WgS8S32, 256, 128, "+r", "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", "")
#define WG_FP8 ", 1, 1"
WG_MMA(WgE4M3F32, 64, 32, "+f", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3", WG_FP8)
WG_MMA(WgE4M3F32, 128, 64, "+f", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", WG_FP8)
WG_MMA(WgE4M3F32, 256, 128, "+f", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", WG_FP8)
WG_MMA(WgE5M2F32, 64, 32, "+f", "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2", WG_FP8)
WG_MMA(WgE5M2F32, 128, 64, "+f", "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2", WG_FP8)
WG_MMA(WgE5M2F32, 256, 128, "+f", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2", WG_FP8)

// An empty asm that reads and writes one accumulator register: keeps the compiler from moving
// accesses to it across wgmma.fence / wgmma.wait_group.
__device__ inline void wg_touch(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ inline void wg_touch(unsigned& r) { asm volatile("" : "+r"(r)::"memory"); }
__device__ inline void wg_touch(int& r) { asm volatile("" : "+r"(r)::"memory"); }

// The shared-state-space address of a generic pointer into shared memory (what descriptors hold).
__device__ inline unsigned wg_smem_addr(const void* p) {
  unsigned a;
  asm("{\n.reg .u64 t;\ncvta.to.shared.u64 t, %1;\ncvt.u32.u64 %0, t;\n}\n" : "=r"(a) : "l"(p));
  return a;
}

// The tile product of one warpgroup (module comment).
template <template <int> class P>
__device__ inline void wg_tile(const void* A_, const void* B_, void* C_, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();  // clock.cuh: every entry of this file runs this function
  typedef P<TN> Op;
  typedef typename Op::T T;
  const int KB = TK * (int)sizeof(T);  // bytes of one row of A and of B transposed
  const int KSTEPS = TK / Op::KSTEP;
  __shared__ __align__(128) unsigned char sa[TM * TK * sizeof(T)];
  __shared__ __align__(128) unsigned char sb[TN * TK * sizeof(T)];
  const T* A = (const T*)A_;
  const T* B = (const T*)B_;
  for (int idx = threadIdx.x; idx < TM * TK; idx += BLOCK)
    *(T*)(sa + wg_offset(idx / TK, (idx % TK) * (int)sizeof(T), KB)) = A[idx];
  for (int idx = threadIdx.x; idx < TK * TN; idx += BLOCK)  // B[k][n] -> row n, column k of B transposed
    *(T*)(sb + wg_offset(idx % TN, (idx / TN) * (int)sizeof(T), KB)) = B[idx];
  // Generic-proxy writes made visible to the async proxy that wgmma reads shared memory through.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned long long wg = (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x) / 128;
  if (wg * 128 >= n) return;        // whole warpgroups: n is a multiple of 128
  if (TK % Op::KSTEP != 0) return;  // a shape the suite skips: nothing written, the check fails
  const unsigned lbo = WG_SWAP_LBO_SBO ? 8u * KB : 128u, sbo = WG_SWAP_LBO_SBO ? 128u : 8u * KB;
  const unsigned a0 = wg_smem_addr(sa), b0 = wg_smem_addr(sb);
  wg_u64 da[KSTEPS > 0 ? KSTEPS : 1], db[KSTEPS > 0 ? KSTEPS : 1];
#pragma unroll
  for (int s = 0; s < KSTEPS; ++s) {
    da[s] = wg_desc(a0 + 256u * s, lbo, sbo);
    db[s] = wg_desc(b0 + 256u * s, lbo, sbo);
  }
  typename Op::Reg d[Op::NREG];
#pragma unroll
  for (int i = 0; i < Op::NREG; ++i) {
    d[i] = 0;
    wg_touch(d[i]);
  }
  // The chain: wgmma.fence, WG_BATCH x KSTEPS wgmma into the same accumulator (ordered by the
  // hardware: same registers, same shape), commit the group, wait for it; ITERS x REPS / WG_BATCH times.
#pragma unroll 1
  for (int it = 0; it < ITERS * (REPS / WG_BATCH); ++it) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int rep = 0; rep < WG_BATCH; ++rep)
#pragma unroll
      for (int s = 0; s < KSTEPS; ++s) Op::mma(d, da[s], db[s]);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(WG_INFLIGHT) : "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
  for (int i = 0; i < Op::NREG; ++i) wg_touch(d[i]);
  const int w = (threadIdx.x >> 5) & 3, t = threadIdx.x & 31;
  typename Op::Acc* out = (typename Op::Acc*)C_ + wg * (unsigned long long)(TM * TN);
#pragma unroll
  for (int i = 0; i < TN / 2; ++i) out[wg_c_row(w, t, i) * TN + wg_c_col(t, i)] = Op::out(d, i);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_f16_f32(const unsigned short* A, const unsigned short* B, float* C, unsigned long long n) {
  wg_tile<WgF16F32>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_f16_f16(const unsigned short* A, const unsigned short* B, unsigned short* C, unsigned long long n) {
  wg_tile<WgF16F16>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_s8_s32(const signed char* A, const signed char* B, int* C, unsigned long long n) {
  wg_tile<WgS8S32>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_bf16_f32(const unsigned short* A, const unsigned short* B, float* C, unsigned long long n) {
  wg_tile<WgBF16F32>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_e4m3_f32(const unsigned char* A, const unsigned char* B, float* C, unsigned long long n) {
  wg_tile<WgE4M3F32>(A, B, C, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    wgmma_e5m2_f32(const unsigned char* A, const unsigned char* B, float* C, unsigned long long n) {
  wg_tile<WgE5M2F32>(A, B, C, n);
}
