// What the Metal backend reports about its device (Backend::info): MTLDevice properties, the GPU
// family, the GPU core count from the IORegistry and the chip name and memory size from sysctl
// (docs/design/backends.md, "The Metal backend").
#import <Foundation/Foundation.h>
#import <IOKit/IOKitLib.h>
#import <Metal/Metal.h>

#include <sys/sysctl.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "metal.h"

namespace ar::metal {
namespace {

std::string sysctl_string(const char* name) {
  size_t len = 0;
  if (sysctlbyname(name, nullptr, &len, nullptr, 0) != 0 || len == 0) return "";
  std::string s(len, '\0');
  if (sysctlbyname(name, s.data(), &len, nullptr, 0) != 0) return "";
  s.resize(s.find('\0') == std::string::npos ? len : s.find('\0'));
  return s;
}

int64_t sysctl_int(const char* name) {
  int64_t v = 0;
  size_t len = sizeof v;
  if (sysctlbyname(name, &v, &len, nullptr, 0) != 0) return 0;
  if (len == sizeof(int32_t)) return int64_t(*reinterpret_cast<int32_t*>(&v));
  return v;
}

// The IORegistry's `gpu-core-count` of the AGXAccelerator service (Apple GPUs), or 0. The GPU the
// registry lists is the one Metal calls the default device: Apple-silicon Macs have one.
int64_t gpu_core_count() {
  int64_t cores = 0;
  io_iterator_t it = 0;
  // IOServiceMatching's dictionary is consumed by IOServiceGetMatchingServices (IOKitLib.h).
  if (IOServiceGetMatchingServices(kIOMainPortDefault, IOServiceMatching("AGXAccelerator"), &it) != KERN_SUCCESS)
    return 0;
  for (io_object_t service = IOIteratorNext(it); service; service = IOIteratorNext(it)) {
    CFTypeRef prop = IORegistryEntryCreateCFProperty(service, CFSTR("gpu-core-count"), kCFAllocatorDefault, 0);
    if (prop) {
      if (CFGetTypeID(prop) == CFNumberGetTypeID()) {
        long long v = 0;
        if (CFNumberGetValue(static_cast<CFNumberRef>(prop), kCFNumberLongLongType, &v) && v > 0) cores = v;
      }
      CFRelease(prop);
    }
    IOObjectRelease(service);
    if (cores) break;
  }
  IOObjectRelease(it);
  return cores;
}

// The highest Apple GPU family the device supports, by raw value: MTLGPUFamilyApple7 = 1007 (M1)
// … Apple9 = 1009 (M3, M4) in the macOS 14 SDK's MTLDevice.h; Apple10 = 1010 (M5) exists only in
// newer SDKs (docs/design/backends.md, "The Metal backend"), so raw values are tested. 0 when none (an
// Intel or AMD GPU).
int apple_family(id<MTLDevice> device) {
  for (int raw = 1012; raw >= 1001; --raw)
    if ([device supportsFamily:static_cast<MTLGPUFamily>(raw)]) return raw - 1000;
  return 0;
}

}  // namespace

Info device_info(const Device& dev) {
  Info i;
  pooled([&] {
    id<MTLDevice> d = dev.device;
    i["backend"] = std::string("metal");
    i["index"] = int64_t(dev.index);
    i["name"] = std::string(d.name.UTF8String);
    i["registry_id"] = int64_t(d.registryID);
    const int family = apple_family(d);
    if (family) {
      i["gpu_family"] = "Apple" + std::to_string(family);
      i["gpu_family_raw"] = int64_t(1000 + family);
    }
    i["metal3"] = bool([d supportsFamily:MTLGPUFamilyMetal3]);
    if (@available(macOS 14.0, *)) i["architecture"] = std::string(d.architecture.name.UTF8String);
    i["unified_memory"] = bool(d.hasUnifiedMemory);
    i["recommended_working_set_bytes"] = int64_t(d.recommendedMaxWorkingSetSize);
    i["max_buffer_bytes"] = int64_t(d.maxBufferLength);
    i["max_threadgroup_memory_bytes"] = int64_t(d.maxThreadgroupMemoryLength);
    const MTLSize tg = d.maxThreadsPerThreadgroup;
    i["max_threads_per_threadgroup"] = int64_t(tg.width);
    // The largest 2D texture side: 16384 pixels on every Apple-family GPU and on Mac2 (Apple's Metal
    // feature set tables, "Maximum 2D texture width and height"); MTLDevice has no property for it.
    i["max_texture_2d"] = int64_t(16384);
    // The threadExecutionWidth of every Apple GPU pipeline (docs/design/backends.md, "The Metal backend").
    i["simdgroup_width"] = int64_t(32);
    const int64_t cores = gpu_core_count();
    if (cores) {
      i["gpu_cores"] = cores;
      i["compute_units"] = cores;
    }
    const std::string chip = sysctl_string("machdep.cpu.brand_string");
    if (!chip.empty()) i["chip"] = chip;
    const int64_t mem = sysctl_int("hw.memsize");
    // Unified memory: the GPU's memory is the machine's.
    if (mem > 0) i["memory_bytes"] = mem;
    else i["memory_bytes"] = int64_t(d.recommendedMaxWorkingSetSize);
    NSOperatingSystemVersion v = [NSProcessInfo processInfo].operatingSystemVersion;
    i["os_version"] = std::to_string(long(v.majorVersion)) + "." + std::to_string(long(v.minorVersion)) + "." +
                      std::to_string(long(v.patchVersion));
    i["timestamp_counters"] = bool(dev.timestamps != nil);
    i["msl_version"] = Compiler::language_versions();
    i["math_mode"] = Compiler::math_mode();
  });
  return i;
}

}  // namespace ar::metal
