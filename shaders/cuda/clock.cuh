// The prelude every timed kernel of shaders/cuda includes: the effective SM clock, read by the
// kernels themselves (docs/design.md, "Clocks"). NVRTC gets it inlined where the source includes it
// (apple_roofline.shaders.resolve); nvcc finds it beside the file.
//
// Thread 0 of each of the first AR_CLOCK_BLOCKS blocks of a launch reads %clock64 (the SM's cycle
// counter) and %globaltimer (the GPU's nanosecond timer) at the kernel's entry, keeps them in
// `ar_clock.entry` (global memory, so no register stays live through the kernel), reads both again
// at the kernel's exit (the probe's destructor: every return) and adds the differences to the
// current sample's slot of `ar_clock.sums`. The module global `ar_clock` is the backend's
// (native/cuda/cuda_backend.cpp, ClockSlots): it zeroes the sums before the timed samples, sets
// `slot` on the stream before each sample and reads the sums after the last, so a sample's effective
// clock is its probes' cycles / nanoseconds. The kernel's arguments, FLOPs, bytes and outputs are
// those without the probe; -DAR_CLOCK_PROBE=0 compiles it out (bench/bench_clock.py times both).
#pragma once

#ifndef AR_CLOCK_PROBE
#define AR_CLOCK_PROBE 1
#endif
// Probed blocks per launch, and sample slots (native/cuda/cuda_backend.cpp's kClockBlocks / kClockSlots).
#define AR_CLOCK_BLOCKS 4
#define AR_CLOCK_SLOTS 64

struct ArClock {
  unsigned long long slot;                       // the current sample's slot, set by the backend
  unsigned long long entry[AR_CLOCK_BLOCKS][2];  // per probed block: %clock64, %globaltimer at entry
  unsigned long long sums[AR_CLOCK_SLOTS][3];    // per slot: cycles, nanoseconds, probes
};

#if AR_CLOCK_PROBE
__device__ ArClock ar_clock;

__device__ __forceinline__ bool ar_clock_prober() { return threadIdx.x == 0 && blockIdx.x < AR_CLOCK_BLOCKS; }

// Both counters in one asm statement, so nothing is scheduled between the two reads.
__device__ __forceinline__ void ar_clock_read(unsigned long long& cycles, unsigned long long& ns) {
  asm volatile("mov.u64 %0, %%clock64;\n\tmov.u64 %1, %%globaltimer;" : "=l"(cycles), "=l"(ns) :: "memory");
}

struct ArClockProbe {
  __device__ __forceinline__ ArClockProbe() {
    if (!ar_clock_prober()) return;
    unsigned long long c, t;
    ar_clock_read(c, t);
    volatile unsigned long long* e = ar_clock.entry[blockIdx.x];
    e[0] = c;
    e[1] = t;
  }
  __device__ __forceinline__ ~ArClockProbe() {
    if (!ar_clock_prober()) return;
    unsigned long long c, t;
    ar_clock_read(c, t);
    volatile unsigned long long* e = ar_clock.entry[blockIdx.x];
    const unsigned long long slot = *(volatile unsigned long long*)&ar_clock.slot % AR_CLOCK_SLOTS;
    atomicAdd(&ar_clock.sums[slot][0], c - e[0]);
    atomicAdd(&ar_clock.sums[slot][1], t - e[1]);
    atomicAdd(&ar_clock.sums[slot][2], 1ull);
  }
};
// The first statement of a timed kernel (or of the device function every entry of a file calls).
#define AR_CLOCK_PROBE_HERE() ArClockProbe ar_clock_probe_
#else
#define AR_CLOCK_PROBE_HERE() ((void)0)
#endif
