#include "host.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace ar::cpu {

namespace {
#if defined(__APPLE__)
std::string sysctl_string(const char* name) {
  size_t len = 0;
  if (sysctlbyname(name, nullptr, &len, nullptr, 0) != 0 || len == 0) return {};
  std::string s(len, '\0');
  if (sysctlbyname(name, s.data(), &len, nullptr, 0) != 0) return {};
  s.resize(len > 0 && s[len - 1] == '\0' ? len - 1 : len);
  return s;
}
uint64_t sysctl_u64(const char* name) {
  uint64_t v = 0;
  size_t len = sizeof(v);
  if (sysctlbyname(name, &v, &len, nullptr, 0) != 0) return 0;
  return v;
}
#endif

#if !defined(__APPLE__)  // Linux reads /proc and /sys; macOS asks sysctl
// Whole file as a string ("" when unreadable). C stdio on purpose: no iostreams, whose locale
// machinery has crashed when a toolchain linked its own libstdc++ into the module.
std::string read_text(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    std::fclose(f);
  }
  return out;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

uint64_t parse_size(std::string s) {  // "32768K", "2048 KB", "32M"
  uint64_t v = 0;
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + uint64_t(s[i++] - '0');
  while (i < s.size() && s[i] == ' ') ++i;
  if (i < s.size()) {
    char u = s[i];
    if (u == 'K' || u == 'k') v <<= 10;
    else if (u == 'M' || u == 'm') v <<= 20;
    else if (u == 'G' || u == 'g') v <<= 30;
  }
  return v;
}
#endif

// A chain of dependent register-register adds: one cycle each on every x86-64 and arm64 core.
// Not add-immediate: Intel's Golden Cove renamer folds chains of immediate adds and runs them
// several per cycle (measured here: an "add $1" chain read 13 GHz on an Emerald Rapids Xeon).
inline uint64_t add_chain(uint64_t x, uint64_t step, uint64_t iters) {
  for (uint64_t i = 0; i < iters; ++i) {
#if defined(__x86_64__)
#define AR_ADD4 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
#elif defined(__aarch64__)
#define AR_ADD4 "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
#endif
#if defined(AR_ADD4)
    __asm__ __volatile__(AR_ADD4 AR_ADD4 AR_ADD4 AR_ADD4 AR_ADD4 AR_ADD4 AR_ADD4 AR_ADD4 : "+r"(x) : "r"(step));
#else
    (void)x;
    (void)step;
    throw std::runtime_error("clock measurement needs x86-64 or arm64");
#endif
  }
  return x;
}
}  // namespace

std::string cpu_model_name() {
#if defined(__APPLE__)
  std::string s = sysctl_string("machdep.cpu.brand_string");
  return s.empty() ? "unknown CPU" : s;
#else
  const std::string text = read_text("/proc/cpuinfo");
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t pos = line.find(':');
    if (pos == std::string::npos) continue;
    const std::string key = trim(line.substr(0, pos));
    if (key == "model name" || key == "Model" || key == "Hardware") {
      std::string v = trim(line.substr(pos + 1));
      if (!v.empty()) return v;
    }
  }
  return "unknown CPU";
#endif
}

uint64_t physical_memory_bytes() {
#if defined(__APPLE__)
  return sysctl_u64("hw.memsize");
#else
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
#endif
}

uint64_t last_level_cache_bytes() {
#if defined(__APPLE__)
  uint64_t v = sysctl_u64("hw.perflevel0.l2cachesize");
  if (!v) v = sysctl_u64("hw.l3cachesize");
  if (!v) v = sysctl_u64("hw.l2cachesize");
  return v;
#else
  uint64_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; ++i) {
    std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level_text = trim(read_text(base + "level")), size = trim(read_text(base + "size"));
    const std::string type = trim(read_text(base + "type"));
    if (level_text.empty() || size.empty() || type == "Instruction") continue;
    const int level = std::atoi(level_text.c_str());
    if (level > best_level) best_level = level, best = parse_size(size);
  }
  return best;
#endif
}

// Seconds of CPU time this thread has run: the chain below is timed by it, not by the wall clock,
// so time the thread spends descheduled (another process on its core, as on a 2-core machine running
// its tests) does not lower the clock read. POSIX CLOCK_THREAD_CPUTIME_ID (Linux; macOS 10.12+);
// elsewhere the steady clock.
static double thread_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
#endif
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double measure_clock_hz(double duration_s) {
  if (!(duration_s > 0.0) || duration_s > 10.0)
    throw std::invalid_argument("clock measurement duration " + std::to_string(duration_s) +
                                " s is out of range (valid: > 0 and <= 10 s)");
  volatile uint64_t opaque_step = 1;  // unknown to the compiler: the adds stay register-register
  const uint64_t step = opaque_step;
  uint64_t iters = 1000, sink = 0;
  // Calibrate so that one try lasts about duration_s / 5.
  for (;;) {
    const double t0 = thread_seconds();
    sink = add_chain(sink, step, iters);
    double dt = thread_seconds() - t0;
    if (dt > duration_s / 50 || iters > (uint64_t(1) << 40)) {
      iters = uint64_t(double(iters) * (duration_s / 5) / std::max(dt, 1e-9)) + 1;
      break;
    }
    iters *= 4;
  }
  double best = 0.0;
  for (int t = 0; t < 5; ++t) {
    const double t0 = thread_seconds();
    sink = add_chain(sink, step, iters);
    double dt = thread_seconds() - t0;
    best = std::max(best, double(iters) * 32.0 / dt);
  }
  if (sink == 42) best += 0.0;  // keep the chain alive
  return best;
}

double measure_clock_hz_all(double duration_s, unsigned threads) {
  if (threads <= 1) return measure_clock_hz(duration_s);
  std::vector<double> hz(threads, 0.0);
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        hz[t] = measure_clock_hz(duration_s);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::sort(hz.begin(), hz.end());
  return hz[hz.size() / 2];
}

}  // namespace ar::cpu
