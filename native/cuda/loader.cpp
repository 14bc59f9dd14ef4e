#include "loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/errors.h"

#ifndef AR_CUDA_LIBRARY_DIR
#define AR_CUDA_LIBRARY_DIR ""
#endif

namespace ar::cuda {

namespace {

#define AR_XSTR(x) AR_STR(x)
#define AR_STR(x) #x

struct Library {
  void* handle = nullptr;
  std::string path;
  std::string why;
};

// Directories searched before the dynamic loader's own path: $APPLE_ROOFLINE_CUDA_LIBS (set by the
// Python package to the lib folders of pip-installed NVIDIA wheels unless the user set it), the
// toolkit's library folder at build time, then $CUDA_HOME and $CUDA_PATH.
std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  auto add_list = [&](const char* list) {
    if (!list) return;
    std::string s(list);
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  };
  add_list(std::getenv("APPLE_ROOFLINE_CUDA_LIBS"));
  if (std::strlen(AR_CUDA_LIBRARY_DIR)) dirs.emplace_back(AR_CUDA_LIBRARY_DIR);
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env)) dirs.push_back(std::string(v) + "/lib64");
  return dirs;
}

// Try every directory with every soname, then the bare sonames (LD_LIBRARY_PATH, ld.so.cache).
Library open_library(const std::vector<std::string>& sonames, bool search_toolkit_dirs) {
  Library lib;
  std::string errors;
  std::vector<std::string> candidates;
  if (search_toolkit_dirs)
    for (const std::string& d : search_dirs())
      for (const std::string& n : sonames) candidates.push_back(d + "/" + n);
  for (const std::string& n : sonames) candidates.push_back(n);
  for (const std::string& c : candidates) {
    if (c.find('/') != std::string::npos) {
      FILE* f = std::fopen(c.c_str(), "rb");  // skip absent paths quietly
      if (!f) continue;
      std::fclose(f);
    }
    lib.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib.handle) {
      lib.path = c;
      return lib;
    }
    const char* e = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += e ? e : c;
  }
  lib.why = errors.empty() ? "not found" : errors;
  return lib;
}

template <class F>
bool load_symbol(Library& lib, F& fn, const char* name, const char* fallback_name) {
  void* p = dlsym(lib.handle, name);
  if (!p && fallback_name && std::strcmp(name, fallback_name) != 0) p = dlsym(lib.handle, fallback_name);
  if (!p) {
    lib.why = std::string("symbol ") + name + " missing in " + lib.path;
    return false;
  }
  fn = reinterpret_cast<F>(p);
  return true;
}

struct Loaded {
  Library driver_lib, nvrtc_lib, cublas_lib;
  DriverApi driver;
  NvrtcApi nvrtc;
  CublasApi cublas;
  bool driver_ok = false, nvrtc_ok = false, cublas_ok = false;
  std::once_flag driver_once, nvrtc_once, cublas_once;
};

Loaded& loaded() {
  static Loaded* l = new Loaded();  // never destroyed: libraries stay loaded until exit
  return *l;
}

}  // namespace

const DriverApi* driver_api(std::string* why) {
  Loaded& l = loaded();
  std::call_once(l.driver_once, [&] {
    // The driver comes with the GPU driver, not the toolkit: only the system's copy is valid.
    l.driver_lib = open_library({"libcuda.so.1", "libcuda.so"}, false);
    if (!l.driver_lib.handle) return;
    bool ok = true;
    // A _v2 symbol (the header's name) falls back to the base name on drivers older than the header.
#define AR_LOAD(f) ok = ok && load_symbol(l.driver_lib, l.driver.f, AR_XSTR(f), #f);
    AR_CU_FUNCTIONS(AR_LOAD)
#undef AR_LOAD
    l.driver_ok = ok;
  });
  if (!l.driver_ok && why) *why = "CUDA driver (libcuda.so.1) not available: " + l.driver_lib.why;
  return l.driver_ok ? &l.driver : nullptr;
}

// Opens a toolkit library (NVRTC, cuBLAS) and fills its table with `fill`; false when either fails.
template <class Fill>
bool open_toolkit_library(Library& lib, const std::vector<std::string>& sonames, Fill fill) {
  lib = open_library(sonames, true);
  return lib.handle && fill();
}

