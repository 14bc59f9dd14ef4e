// Runtime compilation of MSL (docs/design/backends.md, "The Metal backend"): newLibraryWithSource: with the
// math mode pinned, functions specialised by function constants set by name with the type the
// function declares (only those it declares: metal_rules::constant_plan), compute pipelines and (for
// render passes) vertex and fragment functions cached by (entry, constants, source); each compute
// pipeline's binary archive kept in the on-disk kernel cache (docs/design/backends.md, "The kernel cache").
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/checks.h"
#include "core/errors.h"
#include "core/kernel_cache.h"
#include "metal.h"

namespace ar::metal {
namespace {

constexpr NSUInteger kDefaultThreadgroup = 256;

std::string constant_text(const std::variant<int64_t, double>& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v));
  return buf;
}

NSString* ns(const std::string& s) { return [NSString stringWithUTF8String:s.c_str()]; }

std::string joined(NSArray<NSString*>* names) {
  std::string out;
  for (NSString* n in [names sortedArrayUsingSelector:@selector(compare:)]) {
    if (!out.empty()) out += ", ";
    out += n.UTF8String;
  }
  return out.empty() ? "none" : out;
}

std::vector<std::string> names_of(NSArray<NSString*>* names) {
  std::vector<std::string> out;
  for (NSString* n in names) out.push_back(n.UTF8String);
  return out;
}

static_assert(int64_t(MTLDataTypeFloat) == metal_rules::kFloat && int64_t(MTLDataTypeHalf) == metal_rules::kHalf &&
                  int64_t(MTLDataTypeInt) == metal_rules::kInt && int64_t(MTLDataTypeUInt) == metal_rules::kUInt &&
                  int64_t(MTLDataTypeShort) == metal_rules::kShort &&
                  int64_t(MTLDataTypeUShort) == metal_rules::kUShort && int64_t(MTLDataTypeBool) == metal_rules::kBool,
              "metal_rules' constant types follow MTLArgument.h's MTLDataType raw values");

// Sets constant `name` on `cv` as the type `fc` declares (metal_rules::constant_bytes checks the
// value: std::invalid_argument for one the type cannot hold).
void set_constant(MTLFunctionConstantValues* cv, MTLFunctionConstant* fc, const std::string& name,
                  const std::variant<int64_t, double>& value, const std::string& entry) {
  const int64_t* i = std::get_if<int64_t>(&value);
  const std::vector<uint8_t> bytes = metal_rules::constant_bytes(
      int64_t(fc.type), name, i ? *i : 0, i ? 0.0 : std::get<double>(value), i != nullptr, entry);
  [cv setConstantValue:bytes.data() type:fc.type withName:ns(name)];
}

// A fresh file URL in the temporary folder: MTLBinaryArchive reads and writes files only.
NSURL* temporary_url() {
  NSString* name = [NSString stringWithFormat:@"apple_roofline-%@.metallib", [NSUUID UUID].UUIDString];
  return [NSURL fileURLWithPath:[NSTemporaryDirectory() stringByAppendingPathComponent:name]];
}

void remove_file(NSURL* url) { [[NSFileManager defaultManager] removeItemAtURL:url error:nil]; }

// The pipeline of `desc` from the archive `bytes` (MTLPipelineOptionFailOnBinaryArchiveMiss: the
// archive's own code or nothing), or nil with *why set.
id<MTLComputePipelineState> pipeline_from_archive(id<MTLDevice> device, MTLComputePipelineDescriptor* desc,
                                                  const std::string& bytes, std::string* why) {
  NSURL* url = temporary_url();
  NSData* data = [NSData dataWithBytes:bytes.data() length:bytes.size()];
  if (![data writeToURL:url atomically:NO]) {
    *why = "cannot write a copy of the archive to " + std::string(url.path.UTF8String);
    return nil;
  }
  MTLBinaryArchiveDescriptor* ad = [MTLBinaryArchiveDescriptor new];
  ad.url = url;
  NSError* err = nil;
  id<MTLComputePipelineState> state = nil;
  id<MTLBinaryArchive> archive = [device newBinaryArchiveWithDescriptor:ad error:&err];
  if (!archive) {
    *why = "Metal cannot open the binary archive: " + describe(err);
  } else {
    desc.binaryArchives = @[ archive ];
    state = [device newComputePipelineStateWithDescriptor:desc
                                                  options:MTLPipelineOptionFailOnBinaryArchiveMiss
                                               reflection:nil
                                                    error:&err];
    desc.binaryArchives = nil;
    if (!state) *why = "Metal finds no usable pipeline in the binary archive: " + describe(err);
  }
  remove_file(url);
  return state;
}

