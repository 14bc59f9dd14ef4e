// The Metal backend's decisions, in plain C++ (docs/design/backends.md, "The Metal backend"): which clock a
// sample set is timed by and why, the plausibility bounds of a counter-timed pass, how samples are
// split across counter sample buffers, the GPU tick period, the error text, and the bookkeeping of
// launches in flight. Compiled into the extension on every platform and unit-tested off a Mac
// (tests/native/test_metal_rules.py, through the bindings); native/metal/*.mm only makes the Metal
// calls and hands what Metal returned to these functions. No Metal types cross this header.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace ar::metal_rules {

// ---- counter sample buffers ---------------------------------------------------------------------

// The most samples one counter sample buffer holds. Apple GPUs refuse a sample buffer over 32 KiB
// ("Invalid sample buffer length: 65536 B. Expected range: 8 -> 32768", reported on an M1) and a
// resolved timestamp is 8 bytes (MTLCounterResultTimestamp, MTLCounters.h): 4096 timestamps.
constexpr uint64_t kMaxSamplesPerBuffer = 4096;
// Each timed sample takes two timestamps (its pass's start and end).
constexpr uint64_t kMaxRepsPerBuffer = kMaxSamplesPerBuffer / 2;

// The samples [first, first + reps) that share one counter sample buffer.
struct SampleChunk {
  uint64_t first = 0;
  uint64_t reps = 0;
};
// `reps` samples in order, at most kMaxRepsPerBuffer per chunk; empty for 0.
std::vector<SampleChunk> sample_chunks(uint64_t reps);

// MTLCounterErrorValue (MTLCounters.h: `#define MTLCounterErrorValue ((uint64_t)~0ULL)`), what a
// sample that failed to resolve reads; device.mm checks the two agree.
constexpr uint64_t kCounterErrorValue = ~uint64_t(0);

// ---- the GPU tick period ------------------------------------------------------------------------

// One reading of both clocks (MTLDevice sampleTimestamps:gpuTimestamp:): the host's steady clock
// read just before and just after the call, as the midpoint and half the gap, and the GPU's ticks.
struct ClockPair {
  double host_s = 0.0;
  double half_width_s = 0.0;
  uint64_t gpu_ticks = 0;
};

// The shortest host interval a period is calibrated over (or, on an Apple-family GPU, checked over).
constexpr double kMinCalibrationSpan = 1e-3;

// Seconds per GPU tick from two clock readings taken around a run.
struct TickPeriod {
  bool ok = false;
  std::string problem;      // why there is no period, when !ok
  double seconds = 0.0;     // the period used: exactly 1e-9 when snapped, else `calibrated`
  double calibrated = 0.0;  // host span / GPU ticks (0 when the window was too short to calibrate)
  double error = 0.0;       // relative error bound of `calibrated`: both readings' half widths over the
                            // span, plus one tick in the count
  bool snapped = false;     // the period is exactly 1 ns
  bool checked = false;     // a calibration was made and, where snapped, agreed with 1 ns within its error
};
// On an Apple-family GPU (`apple_family`: MTLGPUFamilyApple7 or later, every Apple-silicon Mac) the
// resolved timestamps are nanoseconds (MoltenVK and wgpu use a timestamp period of 1.0 there; wgpu
// found the CPU and GPU stamps equal on an M1): the period is exactly 1 ns whatever the window, and a window of at
// least kMinCalibrationSpan calibrates it as a check: not ok (with the reason) when the GPU ticks did not advance over
// such a window, or when 1 ns lies outside calibrated × (1 ± error). A shorter window is not checked (checked = false)
// and still uses 1 ns. On another GPU: not ok when the GPU ticks did not advance or the host span is under
// kMinCalibrationSpan; a period within its own error of 1 ns is taken as exactly 1 ns (a
// calibration over ~1 ms against the host clock would otherwise scale every sample by its own
// noise, up to ~0.5 %); any other period is kept as calibrated.
TickPeriod tick_period(const ClockPair& before, const ClockPair& after, bool apple_family);

// ---- plausibility of a counter-timed pass -------------------------------------------------------

// A pass is bracketed by its command buffer, so it may not be longer than the command buffer's
// GPUEndTime - GPUStartTime (beyond 2 % and 5 us of rounding between the two clocks) ...
constexpr double kLongerFactor = 1.02;
constexpr double kLongerSlack_s = 5e-6;
// ... nor far shorter: the pass is the command buffer's only work, so what the command buffer adds
// is a fixed overhead. A pass under half its command buffer's time that is also more than 100 us
// shorter than it is rejected (timestamps far too short have been reported on M4-class GPUs, and
// would inflate GB/s and FLOP/s); short command buffers, where the overhead alone may be half, are
// not judged by the fraction.
constexpr double kShorterFraction = 0.5;
constexpr double kMaxOverhead_s = 100e-6;

