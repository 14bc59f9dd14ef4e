// The on-disk kernel cache (kernel_cache.h; docs/design/backends.md, "The kernel cache").
#include "kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace ar::kernel_cache {

namespace {

constexpr char kMagic[8] = {'A', 'R', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr uint32_t kFormat = 1;
constexpr size_t kHeader = sizeof kMagic + 4 + 8 + 8;  // magic, format, key length, payload length

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t get_le(const std::string& in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[at + size_t(i)])) << (8 * i);
  return v;
}

void put_bytes(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

// The fields of `payload` (a count, then length-prefixed byte strings); false where they overrun it.
bool decode_fields(const std::string& payload, Fields* out) {
  if (payload.size() < 8) return false;
  const uint64_t count = get_le(payload, 0, 8);
  size_t at = 8;
  for (uint64_t i = 0; i < count; ++i) {
    if (payload.size() - at < 8) return false;
    const uint64_t n = get_le(payload, at, 8);
    at += 8;
    if (payload.size() - at < n) return false;
    out->push_back(payload.substr(at, size_t(n)));
    at += size_t(n);
  }
  return at == payload.size();
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool is_off(const std::string& v) {
  if (v.size() != 3) return false;
  std::string lower;
  for (char c : v) lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  return lower == "off";
}

std::string errno_text(int e) { return std::strerror(e); }

// Creates `dir` and its parents; "" or why not.
std::string make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ec.message();
  if (!std::filesystem::is_directory(dir, ec)) return "not a folder";
  return "";
}

// The largest entry read: a bound, not a measured size. An entry holds one compiled kernel (a cubin,
// a Metal pipeline's binary archive); one of 256 MiB is no entry this tool wrote (a link to /dev/zero),
// and is not read into memory.
constexpr uint64_t kMaxEntryBytes = uint64_t(256) << 20;

// `path` opened for reading if it is a regular file (links followed) of at most kMaxEntryBytes, else
// nullptr with *why set (and *absent where there is no such file). Opened without blocking, so a
// FIFO in its place is refused at once instead of waiting for a writer.
std::FILE* open_entry(const std::string& path, bool* absent, std::string* why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *absent = errno == ENOENT || errno == ENOTDIR;  // no entry, or no folder for it
    *why = errno_text(errno);
    return nullptr;
  }
  struct stat st;
  *why = ::fstat(fd, &st) != 0  ? errno_text(errno)
         : !S_ISREG(st.st_mode) ? "not a regular file"
         : uint64_t(st.st_size) > kMaxEntryBytes
             ? "larger than " + std::to_string(kMaxEntryBytes >> 20) + " MiB (not an entry)"
             : "";
  if (!why->empty()) {
    ::close(fd);
    return nullptr;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE* f = ::fdopen(fd, "rb");
  if (!f) {
    *why = errno_text(errno);
    ::close(fd);
  }
  return f;
}

// The whole file, or nothing (absent: *absent set; unreadable or not an entry: *why set).
std::optional<std::string> read_file(const std::string& path, bool* absent, std::string* why) {
  std::FILE* f = open_entry(path, absent, why);
  if (!f) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out.size() <= kMaxEntryBytes) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed || out.size() > kMaxEntryBytes) {
    *why = failed ? "read error" : "grew past " + std::to_string(kMaxEntryBytes >> 20) + " MiB while read";
    return std::nullopt;
  }
  return out;
}

// Writes `bytes` to `path` through a temporary file in its folder and rename(2); "" or why not.
std::string write_atomic(const std::string& path, const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(long(getpid())) + "." + std::to_string(counter++);
  std::FILE* f = std::fopen(tmp.c_str(), "wbx");
  if (!f) return errno_text(errno);
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    return wrote ? "closing failed" : errno_text(write_errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    return errno_text(e);
  }
  return "";
}

}  // namespace

uint64_t fnv1a(const std::string& bytes, uint64_t h) {
  for (char c : bytes) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  return h;
}

