// The CPU backend: every usable core through a persistent, pinned thread pool; buffers page-aligned
// and first-touched by the worker that owns each slice; kernels timed by a steady clock around a
// barrier-synchronised parallel region (docs/design/measurement.md, "The backend interface").
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "../core/backend.h"
#include "../core/checks.h"
#include "../core/errors.h"
#include "../core/waits.h"
#include "blas.h"
#include "cycles.h"
#include "host.h"
#include "kernels.h"
#include "thread_pool.h"

namespace ar {
namespace cpu {
namespace {

using clk = std::chrono::steady_clock;

size_t page_size() {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? size_t(p) : 4096;
}

class CpuBuffer final : public Buffer {
 public:
  CpuBuffer(ThreadPool& pool, size_t nbytes) : nbytes_(nbytes) {
    const size_t align = std::max<size_t>(64, page_size());
    const size_t padded = (std::max<size_t>(nbytes, 1) + align - 1) / align * align;
    if (posix_memalign(&ptr_, align, padded) != 0 || !ptr_)
      throw DeviceError("[cpu::alloc] posix_memalign of " + std::to_string(padded) + " bytes failed: out of memory");
    // First touch: each worker zeroes the 64-byte lines it will process, using the same partition
    // as the kernels (ThreadPool::share in units of 64 bytes).
    char* base = static_cast<char*>(ptr_);
    const uint64_t lines = padded / 64;
    try {
      pool.run([&](unsigned w) {
        auto [b, e] = pool.share(w, lines);
        if (e > b) std::memset(base + b * 64, 0, (e - b) * 64);
      });
    } catch (...) {  // a signal during the first touch: the constructor ends, so free here
      std::free(ptr_);
      throw;
    }
  }
  ~CpuBuffer() override { std::free(ptr_); }
  size_t nbytes() const override { return nbytes_; }
  void* host_ptr() override { return ptr_; }
  void write(const void* src, size_t n, size_t offset) override {
    check_range(n, offset, nbytes_, "write");
    std::memcpy(static_cast<char*>(ptr_) + offset, src, n);
  }
  void read(void* dst, size_t n, size_t offset) const override {
    check_range(n, offset, nbytes_, "read");
    std::memcpy(dst, static_cast<const char*>(ptr_) + offset, n);
  }

