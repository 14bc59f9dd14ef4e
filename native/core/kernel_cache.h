// The on-disk cache of compiled kernels (docs/design/backends.md, "The kernel cache"): plain C++, no vendor
// types, so that the key, the file format, the checksum, the atomic write and the read-side checks
// are unit-tested on any machine (tests/native/test_kernel_cache.py). The CUDA backend keeps NVRTC's
// output here, the Metal backend each compute pipeline's binary archive.
//
//  * A key is a list of named parts (source, options, entry, target, compiler and driver versions,
//    ...); an entry's file is named by a 64-bit FNV-1a hash of the key and holds the whole key, which
//    a read compares: a hash collision or a stale entry is a miss, never a hit.
//  * An entry: magic "ARKCACHE", format version, key length, payload length, key, payload, then an
//    FNV-1a checksum of everything before it (integers little-endian). A truncated file, a bad
//    checksum or another key is rebuilt, with a warning (stats().warnings).
//  * Writes go to a temporary file in the same folder, then rename(2): a concurrent reader (cuda:all
//    runs one process per GPU) sees the old entry, the new one, or none, never half of one.
//  * Where: $APPLE_ROOFLINE_CACHE ("off": no cache), else $XDG_CACHE_HOME/apple_roofline, else
//    ~/Library/Caches/apple_roofline (macOS) or ~/.cache/apple_roofline; entries under kernels/. The
//    place is read at each lookup. A folder that cannot be created or written is left alone for the
//    rest of the process, with one warning: kernels are compiled as if there were no cache.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ar {

namespace kernel_cache {

// A key: named parts, in the order given (a part's name and value may hold any bytes).
using Key = std::vector<std::pair<std::string, std::string>>;
// A payload: byte strings (e.g. the target, the compiled image and the compiler's log).
using Fields = std::vector<std::string>;

// Where the cache lives now: `dir` the entries' folder (empty when off), `why` why there is none.
struct Location {
  std::string dir;
  std::string why;
};
Location location();

// The key as stored in an entry (length-prefixed parts: unambiguous for any bytes) and its file name.
std::string serialize_key(const Key& key);
// The key serialize_key wrote, or nothing for bytes that are not one.
std::optional<Key> parse_key(const std::string& bytes);
std::string entry_name(const Key& key);  // 16 hex digits of FNV-1a 64 of serialize_key, then ".arkc"
uint64_t fnv1a(const std::string& bytes, uint64_t h = 14695981039346656037ull);

// An entry's bytes and their reading: the payload, or nothing and `why` (truncated, bad magic or
// version, bad checksum, another key).
std::string encode_entry(const std::string& key, const Fields& payload);
std::optional<Fields> decode_entry(const std::string& bytes, const std::string& key, std::string* why);

struct Stats {
  uint64_t hits = 0;      // entries read and used
  uint64_t misses = 0;    // lookups that found no entry (or no cache)
  uint64_t rebuilt = 0;   // entries found unusable (corrupt, another key, rejected by the backend) and rebuilt
  uint64_t compiles = 0;  // kernels compiled (every miss and rebuild, whether or not the cache is on)
  uint64_t stored = 0;    // entries written
  std::vector<std::string> warnings;  // one line each, in order, at most kMaxWarnings
};
constexpr size_t kMaxWarnings = 64;

// The process-wide cache (thread-safe). Counts are since the process started.
class Cache {
 public:
  // The payload of `key`'s entry where it is there and valid (a hit); nothing otherwise (a miss, or
  // a rebuild with a warning when the entry was unusable).
  std::optional<Fields> get(const Key& key);
  // Writes `key`'s entry atomically; a folder that cannot be written turns the cache off for it,
  // with one warning.
  void put(const Key& key, const Fields& payload);
  // The backend found a valid entry unusable (e.g. Metal rejected the archive): counted as a rebuild
  // instead of a hit, with a warning naming `why`, and the entry's file removed.
  void reject(const Key& key, const std::string& why);
  void count_compile();
  // A warning of the backend's about the cache (e.g. pipelines it could not archive). A non-empty
  // `tag` names the warning: a later note with the same tag replaces it (a count kept up to date).
  void note(const std::string& line, const std::string& tag = "");
  // Removes the entries of the cache's folder whose key `stale` says are stale (e.g. archives of
  // another OS build, which never hit again); unreadable files and others' entries are left. Returns
  // how many were removed.
  size_t prune(const std::function<bool(const Key&)>& stale);
  // get(), else build() (counted as a compile) and put(); build()'s exceptions propagate and store nothing.
  Fields fetch(const Key& key, const std::function<Fields()>& build);
  // The entry's path for `key` where the cache is on, else "".
  std::string path(const Key& key);
  Stats stats();

 private:
  void warn(const std::string& line);  // mutex_ held
  std::mutex mutex_;
  Stats stats_;
  std::set<std::string> broken_dirs_;   // folders that could not be written: left alone
  std::vector<std::string> note_tags_;  // the tag of each warning ("" for none), in order
};

Cache& cache();

}  // namespace kernel_cache
}  // namespace ar
