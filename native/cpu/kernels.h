// The CPU backend's built-in kernels: the same computations as shaders/metal/*.metal and
// shaders/cuda/*.cu, one work item per GPU thread (docs/design/measurement.md, "Counting FLOPs and bytes").
//
// Work items map onto SIMD lanes: a vector register holds the same chain of several consecutive
// work items, so a kernel's chains per work item are independent vector registers in flight per
// core (its instruction-level parallelism), and the vector width is spent across work items, as a
// GPU spends its SIMD width across the threads of a warp/simdgroup. Every kernel is elementwise in
// its output, which is what the NumPy references check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ar::cpu {

struct KernelArgs {
  void* buf[3] = {nullptr, nullptr, nullptr};
  double scalar = 0.0;  // q for STREAM scale/triad, a for the self-dependent FMA chains
  int64_t F = 1;        // FMA iterations per chain (idiv: divides, dualissue: steps): the constant F
  int64_t passes = 1;   // the hierarchy kernels' passes over their working set (the constant PASSES)
  uint64_t items = 0;   // work items of the whole launch (the access kernels' strided index and the
                        // hierarchy kernels' split of their working set need it)
};

// The one integer constant a built-in kernel reads, if any (constant_name gives its name in compile()'s constants).
enum class KernelConstant { none, F, passes };

// "F" (the chain length, KernelArgs::F), "PASSES" (the hierarchy's passes, KernelArgs::passes), nullptr for none.
constexpr const char* constant_name(KernelConstant c) {
  return c == KernelConstant::F ? "F" : c == KernelConstant::passes ? "PASSES" : nullptr;
}

// Processes work items [begin, end) of one launch.
using RangeFn = void (*)(const KernelArgs&, uint64_t begin, uint64_t end);

struct KernelEntry {
  const char* name;                // the entry point, e.g. "scalar_indep8_f32"
  RangeFn fn;                      // nullptr when not compiled for this host (see unsupported_reason)
  int buffers;                     // buffer arguments, in order
  bool scalar;                     // takes one scalar argument after the buffers
  KernelConstant constant;         // the integer constant it reads (F, PASSES or none)
  int elem_size;                   // bytes per element of every buffer
  int elems_per_item;              // elements of each buffer one work item touches
  uint64_t grain;                  // work items per full vector block (partition unit)
  const char* unsupported_reason;  // non-null when fn is null
};

// The table of built-in kernels (kernels.cpp, compiled for the host ISA). That file uses no
// standard-library containers or strings, so that no inline library function compiled for the
// host's widest ISA can be picked by the linker for code outside the kernels.
const KernelEntry* kernel_table(size_t* count);
// The idiv suite's kernels (idiv.cpp, compiled like kernels.cpp).
const KernelEntry* idiv_kernel_table(size_t* count);
// The access and dualissue suites' kernels (rules.cpp, compiled like kernels.cpp).
const KernelEntry* rules_kernel_table(size_t* count);
// The hierarchy suite's kernels (hierarchy.cpp, compiled like kernels.cpp).
const KernelEntry* hierarchy_kernel_table(size_t* count);
// Lookups over the tables (kernel_table.cpp, compiled for the baseline ISA). A kernel table names a
// CPU kernel by the file of native/cpu/ that implements it, as it names a CUDA kernel by its file of
// shaders/cuda/: ("kernels.cpp", "stream_triad_f32"), ("idiv.cpp", ...), ("rules.cpp", ...),
// ("hierarchy.cpp", ...). kernel_sources() lists those files; find_kernel(source, entry) is the entry
// of that file's table, nullptr where it has none; kernel_source(entry) is the file whose table holds
// entry (nullptr for none).
std::vector<std::string> kernel_sources();
const KernelEntry* find_kernel(const std::string& source, const std::string& entry);
const char* kernel_source(const std::string& entry);
std::vector<std::string> kernel_names();

// What the kernels were compiled for: full-width vector FMAs on the host ISA, the width specs.py's
// CPU peak is computed at (docs/design/limits.md, "Theoretical ceilings").
const char* compiled_isa();  // "avx512", "avx2", "sse2", "neon", "generic"
int compiled_vector_bits();  // 512, 256, 128
bool compiled_fma();
bool compiled_fp16_arithmetic();
// nullptr when the running CPU supports the ISA the kernels were compiled for; else why not.
// Must be called before any kernel runs.
const char* isa_mismatch();

}  // namespace ar::cpu
