// Core ML predictions timed from Objective-C++ (core/coreml.h; docs/design/studies.md, "The engines study").
//
// The model is compiled once (+[MLModel compileModelAtURL:error:], MLModel+MLModelCompilation.h),
// loaded with an MLModelConfiguration whose computeUnits picks the engines Core ML may use
// (MLModelConfiguration.h: CPUOnly = 0, CPUAndGPU = 1, All = 2, CPUAndNeuralEngine = 3 from macOS
// 13; CPUAndNeuralEngine excludes the GPU but does not force the Neural Engine), and fed FP16
// MLMultiArrays that wrap memory allocated once before the loop
// (-initWithDataPointer:shape:dataType:strides:deallocator:error:, MLMultiArray.h; a nil
// deallocator leaves the memory to us). Each prediction (-predictionFromFeatures:error:, MLModel.h)
// runs on a serial queue while the calling thread waits for it as for any device (core/waits.h:
// bounded, signals handled), and is timed alone there on the host's steady clock (mach_absolute_time
// on macOS), so the distribution of per-prediction times is kept and Python's own overhead is not in it.
//
// MLComputePlan (which engine Core ML plans for each operation) is macOS 14.4 API and the macOS 14.0
// SDK does not declare it, so it is reached through the Objective-C runtime: the class by name, each
// selector checked with -respondsToSelector: before it is sent, properties through key-value coding.
// The device classes (MLCPUComputeDevice, MLGPUComputeDevice, MLNeuralEngineComputeDevice) are in
// the 14.0 SDK (API_AVAILABLE macos 14.0).
#import <CoreML/CoreML.h>
#import <Foundation/Foundation.h>
#include <dispatch/dispatch.h>
#include <objc/message.h>
#include <objc/runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/coreml.h"
#include "core/coreml_rules.h"
#include "core/errors.h"
#include "core/waits.h"
#include "pool.h"

