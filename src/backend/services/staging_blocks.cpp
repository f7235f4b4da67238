// Staging blocks for graph copies of a client's own memory (staging_blocks.h).
#include "backend/services/staging_blocks.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "backend/services/rejections.h"
#include "backend/services/session_services.h"
#include "common/error.h"

namespace gvirtus::services {
namespace {

constexpr uint64_t kPage = 4096;

struct Block {
  std::byte* host;
  uint64_t bytes;
};

std::mutex& blocks_mutex = *new std::mutex;
auto& blocks = *new std::map<uint64_t, Block>;  // by device address; as long as the process
uint64_t held_bytes = 0;                        // the blocks' bytes, whole pages

// The host bytes of [device, device + bytes) when it lies in one block; else the request is
// malformed.
std::byte* block_span(uint64_t device, uint64_t bytes) {
  if (bytes == 0 || bytes > staging::kChunkBytes) {
    raise(ErrorKind::kInvalidInput, "a staging transfer of " + std::to_string(bytes) + " bytes");
  }
  std::lock_guard lock(blocks_mutex);
  auto it = blocks.upper_bound(device);
  if (it != blocks.begin()) {
    --it;
    const uint64_t offset = device - it->first;
    if (offset < it->second.bytes && bytes <= it->second.bytes - offset) {
      return it->second.host + offset;
    }
  }
  raise(ErrorKind::kInvalidInput,
        "a staging transfer at " + std::to_string(device) + " outside every staging block");
}

}  // namespace

void staging_allocate(WireReader& in, WireWriter& out, int32_t& result,
                      const StagingStatuses& statuses, RegisterPages register_pages,
                      UnregisterPages unregister_pages, const char* plugin) {
  const auto bytes = in.get<uint64_t>();
  in.expect_end();
  uint64_t device = 0;
  const uint64_t rounded = bytes <= kMaxStagingBytes ? (bytes + kPage - 1) / kPage * kPage : 0;
  result = bytes == 0 ? statuses.invalid_value : statuses.success;
  std::lock_guard lock(blocks_mutex);
  if (result == statuses.success && (rounded == 0 || held_bytes + rounded > kMaxStagingBytes)) {
    result = refuse(statuses.out_of_memory, plugin, "staging block", nullptr,
                    ("of " + std::to_string(bytes) + " bytes: the session's staging blocks hold " +
                     std::to_string(held_bytes) + " of at most " + std::to_string(kMaxStagingBytes))
                        .c_str());
  }
  std::byte* host = nullptr;
  if (result == statuses.success) {
    host = static_cast<std::byte*>(std::aligned_alloc(kPage, rounded));
    if (host == nullptr) result = statuses.out_of_memory;
  }
  if (result == statuses.success) {
    std::memset(host, 0, rounded);
    result = register_pages(host, rounded, device);
    if (result != statuses.success) std::free(host);
  }
  if (result == statuses.success) {
    if (!blocks.emplace(device, Block{host, rounded}).second) {  // the library gave it twice
      unregister_pages(host);
      std::free(host);
      result = statuses.out_of_memory;
    } else {
      held_bytes += rounded;
      // Its device range is the session's to name in copies; never counted as device memory.
      session_services().allocations.owned(
          host, reinterpret_cast<const void*>(static_cast<uintptr_t>(device)), rounded);
    }
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == statuses.success ? device : 0);
}

void staging_write(WireReader& in, WireWriter& out, int32_t& result, int32_t success) {
  const auto device = in.get<uint64_t>();
  const auto bytes = in.get<uint64_t>();
  std::byte* host = block_span(device, bytes);
  const auto data = in.get_raw(bytes);
  in.expect_end();
  std::memcpy(host, data.data(), bytes);
  result = success;
  out.put<int32_t>(result);
}

void staging_read(WireReader& in, WireWriter& out, int32_t& result, int32_t success) {
  const auto device = in.get<uint64_t>();
  const auto bytes = in.get<uint64_t>();
  in.expect_end();
  const std::byte* host = block_span(device, bytes);
  result = success;
  out.put<int32_t>(result);
  out.put_blob(host, bytes);
}

bool in_staging_block(uint64_t device) {
  std::lock_guard lock(blocks_mutex);
  auto it = blocks.upper_bound(device);
  if (it == blocks.begin()) return false;
  --it;
  return device - it->first < it->second.bytes;
}

}  // namespace gvirtus::services
