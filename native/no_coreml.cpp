// Built everywhere but macOS: the Python API stays identical and says why Core ML cannot run here
// (docs/design/studies.md, "The engines study").
#include "core/coreml.h"
#include "core/errors.h"

namespace ar {
namespace {
const char* const kWhy = "Core ML predictions need macOS (Core ML is part of macOS; this build has no Core ML)";
}

std::string coreml_status() { return kWhy; }
std::string coreml_compile(const std::string&, const std::string&) {
  throw UnsupportedError(std::string("[coreml::compile] ") + kWhy);
}
CoreMLTiming coreml_time(const std::string&, const std::string&, const std::vector<CoreMLInput>&, const std::string&,
                         uint64_t, uint64_t, double) {
  throw UnsupportedError(std::string("[coreml::time] ") + kWhy);
}
CoreMLPlan coreml_compute_plan(const std::string&, const std::string&) {
  throw UnsupportedError(std::string("[coreml::compute_plan] ") + kWhy);
}
}  // namespace ar
