// The dispatch-latency study's kernels (issue 5): what one launch costs when the work is nothing.
// The CUDA twins are shaders/cuda/dispatch.cu (same names, arguments and operations); the CPU twins
// native/cpu/kernels.cpp's dispatch_null and dispatch_tiny.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0, safe math). Arguments at
// [[buffer(i)]] by core/backend.h's convention, the work-item count n last.
//  * dispatch_null: dispatched with n = 1 thread; touches no memory.
//  * dispatch_tiny: dispatched with n = 256 threads (one threadgroup of BLOCK = 256); each thread
//    adds 1 to one float4 of x, so one dispatch reads and writes 4 KiB. After k dispatches on a
//    zeroed x every element is k: that is how the study validates it.
// The start of the GPU work is the command buffer's GPUStartTime (MSL has no clock a kernel can
// read), so dispatch.cu's *_stamp kernels have no twin here.

#include <metal_stdlib>
using namespace metal;

kernel void dispatch_null(constant ulong& n [[buffer(0)]], uint i [[thread_position_in_grid]]) {}

kernel void dispatch_tiny(device float4* x [[buffer(0)]], constant ulong& n [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  float4 v = x[i];
  v.x += 1.0f;
  v.y += 1.0f;
  v.z += 1.0f;
  v.w += 1.0f;
  x[i] = v;
}
