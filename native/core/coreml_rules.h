// Core ML's input checks and the decisions around a timed prediction, in plain C++ (core/coreml.h;
// docs/design/studies.md, "The engines study"): compiled into the extension on every platform and
// unit-tested off a Mac (tests/native/test_coreml_rules.py), so native/metal/coreml.mm keeps only
// the calls into Core ML. No vendor types cross this header: enums travel as their raw values,
// which coreml.mm checks against the SDK's with static_assert.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/coreml.h"

namespace ar::coreml_rules {

// MLComputeUnits' raw value (MLModelConfiguration.h: CPUOnly = 0, CPUAndGPU = 1, All = 2,
// CPUAndNeuralEngine = 3) for coremltools' name: CPU_ONLY, CPU_AND_GPU, ALL, CPU_AND_NE;
// std::invalid_argument naming the valid names else.
int64_t compute_units(const std::string& name);

// Dense row-major strides, in elements, of `shape` (MLMultiArray.h: strides count elements).
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);

// coreml_time's arguments, checked before Core ML is touched: std::invalid_argument for reps = 0,
// no inputs, a negative or NaN max_warmup_s, an input dimension below 1, or an input whose value
// count is not its shape's product. Returns each input's row-major strides.
std::vector<std::vector<int64_t>> check_time_args(const std::vector<CoreMLInput>& inputs, uint64_t reps,
                                                  double max_warmup_s);

// The warm-up rule (docs/design/measurement.md, "Measurement"): stop after `done` predictions once at least
// `min_warmup` ran and either the last two agree within 10 % (previous_s < 0: there was none
// before) or `spent_s` reached `max_warmup_s`.
bool warmup_done(uint64_t done, uint64_t min_warmup, double previous_s, double current_s, double spent_s,
                 double max_warmup_s);

// The longest coreml_compute_plan waits for +[MLComputePlan loadContentsOfURL:configuration:
// completionHandler:] to call back. Loading a plan compiles the model for the chosen compute units,
// seconds for the engines study's models; a handler that never runs must not hang the study, so the
// wait (in slices, signals handled: core/waits.h) is bounded well above that.
constexpr double kComputePlanWait_s = 120.0;
// The plan's reason when the handler had not run after `waited_s` seconds: which engines Core ML uses
// is then not known.
std::string compute_plan_timeout(const std::string& model, double waited_s);

// MLMultiArrayDataType by raw value (MLMultiArray.h: Float16 = 0x10010, Float32 = 0x10020,
// Double = 0x10040, Int32 = 0x20020): its NumPy name ("float16", ...) and *size in bytes; "" for
// a type this build does not know.
std::string dtype_name(int64_t raw, size_t* size);

// The elements of a strided array, dense and row-major, into *out: element i's offset is
// sum_d index[d] * strides[d], in elements of `element_size` bytes, into `size` bytes at `src`.
// Returns "" or, for an element outside those bytes, the problem (out is then incomplete): the
// caller raises it after leaving Core ML's block and its autorelease pool.
std::string dense_copy(const uint8_t* src, size_t size, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides, size_t element_size, std::vector<uint8_t>* out);

}  // namespace ar::coreml_rules
