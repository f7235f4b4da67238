#include "communicators/shm/shm_options.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "common/config.h"
#include "communicators/shm/shm_layout.h"

namespace gvirtus::shm {

ShmOptions read_shm_options(const EndpointConfig& endpoint) {
  // A misspelt field must not silently fall back to its default.
  static constexpr std::string_view kKnown[] = {
      "suite", "protocol", "path", "file", "ring_bytes", "spin_us", "dead_after_ms", "arena_bytes"};
  const JsonValue& fields = endpoint.fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& key = fields.key(i);
    if (key.starts_with("_") || key.starts_with("comment")) continue;
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      endpoint.fail(key,
                    "unknown shm field (expected path, file, ring_bytes, arena_bytes, spin_us "
                    "or dead_after_ms; see docs/shm.md)");
    }
  }
  ShmOptions o;
  const bool has_path = endpoint.fields().find("path") != nullptr;
  o.file = endpoint.string_or("file", "");
  if (has_path && !o.file.empty()) {
    endpoint.fail("file", "give either \"path\" (socket mode) or \"file\" (ivshmem), not both");
  }
  if (endpoint.fields().find("file") != nullptr && o.file.empty()) {
    endpoint.fail("file", "expected a file path, got \"\"");
  }
  o.path = endpoint.string_or("path", o.path);
  if (o.path.empty() || o.path.size() > 107) {
    endpoint.fail("path",
                  "expected a Unix socket path of 1 to 107 characters (\"@name\" for the "
                  "abstract namespace)");
  }
  o.ring_bytes = endpoint.uint_or("ring_bytes", o.ring_bytes);
  if (!valid_ring_bytes(o.ring_bytes)) {
    endpoint.fail("ring_bytes", "expected a power of two from 4096 to 1073741824, got " +
                                    std::to_string(o.ring_bytes));
  }
  const bool has_arena = endpoint.fields().find("arena_bytes") != nullptr;
  if (has_arena && !o.file.empty()) {
    endpoint.fail("arena_bytes",
                  "applies to socket mode; in file mode the arena is the file beyond the rings");
  }
  o.arena_bytes = endpoint.uint_or("arena_bytes", o.arena_bytes);
  if (o.arena_bytes % kArenaAlign != 0 || o.arena_bytes > kMaxArenaBytes) {
    endpoint.fail("arena_bytes", "expected a multiple of 4096 up to 1099511627776 (1 TiB), got " +
                                     std::to_string(o.arena_bytes));
  }
  const uint64_t spin = endpoint.uint_or("spin_us", static_cast<uint64_t>(o.spin.count()));
  if (spin > 1000000) endpoint.fail("spin_us", "expected at most 1000000 (1 s)");
  o.spin = std::chrono::microseconds(spin);
  const uint64_t dead =
      endpoint.uint_or("dead_after_ms", static_cast<uint64_t>(o.dead_after.count()));
  if (dead < 10 || dead > 3600000) {
    endpoint.fail("dead_after_ms",
                  "expected 10 to 3600000 milliseconds, got " + std::to_string(dead));
  }
  o.dead_after = std::chrono::milliseconds(dead);
  return o;
}

}  // namespace gvirtus::shm
