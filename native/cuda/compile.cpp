// NVRTC: kernels compiled at run time for the device's own architecture
// (docs/design.md, "The CUDA backend").
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "device.h"

namespace ar::cuda {

namespace {

std::vector<int> supported_archs() {
  const NvrtcApi& n = nvrtc();
  int count = 0;
  check_nvrtc(n.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(size_t(std::max(count, 0)));
  if (count > 0) check_nvrtc(n.nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
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

CompiledImage nvrtc_compile(const std::string& source, const std::string& entry,
                            const std::vector<std::string>& options, int cc_major, int cc_minor, bool arch_specific) {
  const NvrtcApi& n = nvrtc();
  std::string why;
  CompiledImage out;
  out.target = choose_target(cc_major, cc_minor, arch_specific, &why);
  if (out.target.empty()) throw CompileError("[cuda::nvrtcCompileProgram] cannot compile '" + entry + "': " + why, why);

  std::vector<std::string> opts = {"--gpu-architecture=" + out.target, "--std=c++17"};
  opts.insert(opts.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

  Program prog;
  const std::string name = entry + ".cu";
  check_nvrtc(n.nvrtcCreateProgram(&prog.p, source.c_str(), name.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram");
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
    check_nvrtc(n.nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize");
    out.image.resize(size);
    check_nvrtc(n.nvrtcGetCUBIN(prog.p, out.image.data()), "nvrtcGetCUBIN");
  } else {
    check_nvrtc(n.nvrtcGetPTXSize(prog.p, &size), "nvrtcGetPTXSize");
    out.image.resize(size);  // NUL-terminated, as cuModuleLoadData wants PTX
    check_nvrtc(n.nvrtcGetPTX(prog.p, out.image.data()), "nvrtcGetPTX");
  }
  return out;
}

}  // namespace ar::cuda
