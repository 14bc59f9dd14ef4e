// The kernel cache's state and test hooks (core/kernel_cache.h): its counts and warnings for a run
// to report, and a lookup of arbitrary bytes so that the key, the file format and the rebuild of a
// corrupt entry are tested on any machine (tests/native/test_kernel_cache.py).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "../core/kernel_cache.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

namespace {

namespace kc = kernel_cache;

kc::Fields to_fields(const std::vector<nb::bytes>& payload) {
  kc::Fields out;
  for (const nb::bytes& b : payload) out.emplace_back(b.c_str(), b.size());
  return out;
}

}  // namespace

void init_kernel_cache(nb::module_& m) {
  m.def(
      "kernel_cache_stats",
      []() {
        const kc::Stats s = kc::cache().stats();
        const kc::Location where = kc::location();
        nb::dict d;
        d["dir"] = where.dir;
        d["why"] = where.why;
        d["hits"] = s.hits;
        d["misses"] = s.misses;
        d["rebuilt"] = s.rebuilt;
        d["compiles"] = s.compiles;
        d["stored"] = s.stored;
        d["warnings"] = s.warnings;
        return d;
      },
      "The on-disk kernel cache of this process (docs/design.md, \"The kernel cache\"): dir (its folder\n"
      "now, \"\" when there is none), why (why not), and since the process started: hits, misses,\n"
      "rebuilt (entries found corrupt, stale or of another key, and compiled again), compiles (kernels\n"
      "compiled: NVRTC programs on CUDA, pipelines on Metal), stored (entries written) and warnings\n"
      "(one line each, at most 64).");
  m.def(
      "kernel_cache_fetch",
      [](const std::vector<std::pair<std::string, std::string>>& key, const std::vector<nb::bytes>& payload) {
        const kc::Fields built = to_fields(payload);
        kc::Fields got;
        {
          nb::gil_scoped_release r;
          got = kc::cache().fetch(key, [&] { return built; });
        }
        std::vector<nb::bytes> out;
        for (const std::string& f : got) out.emplace_back(f.data(), f.size());
        return out;
      },
      "key"_a, "payload"_a,
      "Test hook: the entry of `key` ((name, value) parts) where it is valid, else `payload` (counted\n"
      "as a compile) written as its entry; the fields read or built.");
  m.def(
      "kernel_cache_path",
      [](const std::vector<std::pair<std::string, std::string>>& key) { return kc::cache().path(key); }, "key"_a,
      "Test hook: the file of `key`'s entry, or \"\" where the cache is off or unwritable.");
}

}  // namespace ar::bind
