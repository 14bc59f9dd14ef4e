// The Metal backend's decisions in plain C++ (core/metal_rules.h; docs/design/backends.md, "The Metal backend").
#include "core/metal_rules.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "core/waits.h"

namespace ar::metal_rules {

namespace {

std::string fixed(double x, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string of(size_t k, size_t n) { return std::to_string(k) + " of " + std::to_string(n); }

}  // namespace

const char* const kCommandBufferTimer = "command buffer GPUEndTime - GPUStartTime";

std::vector<SampleChunk> sample_chunks(uint64_t reps) {
  std::vector<SampleChunk> out;
  for (uint64_t first = 0; first < reps; first += kMaxRepsPerBuffer)
    out.push_back({first, std::min(kMaxRepsPerBuffer, reps - first)});
  return out;
}

TickPeriod tick_period(const ClockPair& before, const ClockPair& after, bool apple_family) {
  TickPeriod p;
  const double span = after.host_s - before.host_s;
  const bool advanced = after.gpu_ticks > before.gpu_ticks;
  const bool long_enough = span >= kMinCalibrationSpan;
  const uint64_t ticks = advanced ? after.gpu_ticks - before.gpu_ticks : 0;
  const std::string window = std::to_string(ticks) + " ticks in " + fixed(span * 1e6, 0) + " us";
  if (apple_family && !long_enough) {  // 1 ns, too short a window to check it
    p.ok = p.snapped = true;
    p.seconds = 1e-9;
    return p;
  }
  if (!advanced || !long_enough) {
    p.problem = "the GPU tick could not be calibrated (" + window + "; at least " +
                fixed(kMinCalibrationSpan * 1e6, 0) + " us and one tick are needed)";
    return p;
  }
  p.calibrated = span / double(ticks);
  p.error = (before.half_width_s + after.half_width_s) / span + 1.0 / double(ticks);
  p.checked = true;
  const bool agrees = std::abs(p.calibrated - 1e-9) <= p.error * p.calibrated;
  if (apple_family && !agrees) {
    p.problem = "this Apple-family GPU's timestamps did not advance at 1 ns per tick (" + window + ": " +
                fixed(p.calibrated * 1e9, 3) + " ns per tick, +/- " + fixed(p.error * 100, 2) + " %)";
    return p;
  }
  p.ok = true;
  p.snapped = agrees;
  p.seconds = agrees ? 1e-9 : p.calibrated;
  return p;
}

PassVerdict judge_pass(uint64_t start, uint64_t end, double period_s, double command_buffer_s, double* pass_s) {
  if (start == 0 || end == 0 || start == kCounterErrorValue || end == kCounterErrorValue || end <= start)
    return PassVerdict::invalid;
  const double pass = double(end - start) * period_s;
  if (pass_s) *pass_s = pass;
  if (pass > command_buffer_s * kLongerFactor + kLongerSlack_s) return PassVerdict::longer;
  if (pass < command_buffer_s * kShorterFraction && command_buffer_s - pass > kMaxOverhead_s)
    return PassVerdict::shorter;
  return PassVerdict::ok;
}

SampleSet choose_samples(const std::vector<double>& command_buffer_s, const CounterRun& counters,
                         const std::string& what) {
  const size_t n = command_buffer_s.size();
  for (double t : command_buffer_s)
    if (!(t > 0.0))
      throw DeviceError("[metal::GPUEndTime] " + what + ": the completed command buffer reports no GPU time (" +
                        std::to_string(t) + " s)");
  SampleSet out;
  auto fall_back = [&](const std::string& why) {
    out.seconds = command_buffer_s;
    out.timer = std::string(kCommandBufferTimer) + (why.empty() ? "" : " (counters: " + why + ")");
    out.counters = false;
    return out;
  };
  if (!counters.wanted) return fall_back("");
  if (!counters.unavailable.empty()) return fall_back(counters.unavailable);
  if (counters.ticks.size() != 2 * n)
    return fall_back(std::to_string(counters.ticks.size()) + " timestamps resolved for " + std::to_string(n) +
                     " samples (2 each are needed)");
  const TickPeriod period = tick_period(counters.before, counters.after, counters.apple_family);
  if (!period.ok) return fall_back(period.problem);

  std::vector<double> pass_s(n);
  size_t invalid = 0, longer = 0, shorter = 0;
  for (size_t r = 0; r < n; ++r) {
    switch (
        judge_pass(counters.ticks[2 * r], counters.ticks[2 * r + 1], period.seconds, command_buffer_s[r], &pass_s[r])) {
      case PassVerdict::ok: break;
      case PassVerdict::invalid: ++invalid; break;
      case PassVerdict::longer: ++longer; break;
      case PassVerdict::shorter: ++shorter; break;
    }
  }
  const std::string tick =
      period.snapped ? "tick period 1 ns" : "tick period " + fixed(period.seconds * 1e9, 3) + " ns";
  if (invalid) return fall_back(of(invalid, n) + " counter samples were zero, MTLCounterErrorValue or end <= start");
  if (longer)
    return fall_back(of(longer, n) + " passes timed by the counters were longer than their command buffers (" + tick +
                     ")");
  if (shorter)
    return fall_back(of(shorter, n) + " passes timed by the counters were under " + fixed(kShorterFraction * 100, 0) +
                     " % of their command buffers' time and more than " + fixed(kMaxOverhead_s * 1e6, 0) +
                     " us shorter (" + tick + ")");
  out.seconds = std::move(pass_s);
  out.counters = true;
  // No per-run figure in the text: measurements timed the same way share one timer sentence.
  out.timer = std::string("counter timestamps at the compute pass boundaries (") +
              (!period.snapped   ? "tick period calibrated against the host clock over the run"
               : !period.checked ? "tick period 1 ns, as on every Apple-family GPU; the run was too short to check it "
                                   "against the host clock"
               : counters.apple_family ? "tick period 1 ns, as on every Apple-family GPU: the host-clock calibration "
                                         "agreed within its error"
                                       : "tick period 1 ns: the host-clock calibration agreed within its error") +
              "; each pass within its command buffer's GPUEndTime - GPUStartTime)";
  return out;
}

uint16_t half_bits(float f) {
  uint32_t x = 0;
  std::memcpy(&x, &f, sizeof x);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exponent = (x >> 23) & 0xffu;
  uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xffu) return uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));  // infinity, NaN
  const int32_t e = int32_t(exponent) - 127 + 15;                                     // the half's biased exponent
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // beyond the largest half: infinity
  if (e <= 0) {                                  // a half subnormal, or zero
    if (e < -10) return uint16_t(sign);          // under half the smallest subnormal
    mantissa |= 0x800000u;
    const uint32_t shift = uint32_t(14 - e);
    uint32_t h = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    if (rest > mid || (rest == mid && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may reach the exponent: still right
  return uint16_t(sign | h);
}

std::vector<uint8_t> constant_bytes(int64_t type, const std::string& name, int64_t int_value, double float_value,
                                    bool is_int, const std::string& entry) {
  char text[64];
  if (is_int) std::snprintf(text, sizeof text, "%lld", static_cast<long long>(int_value));
  else std::snprintf(text, sizeof text, "%.17g", float_value);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("constant " + name + " = " + text + " for kernel '" + entry + "': " + why);
  };
  auto integer = [&](int64_t lo, int64_t hi, const char* type_name) {
    if (!is_int) throw bad(std::string("the function declares it ") + type_name + ", which needs an integer");
    if (int_value < lo || int_value > hi)
      throw bad(std::string("out of range for ") + type_name + " (valid: " + std::to_string(lo) + " to " +
                std::to_string(hi) + ")");
    return int_value;
  };
  auto bytes_of = [](const auto& v) {
    std::vector<uint8_t> out(sizeof v);
    std::memcpy(out.data(), &v, sizeof v);
    return out;
  };
  const double as_double = is_int ? double(int_value) : float_value;
  switch (type) {
    case kInt:
      return bytes_of(
          int32_t(integer(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), "int")));
    case kUInt: return bytes_of(uint32_t(integer(0, std::numeric_limits<uint32_t>::max(), "uint")));
    case kShort: return bytes_of(int16_t(integer(-32768, 32767, "short")));
    case kUShort: return bytes_of(uint16_t(integer(0, 65535, "ushort")));
    case kBool: return bytes_of(uint8_t(integer(0, 1, "bool")));  // MSL's bool is one byte
    case kFloat: {
      const float v = float(as_double);
      if (!std::isfinite(v)) throw bad("not finite as a float");
      return bytes_of(v);
    }
    case kHalf: {
      const uint16_t h = half_bits(float(as_double));
      if ((h & 0x7c00u) == 0x7c00u) throw bad("not finite as a half");
      return bytes_of(h);
    }
  }
  throw bad("function constants of MTLDataType " + std::to_string(type) +
            " are not supported (valid: int, uint, short, ushort, bool, float, half)");
}