const NvrtcApi* nvrtc_api(std::string* why) {
  Loaded& l = loaded();
  std::call_once(l.nvrtc_once, [&] {
    l.nvrtc_ok = open_toolkit_library(l.nvrtc_lib, {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, [&] {
      bool ok = true;
#define AR_LOAD(f) ok = ok && load_symbol(l.nvrtc_lib, l.nvrtc.f, #f, nullptr);
      AR_NVRTC_FUNCTIONS(AR_LOAD)
#undef AR_LOAD
      return ok;
    });
  });
  if (!l.nvrtc_ok && why) *why = "NVRTC (libnvrtc.so) not available: " + l.nvrtc_lib.why;
  return l.nvrtc_ok ? &l.nvrtc : nullptr;
}

const CublasApi* cublas_api(std::string* why) {
  Loaded& l = loaded();
  std::call_once(l.cublas_once, [&] {
    l.cublas_ok = open_toolkit_library(l.cublas_lib, {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, [&] {
      bool ok = true;
#define AR_LOAD(f) ok = ok && load_symbol(l.cublas_lib, l.cublas.f, #f, nullptr);
      AR_CUBLAS_FUNCTIONS(AR_LOAD)
      AR_LOAD(cublasGemmEx)
#undef AR_LOAD
      return ok;
    });
  });
  if (!l.cublas_ok && why) *why = "cuBLAS (libcublas.so) not available: " + l.cublas_lib.why;
  return l.cublas_ok ? &l.cublas : nullptr;
}

const DriverApi& driver() {
  std::string why;
  const DriverApi* d = driver_api(&why);
  if (!d) throw BackendError("[cuda] " + why);
  return *d;
}

const NvrtcApi& nvrtc() {
  std::string why;
  const NvrtcApi* n = nvrtc_api(&why);
  if (!n) throw BackendError("[cuda] " + why);
  return *n;
}

const CublasApi& cublas() {
  std::string why;
  const CublasApi* c = cublas_api(&why);
  if (!c) throw BackendError("[cuda] " + why);
  return *c;
}

std::string loaded_path(const char* library) {
  Loaded& l = loaded();
  if (!std::strcmp(library, "driver")) return l.driver_ok ? l.driver_lib.path : "";
  if (!std::strcmp(library, "nvrtc")) return l.nvrtc_ok ? l.nvrtc_lib.path : "";
  if (!std::strcmp(library, "cublas")) return l.cublas_ok ? l.cublas_lib.path : "";
  return "";
}

std::string cu_error(CUresult r) {
  const char* name = nullptr;
  const char* msg = nullptr;
  std::string why;
  if (const DriverApi* d = driver_api(&why)) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &msg);
  }
  return std::string(name ? name : "CUDA error " + std::to_string(int(r))) + ": " + (msg ? msg : "unknown");
}

namespace {

static_assert(api_call("driver().cuMemsetD8Async(ptr_, 0, n, dev.stream())") == "cuMemsetD8Async");
static_assert(api_call("d.cuCtxSynchronize()") == "cuCtxSynchronize");
static_assert(api_call("c.cublasCreate_v2(&s->handle)") == "cublasCreate");
static_assert(api_call("cublas().cublasGemmEx(h, CUBLAS_OP_N)") == "cublasGemmEx");
static_assert(api_call("n.nvrtcGetPTX(prog.p, out.image.data())") == "nvrtcGetPTX");
static_assert(api_call("r") == "r");

// "[cuda::<call>] " for a call by name; for a call site, its API function's name.
std::string prefix(const char* call) { return std::string("[cuda::") + call + "] "; }
std::string prefix(const CallSite& site) { return "[cuda::" + std::string(api_call(site.expr)) + "] "; }

// "" for a call by name; " (<expression> at <file>:<line>)" for a call site, the file's name without its folders.
std::string suffix(const char*) { return ""; }
std::string suffix(const CallSite& site) {
  std::string_view file = site.file;
  size_t slash = file.find_last_of("/\\");
  if (slash != std::string_view::npos) file = file.substr(slash + 1);
  return " (" + std::string(site.expr) + " at " + std::string(file) + ":" + std::to_string(site.line) + ")";
}

template <class Where>
void check_cu(CUresult r, const Where& where) {
  if (r == CUDA_SUCCESS) return;
  throw DeviceError(prefix(where) + cu_error(r) + suffix(where));
}

template <class Where>
void check_nvrtc_at(nvrtcResult r, const Where& where) {
  if (r == NVRTC_SUCCESS) return;
  std::string why;
  const NvrtcApi* n = nvrtc_api(&why);
  const char* msg = n ? n->nvrtcGetErrorString(r) : nullptr;
  throw BackendError(prefix(where) + (msg ? msg : "NVRTC error " + std::to_string(int(r))) + suffix(where));
}

template <class Where>
void check_cublas_at(cublasStatus_t r, const Where& where) {
  if (r == CUBLAS_STATUS_SUCCESS) return;
  std::string why;
  const CublasApi* c = cublas_api(&why);
  std::string msg = c ? std::string(c->cublasGetStatusName(r)) + ": " + c->cublasGetStatusString(r)
                      : "cuBLAS status " + std::to_string(int(r));
  if (r == CUBLAS_STATUS_NOT_SUPPORTED) throw UnsupportedError(prefix(where) + msg + suffix(where));
  throw DeviceError(prefix(where) + msg + suffix(where));
}

}  // namespace

void check(CUresult r, const char* call) { check_cu(r, call); }
void check(CUresult r, const CallSite& site) { check_cu(r, site); }
void check_nvrtc(nvrtcResult r, const char* call) { check_nvrtc_at(r, call); }
void check_nvrtc(nvrtcResult r, const CallSite& site) { check_nvrtc_at(r, site); }
void check_cublas(cublasStatus_t r, const char* call) { check_cublas_at(r, call); }
void check_cublas(cublasStatus_t r, const CallSite& site) { check_cublas_at(r, site); }

}  // namespace ar::cuda
