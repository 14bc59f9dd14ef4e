// The hierarchy suite's built-in CPU kernels, the twins of shaders/cuda/hierarchy.cu and
// shaders/metal/hierarchy.metal (python/apple_roofline/suites/hierarchy/suite.py holds the NumPy
// references; docs/design/hierarchy.md, "The memory hierarchy"). The working set is n 16-byte words (four
// uint32 each); a launch has T work items (lanes, KernelArgs::items), PASSES passes (the constant PASSES,
// KernelArgs::passes) and the scalar argument n.
//
// The GPU kernels interleave their lanes (lane t reads words t, t + T, ...) so that a warp's loads
// coalesce; here lane t owns the contiguous words [t·E, (t+1)·E) (mod n), E = ceil(n / T) (the
// suite makes n a multiple of T on the CPU's few lanes), and the thread pool gives each worker a
// contiguous run of lanes: each
// thread sweeps its own slice of the working set (a worker runs its lanes one after another, all
// PASSES passes of each; the suite launches one lane per thread), so a level's capacity is the sum of
// the cores' private caches (and the shared cache's size). The passes never rotate (ROTATE = 0).
// What every lane accumulates differs from the GPU's, the sum over lanes does not: each pass reads
// every word once, and that sum is what the suite checks.
//
//   hier_read  acc += word over the lane's words, PASSES passes (uint32 per component, wrapping);
//              out[t] = acc
//   hier_rmw   acc += word; word ^= 0x5A5A5A5A, PASSES passes (PASSES even: the slice ends as it began)
//
// Compiled with the same flags as kernels.cpp (the host's widest vector ISA) and, like it, free of
// standard-library containers and strings. A compiler barrier ends every pass, so no pass's loads
// are merged with the next one's.
#include <cstdint>

#include "kernels.h"
#include "simd.h"

namespace ar::cpu {

namespace {

constexpr int kLanes = kSimdBytes / 4;  // uint32 per vector: a multiple of 4, so lane j holds component j % 4
constexpr int kAcc = 4;                 // independent accumulators: loads in flight per core
constexpr uint32_t kMask = 0x5A5A5A5Au;
typedef uint32_t VecU __attribute__((vector_size(kSimdBytes)));

inline void pass_barrier() { __asm__ __volatile__("" ::: "memory"); }

// Adds the count words (4·count uint32) at p into the vector accumulators a and the scalar ones s
// by component; with RMW, each word is written back xor kMask after it is read.
template <bool RMW>
inline void block(uint32_t* p, uint64_t count, VecU* a, uint32_t* s) {
  const uint64_t total = 4 * count;
  const uint64_t body = total - total % uint64_t(kAcc * kLanes);
  const VecU mask = VecU{} + kMask;
  for (uint64_t i = 0; i < body; i += uint64_t(kAcc * kLanes)) {
    for (int j = 0; j < kAcc; ++j) {
      const VecU v = simd_load<VecU>(p + i + j * kLanes);
      a[j] += v;
      if (RMW) simd_store(p + i + j * kLanes, v ^ mask);
    }
  }
  for (uint64_t i = body; i < total; i += 4) {  // the tail, a word at a time
    for (int c = 0; c < 4; ++c) {
      s[c] += p[i + c];
      if (RMW) p[i + c] ^= kMask;
    }
  }
}

// `passes` passes over the e words from word `first` of the n at in, cyclically (the lane's slice; it
// wraps to word 0 only where the suite's n is not a multiple of the lanes), their sum stored into
// acc[0..3] by component. The sums stay in registers through every pass and are folded once, at
// the end (acc points into the output, which the compiler must assume aliases in); a compiler
// barrier ends each pass.
template <bool RMW>
inline void sweep(uint32_t* in, uint64_t n, uint64_t first, uint64_t e, int64_t passes, uint32_t* acc) {
  VecU a[kAcc] = {};
  uint32_t s[4] = {0, 0, 0, 0};
  const uint64_t head = e < n - first ? e : n - first;
  for (int64_t pass = 0; pass < passes; ++pass) {
    block<RMW>(in + 4 * first, head, a, s);
    if (head < e) block<RMW>(in, e - head, a, s);
    pass_barrier();
  }
  for (int j = 0; j < kAcc; ++j)
    for (int l = 0; l < kLanes; ++l) s[l % 4] += a[j][l];
  for (int c = 0; c < 4; ++c) acc[c] = s[c];
}

// Lanes [b, e): each lane's PASSES passes over its own slice in turn (the suite launches one lane per
// thread, so a thread's working set is its lane's slice). Lane t reads the E = ceil(n / T) words
// from word t·E (mod n) on: the cyclic range [0, T·E) over the lanes, as on the GPUs.
template <bool RMW>
void hier(const KernelArgs& k, uint64_t b, uint64_t e) {
  uint32_t* in = static_cast<uint32_t*>(k.buf[0]);
  uint32_t* out = static_cast<uint32_t*>(k.buf[1]);
  const uint64_t n = uint64_t(k.scalar);
  if (n == 0 || k.items == 0) return;
  const uint64_t words = (n + k.items - 1) / k.items;  // E: words per lane
  for (uint64_t t = b; t < e; ++t) sweep<RMW>(in, n, (t * words) % n, words, k.passes, out + 4 * t);
}

// Buffers in and out; the scalar n; the constant PASSES; 16-byte words, one per work item as bound.
const KernelEntry kHierarchy[] = {
    {"hier_read", hier<false>, 2, true, KernelConstant::passes, 16, 1, 1, nullptr},
    {"hier_rmw", hier<true>, 2, true, KernelConstant::passes, 16, 1, 1, nullptr},
};

}  // namespace

const KernelEntry* hierarchy_kernel_table(size_t* count) {
  *count = sizeof(kHierarchy) / sizeof(kHierarchy[0]);
  return kHierarchy;
}

}  // namespace ar::cpu