std::string serialize_key(const Key& key) {
  std::string out;
  put_u64(out, key.size());
  for (const auto& [name, value] : key) {
    put_bytes(out, name);
    put_bytes(out, value);
  }
  return out;
}

std::optional<Key> parse_key(const std::string& bytes) {
  if (bytes.size() < 8) return std::nullopt;
  // serialize_key's count is of pairs: the same layout as a payload of twice as many fields
  std::string doubled = bytes;
  const uint64_t pairs = get_le(bytes, 0, 8);
  if (pairs > bytes.size()) return std::nullopt;
  for (int i = 0; i < 8; ++i) doubled[size_t(i)] = char(((2 * pairs) >> (8 * i)) & 0xff);
  Fields parts;
  if (!decode_fields(doubled, &parts)) return std::nullopt;
  Key key;
  for (size_t i = 0; i + 1 < parts.size(); i += 2) key.emplace_back(parts[i], parts[i + 1]);
  return key;
}

std::string entry_name(const Key& key) { return hex16(fnv1a(serialize_key(key))) + ".arkc"; }

std::string encode_entry(const std::string& key, const Fields& payload) {
  std::string body;
  put_u64(body, payload.size());
  for (const std::string& f : payload) put_bytes(body, f);
  std::string out(kMagic, sizeof kMagic);
  put_u32(out, kFormat);
  put_u64(out, key.size());
  put_u64(out, body.size());
  out += key;
  out += body;
  put_u64(out, fnv1a(out));
  return out;
}

std::optional<Fields> decode_entry(const std::string& bytes, const std::string& key, std::string* why) {
  if (bytes.size() < kHeader + 8) {
    *why = "truncated (" + std::to_string(bytes.size()) + " bytes, shorter than a header)";
    return std::nullopt;
  }
  if (bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0) {
    *why = "not a kernel-cache entry (bad magic)";
    return std::nullopt;
  }
  const uint64_t format = get_le(bytes, sizeof kMagic, 4);
  if (format != kFormat) {
    *why = "format " + std::to_string(format) + ", not " + std::to_string(kFormat);
    return std::nullopt;
  }
  const uint64_t key_n = get_le(bytes, sizeof kMagic + 4, 8);
  const uint64_t body_n = get_le(bytes, sizeof kMagic + 12, 8);
  const uint64_t room = bytes.size() - kHeader - 8;
  if (key_n > room || body_n > room - key_n || key_n + body_n != room) {
    *why = "truncated or overlong (" + std::to_string(bytes.size()) + " bytes, the header announces " +
           std::to_string(kHeader + key_n + body_n + 8) + ")";
    return std::nullopt;
  }
  const size_t sum_at = bytes.size() - 8;
  if (fnv1a(bytes.substr(0, sum_at)) != get_le(bytes, sum_at, 8)) {
    *why = "bad checksum";
    return std::nullopt;
  }
  if (bytes.compare(kHeader, size_t(key_n), key) != 0) {
    *why = "holds another key (a hash collision or a stale entry)";
    return std::nullopt;
  }
  Fields out;
  if (!decode_fields(bytes.substr(kHeader + size_t(key_n), size_t(body_n)), &out)) {
    *why = "malformed payload";
    return std::nullopt;
  }
  return out;
}

Location location() {
  const std::string own = env("APPLE_ROOFLINE_CACHE");
  std::string base;
  if (!own.empty()) {
    if (is_off(own)) return {"", "turned off (APPLE_ROOFLINE_CACHE=" + own + ")"};
    base = own;
  } else if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/') {
    base = xdg + "/apple_roofline";  // XDG Base Directory: a relative path is ignored
  } else if (const std::string home = env("HOME"); !home.empty()) {
#ifdef __APPLE__
    base = home + "/Library/Caches/apple_roofline";
#else
    base = home + "/.cache/apple_roofline";
#endif
  } else {
    return {"", "no folder for it: APPLE_ROOFLINE_CACHE, XDG_CACHE_HOME and HOME are all unset"};
  }
  return {base + "/kernels", ""};
}

