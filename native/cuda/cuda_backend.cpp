// The CUDA backend (docs/design/backends.md, "The CUDA backend"): the driver API on the primary context,
// NVRTC kernels cached by (source, entry, constants, target), and on disk (compile.cpp), CUDA events
// around each sample's batch on one stream, cuBLAS GEMM. Every vendor status is checked and becomes
// an exception naming the call.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/backend.h"
#include "core/checks.h"
#include "core/errors.h"
#include "device.h"

namespace ar {

namespace cuda {
namespace {

constexpr int kDefaultBlock = 256;
// The compile constant by which a kernel asks for its architecture's arch-specific target (sm_90a:
// Hopper's wgmma): 0 or 1. The backend consumes it, like BLOCK; it is never a macro of the source
// (a kernel that needs the target checks __CUDA_ARCH_FEAT_SM90_ALL itself).
constexpr const char* kArchSpecific = "AR_ARCH_SPECIFIC";
// The compile constant that turns the clock probe's launches off (0) or on (1, the default) for a
// source that includes shaders/cuda/clock.cuh: consumed here, which passes the macro of that name to
// each of the two builds (docs/design/clocks.md, "Clocks").
constexpr const char* kClockProbe = "AR_CLOCK_PROBE";
// What the probed build's entry is renamed to (-D<entry>=<entry><suffix>), so that a profiler tells
// its launches from the timed ones.
constexpr const char* kProbeSuffix = "_ar_clock";

bool check_flag(const std::variant<int64_t, double>& value, const char* name) {
  const int64_t* b = std::get_if<int64_t>(&value);
  if (!b || (*b != 0 && *b != 1))
    throw std::invalid_argument(std::string("constant ") + name + " must be the int 0 or 1");
  return *b == 1;
}

// A loaded module; unloaded (with its context current) when the last kernel using it goes.
struct Module {
  std::shared_ptr<Device> dev;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  ~Module() {
    if (!module || dev->abandoned()) return;  // the unload could wait for the work still running
    try {
      dev->make_current();
      driver().cuModuleUnload(module);
    } catch (...) {
    }
  }
};

class CudaKernel final : public Kernel {
 public:
  // `probe`: the same kernel built with shaders/cuda/clock.cuh's probe, launched apart from the
  // timed samples to read the clock (null: `probe_reason` says why there is none).
  CudaKernel(std::shared_ptr<Module> m, std::string entry, int block, std::shared_ptr<Module> probe,
             std::string probe_reason)
      : m_(std::move(m)),
        probe_(std::move(probe)),
        entry_(std::move(entry)),
        block_(block),
        probe_reason_(std::move(probe_reason)) {
    // cuda.h: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK is "the maximum number of threads per block,
    // beyond which a launch of the function would fail" (registers, __launch_bounds__).
    m_->dev->make_current();
    int max_threads = 0;
    CU_CHECK(driver().cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m_->function));
    max_block_ = uint32_t(max_threads);
    warp_ = uint32_t(m_->dev->attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
    if (uint32_t(block_) > max_block_)
      throw std::invalid_argument("constant BLOCK " + std::to_string(block_) + " exceeds the " +
                                  std::to_string(max_block_) + " threads per block kernel '" + entry_ +
                                  "' allows (its registers; cuFuncGetAttribute MAX_THREADS_PER_BLOCK)");
    // cuda.h: cuOccupancyMaxActiveBlocksPerMultiprocessor gives the resident blocks per SM for
    // this function at this block size (registers, shared memory and the SM's limits).
    int blocks_per_sm = 0;
    CU_CHECK(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, m_->function, block_, 0));
    wave_ = uint64_t(blocks_per_sm) * uint64_t(block_) *
            uint64_t(m_->dev->attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
    if (probe_)
      clock_slots_ =
          ClockSlots(probe_->module,
                     "%clock64 / %globaltimer per SM, from its first block's entry to its last block's exit, in "
                     "probed launches of the kernel's probed build between the timed samples, which carry no "
                     "probe (shaders/cuda/clock.cuh)");
  }
  // Kernel parameters by core/backend.h's convention: one 8-byte slot per argument (pointer, long
  // long or double), then the work-item count.
  // Up to kInline arguments (every kernel of this project) are held inline: a launch allocates nothing.
  struct Params {
    static constexpr size_t kInline = 15;
    unsigned long long inline_slots[kInline + 1];
    void* inline_ptrs[kInline + 1];
    std::vector<unsigned long long> heap_slots;
    std::vector<void*> heap_ptrs;
    unsigned long long* slots;
    void** ptrs;
    Params(const std::vector<Arg>& args, uint64_t work_items, const Device& dev) {
      const size_t n = args.size() + 1;
      if (n <= kInline + 1) {
        slots = inline_slots;
        ptrs = inline_ptrs;
      } else {
        heap_slots.resize(n);
        heap_ptrs.resize(n);
        slots = heap_slots.data();
        ptrs = heap_ptrs.data();
      }
      for (size_t i = 0; i < args.size(); ++i) {
        if (auto* b = std::get_if<Buffer*>(&args[i])) {
          CUdeviceptr p = buffer_arg(*b, dev, i).ptr();
          static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "64-bit device pointers");
          std::memcpy(&slots[i], &p, sizeof p);
        } else if (auto* v = std::get_if<int64_t>(&args[i])) {
          long long x = *v;
          std::memcpy(&slots[i], &x, sizeof x);
        } else {
          double x = std::get<double>(args[i]);
          std::memcpy(&slots[i], &x, sizeof x);
        }
        ptrs[i] = &slots[i];
      }
      slots[n - 1] = work_items;
      ptrs[n - 1] = &slots[n - 1];
    }
    Params(const Params&) = delete;  // ptrs point into this object
    Params& operator=(const Params&) = delete;
  };
  unsigned grid(uint64_t work_items) const {
    const uint64_t blocks = (work_items + uint64_t(block_) - 1) / uint64_t(block_);
    if (work_items == 0 || blocks > 0x7fffffffull)
      throw std::invalid_argument("launch of " + std::to_string(work_items) +
                                  " work items is out of range (valid: 1 to " +
                                  std::to_string(0x7fffffffull * uint64_t(block_)) + ", 2^31-1 blocks)");
    return unsigned(blocks);
  }
  void submit(unsigned blocks, Params& p, const Module& m) const {
    CU_CHECK(driver().cuLaunchKernel(m.function, blocks, 1, 1, unsigned(block_), 1, 1, 0, m_->dev->stream(), p.ptrs,
                                     nullptr));
  }
  void submit(unsigned blocks, Params& p) const { submit(blocks, p, *m_); }