// A new binary archive holding `desc`'s pipeline functions (compiled for this device), or nil with *why set.
id<MTLBinaryArchive> filled_archive(id<MTLDevice> device, MTLComputePipelineDescriptor* desc, std::string* why) {
  NSError* err = nil;
  id<MTLBinaryArchive> archive = [device newBinaryArchiveWithDescriptor:[MTLBinaryArchiveDescriptor new] error:&err];
  if (!archive) {
    *why = "newBinaryArchiveWithDescriptor: " + describe(err);
    return nil;
  }
  if (![archive addComputePipelineFunctionsWithDescriptor:desc error:&err]) {
    *why = "addComputePipelineFunctionsWithDescriptor: " + describe(err);
    return nil;
  }
  return archive;
}

// `archive`'s file as bytes, or "" with *why set.
std::string serialized(id<MTLBinaryArchive> archive, std::string* why) {
  NSError* err = nil;
  NSURL* url = temporary_url();
  std::string out;
  if (![archive serializeToURL:url error:&err]) {
    *why = "serializeToURL: " + describe(err);
  } else if (NSData* data = [NSData dataWithContentsOfURL:url]; data.length > 0) {
    out.assign(static_cast<const char*>(data.bytes), data.length);
  } else {
    *why = "the serialized archive " + std::string(url.path.UTF8String) + " is empty or unreadable";
  }
  remove_file(url);
  return out;
}

constexpr const char* kProducer = "apple_roofline metal binary archive 1";

metal_rules::ArchivePolicy& archive_policy() {
  static metal_rules::ArchivePolicy policy;  // the process's
  return policy;
}

std::string os_build() { return NSProcessInfo.processInfo.operatingSystemVersionString.UTF8String; }

// The running macOS's version (the gates of metal_rules take major and minor).
NSOperatingSystemVersion os_version() { return NSProcessInfo.processInfo.operatingSystemVersion; }

// Once per process: the archives of other OS builds are removed (an archive is for one OS build,
// MTLBinaryArchive.h, and the OS is part of the key: they never hit again).
void prune_other_builds(kernel_cache::Cache& cache) {
  static std::once_flag once;
  std::call_once(once, [&] {
    const std::string os = os_build();
    cache.prune([&](const kernel_cache::Key& key) {
      bool ours = false, other_os = false;
      for (const auto& [name, value] : key) {
        if (name == "producer") ours = value == kProducer;
        if (name == "os") other_os = value != os;
      }
      return ours && other_os;
    });
  });
}

