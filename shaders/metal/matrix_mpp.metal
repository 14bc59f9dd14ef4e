// Tile products of the matrix suite on the Neural Accelerators (M5, A19) through Metal 4's Performance
// Primitives: mpp::tensor_ops::matmul2d (python/apple_roofline/suites/matrix/kernels.py documents the
// sweep, the inputs and the NumPy reference). One work group is one simdgroup, the operation's
// execution scope (execution_simdgroup). The twins are shaders/cuda/matrix.cu and
// shaders/metal/matrix.metal: the same entries (mpp_ for matrix_), arguments and tile product.
//
// MSL 4.0 (macOS 26): the backend compiles a source that defines AR_MSL_VERSION_4_0 with language
// version 4.0 (native/metal/compile.mm), and the suite runs it only on Apple10-family GPUs. TM, TN,
// TK, ITERS and REPS are macros the suite prepends to this text: matmul2d_descriptor is a template
// argument, which function constants cannot be. Arguments: A (TM x TK, row-major), B (TK x TN,
// row-major), C (TM x TN per simdgroup), n (work items, a multiple of 32).
//
//   per simdgroup: A, B as tensors over the (cache-resident) buffers; a cooperative destination
//   tensor zeroed; ITERS x REPS times: run (multiply_accumulate: C += A * B); store C
//
// Written against MetalPerformancePrimitives/MPPTensorOpsMatMul2d.h (macOS 26 SDK): the descriptor
// matmul2d_descriptor(m, n, k, transpose_left, transpose_right, relaxed_precision, mode); tensor
// extents are (columns, rows), the innermost first; tensor_inline tensors over device pointers; the
// destination cooperative tensor from get_destination_cooperative_tensor; "all the threads in this
// execution scope must enter the run method". The cooperative tensor's elements are guarded with
// is_valid_element(i) over get_capacity(), as public Metal 4 kernels guard them (the header's own
// example calls a get_mask that those kernels never use; tests/unit/test_metal_shaders.py holds
// the members named here to those). The header's pairs used here: half x half -> float and half,
// int8_t x int8_t -> int32_t, bfloat x bfloat -> float; the last is absent from macOS 26.0's table, so
// mpp_bf16_f32 is declared only where the backend defines AR_MPP_BFLOAT (macOS 26.1 and later,
// native/core/metal_rules.h, mpp_bfloat). relaxed_precision is false: the result must equal the
// exact reference.

#define AR_MSL_VERSION_4_0 1
#include <metal_stdlib>
#include <metal_tensor>
// after the two it builds on (its own block: clang-format sorts within a block, capitals first)
#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>
using namespace metal;
using namespace mpp::tensor_ops;

template <typename T, typename Acc>
inline void ar_mpp_tile(const device T* A, const device T* B, device Acc* C, ulong n, uint i) {
  const ulong group = i / 32;
  if (group * 32 >= n) return;  // whole simdgroups leave together: run is scope-uniform
  typedef tensor<device T, dextents<int32_t, 2>, tensor_inline> In;
  typedef tensor<device Acc, dextents<int32_t, 2>, tensor_inline> Out;
  In tA(const_cast<device T*>(A), dextents<int32_t, 2>(TK, TM));
  In tB(const_cast<device T*>(B), dextents<int32_t, 2>(TN, TK));
  Out tC(C + group * ulong(TM * TN), dextents<int32_t, 2>(TN, TM));
  constexpr auto desc =
      matmul2d_descriptor(TM, TN, TK, false, false, false, matmul2d_descriptor::mode::multiply_accumulate);
  matmul2d<desc, execution_simdgroup> op;
  auto c = op.template get_destination_cooperative_tensor<decltype(tA), decltype(tB), Acc>();
#pragma unroll full
  for (uint16_t e = 0; e < c.get_capacity(); ++e)
    if (c.is_valid_element(e)) c[e] = Acc(0);
  for (int it = 0; it < ITERS; ++it)
    for (int rep = 0; rep < REPS; ++rep) op.run(tA, tB, c);
  c.store(tC);
}

kernel void mpp_f16_f32(const device half* A [[buffer(0)]], const device half* B [[buffer(1)]],
                        device float* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                        uint i [[thread_position_in_grid]]) {
  ar_mpp_tile<half, float>(A, B, C, n, i);
}

kernel void mpp_f16_f16(const device half* A [[buffer(0)]], const device half* B [[buffer(1)]],
                        device half* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                        uint i [[thread_position_in_grid]]) {
  ar_mpp_tile<half, half>(A, B, C, n, i);
}

kernel void mpp_s8_s32(const device int8_t* A [[buffer(0)]], const device int8_t* B [[buffer(1)]],
                       device int* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
  ar_mpp_tile<int8_t, int>(A, B, C, n, i);
}

#if defined(AR_MPP_BFLOAT)
kernel void mpp_bf16_f32(const device bfloat* A [[buffer(0)]], const device bfloat* B [[buffer(1)]],
                         device float* C [[buffer(2)]], constant ulong& n [[buffer(3)]],
                         uint i [[thread_position_in_grid]]) {
  ar_mpp_tile<bfloat, float>(A, B, C, n, i);
}
#endif