  std::string entry() const override { return entry_; }
  uint64_t wave_items() const override { return wave_; }
  uint32_t block() const override { return uint32_t(block_); }
  uint32_t simd_width() const override { return warp_; }
  uint32_t max_block() const override { return max_block_; }

  std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                           bool clock) override {
    const Device& dev = *m_->dev;
    dev.make_current();
    Params p(args, work_items, dev);
    const unsigned blocks = grid(work_items);
    const unsigned per_sample = probes_per_sample(launch_s_);
    // clock false: no probed launch at all (begin with 0 samples to probe leaves probed() false)
    clock_slots_.begin(dev, reps, per_sample, clock ? probed_samples(reps, batch, per_sample) : 0);
    SampleEvents ev(dev, size_t(reps));
    for (uint64_t r = 0; r < reps; ++r) {
      ev.start(size_t(r));
      for (uint64_t b = 0; b < batch; ++b) submit(blocks, p);
      ev.stop(size_t(r));
      if (!clock_slots_.probed(r)) continue;
      for (unsigned j = 0; j < per_sample; ++j) {  // after the sample's stop event: never timed
        clock_slots_.point(dev, clock_slots_.slot(r, j));
        submit(blocks, p, *probe_);
      }
    }
    std::vector<double> out = ev.elapsed(entry_.c_str());
    if (!clock) {
      clock_ = ClockReading{{}, kClockNotAsked};
    } else if (probe_) {
      clock_ = clock_slots_.reading(dev);
    } else {
      clock_ = ClockReading{{}, probe_reason_};
    }
    std::vector<double> sorted = out;
    std::sort(sorted.begin(), sorted.end());
    if (!sorted.empty() && batch > 0) launch_s_ = sorted[sorted.size() / 2] / double(batch);
    return out;
  }