ConstantPlan constant_plan(const std::string& stage, const std::string& entry, bool compute,
                           const std::vector<std::string>& passed, const std::vector<std::string>& declared,
                           const std::function<std::vector<std::string>()>& source_declared) {
  auto has = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  auto listed = [](std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("none") : out;
  };
  ConstantPlan plan;
  std::vector<std::string> in_source;
  bool source_read = false;
  for (const std::string& name : passed) {
    if (has(declared, name)) {
      plan.set.push_back(name);
      continue;
    }
    if (compute && name == "BLOCK") continue;  // the threadgroup size; a function constant only if declared
    if (!source_read) {
      in_source = source_declared();
      source_read = true;
    }
    if (!has(in_source, name))
      throw std::invalid_argument(stage + " function '" + entry + "' declares no function constant '" + name +
                                  "' and no function of its source does (declared by '" + entry +
                                  "': " + listed(declared) + "; by the source's functions: " + listed(in_source) + ")");
    plan.skipped.push_back(name);
  }
  if (compute && has(declared, "BLOCK") && !has(passed, "BLOCK"))
    throw std::invalid_argument("kernel '" + entry +
                                "' declares the function constant BLOCK: pass it (threads per threadgroup)");
  return plan;
}

std::string msl_version(const std::string& source) {
  return source.find("AR_MSL_VERSION_4_0") != std::string::npos ? "4.0" : "3.0";
}

