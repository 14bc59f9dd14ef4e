// The dispatch-latency study's kernels (issue 5): what one launch costs when the work is nothing.
// The Metal twins are shaders/metal/dispatch.metal; the CPU twins native/cpu/kernels.cpp's
// dispatch_null and dispatch_tiny.
//
// Compiled at run time with NVRTC (-DBLOCK=threads per block). Arguments by core/backend.h's
// convention, the work-item count n last.
//  * dispatch_null: launched with n = 1 (one block of one thread's worth of work); touches no memory.
//  * dispatch_tiny: launched with n = 256 (one block of BLOCK = 256 threads); each thread adds 1 to
//    one float4 of x, so one launch reads and writes 4 KiB. After k launches on a zeroed x every
//    element is k: that is how the study validates it.
//  * dispatch_null_stamp, dispatch_tiny_stamp (CUDA only): the same work, plus thread 0 of block 0
//    writes %globaltimer (PTX ISA: "a predefined, 64-bit global nanosecond timer") into t[0] on
//    entry. The CUDA backend's Kernel::timeline maps that instant onto the host clock to measure the
//    start latency. MSL has no clock a kernel can read: on Metal the start is the command buffer's
//    GPUStartTime, so these have no Metal twin.

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)

__device__ __forceinline__ void ar_tiny(float4* __restrict__ x, unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  float4 v = x[i];
  v.x += 1.0f;
  v.y += 1.0f;
  v.z += 1.0f;
  v.w += 1.0f;
  x[i] = v;
}

__device__ __forceinline__ void ar_stamp(unsigned long long* t) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    t[0] = now;
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK) dispatch_null(unsigned long long n) {}

extern "C" __global__ void __launch_bounds__(BLOCK) dispatch_tiny(float4* __restrict__ x, unsigned long long n) {
  ar_tiny(x, n);
}

extern "C" __global__ void __launch_bounds__(BLOCK) dispatch_null_stamp(unsigned long long* t, unsigned long long n) {
  ar_stamp(t);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dispatch_tiny_stamp(unsigned long long* t, float4* __restrict__ x, unsigned long long n) {
  ar_stamp(t);
  ar_tiny(x, n);
}