  ClockReading clock() const override { return clock_; }

  bool launch_enqueues() const override { return true; }

  void launch(const std::vector<Arg>& args, uint64_t work_items) override {
    m_->dev->make_current();
    Params p(args, work_items, *m_->dev);
    submit(grid(work_items), p);
  }

  // call -> launch (cuLaunchKernel returned) -> start (the kernel's %globaltimer at entry, on the
  // host clock) -> complete (cuStreamSynchronize returned). The kernel writes the timer into the
  // first 8 bytes of its first argument (dispatch.cu's *_stamp kernels); the offset between the
  // timer and the host clock is pinged before and after the launches and interpolated between.
  Timeline timeline(const std::vector<Arg>& args, uint64_t work_items, uint64_t reps) override {
    const std::shared_ptr<Device>& dev = m_->dev;
    const DriverApi& d = driver();
    dev->make_current();
    if (args.empty() || !std::holds_alternative<Buffer*>(args[0]))
      throw std::invalid_argument(entry_ +
                                  ": a CUDA timeline needs the kernel to write %globaltimer into its first "
                                  "argument, a buffer (dispatch.cu's *_stamp kernels)");
    CudaBuffer& stamp = buffer_arg(std::get<Buffer*>(args[0]), *dev, 0);
    if (stamp.nbytes() < sizeof(uint64_t)) throw std::invalid_argument(entry_ + ": the stamp buffer needs 8 bytes");
    Params p(args, work_items, *dev);
    const unsigned blocks = grid(work_items);
    GlobalTimerSync sync(dev);
    const TimerOffset before = sync.measure(64);
    std::vector<int64_t> call(reps), launched(reps), done(reps);
    std::vector<uint64_t> start(reps);
    for (uint64_t r = 0; r < reps; ++r) {
      CU_CHECK(d.cuMemsetD8Async(stamp.ptr(), 0, sizeof(uint64_t), dev->stream()));
      dev->sync("clearing the stamp");
      call[r] = steady_ns();
      submit(blocks, p);
      launched[r] = steady_ns();
      dev->sync(entry_.c_str(), true);
      done[r] = steady_ns();
      CU_CHECK(d.cuMemcpyDtoHAsync(&start[r], stamp.ptr(), sizeof(uint64_t), dev->stream()));
      dev->sync("reading the stamp");
      if (start[r] == 0)
        throw std::invalid_argument(entry_ +
                                    " wrote no %globaltimer stamp into its first argument (a CUDA timeline "
                                    "needs a kernel that does: dispatch.cu's *_stamp kernels)");
    }
    const TimerOffset after = sync.measure(64);
    const double span = double(after.host_ns - before.host_ns);
    const double drift = double(after.offset_ns - before.offset_ns);
    Timeline tl;
    tl.events = {"call", "launch", "start", "complete"};
    tl.submit = "call";
    tl.start = "start";
    tl.uncertainty_s = 1e-9 * double(std::max(before.half_width_ns, after.half_width_ns) + sync.resolution_ns()) +
                       1e-9 * std::abs(drift) / 2;
    for (uint64_t r = 0; r < reps; ++r) {
      const double offset =
          double(before.offset_ns) + (span > 0 ? drift * double(call[r] - before.host_ns) / span : 0.0);
      const double start_ns = double(start[r]) - offset;
      // A start more than 1 ms outside its own call..complete window is no %globaltimer stamp.
      if (start_ns < double(call[r]) - 1e6 || start_ns > double(done[r]) + 1e6)
        throw std::invalid_argument(entry_ +
                                    ": the first 8 bytes of its first argument are not a %globaltimer stamp "
                                    "taken during the launch (a CUDA timeline needs dispatch.cu's *_stamp kernels)");
      tl.t.push_back({0.0, 1e-9 * double(launched[r] - call[r]), 1e-9 * (start_ns - double(call[r])),
                      1e-9 * double(done[r] - call[r])});
    }
    tl.clock =
        "host std::chrono::steady_clock; kernel start from %globaltimer, mapped by pinging a kernel through "
        "mapped host memory before and after (best of 64 pings: +-" +
        std::to_string(before.half_width_ns) + " / " + std::to_string(after.half_width_ns) + " ns; drift " +
        std::to_string(int64_t(drift)) + " ns over the launches; timer step " + std::to_string(sync.resolution_ns()) +
        " ns)";
    return tl;
  }

