// NVRTC: kernels compiled at run time for the device's own architecture (docs/design/backends.md, "The CUDA
// backend"), each compile kept in the on-disk kernel cache ("The kernel cache").
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/kernel_cache.h"
#include "device.h"

namespace ar::cuda {

namespace {

std::vector<int> supported_archs() {
  const NvrtcApi& n = nvrtc();
  int count = 0;
  NVRTC_CHECK(n.nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(size_t(std::max(count, 0)));
  if (count > 0) NVRTC_CHECK(n.nvrtcGetSupportedArchs(archs.data()));
  std::sort(archs.begin(), archs.end());
  return archs;
}

// sm_XY when NVRTC can emit SASS for the device; compute_XY (PTX of the newest architecture NVRTC
// knows, which the driver JIT-compiles) when the device is newer than NVRTC; "" when it is older
// than every architecture NVRTC supports. With arch_specific: sm_XYa (the architecture's own
// instructions, e.g. Hopper's wgmma; PTX ISA "Architecture-specific features"), which exists only as
// SASS for exactly this architecture and only from sm_90a (Hopper) on: "" below sm_90, and unless
// NVRTC supports sm_XY itself and is 12.0 or newer (the first to know sm_90a).
std::string choose_target(int cc_major, int cc_minor, bool arch_specific, std::string* why) {
  const int cc = cc_major * 10 + cc_minor;
  std::vector<int> archs = supported_archs();
  if (archs.empty()) {
    *why = "NVRTC reports no supported architecture";
    return "";
  }
  const bool known = std::find(archs.begin(), archs.end(), cc) != archs.end();
  const std::string range = "sm_" + std::to_string(archs.front()) + " to sm_" + std::to_string(archs.back());
  if (arch_specific) {
    const std::string target = "the arch-specific target sm_" + std::to_string(cc) + "a";
    if (cc < 90) {  // PTX ISA: architecture-specific targets begin with sm_90a
      *why = target + " does not exist: arch-specific targets begin with sm_90a (Hopper)";
      return "";
    }
    int major = 0, minor = 0;
    if (nvrtc().nvrtcVersion(&major, &minor) != NVRTC_SUCCESS || major < 12) {
      *why = target + " needs NVRTC 12.0 or newer; this is " +
             (major ? std::to_string(major) + "." + std::to_string(minor) : std::string("of unknown version"));
      return "";
    }
    if (!known) {
      *why = target + " needs an NVRTC that compiles for sm_" + std::to_string(cc) + "; this one supports " + range;
      return "";
    }
    return "sm_" + std::to_string(cc) + "a";
  }
  if (known) return "sm_" + std::to_string(cc);
  if (cc > archs.back()) return "compute_" + std::to_string(archs.back());
  *why = "NVRTC supports " + range + "; this device is sm_" + std::to_string(cc);
  return "";
}

struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtc().nvrtcDestroyProgram(&p);
  }
};

}  // namespace

std::string nvrtc_version(std::string* why) {
  const NvrtcApi* n = nvrtc_api(why);
  if (!n) return "";
  int major = 0, minor = 0;
  if (n->nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) {
    *why = "nvrtcVersion failed";
    return "";
  }
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_target(int cc_major, int cc_minor, std::string* why, bool arch_specific) {
  if (!nvrtc_api(why)) return "";
  return choose_target(cc_major, cc_minor, arch_specific, why);
}

namespace {

// One NVRTC compile of `source` with the full option list `opts` (target first).
CompiledImage compile_uncached(const std::string& source, const std::string& entry,
                               const std::vector<std::string>& opts, const std::string& target) {
  const NvrtcApi& n = nvrtc();
  CompiledImage out;
  out.target = target;
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

  Program prog;
  const std::string name = entry + ".cu";
  NVRTC_CHECK(n.nvrtcCreateProgram(&prog.p, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  nvrtcResult r = n.nvrtcCompileProgram(prog.p, int(argv.size()), argv.data());
  size_t log_size = 0;
  if (n.nvrtcGetProgramLogSize(prog.p, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    if (n.nvrtcGetProgramLog(prog.p, &out.log[0]) != NVRTC_SUCCESS) out.log.clear();
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  }
  if (r != NVRTC_SUCCESS) {
    std::string first = out.log.substr(0, out.log.find('\n'));
    throw CompileError("[cuda::nvrtcCompileProgram] " + std::string(n.nvrtcGetErrorString(r)) + " compiling '" + entry +
                           "' for " + out.target + (first.empty() ? "" : ": " + first),
                       out.log);
  }
  size_t size = 0;
  if (out.target.rfind("sm_", 0) == 0) {
    NVRTC_CHECK(n.nvrtcGetCUBINSize(prog.p, &size));
    out.image.resize(size);
    NVRTC_CHECK(n.nvrtcGetCUBIN(prog.p, out.image.data()));
  } else {
    NVRTC_CHECK(n.nvrtcGetPTXSize(prog.p, &size));
    out.image.resize(size);  // NUL-terminated, as cuModuleLoadData wants PTX
    NVRTC_CHECK(n.nvrtcGetPTX(prog.p, out.image.data()));
  }
  return out;
}

// The kernel cache's key of one compile (docs/design/backends.md, "The kernel cache"): everything its output
// depends on. The driver's version is part of it too: PTX is JIT-compiled by the driver at load.
kernel_cache::Key cache_key(const std::string& source, const std::string& entry, const std::vector<std::string>& opts,
                            const std::string& target) {
  std::string joined;
  for (const std::string& o : opts) joined += o + '\n';
  int driver_version = 0;
  if (driver().cuDriverGetVersion(&driver_version) != CUDA_SUCCESS) driver_version = -1;
  std::string why;
  return {{"producer", "apple_roofline cuda nvrtc_compile 1"},
          {"nvrtc", nvrtc_version(&why)},
          {"driver", std::to_string(driver_version)},
          {"target", target},
          {"entry", entry},
          {"options", joined},
          {"source", source}};
}

}  // namespace

CompiledImage nvrtc_compile(const std::string& source, const std::string& entry,
                            const std::vector<std::string>& options, int cc_major, int cc_minor, bool arch_specific) {
  std::string why;
  const std::string target = choose_target(cc_major, cc_minor, arch_specific, &why);
  if (target.empty()) throw CompileError("[cuda::nvrtcCompileProgram] cannot compile '" + entry + "': " + why, why);

  std::vector<std::string> opts = {"--gpu-architecture=" + target, "--std=c++17"};
  opts.insert(opts.end(), options.begin(), options.end());
  // Served from the on-disk cache where an earlier process compiled the same; else compiled and stored.
  const kernel_cache::Key key = cache_key(source, entry, opts, target);
  auto build = [&] {
    CompiledImage img = compile_uncached(source, entry, opts, target);
    return kernel_cache::Fields{img.target, std::string(img.image.begin(), img.image.end()), img.log};
  };
  kernel_cache::Cache& cache = kernel_cache::cache();
  kernel_cache::Fields f = cache.fetch(key, build);
  if (f.size() != 3 || f[0] != target || f[1].empty()) {  // a valid entry of another layout: never trusted
    cache.reject(key, "not a compiled image (" + std::to_string(f.size()) + " fields)");
    cache.count_compile();
    f = build();
    cache.put(key, f);
  }
  CompiledImage out;
  out.target = f[0];
  out.image.assign(f[1].begin(), f[1].end());
  out.log = f[2];
  return out;
}

}  // namespace ar::cuda
