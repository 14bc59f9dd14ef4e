// The prelude every timed kernel of shaders/cuda includes: the effective SM clock, read by the
// kernels themselves (docs/design/clocks.md, "Clocks"). NVRTC gets it inlined where the source includes it
// (apple_roofline.shaders.resolve); nvcc finds it beside the file.
//
// The backend compiles each kernel twice (native/cuda/cuda_backend.cpp): with -DAR_CLOCK_PROBE=0
// for the timed samples, which therefore carry no probe at all, and with -DAR_CLOCK_PROBE=1 (and the
// entry renamed <entry>__ar_clock) for separate probed launches between the samples. In a probed
// launch thread 0 of every block reads %clock64 (its SM's cycle counter) and %globaltimer (the GPU's
// nanosecond timer) at entry and at exit (the probe's destructor: every return), and keeps, per SM
// (%smid), the earliest entry and the latest exit of the launch in the current slot of `ar_clock`
// (atomicMin / atomicMax). So each SM yields one window, from its first block's start to its last
// block's end: the launch as that SM saw it, as long as the launch lasts on it (not one block, whose
// few hundred ns a 32 ns timer step would distort), and the clock is Σ cycles / Σ ns over the SMs'
// windows: what Nsight Compute's sm__cycles_elapsed.avg.per_second is over the kernel's duration.
// The backend (ClockSlots, native/cuda/clock_probe.cpp) resets the slots before a time() call, sets
// `slot` on the stream before each probed launch and reads the windows after the last sample.
#pragma once

#ifndef AR_CLOCK_PROBE
#define AR_CLOCK_PROBE 1
#endif
// Slots (probed launches per time() call) and SMs (%smid values) the windows are kept for
// (native/cuda/device.h's kClockSlots / kClockSms).
#define AR_CLOCK_SLOTS 64
#define AR_CLOCK_SMS 256

struct ArClock {
  unsigned long long slot;                                    // the current probed launch's slot
  unsigned long long first[AR_CLOCK_SLOTS][AR_CLOCK_SMS][2];  // per SM: min %clock64, min %globaltimer at entry
  unsigned long long last[AR_CLOCK_SLOTS][AR_CLOCK_SMS][2];   // per SM: max %clock64, max %globaltimer at exit
};

#if AR_CLOCK_PROBE
__device__ ArClock ar_clock;

// %smid, %clock64 and %globaltimer in one asm statement, so nothing is scheduled between the reads.
__device__ __forceinline__ void ar_clock_read(unsigned& sm, unsigned long long& cycles, unsigned long long& ns) {
  asm volatile("mov.u32 %0, %%smid;\n\tmov.u64 %1, %%clock64;\n\tmov.u64 %2, %%globaltimer;"
               : "=r"(sm), "=l"(cycles), "=l"(ns)::"memory");
}

struct ArClockProbe {
  __device__ __forceinline__ ArClockProbe() {
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
    unsigned sm;
    unsigned long long c, t;
    ar_clock_read(sm, c, t);
    if (sm >= AR_CLOCK_SMS) return;
    const unsigned long long slot = *(volatile unsigned long long*)&ar_clock.slot % AR_CLOCK_SLOTS;
    atomicMin(&ar_clock.first[slot][sm][0], c);
    atomicMin(&ar_clock.first[slot][sm][1], t);
  }
  __device__ __forceinline__ ~ArClockProbe() {
    if (threadIdx.x != 0 || threadIdx.y != 0 || threadIdx.z != 0) return;
    unsigned sm;
    unsigned long long c, t;
    ar_clock_read(sm, c, t);
    if (sm >= AR_CLOCK_SMS) return;
    const unsigned long long slot = *(volatile unsigned long long*)&ar_clock.slot % AR_CLOCK_SLOTS;
    atomicMax(&ar_clock.last[slot][sm][0], c);
    atomicMax(&ar_clock.last[slot][sm][1], t);
  }
};
// The first statement of a timed kernel (or of the device function every entry of a file calls).
#define AR_CLOCK_PROBE_HERE() ArClockProbe ar_clock_probe_
#else
#define AR_CLOCK_PROBE_HERE() ((void)0)
#endif
