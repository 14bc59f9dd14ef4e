// Core ML predictions timed from the native core (docs/design/studies.md, "The engines study"): plain C++
// declarations, implemented in Objective-C++ by metal/coreml.mm on macOS and by no_coreml.cpp
// elsewhere (which throws UnsupportedError with the reason). No vendor types cross this header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ar {

// One FP16 input feature: its name, shape and dense row-major IEEE half values (bit patterns).
struct CoreMLInput {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<uint16_t> data;
};

// What coreml_time measured.
struct CoreMLTiming {
  std::vector<double> seconds;  // host-clock seconds of each timed prediction, in order
  uint64_t warmup = 0;          // predictions run before the timed ones
  double load_s = 0.0;          // seconds to load the compiled model with its configuration
  std::string output_dtype;     // "float16", "float32", "float64" or "int32"
  std::vector<int64_t> output_shape;
  std::vector<uint8_t> first;           // the first timed prediction's output, dense row-major bytes
  uint64_t differing = 0;               // timed predictions whose output bytes differ from the first's
  std::vector<uint8_t> last_differing;  // the last such output (empty when none differ)
};

// "" when Core ML predictions can run here, else the reason they cannot (one sentence).
std::string coreml_status();

// Compile the model at `source` (an .mlpackage or .mlmodel) with Core ML and move the compiled
// .mlmodelc to `destination` (replacing it). Returns `destination`. DeviceError with Core ML's
// message when compiling fails; UnsupportedError off macOS.
std::string coreml_compile(const std::string& source, const std::string& destination);

// Load the compiled model `model` (.mlmodelc) with `compute_units` (coremltools' names of
// MLModelConfiguration.computeUnits: "CPU_ONLY", "CPU_AND_GPU", "CPU_AND_NE", "ALL"), feed
// `inputs` as MLMultiArrays over their own memory (no copy), run predictions until two consecutive ones
// agree within 10 % (at least `min_warmup`, at most `max_warmup_s` seconds of them), then time
// `reps` predictions one by one on the host clock. After each timed prediction (outside its
// interval) the output feature `output` is compared byte for byte with the first's.
// std::invalid_argument for bad arguments; DeviceError with Core ML's message when loading or a
// prediction fails; UnsupportedError off macOS.
CoreMLTiming coreml_time(const std::string& model, const std::string& compute_units,
                         const std::vector<CoreMLInput>& inputs, const std::string& output, uint64_t reps,
                         uint64_t min_warmup, double max_warmup_s);

// One ML-program operation of a compute plan: the operator, the device Core ML prefers for it
// ("cpu", "gpu", "neural_engine", "unknown", or "none" for constants that run on no device), the devices that could run
// it and the estimated relative cost (a fraction of the model's, or -1 when Core ML gives none).
struct CoreMLOpUsage {
  std::string op;
  std::string preferred;
  std::vector<std::string> supported;
  double cost = -1.0;
};

// The compute plan of a compiled model under a compute-units setting: `known` is false, with the
// reason, where Core ML cannot say (MLComputePlan needs macOS 14.4).
struct CoreMLPlan {
  bool known = false;
  std::string reason;
  std::vector<CoreMLOpUsage> ops;
};

// The compute plan of `model` (.mlmodelc) with `compute_units`. UnsupportedError off macOS;
// DeviceError with Core ML's message when the plan fails to load.
CoreMLPlan coreml_compute_plan(const std::string& model, const std::string& compute_units);

}  // namespace ar