 private:
  void* ptr_ = nullptr;
  size_t nbytes_;
};

void check_launch(uint64_t work_items, uint64_t batch, uint64_t reps) {
  check_work_items(work_items);
  if (batch == 0) throw std::invalid_argument("batch must be at least 1 launch per sample");
  if (reps == 0) throw std::invalid_argument("reps must be at least 1 sample");
}

Buffer* buffer_arg(const std::vector<Arg>& args, size_t i, const std::string& entry) {
  if (!std::holds_alternative<Buffer*>(args[i]) || !std::get<Buffer*>(args[i]))
    throw std::invalid_argument(entry + ": argument " + std::to_string(i) + " must be a Buffer");
  return std::get<Buffer*>(args[i]);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The built-in kernel `entry` of `source`, the file of native/cpu/ that implements it (kernels.h,
// kernel_sources). CompileError for a source that is none of those files (naming the valid ones), or
// an entry its table lacks (naming the file that has it, or the entries of this one).
const KernelEntry* find_builtin(const std::string& source, const std::string& entry) {
  const auto sources = kernel_sources();
  if (std::find(sources.begin(), sources.end(), source) == sources.end())
    throw CompileError("[cpu::compile] '" + source.substr(0, 60) + "' is not a CPU kernel source (valid: " +
                           joined(sources) + ", the files of native/cpu/ that implement the built-in kernels)",
                       "");
  if (const KernelEntry* k = find_kernel(source, entry)) return k;
  if (const char* other = kernel_source(entry))
    throw CompileError("[cpu::compile] kernel '" + entry + "' is not in " + source + " (it is in " + other + ")", "");
  std::vector<std::string> names;
  for (const auto& n : kernel_names())
    if (find_kernel(source, n)) names.push_back(n);
  throw CompileError("[cpu::compile] no built-in kernel named '" + entry + "' in " + source,
                     "available in " + source + ": " + joined(names));
}

class BuiltinKernel final : public Kernel {
 public:
  BuiltinKernel(std::shared_ptr<ThreadPool> pool, const KernelEntry* k, int64_t value)
      : pool_(std::move(pool)), k_(k), value_(value) {}
  std::string entry() const override { return k_->name; }

  std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                           bool clock) override {
    check_launch(work_items, batch, reps);
    const KernelArgs ka = bind(args, work_items);
    std::vector<double> out(reps);
    ThreadPool& pool = *pool_;
    const KernelEntry* k = k_;
    // Each worker's cycles and time on the CPU per sample (cycles.h), read outside the timed barriers.
    const bool count = clock && CycleCounter::reason().empty();
    const size_t workers = pool.size();
    std::vector<uint64_t> cycles(count ? workers * reps : 0), ns(count ? workers * reps : 0);
    std::vector<char> counted(workers, 0);
    pool.run([&](unsigned w) {
      auto [b, e] = pool.share(w, work_items, k->grain);
      CycleCounter* ctr = nullptr;
      std::unique_ptr<CycleCounter> own;
      if (count) {
        own = std::make_unique<CycleCounter>();
        if (own->ok()) ctr = own.get();
      }
      uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;
      bool good = ctr != nullptr;
      // barrier_stop(): a signal ends the call at the next kernel call's end, every worker at once
      for (uint64_t r = 0; r < reps; ++r) {
        if (ctr) good = ctr->read(c0, n0) && good;
        if (pool.barrier_stop()) return;
        clk::time_point t0;
        if (w == 0) t0 = clk::now();
        for (uint64_t i = 0; i < batch; ++i) {
          if (e > b) k->fn(ka, b, e);
          if (pool.barrier_stop()) return;
        }
        if (w == 0) out[r] = std::chrono::duration<double>(clk::now() - t0).count();
        if (ctr && (good = ctr->read(c1, n1) && good)) {
          cycles[w * reps + r] = c1 - c0;
          ns[w * reps + r] = n1 - n0;
        }
      }
      counted[w] = good ? 1 : 0;
    });
    clock_ = ClockReading{};
    if (!clock) {
      clock_.method = kClockNotAsked;
    } else if (!count) {
      clock_.method = "not measured: " + CycleCounter::reason();
    } else {
      for (uint64_t r = 0; r < reps; ++r) {
        uint64_t c = 0, t = 0;
        for (size_t w = 0; w < workers; ++w)
          if (counted[w]) c += cycles[w * reps + r], t += ns[w * reps + r];
        if (t > 0) clock_.mhz.push_back(1e3 * double(c) / double(t));
      }
      size_t n = 0;
      for (char c : counted) n += size_t(c);
      clock_.method = "core cycles / time on the CPU of " + std::to_string(n) + " of " + std::to_string(workers) +
                      " workers per sample (perf_event_open: PERF_COUNT_HW_CPU_CYCLES and PERF_COUNT_SW_TASK_CLOCK, "
                      "user mode)";
      if (clock_.mhz.empty()) clock_.method = "not measured: the cycle counters opened but did not read";
    }
    return out;
  }

  ClockReading clock() const override { return clock_; }

  // One fork-join of the pool running the launch (there is no queue to leave it in).
  void launch(const std::vector<Arg>& args, uint64_t work_items) override {
    check_launch(work_items, 1, 1);
    const KernelArgs ka = bind(args, work_items);
    ThreadPool& pool = *pool_;
    const KernelEntry* k = k_;
    pool.run([&](unsigned w) {
      auto [b, e] = pool.share(w, work_items, k->grain);
      if (e > b) k->fn(ka, b, e);
    });
  }

  // call -> wake (the first worker runs the kernel) -> fork (the last one does) -> join (run()
  // returned, every worker done): the pool's fork-join cost, step by step.
  Timeline timeline(const std::vector<Arg>& args, uint64_t work_items, uint64_t reps) override {
    check_launch(work_items, 1, reps);
    const KernelArgs ka = bind(args, work_items);
    ThreadPool& pool = *pool_;
    const KernelEntry* k = k_;
    Timeline tl;
    tl.events = {"call", "wake", "fork", "join"};
    tl.submit = "call";
    tl.start = "wake";
    tl.clock = "std::chrono::steady_clock on the calling thread and in each worker";
    std::vector<clk::time_point> starts(pool.size());
    for (uint64_t r = 0; r < reps; ++r) {
      const clk::time_point t0 = clk::now();
      pool.run([&](unsigned w) {
        starts[w] = clk::now();
        auto [b, e] = pool.share(w, work_items, k->grain);
        if (e > b) k->fn(ka, b, e);
      });
      const clk::time_point t1 = clk::now();
      clk::time_point first = starts[0], last = starts[0];
      for (const clk::time_point& s : starts) {
        first = std::min(first, s);
        last = std::max(last, s);
      }
      auto sec = [&](clk::time_point t) { return std::chrono::duration<double>(t - t0).count(); };
      tl.t.push_back({0.0, sec(first), sec(last), sec(t1)});
    }
    return tl;
  }

 private:
  // The kernel's arguments checked against its table entry and a launch of `work_items` work items.
  KernelArgs bind(const std::vector<Arg>& args, uint64_t work_items) const {
    const size_t want = size_t(k_->buffers) + (k_->scalar ? 1 : 0);
    if (args.size() != want)
      throw std::invalid_argument(std::string(k_->name) + " takes " + std::to_string(want) + " arguments (" +
                                  std::to_string(k_->buffers) + " buffers" + (k_->scalar ? " and a scalar" : "") +
                                  "), got " + std::to_string(args.size()));
    KernelArgs ka;
    (k_->constant == KernelConstant::passes ? ka.passes : ka.F) = value_;
    ka.items = work_items;
    const uint64_t need = work_items * uint64_t(k_->elems_per_item) * uint64_t(k_->elem_size);
    for (int i = 0; i < k_->buffers; ++i) {
      Buffer* b = buffer_arg(args, size_t(i), k_->name);
      if (b->nbytes() < need)
        throw std::invalid_argument(std::string(k_->name) + ": buffer " + std::to_string(i) + " holds " +
                                    std::to_string(b->nbytes()) + " bytes but " + std::to_string(work_items) +
                                    " work items need " + std::to_string(need));
      ka.buf[i] = b->host_ptr();
    }
    if (k_->scalar) {
      const Arg& s = args[size_t(k_->buffers)];
      if (std::holds_alternative<double>(s)) ka.scalar = std::get<double>(s);
      else if (std::holds_alternative<int64_t>(s)) ka.scalar = double(std::get<int64_t>(s));
      else throw std::invalid_argument(std::string(k_->name) + ": last argument must be a number");
    }
    return ka;
  }

  std::shared_ptr<ThreadPool> pool_;
  const KernelEntry* k_;
  int64_t value_;       // the constant F or PASSES (KernelEntry::constant), 1 where it takes none
  ClockReading clock_;  // of the last time() call
};

// The host BLAS GEMM: sgemm / dgemm (Accelerate on macOS, OpenBLAS elsewhere) and, on macOS, FP16
// through BNNSMatMul with its workspace allocated once.
class GemmKernel final : public Kernel {
 public:
  GemmKernel(std::string dtype, int m, int n, int k) : dtype_(std::move(dtype)), m_(m), n_(n), k_(k) {
    if (dtype_ == "fp16") workspace_.resize(size_t(std::max(0LL, blas_hgemm_workspace(m_, n_, k_))) + 64);
  }
  std::string entry() const override { return dtype_ == "fp32" ? "sgemm" : dtype_ == "fp64" ? "dgemm" : "hgemm"; }
  std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                           bool /*clock: BLAS runs its own threads, whose cycles are not counted*/) override {
    check_launch(work_items, batch, reps);
    Operands p = bind(args, work_items);
    std::vector<double> out(reps);
    // BLAS blocks its calling thread: the products run on a helper thread while this one answers
    // signals (core/waits.h), and a signal ends the call at the end of the product in flight
    run_interruptible([&](const std::atomic<bool>& stop) {
      for (uint64_t r = 0; r < reps; ++r) {
        auto t0 = clk::now();
        for (uint64_t i = 0; i < batch; ++i) {
          if (stop.load(std::memory_order_relaxed)) return;
          run(p);
        }
        out[r] = std::chrono::duration<double>(clk::now() - t0).count();
      }
    });
    return out;
  }

  // One product, on the calling thread (BLAS runs its own threads); done when it returns, so
  // Backend::synchronize has nothing to wait for. The per-call cost study's round trip.
  void launch(const std::vector<Arg>& args, uint64_t work_items) override { run(bind(args, work_items)); }

 private:
  // The operands' host pointers and element size in bytes (4 sgemm, 8 dgemm, 2 hgemm), decided
  // once by bind() so that run(), inside the timed loop, compares no strings.
  struct Operands {
    void* p[3];
    size_t es;
  };

  // The three buffers checked: A m×k, B k×n, C m×n of the kernel's element size.
  Operands bind(const std::vector<Arg>& args, uint64_t work_items) const {
    check_gemm_launch(work_items);
    if (args.size() != 3)
      throw std::invalid_argument("gemm takes 3 buffers (A, B, C), got " + std::to_string(args.size()));
    const size_t es = dtype_ == "fp32" ? 4 : dtype_ == "fp64" ? 8 : 2;
    const size_t need[3] = {size_t(m_) * k_ * es, size_t(k_) * n_ * es, size_t(m_) * n_ * es};
    Operands o;
    o.es = es;
    for (size_t i = 0; i < 3; ++i) {
      Buffer* b = buffer_arg(args, i, "gemm");
      if (b->nbytes() < need[i])
        throw std::invalid_argument("gemm: buffer " + std::string(1, "ABC"[i]) + " holds " +
                                    std::to_string(b->nbytes()) + " bytes, needs " + std::to_string(need[i]));
      o.p[i] = b->host_ptr();
    }
    return o;
  }

  void run(const Operands& o) {
    const size_t es = o.es;
    void* const* p = o.p;
    if (es == 4)
      blas_sgemm(m_, n_, k_, static_cast<float*>(p[0]), static_cast<float*>(p[1]), static_cast<float*>(p[2]));
    else if (es == 8)
      blas_dgemm(m_, n_, k_, static_cast<double*>(p[0]), static_cast<double*>(p[1]), static_cast<double*>(p[2]));
    else if (!blas_hgemm(m_, n_, k_, p[0], p[1], p[2], workspace_.data()))
      throw BackendError("[cpu::BNNSMatMul] FP16 GEMM " + std::to_string(m_) + "x" + std::to_string(n_) + "x" +
                         std::to_string(k_) + " failed");
  }

  std::string dtype_;
  int m_, n_, k_;
  std::vector<char> workspace_;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(unsigned threads) : pool_(std::make_shared<ThreadPool>(threads)) {
    blas_set_threads(int(pool_->size()));
  }

  Info info() const override {
    Info i;
    i["backend"] = std::string("cpu");
    i["index"] = int64_t(0);
    i["name"] = cpu_model_name();
    i["threads"] = int64_t(pool_->size());
    i["compute_units"] = int64_t(pool_->size());
    i["isa"] = std::string(compiled_isa());
    i["vector_bits"] = int64_t(compiled_vector_bits());
    i["fma"] = compiled_fma();
    i["fp16_arithmetic"] = compiled_fp16_arithmetic();
    i["memory_bytes"] = int64_t(physical_memory_bytes());
    i["llc_bytes"] = int64_t(last_level_cache_bytes());
    i["blas"] = blas_name();
    i["timer"] = std::string("std::chrono::steady_clock around a barrier-synchronised parallel region");
    return i;
  }

  std::shared_ptr<Buffer> alloc(size_t nbytes) override {
    if (nbytes == 0) throw std::invalid_argument("buffer size must be at least 1 byte");
    return std::make_shared<CpuBuffer>(*pool_, nbytes);
  }

  std::shared_ptr<Kernel> compile(const std::string& source, const std::string& entry,
                                  const Constants& constants) override {
    const KernelEntry* k = find_builtin(source, entry);
    if (!k->fn) throw UnsupportedError(std::string("[cpu::compile] ") + k->name + ": " + k->unsupported_reason);
    const char* want = constant_name(k->constant);  // F or PASSES, nullptr for none
    int64_t value = 1;
    for (const auto& [name, given] : constants) {
      if (!want || name != want)
        throw std::invalid_argument(std::string(k->name) + " has no constant '" + name + "'" +
                                    (want ? std::string(" (valid: ") + want + ")" : std::string(" (it takes none)")));
      if (!std::holds_alternative<int64_t>(given))
        throw std::invalid_argument("constant " + name + " must be an integer");
      value = std::get<int64_t>(given);
      if (value < 1 || value > (int64_t(1) << 24))
        throw std::invalid_argument("constant " + name + " = " + std::to_string(value) +
                                    " is out of range (valid: 1 to 16777216)");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto key = entry + "#" + std::to_string(value);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    auto kern = std::make_shared<BuiltinKernel>(pool_, k, value);
    cache_[key] = kern;
    return kern;
  }

  std::shared_ptr<Kernel> gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k) override {
    if (dtype != "fp32" && dtype != "fp64" && dtype != "fp16")
      throw UnsupportedError("[cpu::gemm] BLAS GEMM in " + dtype +
                             " is not available on the CPU backend (valid: fp32, fp64; fp16 on macOS)");
    const int64_t lim = int64_t(1) << 20;
    for (int64_t d : {m, n, k})
      if (d < 1 || d > lim)
        throw std::invalid_argument("GEMM dimension " + std::to_string(d) + " is out of range (valid: 1 to 1048576)");
    if (dtype == "fp16") {
      if (blas_hgemm_workspace(int(m), int(n), int(k)) < 0)
        throw UnsupportedError(
            "[cpu::gemm] FP16 GEMM needs BNNSMatMul (Accelerate, macOS 13 or newer), which this "
            "build or this shape does not have");
    } else if (const char* why = blas_unavailable()) {
      throw UnsupportedError(std::string("[cpu::gemm] ") + why);
    }
    return std::make_shared<GemmKernel>(dtype, int(m), int(n), int(k));
  }

 private:
  std::shared_ptr<ThreadPool> pool_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Kernel>> cache_;
};

std::mutex g_mutex;
std::weak_ptr<Backend> g_backend;

}  // namespace
}  // namespace cpu

BackendStatus cpu_status() {
  if (const char* why = cpu::isa_mismatch())
    return {"cpu", true, 0, std::string(why) + "; rebuild the package on this machine"};
  return {"cpu", true, 1, ""};
}

std::shared_ptr<Backend> make_cpu_backend(int index) {
  if (index != 0) throw DeviceError("[cpu] no device " + std::to_string(index) + " (the CPU is device 0)");
  if (const char* why = cpu::isa_mismatch())
    throw DeviceError(std::string("[cpu] ") + why + "; rebuild the package on this machine");
  std::lock_guard<std::mutex> lock(cpu::g_mutex);
  if (auto b = cpu::g_backend.lock()) return b;
  auto b = std::make_shared<cpu::CpuBackend>(unsigned(cpu::usable_cpus().size()));
  cpu::g_backend = b;
  return b;
}

}  // namespace ar
