// Core ML bindings (core/coreml.h): the status, compiling a model, timing its predictions and its
// compute plan. The GIL is released while Core ML compiles, loads and predicts.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <stdexcept>
#include <tuple>

#include "../core/coreml.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

namespace {

using PyInput = std::tuple<std::string, std::vector<int64_t>, nb::bytes>;

std::vector<CoreMLInput> to_inputs(const std::vector<PyInput>& inputs) {
  std::vector<CoreMLInput> out;
  for (const PyInput& in : inputs) {
    const nb::bytes& b = std::get<2>(in);
    if (b.size() % 2 != 0)
      throw std::invalid_argument("input '" + std::get<0>(in) + "': FP16 data must be an even number of bytes");
    CoreMLInput c{std::get<0>(in), std::get<1>(in), std::vector<uint16_t>(b.size() / 2)};
    std::memcpy(c.data.data(), b.c_str(), b.size());
    out.push_back(std::move(c));
  }
  return out;
}

// coreml_time's result as the dict coreml_time returns to Python (its docstring lists the keys).
nb::dict timing_dict(const CoreMLTiming& t) {
  nb::dict d;
  d["seconds"] = t.seconds;
  d["warmup"] = t.warmup;
  d["load_s"] = t.load_s;
  d["output_dtype"] = t.output_dtype;
  d["output_shape"] = t.output_shape;
  d["first"] = to_bytes(t.first);
  d["differing"] = t.differing;
  d["last_differing"] = to_bytes(t.last_differing);
  return d;
}

// A compute plan as the dict coreml_compute_plan returns to Python: known, reason and one dict per
// operation (op, preferred, supported, cost).
nb::dict plan_dict(const CoreMLPlan& p) {
  nb::list ops;
  for (const CoreMLOpUsage& u : p.ops) {
    nb::dict o;
    o["op"] = u.op;
    o["preferred"] = u.preferred;
    o["supported"] = u.supported;
    o["cost"] = u.cost;
    ops.append(o);
  }
  nb::dict d;
  d["known"] = p.known;
  d["reason"] = p.reason;
  d["ops"] = ops;
  return d;
}

}  // namespace

void init_coreml(nb::module_& m) {
  m.def("coreml_status", &ar::coreml_status,
        "\"\" when Core ML predictions can run in this build on this machine, else the reason they cannot.");
  m.def(
      "coreml_compile",
      [](const std::string& source, const std::string& destination) {
        nb::gil_scoped_release r;
        return ar::coreml_compile(source, destination);
      },
      "source"_a, "destination"_a,
      "Compile the .mlpackage (or .mlmodel) at source with Core ML into the .mlmodelc folder\n"
      "destination (replaced); returns destination. Raises DeviceError with Core ML's message,\n"
      "UnsupportedError off macOS.");
  m.def(
      "coreml_time",
      [](const std::string& model, const std::string& compute_units, const std::vector<PyInput>& inputs,
         const std::string& output, uint64_t reps, uint64_t min_warmup, double max_warmup_s) {
        std::vector<CoreMLInput> in = to_inputs(inputs);
        CoreMLTiming t;
        {
          nb::gil_scoped_release r;
          t = ar::coreml_time(model, compute_units, in, output, reps, min_warmup, max_warmup_s);
        }
        return timing_dict(t);
      },
      "model"_a, "compute_units"_a, "inputs"_a, "output"_a, "reps"_a, "min_warmup"_a = 3, "max_warmup_s"_a = 2.0,
      "Time `reps` predictions of the compiled model (.mlmodelc) with compute_units (CPU_ONLY,\n"
      "CPU_AND_GPU, CPU_AND_NE, ALL) on the host clock, one by one, after a warm-up. inputs: a list of\n"
      "(name, shape, FP16 bytes, row-major). Returns a dict: seconds (per prediction), warmup, load_s,\n"
      "output_dtype, output_shape, first (the first timed output's dense bytes), differing (timed\n"
      "outputs whose bytes differ from the first's) and last_differing (the last of those, or b'').\n"
      "Raises ValueError, DeviceError (Core ML's message), UnsupportedError off macOS.");
  m.def(
      "coreml_compute_plan",
      [](const std::string& model, const std::string& compute_units) {
        CoreMLPlan p;
        {
          nb::gil_scoped_release r;
          p = ar::coreml_compute_plan(model, compute_units);
        }
        return plan_dict(p);
      },
      "model"_a, "compute_units"_a,
      "The compute plan of the compiled model (.mlmodelc) with compute_units: a dict with known,\n"
      "reason (why it is unknown: MLComputePlan needs macOS 14.4) and ops, one dict per ML-program\n"
      "operation (op, preferred: cpu, gpu, neural_engine, unknown or none, supported, cost: the\n"
      "estimated fraction of the model's cost or -1). Raises DeviceError, UnsupportedError off macOS.");
}

}  // namespace ar::bind
