// STREAM copy, scale, add and triad on fp32 arrays, one float4 (16 B) per thread
// (docs/design/measurement.md, "Counting FLOPs and bytes").
// The CPU twins are native/cpu/kernels.cpp's stream_*_f32; the Metal twins shaders/metal/stream.metal.
//
// Compiled at run time with NVRTC (-DBLOCK=threads per block). Arguments, as the backend passes
// them (core/backend.h): the three arrays a, b, c (device pointers), q (double), then the number
// of float4 work items n. Bytes per element: copy and scale 8, add and triad 12; FLOPs 0, 1, 1, 2.

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)

extern "C" __global__ void __launch_bounds__(BLOCK)
    stream_copy_f32(float4* __restrict__ a, float4* __restrict__ b, float4* __restrict__ c, double q,
                    unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) c[i] = a[i];  // c = a
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    stream_scale_f32(float4* __restrict__ a, float4* __restrict__ b, float4* __restrict__ c, double q,
                     unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  const float s = (float)q;
  if (i < n) {  // b = q·c
    const float4 v = c[i];
    b[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    stream_add_f32(float4* __restrict__ a, float4* __restrict__ b, float4* __restrict__ c, double q,
                   unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) {  // c = a + b
    const float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    stream_triad_f32(float4* __restrict__ a, float4* __restrict__ b, float4* __restrict__ c, double q,
                     unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  const float s = (float)q;
  if (i < n) {  // a = b + q·c (contracted to one FMA per lane, as on the CPU and in Metal)
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(fmaf(s, y.x, x.x), fmaf(s, y.y, x.y), fmaf(s, y.z, x.z), fmaf(s, y.w, x.w));
  }
}
