// The Metal backend's and Core ML's decisions (core/metal_rules.h, core/coreml_rules.h), bound so
// that they are unit-tested on every platform (tests/native/test_metal_rules.py,
// test_coreml_rules.py): on a Mac the backend calls the same functions with what Metal and Core ML
// returned.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <stdexcept>
#include <tuple>
#include <variant>

#include "../core/coreml_rules.h"
#include "../core/metal_rules.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

namespace {

namespace mr = metal_rules;

using PyClock = std::tuple<double, double, uint64_t>;  // (host_s, half_width_s, gpu_ticks)

mr::ClockPair to_clock(const PyClock& c) { return {std::get<0>(c), std::get<1>(c), std::get<2>(c)}; }

nb::dict period_dict(const mr::TickPeriod& p) {
  nb::dict d;
  d["ok"] = p.ok;
  d["problem"] = p.problem;
  d["seconds"] = p.seconds;
  d["calibrated"] = p.calibrated;
  d["error"] = p.error;
  d["snapped"] = p.snapped;
  d["checked"] = p.checked;
  return d;
}

// The Metal backend's sample buffers, GPU tick period and choice of samples (core/metal_rules.h).
void bind_metal_samples(nb::module_& m) {
  m.attr("METAL_MAX_SAMPLES_PER_BUFFER") = mr::kMaxSamplesPerBuffer;
  m.attr("METAL_LAUNCHES_IN_FLIGHT") = mr::kLaunchesInFlight;
  m.attr("METAL_QUEUE_DEPTH") = mr::kQueueDepth;
  m.def(
      "metal_sample_chunks",
      [](uint64_t reps) {
        std::vector<std::pair<uint64_t, uint64_t>> out;
        for (const mr::SampleChunk& c : mr::sample_chunks(reps)) out.emplace_back(c.first, c.reps);
        return out;
      },
      "reps"_a,
      "The Metal backend's counter sample buffers for `reps` samples: (first sample, samples) per\n"
      "buffer, two timestamps per sample, at most METAL_MAX_SAMPLES_PER_BUFFER timestamps each.");
  m.def(
      "metal_tick_period",
      [](const PyClock& before, const PyClock& after, bool apple_family) {
        return period_dict(mr::tick_period(to_clock(before), to_clock(after), apple_family));
      },
      "before"_a, "after"_a, "apple_family"_a,
      "Seconds per GPU tick from two clock readings (host_s, half_width_s, gpu_ticks) on an Apple-family\n"
      "GPU or another: a dict with ok, problem, seconds (exactly 1e-9 when snapped), calibrated, error\n"
      "(relative), snapped and checked (a calibration was made and agreed).");
  m.def(
      "metal_choose_samples",
      [](const std::vector<double>& command_buffer_s, bool wanted, const std::string& unavailable,
         const std::vector<uint64_t>& ticks, const PyClock& before, const PyClock& after, const std::string& what,
         bool apple_family) {
        mr::CounterRun run;
        run.wanted = wanted;
        run.unavailable = unavailable;
        run.ticks = ticks;
        run.before = to_clock(before);
        run.after = to_clock(after);
        run.apple_family = apple_family;
        mr::SampleSet s = mr::choose_samples(command_buffer_s, run, what);
        nb::dict d;
        d["seconds"] = s.seconds;
        d["timer"] = s.timer;
        d["counters"] = s.counters;
        return d;
      },
      "command_buffer_s"_a, "wanted"_a, "unavailable"_a, "ticks"_a, "before"_a, "after"_a, "what"_a = "kernel",
      "apple_family"_a = false,
      "The Metal backend's choice of samples (seconds, timer, counters) from each command buffer's\n"
      "GPUEndTime - GPUStartTime and the counters' readings (2 ticks per sample). Raises DeviceError\n"
      "when a command buffer reports no positive GPU time.");
}

// The Metal backend's function constants' bytes and plan, and its command-buffer failure text.
void bind_metal_constants(nb::module_& m) {
  m.def(
      "metal_constant_bytes",
      [](int64_t type, const std::string& name, std::variant<int64_t, double> value, const std::string& entry) {
        const int64_t* i = std::get_if<int64_t>(&value);
        return to_bytes(
            mr::constant_bytes(type, name, i ? *i : 0, i ? 0.0 : std::get<double>(value), i != nullptr, entry));
      },
      "type"_a, "name"_a, "value"_a, "entry"_a = "kernel",
      "The bytes the Metal backend sets for function constant `name` = `value` declared with MTLDataType\n"
      "raw value `type` (float 3, half 16, int 29, uint 33, short 37, ushort 41, bool 53); ValueError\n"
      "naming the valid range for a value the type cannot hold or an unsupported type.");
  m.def(
      "metal_constant_plan",
      [](const std::string& stage, const std::string& entry, bool compute, const std::vector<std::string>& passed,
         const std::vector<std::string>& declared, const std::vector<std::string>& source_declared) {
        const mr::ConstantPlan p =
            mr::constant_plan(stage, entry, compute, passed, declared, [&] { return source_declared; });
        return std::make_pair(p.set, p.skipped);
      },
      "stage"_a, "entry"_a, "compute"_a, "passed"_a, "declared"_a, "source_declared"_a,
      "Which of the `passed` function constants the Metal backend sets on function `entry` that declares\n"
      "`declared`, its source's functions declaring `source_declared`: (set, skipped). ValueError for a\n"
      "name no function of the source declares, or a kernel declaring BLOCK without being passed it.");
  m.def("metal_half_bits", &mr::half_bits, "value"_a, "IEEE binary16 bits of a float, rounded to nearest even.");
  m.def("metal_command_buffer_failure", &mr::command_buffer_failure, "call"_a, "what"_a, "status"_a, "error"_a,
        "The Metal backend's error text for a command buffer that ended with MTLCommandBufferStatus `status`.");
}

// The Metal backend's bookkeeping of launches in flight (MetalInFlight).
void bind_metal_in_flight(nb::module_& m) {
  nb::class_<mr::InFlight>(m, "MetalInFlight",
                           "The Metal backend's bookkeeping of launches committed and not waited for.")
      .def(nb::init<size_t>(), "capacity"_a)
      .def("acquire", &mr::InFlight::acquire, nb::call_guard<nb::gil_scoped_release>(),
           "Wait while `capacity` launches are in flight, then count one more (a device wait: DeviceStopped\n"
           "past the thread's wait limit, signals handled meanwhile).")
      .def("complete", &mr::InFlight::complete, "error"_a, nb::call_guard<nb::gil_scoped_release>(),
           "A launch completed: \"\" or its failure (the first failure is kept).")
      .def("abandon", &mr::InFlight::abandon, "A slot whose command buffer was never committed.")
      .def("wait_idle", &mr::InFlight::wait_idle, nb::call_guard<nb::gil_scoped_release>(),
           "Wait until none is in flight (a device wait, as acquire); return the first failure since the\n"
           "last call (\"\" if none).")
      .def_prop_ro("in_flight", &mr::InFlight::in_flight)
      .def_prop_ro("capacity", &mr::InFlight::capacity);
}

// The Metal backend's language versions, Metal 4 tensor-op gates and pipeline archiving policy.
void bind_metal_versions(nb::module_& m) {
  m.def("metal_msl_version", &mr::msl_version, "source"_a,
        "The Metal Shading Language version the Metal backend compiles `source` with: \"4.0\" or \"3.0\".");
  m.def("metal_msl_versions", &mr::msl_versions, "os_major"_a, "The device info's msl_version on macOS `os_major`.");
  m.attr("METAL_MPP_BFLOAT_MACRO") = mr::kMppBfloatMacro;
  m.def("metal_mpp_bfloat", &mr::mpp_bfloat, "os_major"_a, "os_minor"_a,
        "Whether matmul2d on bfloat tensors is built on macOS os_major.os_minor (26.1 and later).");
  m.def("metal_mpp_unsupported", &mr::mpp_unsupported, "entry"_a, "os_major"_a, "os_minor"_a,
        "Why the Metal 4 tensor-op kernel `entry` is not built on this macOS (one line), or \"\".");
  nb::class_<mr::ArchivePolicy>(m, "MetalArchivePolicy",
                                "Whether a process archives Metal compute pipelines (core/metal_rules.h).")
      .def(nb::init<>())
      .def_prop_ro("archiving", &mr::ArchivePolicy::archiving)
      .def("check_next", &mr::ArchivePolicy::check_next,
           "True once: reload the first archive serialized before storing it.")
      .def("checked", &mr::ArchivePolicy::checked, "reloaded"_a, "The reload's outcome.")
      .def("compiled", &mr::ArchivePolicy::compiled, "function"_a, "why"_a,
           "A compiled pipeline: archived (why \"\") or not.")
      .def("summary", &mr::ArchivePolicy::summary, "\"\" or the one note on pipelines not archived.");
}

// Core ML's decisions (core/coreml_rules.h): compute units, argument checks, warm-up, outputs.
void bind_coreml_rules(nb::module_& m) {
  namespace cr = coreml_rules;
  m.def("coreml_compute_units", &cr::compute_units, "name"_a,
        "MLComputeUnits' raw value for a coremltools name (CPU_ONLY, CPU_AND_GPU, ALL, CPU_AND_NE).");
  m.def(
      "coreml_check_inputs",
      [](const std::vector<std::tuple<std::string, std::vector<int64_t>, uint64_t>>& inputs, uint64_t reps,
         double max_warmup_s) {
        std::vector<CoreMLInput> in;
        for (const auto& i : inputs)
          in.push_back({std::get<0>(i), std::get<1>(i), std::vector<uint16_t>(size_t(std::get<2>(i)))});
        return cr::check_time_args(in, reps, max_warmup_s);
      },
      "inputs"_a, "reps"_a, "max_warmup_s"_a,
      "coreml_time's argument checks, inputs given as (name, shape, value count): each input's\n"
      "row-major strides, or ValueError naming the problem.");
  m.def("coreml_warmup_done", &cr::warmup_done, "done"_a, "min_warmup"_a, "previous_s"_a, "current_s"_a, "spent_s"_a,
        "max_warmup_s"_a, "Whether Core ML's warm-up stops after `done` predictions.");
  m.attr("COREML_COMPUTE_PLAN_WAIT_S") = cr::kComputePlanWait_s;
  m.def("coreml_compute_plan_timeout", &cr::compute_plan_timeout, "model"_a, "waited_s"_a,
        "The compute plan's reason when MLComputePlan's completion handler had not run after `waited_s` s.");
  m.def(
      "coreml_dtype",
      [](int64_t raw) {
        size_t size = 0;
        std::string name = cr::dtype_name(raw, &size);
        return std::make_pair(name, size);
      },
      "raw"_a, "(NumPy name, bytes) of an MLMultiArrayDataType raw value; (\"\", 0) when unknown.");
  m.def(
      "coreml_dense_copy",
      [](nb::bytes data, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, size_t element_size) {
        std::vector<uint8_t> out;
        const std::string problem = cr::dense_copy(reinterpret_cast<const uint8_t*>(data.c_str()), data.size(), shape,
                                                   strides, element_size, &out);
        if (!problem.empty()) throw std::invalid_argument(problem);
        return to_bytes(out);
      },
      "data"_a, "shape"_a, "strides"_a, "element_size"_a,
      "A strided array's elements (strides in elements), dense and row-major; ValueError for an element\n"
      "outside `data`.");
}

}  // namespace

void init_rules(nb::module_& m) {
  bind_metal_samples(m);
  bind_metal_constants(m);
  bind_metal_in_flight(m);
  bind_metal_versions(m);
  bind_coreml_rules(m);
}

}  // namespace ar::bind