enum class PassVerdict { ok, invalid, longer, shorter };
// The pass between ticks `start` and `end` against its command buffer's `command_buffer_s`:
// invalid when either is 0 or kCounterErrorValue or end <= start; else *pass_s = (end - start) ×
// period_s and the bounds above decide.
PassVerdict judge_pass(uint64_t start, uint64_t end, double period_s, double command_buffer_s, double* pass_s);

// ---- which timer a sample set uses --------------------------------------------------------------

// What the counters gave for a run of samples.
struct CounterRun {
  bool wanted = false;          // counters were asked for (compute kernels; not MPS or render passes)
  std::string unavailable;      // why some sample has no counter reading ("" when every one has)
  std::vector<uint64_t> ticks;  // 2 per sample, in order: its pass's start and end, resolved
  ClockPair before, after;      // clock readings before the first and after the last sample
  bool apple_family = false;    // the device is an Apple-family GPU: 1 ns ticks (tick_period)
};

struct SampleSet {
  std::vector<double> seconds;
  std::string timer;      // which clock, and why a fallback happened
  bool counters = false;  // seconds are the counters' pass times
};

// The samples a run reports: the counters' pass times when they were wanted, every sample has a
// valid reading, the period calibrates and every pass lies within the bounds above; otherwise the
// command buffers' times, the whole set, with the reason in `timer`. DeviceError (naming `what`)
// when a command buffer reports no positive GPU time.
SampleSet choose_samples(const std::vector<double>& command_buffer_s, const CounterRun& counters,
                         const std::string& what);

// The timer of command-buffer times.
extern const char* const kCommandBufferTimer;

// ---- function constants -------------------------------------------------------------------------

// MTLDataType raw values (MTLArgument.h) of the function-constant types the backend sets; compile.mm
// checks them against the SDK's.
constexpr int64_t kFloat = 3, kHalf = 16, kInt = 29, kUInt = 33, kShort = 37, kUShort = 41, kBool = 53;

// The bytes of function constant `name` = `value` as the type the function declares (`type`, an
// MTLDataType raw value), for setConstantValue:type:withName:. An integer type (int, uint, short,
// ushort, bool) needs an integral value in its range; float and half take the value rounded to
// float, then (half) to IEEE binary16 by round-to-nearest-even, and must stay finite.
// std::invalid_argument naming the constant, its value, the kernel `entry` and the valid range for
// anything else, including a type other than those.
std::vector<uint8_t> constant_bytes(int64_t type, const std::string& name, int64_t int_value, double float_value,
                                    bool is_int, const std::string& entry);

// Which constants specialising a function sets. MTLFunction.functionConstantsDictionary (MTLLibrary.h)
// lists only the constants the function uses, not every one its source declares, so one table of
// constants passed to every kernel of a source (the idiv suite's DIVISOR, which only its
// `_constant` kernels read) names constants some functions do not declare; a value set by name for
// a constant the function does not list cannot be given its declared type.
struct ConstantPlan {
  std::vector<std::string> set;      // passed and declared by the function: set with the declared type
  std::vector<std::string> skipped;  // passed, not declared by the function, declared by another function of
                                     // its source: not set (the function does not read it)
};
// The plan for `stage` function `entry` (`compute`: a compute kernel, whose BLOCK is its threadgroup
// size, set as a function constant only where declared) given the `passed` constant names, the
// function's `declared` ones and, called only when some passed name is not declared by the
// function, `source_declared` (every function constant the functions of the same source declare).
// std::invalid_argument for a passed name that no function of the source declares (a misspelt or
// stray constant), naming both lists, and for a compute kernel that declares BLOCK without being
// passed it.
ConstantPlan constant_plan(const std::string& stage, const std::string& entry, bool compute,
                           const std::vector<std::string>& passed, const std::vector<std::string>& declared,
                           const std::function<std::vector<std::string>()>& source_declared);

// IEEE binary16 bits of `f`, rounded to nearest even (overflow to infinity, NaN kept a quiet NaN).
uint16_t half_bits(float f);

// ---- Metal Shading Language versions and Metal 4 tensor ops ---------------------------------------

// The MSL version a source is compiled with: "4.0" for one that defines AR_MSL_VERSION_4_0 (Metal 4's
// tensors and Performance Primitives, macOS 26: shaders/metal/matrix_mpp.metal), else "3.0" (macOS
// 13, the deployment target).
std::string msl_version(const std::string& source);
// What the device info's msl_version says on macOS `os_major`: the versions sources are compiled with.
std::string msl_versions(int os_major);