std::string msl_versions(int os_major) { return os_major >= 26 ? "3.0; 4.0 for Metal 4 tensor-op kernels" : "3.0"; }

const char* const kMppBfloatMacro = "AR_MPP_BFLOAT";

bool mpp_bfloat(int os_major, int os_minor) {
  return os_major > kMppBfloatMajor || (os_major == kMppBfloatMajor && os_minor >= kMppBfloatMinor);
}

std::string mpp_unsupported(const std::string& entry, int os_major, int os_minor) {
  if (entry.rfind("mpp_bf16", 0) != 0 || mpp_bfloat(os_major, os_minor)) return "";
  return "matmul2d on bfloat tensors needs macOS " + std::to_string(kMppBfloatMajor) + "." +
         std::to_string(kMppBfloatMinor) + " (MetalPerformancePrimitives before it have no bfloat x bfloat); this is " +
         std::to_string(os_major) + "." + std::to_string(os_minor);
}

bool ArchivePolicy::archiving() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_ != State::broken;
}

bool ArchivePolicy::check_next() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != State::unproven) return false;
  state_ = State::checking;
  return true;
}

void ArchivePolicy::checked(bool reloaded) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ == State::broken || state_ == State::works) return;
  state_ = reloaded ? State::works : State::broken;
}

void ArchivePolicy::compiled(const std::string& function, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++compiled_;
  if (why.empty()) return;
  if (!failed_++) first_ = "'" + function + "': " + why;
}

std::string ArchivePolicy::summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failed_) return "";
  return of(failed_, compiled_) + " compute pipelines not archived (first: " + first_ +
         "); they are compiled in every run";
}

std::string status_name(int64_t status) {
  static const char* const names[] = {"NotEnqueued", "Enqueued", "Committed", "Scheduled", "Completed", "Error"};
  if (status >= 0 && status < int64_t(sizeof names / sizeof names[0])) return names[status];
  return "unknown (" + std::to_string(status) + ")";
}

std::string command_buffer_failure(const std::string& call, const std::string& what, int64_t status,
                                   const std::string& error) {
  return "[metal::" + call + "] " + what + ": command buffer ended with status " + status_name(status) + ": " + error;
}

std::string error_text(const std::string& description, const std::string& domain, int64_t code) {
  return (description.empty() ? std::string("?") : description) + " (" + domain + " " + std::to_string(code) + ")";
}

// ---- InFlight ---------------------------------------------------------------------------------------

InFlight::InFlight(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

namespace {

// Waits until `ready` (read under `lock`'s mutex) holds, woken by `changed`, in slices (core/waits.h:
// the calling thread's limit, then DeviceStopped naming `what`; the interrupt hook runs between
// slices without the mutex). Returns with the mutex held.
void wait_state(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                const std::function<bool()>& ready, const std::string& what) {
  const WaitLimit limit = wait_limit();
  const bool got = wait_in_slices(
      [&](double s) {
        if (!lock.owns_lock()) lock.lock();
        if (changed.wait_for(lock, std::chrono::duration<double>(s), ready)) return true;
        lock.unlock();
        return false;
      },
      limit.seconds);
  if (!got) throw_stopped(limit, what);
}

}  // namespace

void InFlight::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto free = [&] { return in_flight_ < capacity_; };
  if (!free()) wait_state(lock, changed_, free, "a launch slot (" + std::to_string(capacity_) + " launches in flight)");
  ++in_flight_;
}

void InFlight::complete(const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error.empty() && error_.empty()) error_ = error;
    if (in_flight_) --in_flight_;
  }
  changed_.notify_all();
}

void InFlight::abandon() { complete(""); }

std::string InFlight::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto idle = [&] { return in_flight_ == 0; };
  if (!idle()) wait_state(lock, changed_, idle, "the launches in flight");
  std::string e;
  e.swap(error_);
  return e;
}

size_t InFlight::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

}  // namespace ar::metal_rules