namespace ar {

namespace {

namespace rules = coreml_rules;
using metal::pooled;

static_assert(MLComputeUnitsCPUOnly == 0 && MLComputeUnitsCPUAndGPU == 1 && MLComputeUnitsAll == 2 &&
                  MLComputeUnitsCPUAndNeuralEngine == 3,
              "coreml_rules::compute_units returns MLModelConfiguration.h's raw values");
static_assert(MLMultiArrayDataTypeFloat16 == (0x10000 | 16) && MLMultiArrayDataTypeFloat32 == (0x10000 | 32) &&
                  MLMultiArrayDataTypeDouble == (0x10000 | 64) && MLMultiArrayDataTypeInt32 == (0x20000 | 32),
              "coreml_rules::dtype_name takes MLMultiArray.h's raw values");

MLComputeUnits parse_units(const std::string& s) { return static_cast<MLComputeUnits>(rules::compute_units(s)); }

std::string describe(NSError* e) {
  if (!e) return "no error description";
  std::string s = e.localizedDescription ? e.localizedDescription.UTF8String : "unknown error";
  NSError* under = e.userInfo[NSUnderlyingErrorKey];
  if (under && under.localizedDescription) s += std::string(" (") + under.localizedDescription.UTF8String + ")";
  return s;
}

NSURL* file_url(const std::string& path) {
  return [NSURL fileURLWithPath:[NSString stringWithUTF8String:path.c_str()]];
}

// The array's elements, dense and row-major, whatever its strides (coreml_rules::dense_copy); "" or
// the problem, which the caller raises after Core ML's block has returned (nothing throws through
// Objective-C frames; pooled() then carries it out of the autorelease pool).
std::string dense_bytes(MLMultiArray* a, std::string* dtype, std::vector<int64_t>* shape_out,
                        std::vector<uint8_t>* out) {
  size_t es = 0;
  *dtype = rules::dtype_name(int64_t(a.dataType), &es);
  if (dtype->empty()) return "the output has an unknown MLMultiArray data type " + std::to_string(long(a.dataType));
  const NSUInteger rank = a.shape.count;
  std::vector<int64_t> shape(rank), strides(rank);
  for (NSUInteger d = 0; d < rank; ++d) {
    shape[d] = a.shape[d].longLongValue;
    strides[d] = a.strides[d].longLongValue;
  }
  if (shape_out) *shape_out = shape;
  __block std::string problem;
  [a getBytesWithHandler:^(const void* bytes, NSInteger size) {
    problem = rules::dense_copy(static_cast<const uint8_t*>(bytes), size_t(std::max<NSInteger>(size, 0)), shape,
                                strides, es, out);
  }];
  return problem;
}

MLModel* load(const std::string& model, MLComputeUnits units, const char* where) {
  MLModelConfiguration* cfg = [[MLModelConfiguration alloc] init];
  cfg.computeUnits = units;
  NSError* err = nil;
  MLModel* m = [MLModel modelWithContentsOfURL:file_url(model) configuration:cfg error:&err];
  if (!m) throw DeviceError(std::string("[coreml::") + where + "] cannot load " + model + ": " + describe(err));
  return m;
}

std::string device_kind(id device) {
  if (@available(macOS 14.0, *)) {
    if ([device isKindOfClass:[MLNeuralEngineComputeDevice class]]) return "neural_engine";
    if ([device isKindOfClass:[MLGPUComputeDevice class]]) return "gpu";
    if ([device isKindOfClass:[MLCPUComputeDevice class]]) return "cpu";
  }
  return "unknown";
}

// A property through key-value coding when the object has its getter, else nil.
id property(id object, NSString* name) {
  if (!object || ![object respondsToSelector:NSSelectorFromString(name)]) return nil;
  return [object valueForKey:name];
}

// The inputs as FP16 MLMultiArrays over `owned`'s copies of their values, in one feature provider:
// wrapped without another copy (the nil deallocator leaves the memory to `owned`, which every
// prediction block holds, and Core ML only reads input features). `strides`: each input's row-major
// strides (coreml_rules::check_time_args). DeviceError when Core ML refuses an input.
MLDictionaryFeatureProvider* input_features(const std::vector<CoreMLInput>& inputs,
                                            const std::vector<std::vector<int64_t>>& strides,
                                            std::vector<std::vector<uint16_t>>& owned) {
  NSMutableDictionary<NSString*, id>* features = [NSMutableDictionary dictionary];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const CoreMLInput& in = inputs[k];
    NSMutableArray<NSNumber*>* shape = [NSMutableArray array];
    NSMutableArray<NSNumber*>* stride = [NSMutableArray array];
    for (size_t d = 0; d < in.shape.size(); ++d) {
      [shape addObject:@(in.shape[d])];
      [stride addObject:@(strides[k][d])];
    }
    NSError* err = nil;
    MLMultiArray* a = [[MLMultiArray alloc] initWithDataPointer:owned[k].data()
                                                          shape:shape
                                                       dataType:MLMultiArrayDataTypeFloat16
                                                        strides:stride
                                                    deallocator:nil
                                                          error:&err];
    if (!a) throw DeviceError("[coreml::time] cannot wrap input '" + in.name + "': " + describe(err));
    features[[NSString stringWithUTF8String:in.name.c_str()]] = [MLFeatureValue featureValueWithMultiArray:a];
  }
  NSError* err = nil;
  MLDictionaryFeatureProvider* provider = [[MLDictionaryFeatureProvider alloc] initWithDictionary:features error:&err];
  if (!provider) throw DeviceError("[coreml::time] cannot make the input features: " + describe(err));
  return provider;
}

// A loaded model's predictions, run one at a time on `queue` while the calling thread waits for each
// as for any device (core/waits.h: the thread's bound, then DeviceStopped; signals handled).
struct Predictor {
  MLModel* model = nil;
  MLDictionaryFeatureProvider* provider = nil;
  // The inputs' values, which every prediction block holds: a prediction whose wait was abandoned
  // (DeviceStopped, a signal) may still read them after coreml_time returned.
  std::shared_ptr<std::vector<std::vector<uint16_t>>> owned;
  NSString* out_name = nil;
  std::string output;  // the output feature's name, for errors
  std::string what;    // what the wait is for: "a Core ML prediction of <model> (<compute units>)"
  dispatch_queue_t queue = nil;
};

// One prediction: its host-clock seconds, timed on the queue around the call alone, and its output
// into `keep` unless that is null. DeviceError when the prediction fails or has no such output.
double predict(const Predictor& p, MLMultiArray* __strong* keep) {
  using clock = std::chrono::steady_clock;
  double s = 0.0;
  pooled([&] {
    auto done = std::make_shared<Completion>();
    auto seconds = std::make_shared<double>(0.0);
    auto owned = p.owned;
    MLModel* m = p.model;
    MLDictionaryFeatureProvider* provider = p.provider;
    __block id<MLFeatureProvider> result = nil;
    __block NSError* perr = nil;
    dispatch_async(p.queue, ^{
      (void)owned;  // captured: the inputs outlive the prediction
      @autoreleasepool {
        NSError* e = nil;
        const auto start = clock::now();
        id<MLFeatureProvider> r = [m predictionFromFeatures:provider error:&e];
        *seconds = std::chrono::duration<double>(clock::now() - start).count();
        result = r;
        perr = e;
      }
      done->signal();
    });
    wait_for(*done, p.what);
    s = *seconds;
    if (!result) throw DeviceError("[coreml::predictionFromFeatures] " + describe(perr));
    if (keep) {
      MLMultiArray* a = [result featureValueForName:p.out_name].multiArrayValue;
      if (!a) throw DeviceError("[coreml::time] the prediction has no multi-array output named '" + p.output + "'");
      *keep = a;
    }
  });
  return s;
}

// Predictions until coreml_rules::warmup_done ends the warm-up (docs/design/measurement.md,
// "Measurement"): how many ran.
uint64_t warm_up(const Predictor& p, uint64_t min_warmup, double max_warmup_s) {
  using clock = std::chrono::steady_clock;
  const auto warm_start = clock::now();
  double previous = -1.0;
  uint64_t count = 0;
  for (;;) {
    const double s = predict(p, nullptr);
    ++count;
    const double spent = std::chrono::duration<double>(clock::now() - warm_start).count();
    if (rules::warmup_done(count, min_warmup, previous, s, spent, max_warmup_s)) break;
    previous = s;
  }
  return count;
}

// Timed prediction `i`'s output `out` into `t`: the first's dtype, shape and dense bytes; a later
// one counted as differing (and kept as the last differing) when its bytes differ from the first's.
// DeviceError when the output cannot be read.
void record_output(MLMultiArray* out, uint64_t i, const std::string& output, CoreMLTiming* t) {
  pooled([&] {
    std::string dtype;
    std::vector<uint8_t> bytes;
    const std::string problem = dense_bytes(out, &dtype, i == 0 ? &t->output_shape : nullptr, &bytes);
    if (!problem.empty()) throw DeviceError("[coreml::time] reading the output '" + output + "': " + problem);
    if (i == 0) {
      t->output_dtype = dtype;
      t->first = std::move(bytes);
    } else if (bytes != t->first) {
      ++t->differing;
      t->last_differing = std::move(bytes);
    }
  });
}

// +[MLComputePlan loadContentsOfURL:configuration:completionHandler:] (macOS 14.4; `load_sel`) of
// `model` with `units`: the plan, or nil with `plan->reason` set when the completion handler had not
// run within coreml_rules::kComputePlanWait_s. DeviceError when the plan fails to load.
id load_compute_plan(Class cls, SEL load_sel, const std::string& model, MLComputeUnits units, CoreMLPlan* plan) {
  MLModelConfiguration* cfg = [[MLModelConfiguration alloc] init];
  cfg.computeUnits = units;
  __block id loaded = nil;
  __block NSError* failure = nil;
  auto done = std::make_shared<Completion>();
  // The handler receives the plan or an error, on another queue. It holds `done` and the __block
  // variables, should it run after the wait below gave up.
  void (^handler)(id, NSError*) = ^(id p, NSError* e) {
    loaded = p;
    failure = e;
    done->signal();
  };
  using LoadFn = void (*)(id, SEL, NSURL*, MLModelConfiguration*, void (^)(id, NSError*));
  reinterpret_cast<LoadFn>(objc_msgSend)(cls, load_sel, file_url(model), cfg, handler);
  // Bounded (coreml_rules::kComputePlanWait_s) and signal-aware, as every device wait
  // (core/waits.h): a handler that never runs must not hang the study, and Ctrl-C ends the wait
  // within a slice with the study's partial results written.
  if (!wait_for(*done, rules::kComputePlanWait_s)) {
    plan->reason = rules::compute_plan_timeout(model, rules::kComputePlanWait_s);
    return nil;
  }
  if (!loaded) throw DeviceError("[coreml::MLComputePlan] cannot load the plan of " + model + ": " + describe(failure));
  return loaded;
}

// What the loaded compute plan says of ML-program operation `op`: its operator, the device Core ML
// prefers for it and those that could run it (`usage_sel`), and its estimated cost where the plan
// answers `cost_sel`.
CoreMLOpUsage op_usage(id loaded, id op, SEL usage_sel, SEL cost_sel) {
  using UsageFn = id (*)(id, SEL, id);
  CoreMLOpUsage u;
  NSString* name = property(op, @"operatorName");
  u.op = name ? name.UTF8String : "?";
  id usage = reinterpret_cast<UsageFn>(objc_msgSend)(loaded, usage_sel, op);
  // nil for constants and compile-time decompressions (constexpr_*), which run on no device.
  u.preferred = usage ? device_kind(property(usage, @"preferredComputeDevice")) : "none";
  for (id d in static_cast<NSArray*>(property(usage, @"supportedComputeDevices")))
    u.supported.push_back(device_kind(d));
  if ([loaded respondsToSelector:cost_sel]) {
    id cost = reinterpret_cast<UsageFn>(objc_msgSend)(loaded, cost_sel, op);
    NSNumber* weight = property(cost, @"weight");
    if (weight) u.cost = weight.doubleValue;
  }
  return u;
}

// The operations of the ML program's 'main' function in the loaded compute plan, into `plan` (then
// known), or the reason the plan cannot describe them.
void read_operations(id loaded, CoreMLPlan* plan) {
  SEL usage_sel = NSSelectorFromString(@"computeDeviceUsageForMLProgramOperation:");
  SEL cost_sel = NSSelectorFromString(@"estimatedCostOfMLProgramOperation:");
  id program = property(property(loaded, @"modelStructure"), @"program");
  NSDictionary* functions = property(program, @"functions");
  id main = functions[@"main"];
  NSArray* ops = property(property(main, @"block"), @"operations");
  if (!ops) {
    plan->reason = "the compute plan has no ML program 'main' function";
    return;
  }
  if (![loaded respondsToSelector:usage_sel]) {
    plan->reason = "this MLComputePlan cannot report device usage per operation";
    return;
  }
  for (id op in ops) plan->ops.push_back(op_usage(loaded, op, usage_sel, cost_sel));
  plan->known = true;
}

}  // namespace

