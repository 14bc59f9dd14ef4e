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
      "The on-disk kernel cache of this process (docs/design/backends.md, \"The kernel cache\"): dir (its folder\n"
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
      "kernel_cache_prune",
      [](nb::callable stale) {
        return kc::cache().prune([&](const kc::Key& key) { return nb::cast<bool>(stale(key)); });
      },
      "stale"_a,
      "Removes the cache folder's entries for whose key ((name, value) parts) stale(key) is True;\n"
      "returns how many. (The Metal backend removes its archives of other OS builds so.)");
  m.def(
      "kernel_cache_reject",
      [](const std::vector<std::pair<std::string, std::string>>& key, const std::string& why) {
        kc::cache().reject(key, why);
      },
      "key"_a, "why"_a, "Test hook: the backend found `key`'s valid entry unusable (as Metal rejects an archive).");
  m.def(
      "kernel_cache_note", [](const std::string& line, const std::string& tag) { kc::cache().note(line, tag); },
      "line"_a, "tag"_a = "", "Test hook: a backend's warning; a later one with the same non-empty tag replaces it.");
  m.def(
      "kernel_cache_path",
      [](const std::vector<std::pair<std::string, std::string>>& key) { return kc::cache().path(key); }, "key"_a,
      "Test hook: the file of `key`'s entry, or \"\" where the cache is off or unwritable.");
}

}  // namespace ar::bind
