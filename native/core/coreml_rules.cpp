// Core ML's input checks and decisions (core/coreml_rules.h; docs/design/studies.md, "The engines study").
#include "core/coreml_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ar::coreml_rules {

int64_t compute_units(const std::string& name) {
  if (name == "CPU_ONLY") return 0;
  if (name == "CPU_AND_GPU") return 1;
  if (name == "ALL") return 2;
  if (name == "CPU_AND_NE") return 3;
  throw std::invalid_argument("compute units '" + name + "' (valid: CPU_ONLY, CPU_AND_GPU, CPU_AND_NE, ALL)");
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

std::vector<std::vector<int64_t>> check_time_args(const std::vector<CoreMLInput>& inputs, uint64_t reps,
                                                  double max_warmup_s) {
  if (reps == 0) throw std::invalid_argument("reps must be at least 1");
  if (inputs.empty()) throw std::invalid_argument("a prediction needs at least one input");
  if (!(max_warmup_s >= 0.0)) throw std::invalid_argument("max_warmup_s must be >= 0");
  std::vector<std::vector<int64_t>> strides;
  for (const CoreMLInput& in : inputs) {
    size_t count = 1;
    for (int64_t d : in.shape) {
      if (d <= 0)
        throw std::invalid_argument("input '" + in.name + "' has a dimension " + std::to_string(d) +
                                    " (valid: 1 or more)");
      count *= size_t(d);
    }
    if (count != in.data.size())
      throw std::invalid_argument("input '" + in.name + "' holds " + std::to_string(in.data.size()) +
                                  " values, its shape needs " + std::to_string(count));
    strides.push_back(row_major_strides(in.shape));
  }
  return strides;
}

bool warmup_done(uint64_t done, uint64_t min_warmup, double previous_s, double current_s, double spent_s,
                 double max_warmup_s) {
  const bool agree = previous_s > 0.0 && std::abs(current_s - previous_s) <= 0.1 * std::max(current_s, previous_s);
  return done >= min_warmup && (agree || spent_s >= max_warmup_s);
}

std::string compute_plan_timeout(const std::string& model, double waited_s) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%g", waited_s);
  return std::string("MLComputePlan did not deliver the plan of ") + model + " within " + secs +
         " s (its completion handler never ran): which engines Core ML uses is not known";
}

std::string dtype_name(int64_t raw, size_t* size) {
  switch (raw) {
    case 0x10000 | 16: *size = 2; return "float16";
    case 0x10000 | 32: *size = 4; return "float32";
    case 0x10000 | 64: *size = 8; return "float64";
    case 0x20000 | 32: *size = 4; return "int32";
  }
  *size = 0;
  return "";
}

std::string dense_copy(const uint8_t* src, size_t size, const std::vector<int64_t>& shape,
                       const std::vector<int64_t>& strides, size_t element_size, std::vector<uint8_t>* out) {
  const size_t rank = shape.size();
  if (strides.size() != rank)
    return std::to_string(strides.size()) + " strides for " + std::to_string(rank) + " dimensions";
  size_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return "a negative dimension " + std::to_string(d);
    count *= size_t(d);
  }
  out->assign(count * element_size, 0);
  std::vector<int64_t> index(rank, 0);
  for (size_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    if (offset < 0 || size_t(offset + 1) * element_size > size)
      return "element " + std::to_string(i) + " lies at element offset " + std::to_string(offset) +
             ", outside the array's " + std::to_string(size) + " bytes";
    std::memcpy(out->data() + i * element_size, src + size_t(offset) * element_size, element_size);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return "";
}

}  // namespace ar::coreml_rules