std::string coreml_status() { return ""; }

std::string coreml_compile(const std::string& source, const std::string& destination) {
  pooled([&] {
    NSError* err = nil;
    NSURL* compiled = [MLModel compileModelAtURL:file_url(source) error:&err];
    if (!compiled) throw DeviceError("[coreml::compile] Core ML cannot compile " + source + ": " + describe(err));
    NSFileManager* fm = [NSFileManager defaultManager];
    NSURL* dest = file_url(destination);
    [fm removeItemAtURL:dest error:nil];  // absent is fine
    if (![fm moveItemAtURL:compiled toURL:dest error:&err])
      throw DeviceError("[coreml::compile] cannot move the compiled model to " + destination + ": " + describe(err));
  });
  return destination;
}

CoreMLTiming coreml_time(const std::string& model, const std::string& compute_units,
                         const std::vector<CoreMLInput>& inputs, const std::string& output, uint64_t reps,
                         uint64_t min_warmup, double max_warmup_s) {
  const MLComputeUnits units = parse_units(compute_units);
  const std::vector<std::vector<int64_t>> strides = rules::check_time_args(inputs, reps, max_warmup_s);
  using clock = std::chrono::steady_clock;
  CoreMLTiming t;
  pooled([&] {
    Predictor p;
    const auto load_start = clock::now();
    p.model = load(model, units, "time");
    t.load_s = std::chrono::duration<double>(clock::now() - load_start).count();
    // The inputs' values, copied once into memory the prediction blocks share.
    p.owned = std::make_shared<std::vector<std::vector<uint16_t>>>();
    for (const CoreMLInput& in : inputs) p.owned->push_back(in.data);
    p.provider = input_features(inputs, strides, *p.owned);
    p.out_name = [NSString stringWithUTF8String:output.c_str()];
    p.output = output;
    p.what = "a Core ML prediction of " + model + " (" + compute_units + ")";
    p.queue = dispatch_queue_create("apple_roofline.coreml", DISPATCH_QUEUE_SERIAL);

    t.warmup = warm_up(p, min_warmup, max_warmup_s);
    t.seconds.reserve(reps);
    for (uint64_t i = 0; i < reps; ++i) {
      MLMultiArray* out = nil;
      t.seconds.push_back(predict(p, &out));
      record_output(out, i, output, &t);
    }
  });
  return t;
}

CoreMLPlan coreml_compute_plan(const std::string& model, const std::string& compute_units) {
  const MLComputeUnits units = parse_units(compute_units);
  CoreMLPlan plan;
  if (@available(macOS 14.4, *)) {
    Class cls = NSClassFromString(@"MLComputePlan");
    SEL load_sel = NSSelectorFromString(@"loadContentsOfURL:configuration:completionHandler:");
    if (!cls || ![cls respondsToSelector:load_sel]) {
      plan.reason = "this macOS has no MLComputePlan: which engines Core ML uses cannot be known";
      return plan;
    }
    pooled([&] {
      id loaded = load_compute_plan(cls, load_sel, model, units, &plan);
      if (loaded) read_operations(loaded, &plan);
    });
    return plan;
  }
  plan.reason = "MLComputePlan needs macOS 14.4: which engines Core ML uses cannot be known on this macOS";
  return plan;
}

}  // namespace ar