// The compute pipeline of `fn` through the kernel cache: from the binary archive an earlier process
// stored where it is there and Metal takes it, else compiled and its archive stored. The key holds
// the OS version and the device's name: an archive is for one device and one OS build (MTLBinaryArchive.h).
// metal_rules::ArchivePolicy decides whether this process archives at all: the first archive it
// writes is reloaded with MTLPipelineOptionFailOnBinaryArchiveMiss before it is stored, and where
// that fails (specialised functions need macOS 15 to serialize) nothing more is archived or read.
id<MTLComputePipelineState> cached_pipeline(id<MTLDevice> device, id<MTLFunction> fn, const std::string& function_key,
                                            const std::string& language, NSError** err) {
  namespace kc = kernel_cache;
  const kc::Key key = {{"producer", kProducer},
                       {"os", os_build()},
                       {"device", device.name.UTF8String},
                       {"language", language},
                       {"math", Compiler::math_mode()},
                       {"function", function_key}};
  kc::Cache& cache = kc::cache();
  metal_rules::ArchivePolicy& policy = archive_policy();
  prune_other_builds(cache);
  MTLComputePipelineDescriptor* desc = [MTLComputePipelineDescriptor new];
  desc.computeFunction = fn;
  const bool cache_on = !cache.path(key).empty();
  const bool archiving = cache_on && policy.archiving();
  if (std::optional<kc::Fields> hit = archiving ? cache.get(key) : std::nullopt) {
    std::string why = "not a binary archive";
    id<MTLComputePipelineState> state =
        hit->size() == 1 ? pipeline_from_archive(device, desc, hit->front(), &why) : nil;
    if (state) {
      policy.checked(true);  // an archive gave its pipeline back: archiving works here
      return state;
    }
    cache.reject(key, why);
  }
  // A miss: the functions are compiled into a new archive and the pipeline made with it, so that
  // Metal looks its code up there rather than compiling it a second time (MTLBinaryArchive.h); then
  // the archive is stored.
  cache.count_compile();
  std::string why;
  id<MTLBinaryArchive> archive = archiving ? filled_archive(device, desc, &why) : nil;
  if (archive) desc.binaryArchives = @[ archive ];
  id<MTLComputePipelineState> state = [device newComputePipelineStateWithDescriptor:desc
                                                                            options:MTLPipelineOptionNone
                                                                         reflection:nil
                                                                              error:err];
  desc.binaryArchives = nil;
  if (!state) return nil;
  if (archive) {
    std::string bytes = serialized(archive, &why);
    if (!bytes.empty() && policy.check_next()) {
      const bool reloaded = pipeline_from_archive(device, desc, bytes, &why) != nil;
      policy.checked(reloaded);
      if (!reloaded) {
        why = "the first archive written did not reload (" + why + "); archiving is off for this process";
        bytes.clear();
      }
    }
    if (!bytes.empty()) cache.put(key, {bytes});
  }
  if (cache_on) {
    if (!archiving && why.empty()) why = "archiving is off for this process";
    policy.compiled(fn.name.UTF8String, why);
    if (!why.empty()) cache.note(policy.summary(), "metal archives");  // one line, its count kept current
  }
  return state;
}

}  // namespace

std::string Compiler::language_versions() { return metal_rules::msl_versions(int(os_version().majorVersion)); }

std::string Compiler::math_mode() {
#if defined(__MAC_15_0) && __MAC_OS_X_VERSION_MAX_ALLOWED >= __MAC_15_0
  if (@available(macOS 15.0, *)) return "safe (mathMode = MTLMathModeSafe)";
#endif
  return "safe (fastMathEnabled = NO)";
}

namespace {

const char* stage_word(MTLFunctionType type) {
  switch (type) {
    case MTLFunctionTypeVertex: return "vertex";
    case MTLFunctionTypeFragment: return "fragment";
    case MTLFunctionTypeKernel: return "kernel";
    default: return "other";
  }
}

// The cache key of (entry, constants, source); sets *block to the constant BLOCK where given.
std::string function_key(const std::string& source, const std::string& entry, const Constants& constants,
                         MTLFunctionType type, NSUInteger* block) {
  if (!is_identifier(entry)) throw std::invalid_argument("function '" + entry + "' is not an MSL identifier");
  std::string key = std::string(stage_word(type)) + "|" + entry;
  for (const auto& [name, value] : constants) {
    if (!is_identifier(name)) throw std::invalid_argument("constant name '" + name + "' is not an MSL identifier");
    if (name == "BLOCK" && type == MTLFunctionTypeKernel) *block = NSUInteger(check_block(value, "threadgroup"));
    key += "|" + name + "=" + (std::holds_alternative<int64_t>(value) ? "i" : "f") + constant_text(value);
  }
  return key + "|" + source;  // the whole source: no hash collisions
}

}  // namespace

