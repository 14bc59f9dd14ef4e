// STREAM copy, scale, add and triad on fp32 arrays, one float4 (16 B) per thread
// (docs/design/measurement.md, "Counting FLOPs and bytes").
// The CUDA twins are shaders/cuda/stream.cu (same names, same arguments, same operations); the CPU
// twins native/cpu/kernels.cpp's stream_*_f32.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0, safe math). Arguments, bound at
// [[buffer(i)]] in the order the suite passes them (core/backend.h): the three arrays a, b, c
// (device float4*), q (constant float&: the backend rounds the double to fp32, as stream.cu's
// (float)q does), then the number of float4 work items n (constant ulong&). The backend dispatches
// exactly n threads (dispatchThreads); the guard mirrors CUDA's. Bytes per element: copy and scale 8,
// add and triad 12; FLOPs 0, 1, 1, 2.

#include <metal_stdlib>
using namespace metal;

kernel void stream_copy_f32(device float4* a [[buffer(0)]], device float4* b [[buffer(1)]],
                            device float4* c [[buffer(2)]], constant float& q [[buffer(3)]],
                            constant ulong& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  c[i] = a[i];  // c = a
}

kernel void stream_scale_f32(device float4* a [[buffer(0)]], device float4* b [[buffer(1)]],
                             device float4* c [[buffer(2)]], constant float& q [[buffer(3)]],
                             constant ulong& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  const float s = q;
  const float4 v = c[i];  // b = q·c
  b[i] = float4(s * v.x, s * v.y, s * v.z, s * v.w);
}

kernel void stream_add_f32(device float4* a [[buffer(0)]], device float4* b [[buffer(1)]],
                           device float4* c [[buffer(2)]], constant float& q [[buffer(3)]],
                           constant ulong& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  const float4 x = a[i], y = b[i];  // c = a + b
  c[i] = float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

kernel void stream_triad_f32(device float4* a [[buffer(0)]], device float4* b [[buffer(1)]],
                             device float4* c [[buffer(2)]], constant float& q [[buffer(3)]],
                             constant ulong& n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  const float s = q;
  const float4 x = b[i], y = c[i];  // a = b + q·c, one explicit FMA per lane (as stream.cu's fmaf)
  a[i] = float4(fma(s, y.x, x.x), fma(s, y.y, x.y), fma(s, y.z, x.z), fma(s, y.w, x.w));
}