// The first macOS whose MetalPerformancePrimitives declare matmul2d on bfloat x bfloat -> float
// (MPPTensorOpsMatMul2d.h's type table: absent in macOS 26.0's, present in 26.1's; MLX gates its
// bfloat tensor ops on 26.1 too).
constexpr int kMppBfloatMajor = 26, kMppBfloatMinor = 1;
// The macro that makes matrix_mpp.metal declare its bfloat kernels, defined where mpp_bfloat holds.
extern const char* const kMppBfloatMacro;
bool mpp_bfloat(int os_major, int os_minor);
// Why MSL 4.0 kernel `entry` is not built on macOS `os_major`.`os_minor`, or "": an mpp_bf16_* kernel
// before kMppBfloatMajor.kMppBfloatMinor (one line, for the skip).
std::string mpp_unsupported(const std::string& entry, int os_major, int os_minor);

// ---- binary archives ----------------------------------------------------------------------------

// Whether this process archives compute pipelines (docs/design/backends.md, "The kernel cache"). Serializing
// specialised functions (every kernel here has function constants) into an MTLBinaryArchive needs
// macOS 15: on 13 and 14 an archive is written but never gives its pipeline back. So the first
// archive a process writes is reloaded with MTLPipelineOptionFailOnBinaryArchiveMiss before it is
// stored; if that fails, the process stops archiving (and reading archives) with one note. An archive
// read from the cache that gave its pipeline counts as that proof. Thread-safe.
class ArchivePolicy {
 public:
  // Whether to read archives from the cache and archive newly compiled pipelines.
  bool archiving() const;
  // True once per process, for the first archive serialized before any proof: reload it first.
  bool check_next();
  // The outcome of that reload (or of an archive read from the cache: reloaded = true); a failure
  // turns archiving off.
  void checked(bool reloaded);
  // A compiled pipeline: archived (`why` empty) or not, and why.
  void compiled(const std::string& function, const std::string& why);
  // "" while every compiled pipeline was archived; else one line: "N of M compute pipelines not
  // archived (first: 'f': why); they are compiled in every run".
  std::string summary() const;

 private:
  mutable std::mutex mutex_;
  enum class State { unproven, checking, works, broken } state_ = State::unproven;
  size_t compiled_ = 0, failed_ = 0;
  std::string first_;
};

// ---- error text ---------------------------------------------------------------------------------

// MTLCommandBufferStatus by raw value (MTLCommandBuffer.h: NotEnqueued = 0 ... Error = 5), or
// "unknown (<n>)".
std::string status_name(int64_t status);
// MTLCommandBufferStatusCompleted's raw value.
constexpr int64_t kStatusCompleted = 4;
// "[metal::<call>] <what>: command buffer ended with status <Status>: <error>".
std::string command_buffer_failure(const std::string& call, const std::string& what, int64_t status,
                                   const std::string& error);
// "<description> (<domain> <code>)", the text of an NSError.
std::string error_text(const std::string& description, const std::string& domain, int64_t code);

// ---- launches in flight -------------------------------------------------------------------------

// Command buffers Kernel::launch commits without waiting at most at once. The dispatch study
// launches 100 per sample by default (latency.runner.DEFAULT_LAUNCHES; a test holds this above it),
// and Metal's default queue blocks at 64 uncompleted command buffers (MTLDevice.h, newCommandQueue).
constexpr size_t kLaunchesInFlight = 256;
// The queue's maxCommandBufferCount (newCommandQueueWithMaxCommandBufferCount:): the launches, plus
// the one command buffer a waited-for path (time, timeline, a render pass's read) holds under the
// device mutex, plus a margin for a completed handler that runs before the queue counts its
// command buffer as completed.
constexpr size_t kQueueDepth = kLaunchesInFlight + 4;

// The bookkeeping of launches committed and not waited for: a launch takes a slot before it takes
// the device mutex (so a full queue makes the launching thread wait, never a thread holding the
// mutex), its completed handler gives the slot back with its error, and a synchronize waits until
// every handler has run and takes the first error. Thread-safe; handlers run on Metal's threads.
class InFlight {
 public:
  explicit InFlight(size_t capacity);
  // Waits while `capacity` launches are in flight, then counts one more. The waits here sleep until a
  // handler's complete() wakes them, in slices (core/waits.h): DeviceStopped past the thread's
  // bound, signals handled, no CPU used meanwhile.
  void acquire();
  // A launch's completed handler: "" when it completed, else its failure. The first failure since
  // the last take_error() is kept.
  void complete(const std::string& error);
  // A slot taken by acquire() whose command buffer was never committed (its handler will not run).
  void abandon();
  // Waits until no launch is in flight; returns the first failure since the last call and forgets it.
  std::string wait_idle();
  size_t in_flight() const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;  // notified by complete()
  size_t in_flight_ = 0;
  std::string error_;
};

}  // namespace ar::metal_rules