id<MTLLibrary> Compiler::library(const std::string& source, const std::string& entry) {
  auto known = libraries_.find(source);
  if (known != libraries_.end()) return known->second;
  MTLCompileOptions* opts = [MTLCompileOptions new];
  // Pinned, not left to the defaults, which allow IEEE-violating rewrites (MTLLibrary.h:
  // "fastMathEnabled defaults to YES"). The FMA-chain references assume every operation is
  // rounded as written. macOS 15 replaces fastMathEnabled with mathMode.
#if defined(__MAC_15_0) && __MAC_OS_X_VERSION_MAX_ALLOWED >= __MAC_15_0
  if (@available(macOS 15.0, *)) {
    opts.mathMode = MTLMathModeSafe;
  } else {
    opts.fastMathEnabled = NO;
  }
#else
  opts.fastMathEnabled = NO;
#endif
  opts.languageVersion = MTLLanguageVersion3_0;  // macOS 13, the deployment target
  // A source that defines AR_MSL_VERSION_4_0 (shaders/metal/matrix_mpp.metal: Metal 4's tensors and
  // Performance Primitives) needs MSL 4.0, macOS 26 (docs/design/matrix.md, "Matrix units").
  // MTLLanguageVersion4_0 is not in the macOS 14 SDK; MTLLibrary.h encodes every version as
  // (major << 16) + minor (MTLLanguageVersion3_0 = (3 << 16) + 0), so 4.0 is (4 << 16).
  if (metal_rules::msl_version(source) == "4.0") {
    if (@available(macOS 26.0, *)) {
      opts.languageVersion = MTLLanguageVersion(4 << 16);
      // Its bfloat kernels only where MetalPerformancePrimitives declare bfloat matmul2d
      // (metal_rules::mpp_bfloat): elsewhere they would fail the whole source's compile.
      const NSOperatingSystemVersion os = os_version();
      if (metal_rules::mpp_bfloat(int(os.majorVersion), int(os.minorVersion)))
        opts.preprocessorMacros = @{ns(metal_rules::kMppBfloatMacro) : @1};
    } else {
      throw UnsupportedError("[metal::newLibraryWithSource] '" + entry +
                             "' needs Metal Shading Language 4.0, which macOS 26 introduced; this macOS is older");
    }
  }
  NSError* err = nil;
  id<MTLLibrary> lib = [dev_->device newLibraryWithSource:ns(source) options:opts error:&err];
  // A successful compile may still carry warnings in `err`: check the object
  // (docs/design/backends.md, "The Metal backend").
  if (!lib)
    throw CompileError("[metal::newLibraryWithSource] MSL compilation failed for '" + entry +
                           "': " + (err ? std::string(err.localizedDescription.UTF8String).substr(0, 400) : "no log"),
                       err ? std::string(err.localizedDescription.UTF8String) : "");
  libraries_.emplace(source, lib);
  return lib;
}

std::vector<std::string> Compiler::source_constants(id<MTLLibrary> lib) {
  const void* key = (__bridge const void*)lib;  // libraries_ holds every library for the compiler's life
  if (auto hit = source_constants_.find(key); hit != source_constants_.end()) return hit->second;
  std::vector<std::string> names;
  for (NSString* function in lib.functionNames)
    for (NSString* name in [lib newFunctionWithName:function].functionConstantsDictionary)
      names.push_back(name.UTF8String);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  source_constants_.emplace(key, names);
  return names;
}