 private:
  std::shared_ptr<Module> m_;
  std::shared_ptr<Module> probe_;
  std::string entry_;
  int block_;
  std::string probe_reason_;
  uint64_t wave_ = 0;
  uint32_t max_block_ = 0, warp_ = 0;
  ClockSlots clock_slots_;  // the probed build's `ar_clock`
  ClockReading clock_;      // of the last time() call
  double launch_s_ = 0;     // the last time() call's median seconds per launch (0: none yet)
};

std::string format_constant(const std::variant<int64_t, double>& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i) + "LL";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v));
  std::string s(buf);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // a double literal, not an int
  return s;
}

std::string version_string(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// The device attributes info() reports, each where the driver gives a positive value, and ECC.
void add_attributes(const DriverApi& d, CUdevice device, Info& i) {
  struct A {
    const char* key;
    CUdevice_attribute attr;
    int64_t scale;
  };
  // cuda.h: CLOCK_RATE is "typical clock frequency in kilohertz" (the maximum boost clock on
  // data-centre parts), MEMORY_CLOCK_RATE the "peak memory clock frequency in kilohertz".
  static const A attrs[] = {
      {"compute_units", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1},
      {"clock_hz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1000},
      {"memory_clock_hz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 1000},
      {"memory_bus_bits", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 1},
      {"llc_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 1},
      {"warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1},
      {"max_threads_per_sm", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 1},
      {"max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1},
      {"shared_memory_per_sm_bytes", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 1},
      {"shared_memory_per_block_bytes", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 1},
      {"registers_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 1},
  };
  for (const A& a : attrs) {
    int v = 0;
    if (d.cuDeviceGetAttribute(&v, a.attr, device) == CUDA_SUCCESS && v > 0) i[a.key] = int64_t(v) * a.scale;
  }
  int ecc = 0;
  if (d.cuDeviceGetAttribute(&ecc, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, device) == CUDA_SUCCESS) i["ecc"] = ecc != 0;
}

// NVRTC's version, its targets for compute capability cc_major.cc_minor and its library, and
// cuBLAS's version and library, or why each is unavailable.
void add_libraries(int cc_major, int cc_minor, Info& i) {
  std::string why;
  std::string v = nvrtc_version(&why);
  i["nvrtc_version"] = v.empty() ? "unavailable: " + why : v;
  if (!v.empty()) {
    why.clear();
    std::string t = nvrtc_target(cc_major, cc_minor, &why);
    i["nvrtc_target"] = t.empty() ? "unavailable: " + why : t;
    why.clear();
    t = nvrtc_target(cc_major, cc_minor, &why, true);
    i["nvrtc_arch_target"] = t.empty() ? "unavailable: " + why : t;
    i["nvrtc_library"] = loaded_path("nvrtc");
  }
  why.clear();
  v = cublas_version(&why);
  i["cublas_version"] = v.empty() ? "unavailable: " + why : v;
  if (!v.empty()) i["cublas_library"] = loaded_path("cublas");
}

// What compile() builds for one entry and its constants: the block size, whether the
// architecture's arch-specific target was asked for, whether the clock probe is on, NVRTC's -D
// options and the cache key so far.
struct BuildPlan {
  int block = kDefaultBlock;
  bool arch_specific = false;
  bool probe_on = true;
  std::vector<std::string> options;
  std::string key;
};

// The constants as a BuildPlan: BLOCK, AR_ARCH_SPECIFIC and AR_CLOCK_PROBE are requests to the
// backend, every other constant a -D option. std::invalid_argument for a name that is not a C
// identifier or a bad value.
BuildPlan plan_build(const std::string& entry, const Constants& constants) {
  BuildPlan p;
  p.key = entry;
  for (const auto& [name, value] : constants) {
    if (!is_identifier(name)) throw std::invalid_argument("constant name '" + name + "' is not a C identifier");
    if (name == "BLOCK") {
      p.block = check_block(value, "block");
      continue;
    }
    if (name == kArchSpecific) {  // a request to this backend, not a macro of the source
      p.arch_specific = check_flag(value, kArchSpecific);
      p.key += std::string("|") + kArchSpecific + (p.arch_specific ? "=1" : "=0");
      continue;
    }
    if (name == kClockProbe) {  // likewise
      p.probe_on = check_flag(value, kClockProbe);
      continue;
    }
    p.options.push_back("-D" + name + "=" + format_constant(value));
    p.key += "|" + p.options.back();
  }
  p.options.push_back("-DBLOCK=" + std::to_string(p.block));
  return p;
}

// A source with the clock probe is built twice: without it for the timed samples, with it (the
// entry renamed) for the probed launches between them (shaders/cuda/clock.cuh). Returns the probed
// build's options (empty when there is none, with why the clock is not measured in `reason`) and
// adds the probe's setting to `plan`'s options and key.
std::vector<std::string> probe_build(const std::string& source, const std::string& entry, BuildPlan& plan,
                                     std::string* reason) {
  const bool has_probe = source.find("AR_CLOCK_PROBE_HERE") != std::string::npos;
  std::vector<std::string> probe_options;
  if (has_probe && plan.probe_on) {
    probe_options = plan.options;
    probe_options.push_back(std::string("-D") + kClockProbe + "=1");
    probe_options.push_back("-D" + entry + "=" + entry + kProbeSuffix);
  } else {
    *reason = has_probe ? std::string("not measured: the clock probe was turned off (") + kClockProbe + "=0)"
                        : "not measured: the kernel has no clock probe (shaders/cuda/clock.cuh)";
  }
  if (has_probe) plan.options.push_back(std::string("-D") + kClockProbe + "=0");
  plan.key += std::string("|") + kClockProbe + (plan.probe_on ? "=1" : "=0");
  return probe_options;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index) : dev_(std::make_shared<Device>(index)) {
    cc_major_ = dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    cc_minor_ = dev_->attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  }

  Info info() const override {
    const DriverApi& d = driver();
    dev_->make_current();
    Info i;
    char name[256] = {0};
    CU_CHECK(d.cuDeviceGetName(name, sizeof name - 1, dev_->device()));
    size_t total = 0;
    CU_CHECK(d.cuDeviceTotalMem(&total, dev_->device()));
    int driver_version = 0;
    CU_CHECK(d.cuDriverGetVersion(&driver_version));
    char bus[32] = {0};
    if (d.cuDeviceGetPCIBusId(bus, sizeof bus - 1, dev_->device()) == CUDA_SUCCESS) i["pci_bus_id"] = std::string(bus);
    i["backend"] = std::string("cuda");
    i["name"] = std::string(name);
    i["index"] = int64_t(dev_->index());
    i["memory_bytes"] = int64_t(total);
    i["cc_major"] = int64_t(cc_major_);
    i["cc_minor"] = int64_t(cc_minor_);
    i["compute_capability"] = std::to_string(cc_major_) + "." + std::to_string(cc_minor_);
    i["driver_version"] = version_string(driver_version);
    i["driver_library"] = loaded_path("driver");
    add_attributes(d, dev_->device(), i);
    add_libraries(cc_major_, cc_minor_, i);
    return i;
  }

  std::shared_ptr<Buffer> alloc(size_t nbytes) override { return std::make_shared<CudaBuffer>(dev_, nbytes); }

  std::shared_ptr<Kernel> compile(const std::string& source, const std::string& entry,
                                  const Constants& constants) override {
    if (!is_identifier(entry)) throw std::invalid_argument("kernel entry '" + entry + "' is not a C identifier");
    BuildPlan plan = plan_build(entry, constants);
    std::string probe_reason;
    const std::vector<std::string> probe_options = probe_build(source, entry, plan, &probe_reason);
    plan.key += "|-DBLOCK=" + std::to_string(plan.block) + "|" + source;  // the whole source: no hash collisions
    {
      std::lock_guard<std::mutex> lock(cache_mutex_);
      auto it = cache_.find(plan.key);
      if (it != cache_.end()) return it->second;
    }
    // NVRTC runs outside the lock, so kernels compiled from several threads (suites/base.py
    // prebuild) compile in parallel: the NVRTC User Guide makes its API thread-safe for distinct
    // programs, and each call here has its own. The first to finish is cached; a racing duplicate
    // of the same key is dropped (docs/design/budgets.md, "Time budgets").
    // The probed build compiles on a thread of its own meanwhile; its failure costs the clock only.
    std::future<CompiledImage> probe_img;
    if (!probe_options.empty())
      probe_img = std::async(std::launch::async, nvrtc_compile, std::cref(source), entry + kProbeSuffix,
                             std::cref(probe_options), cc_major_, cc_minor_, plan.arch_specific);
    CompiledImage img;
    try {
      img = nvrtc_compile(source, entry, plan.options, cc_major_, cc_minor_, plan.arch_specific);
    } catch (...) {
      if (probe_img.valid()) probe_img.wait();  // it reads `source` and `probe_options`
      throw;
    }
    std::shared_ptr<Module> probe = load_probe(probe_img, entry, &probe_reason);
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (auto it = cache_.find(plan.key); it != cache_.end()) return it->second;
    auto k = std::make_shared<CudaKernel>(load_module(img, entry), entry, plan.block, probe, probe_reason);
    cache_.emplace(plan.key, k);
    return k;
  }

  // The probed build's module once `img` (its compile, if any) has finished: null when there is
  // none, or when it failed, with why the clock is then not measured in `reason`.
  std::shared_ptr<Module> load_probe(std::future<CompiledImage>& img, const std::string& entry, std::string* reason) {
    if (!img.valid()) return nullptr;
    try {
      CompiledImage pi = img.get();
      std::lock_guard<std::mutex> lock(cache_mutex_);
      return load_module(pi, entry + kProbeSuffix);
    } catch (const std::exception& e) {
      *reason = std::string("not measured: the kernel's probed build failed (") + e.what() + ")";
      return nullptr;
    }
  }

  // Loads a compiled image and finds `entry` in it (the context made current).
  std::shared_ptr<Module> load_module(const CompiledImage& img, const std::string& entry) {
    dev_->make_current();
    auto m = std::make_shared<Module>();
    m->dev = dev_;
    CU_CHECK(driver().cuModuleLoadData(&m->module, img.image.data()));
    CUresult r = driver().cuModuleGetFunction(&m->function, m->module, entry.c_str());
    if (r == CUDA_ERROR_NOT_FOUND)
      throw CompileError("[cuda::cuModuleGetFunction] no kernel '" + entry +
                             "' in the compiled source (is it extern \"C\" __global__?)",
                         img.log);
    check(r, "cuModuleGetFunction");
    return m;
  }

  std::shared_ptr<Kernel> gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k) override {
    return make_cublas_gemm(dev_, dtype, m, n, k);
  }

  void synchronize() override {
    dev_->make_current();
    dev_->sync("synchronize", true);
  }

 private:
  std::shared_ptr<Device> dev_;
  int cc_major_ = 0, cc_minor_ = 0;
  std::mutex cache_mutex_;
  std::map<std::string, std::shared_ptr<Kernel>> cache_;
};

}  // namespace
}  // namespace cuda

BackendStatus cuda_status() {
  BackendStatus s{"cuda", true, 0, ""};
  std::string why;
  const cuda::DriverApi* d = cuda::driver_api(&why);
  if (!d) {
    s.reason = why;
    return s;
  }
  static const CUresult init = d->cuInit(0);  // once per process
  if (init != CUDA_SUCCESS) {
    s.reason = "[cuda::cuInit] " + cuda::cu_error(init);
    return s;
  }
  int count = 0;
  CUresult r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    s.reason = "[cuda::cuDeviceGetCount] " + cuda::cu_error(r);
    return s;
  }
  s.devices = count;
  if (count == 0) s.reason = "the CUDA driver reports no device";
  return s;
}

std::shared_ptr<Backend> make_cuda_backend(int index) { return std::make_shared<cuda::CudaBackend>(index); }

}  // namespace ar