void Cache::warn(const std::string& line) {
  if (stats_.warnings.size() < kMaxWarnings) {
    stats_.warnings.push_back("kernel cache: " + line);
    note_tags_.emplace_back();
  }
}

std::string Cache::path(const Key& key) {
  const Location where = location();
  if (where.dir.empty()) return "";
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_dirs_.count(where.dir)) return "";
  return where.dir + "/" + entry_name(key);
}

std::optional<Fields> Cache::get(const Key& key) {
  const std::string file = path(key);
  if (file.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.misses;
    return std::nullopt;
  }
  bool absent = false;
  std::string why;
  std::optional<std::string> bytes = read_file(file, &absent, &why);
  std::optional<Fields> out;
  if (bytes) out = decode_entry(*bytes, serialize_key(key), &why);
  std::lock_guard<std::mutex> lock(mutex_);
  if (out) {
    ++stats_.hits;
  } else if (absent) {
    ++stats_.misses;
  } else {
    ++stats_.rebuilt;
    warn(file + ": " + why + "; rebuilt");
  }
  return out;
}

void Cache::reject(const Key& key, const std::string& why) {
  const std::string file = path(key);
  if (!file.empty()) std::remove(file.c_str());  // unusable: not read again
  std::lock_guard<std::mutex> lock(mutex_);
  if (stats_.hits) --stats_.hits;
  ++stats_.rebuilt;
  warn((file.empty() ? entry_name(key) : file) + ": " + why + "; rebuilt");
}

void Cache::put(const Key& key, const Fields& payload) {
  const Location where = location();
  if (where.dir.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (broken_dirs_.count(where.dir)) return;
  }
  std::string why = make_dirs(where.dir);
  if (why.empty()) why = write_atomic(where.dir + "/" + entry_name(key), encode_entry(serialize_key(key), payload));
  std::lock_guard<std::mutex> lock(mutex_);
  if (why.empty()) {
    ++stats_.stored;
    return;
  }
  if (broken_dirs_.insert(where.dir).second)
    warn("cannot write " + where.dir + " (" + why +
         "); kernels are compiled without a cache (set APPLE_ROOFLINE_CACHE "
         "to a writable folder, or to off)");
}

void Cache::note(const std::string& line, const std::string& tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!tag.empty())
    for (size_t i = 0; i < note_tags_.size(); ++i)
      if (note_tags_[i] == tag) {
        stats_.warnings[i] = "kernel cache: " + line;
        return;
      }
  const size_t before = stats_.warnings.size();
  warn(line);
  if (stats_.warnings.size() > before) note_tags_.back() = tag;
}

size_t Cache::prune(const std::function<bool(const Key&)>& stale) {
  const std::string dir = location().dir;
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return 0;
  size_t removed = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
    if (file.path().extension() != ".arkc") continue;
    bool absent = false;
    std::string why;
    std::FILE* f = open_entry(file.path().string(), &absent, &why);  // a FIFO here must not block
    if (!f) continue;
    std::string head(kHeader, '\0');
    std::optional<Key> key;
    if (std::fread(head.data(), 1, kHeader, f) == kHeader &&
        head.compare(0, sizeof kMagic, kMagic, sizeof kMagic) == 0 && get_le(head, sizeof kMagic, 4) == kFormat) {
      const uint64_t key_n = get_le(head, sizeof kMagic + 4, 8);
      std::string bytes(size_t(std::min<uint64_t>(key_n, 1 << 24)), '\0');
      if (key_n == bytes.size() && std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size()) key = parse_key(bytes);
    }
    std::fclose(f);
    if (key && stale(*key) && std::filesystem::remove(file.path(), ec)) ++removed;
  }
  return removed;
}

void Cache::count_compile() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.compiles;
}

Fields Cache::fetch(const Key& key, const std::function<Fields()>& build) {
  if (std::optional<Fields> hit = get(key)) return *hit;
  count_compile();
  Fields built = build();
  put(key, built);
  return built;
}

Stats Cache::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace ar::kernel_cache