id<MTLFunction> Compiler::specialise(id<MTLLibrary> lib, const std::string& entry, const Constants& constants,
                                     MTLFunctionType type) {
  const char* stage = stage_word(type);
  id<MTLFunction> base = [lib newFunctionWithName:ns(entry)];
  if (!base)
    throw CompileError("[metal::newFunctionWithName] no function '" + entry +
                           "' in the compiled source (functions: " + joined(lib.functionNames) + ")",
                       "");
  if (base.functionType != type)
    throw CompileError("[metal::newFunctionWithName] '" + entry + "' is not a `" + stage + "` function", "");
  const bool compute = type == MTLFunctionTypeKernel;  // BLOCK is a compute kernel's threadgroup size
  // Only the constants this function uses are listed (MTLLibrary.h, functionConstantsDictionary);
  // metal_rules::constant_plan sets those, skips a passed constant that only other functions of the
  // source declare, and rejects one that none does.
  NSDictionary<NSString*, MTLFunctionConstant*>* declared = base.functionConstantsDictionary;
  std::vector<std::string> passed;
  for (const auto& [name, value] : constants) passed.push_back(name);
  const metal_rules::ConstantPlan plan = metal_rules::constant_plan(
      stage, entry, compute, passed, names_of(declared.allKeys), [&] { return source_constants(lib); });
  if (declared.count == 0) return base;
  MTLFunctionConstantValues* cv = [MTLFunctionConstantValues new];
  for (const std::string& name : plan.set) set_constant(cv, declared[ns(name)], name, constants.at(name), entry);
  NSError* err = nil;
  id<MTLFunction> fn = [lib newFunctionWithName:ns(entry) constantValues:cv error:&err];
  if (!fn)
    throw CompileError(
        "[metal::newFunctionWithName:constantValues:] could not specialise '" + entry + "': " + describe(err),
        err ? std::string(err.localizedDescription.UTF8String) : "");
  return fn;
}

id<MTLFunction> Compiler::function(const std::string& source, const std::string& entry, const Constants& constants,
                                   MTLFunctionType type) {
  NSUInteger block = 0;
  const std::string key = function_key(source, entry, constants, type, &block);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto hit = functions_.find(key); hit != functions_.end()) return hit->second;
  id<MTLFunction> fn = nil;
  pooled([&] {
    fn = specialise(library(source, entry), entry, constants, type);
    functions_.emplace(key, fn);
  });
  return fn;
}

std::shared_ptr<Pipeline> Compiler::pipeline(const std::string& source, const std::string& entry,
                                             const Constants& constants) {
  NSUInteger block = 0;  // 0: the default
  const std::string key = function_key(source, entry, constants, MTLFunctionTypeKernel, &block);

  std::lock_guard<std::mutex> lock(mutex_);
  if (auto hit = cache_.find(key); hit != cache_.end()) return hit->second;

  std::shared_ptr<Pipeline> p;
  pooled([&] {
    const std::string language = metal_rules::msl_version(source);
    if (language == "4.0") {  // a Metal 4 tensor-op kernel this macOS's Performance Primitives lack
      const NSOperatingSystemVersion os = os_version();
      const std::string why = metal_rules::mpp_unsupported(entry, int(os.majorVersion), int(os.minorVersion));
      if (!why.empty()) throw UnsupportedError(why);
    }
    id<MTLFunction> fn = specialise(library(source, entry), entry, constants, MTLFunctionTypeKernel);
    NSError* err = nil;
    id<MTLComputePipelineState> state = cached_pipeline(dev_->device, fn, key, language, &err);
    if (!state)
      throw CompileError("[metal::newComputePipelineStateWithDescriptor] " + entry + ": " + describe(err),
                         err ? std::string(err.localizedDescription.UTF8String) : "");
    const NSUInteger max_tg = state.maxTotalThreadsPerThreadgroup;
    const NSUInteger width = state.threadExecutionWidth ? state.threadExecutionWidth : 32;
    if (block && block > max_tg)
      throw std::invalid_argument(
          "constant BLOCK " + std::to_string(block) + " exceeds the " + std::to_string(max_tg) +
          " threads per threadgroup this pipeline allows (its registers and threadgroup memory)");
    p = std::make_shared<Pipeline>();
    p->state = state;
    p->entry = entry;
    p->threadgroup = block ? block : std::max<NSUInteger>(width, std::min(kDefaultThreadgroup, max_tg) / width * width);
    cache_.emplace(key, p);
  });
  return p;
}

}  // namespace ar::metal
