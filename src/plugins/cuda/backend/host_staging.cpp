// Staging blocks for graph copies of the client's own memory (host_staging.h).
#include "plugins/cuda/backend/host_staging.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "backend/services/rejections.h"
#include "backend/services/session_services.h"
#include "common/error.h"
#include "cuda_real.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

constexpr uint64_t kPage = 4096;

struct Block {
  std::byte* host;
  uint64_t bytes;
};

std::mutex staging_mutex;
std::map<uint64_t, Block> blocks;  // by device address
uint64_t staged_bytes = 0;         // the blocks' bytes, rounded to pages

// The host bytes of [device, device + bytes) when it lies in one block; else the request is
// malformed.
std::byte* block_span(uint64_t device, uint64_t bytes) {
  if (bytes == 0 || bytes > kCopyChunkBytes) {
    raise(ErrorKind::kInvalidInput, "a staging transfer of " + std::to_string(bytes) + " bytes");
  }
  std::lock_guard lock(staging_mutex);
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

void allocate(WireReader& in, WireWriter& out, CUresult& result) {
  const auto bytes = in.get<uint64_t>();
  in.expect_end();
  CUdeviceptr device = 0;
  const uint64_t rounded = bytes <= kMaxStagingBytes ? (bytes + kPage - 1) / kPage * kPage : 0;
  result = bytes == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  std::unique_lock lock(staging_mutex);
  if (result == CUDA_SUCCESS && (rounded == 0 || staged_bytes + rounded > kMaxStagingBytes)) {
    result = static_cast<CUresult>(services::refuse(
        CUDA_ERROR_OUT_OF_MEMORY, "cuda", "staging block", nullptr,
        ("of " + std::to_string(bytes) + " bytes: the session's staging blocks hold " +
         std::to_string(staged_bytes) + " of at most " + std::to_string(kMaxStagingBytes))
            .c_str()));
  }
  if (result == CUDA_SUCCESS &&
      (real().cuMemHostRegister_v2 == nullptr || real().cuMemHostGetDevicePointer_v2 == nullptr)) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  std::byte* host = nullptr;
  if (result == CUDA_SUCCESS) {
    host = static_cast<std::byte*>(std::aligned_alloc(kPage, rounded));
    if (host == nullptr) result = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (result == CUDA_SUCCESS) {
    std::memset(host, 0, rounded);  // nothing of this process's earlier memory reaches the client
    result = real().cuMemHostRegister_v2(
        host, rounded, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (result == CUDA_SUCCESS) {
      result = real().cuMemHostGetDevicePointer_v2(&device, host, 0);
      if (result != CUDA_SUCCESS) real().cuMemHostUnregister(host);
    }
    if (result != CUDA_SUCCESS) std::free(host);
  }
  if (result == CUDA_SUCCESS) {
    blocks.emplace(device, Block{host, rounded});
    staged_bytes += rounded;
    // Its device range is the session's to name in copies; never counted as device memory.
    services::session_services().allocations.owned(
        host, reinterpret_cast<const void*>(static_cast<uintptr_t>(device)), rounded);
  }
  lock.unlock();
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? device : 0);
}

void write(WireReader& in, WireWriter& out, CUresult& result) {
  const auto device = in.get<uint64_t>();
  const auto bytes = in.get<uint64_t>();
  std::byte* host = block_span(device, bytes);
  const auto data = in.get_raw(bytes);
  in.expect_end();
  std::memcpy(host, data.data(), bytes);
  result = CUDA_SUCCESS;
  out.put<int32_t>(result);
}

void read(WireReader& in, WireWriter& out, CUresult& result) {
  const auto device = in.get<uint64_t>();
  const auto bytes = in.get<uint64_t>();
  in.expect_end();
  const std::byte* host = block_span(device, bytes);
  result = CUDA_SUCCESS;
  out.put<int32_t>(result);
  out.put_blob(host, bytes);
}

}  // namespace

bool run_host_staging(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::gvirtusStagingAlloc:
      allocate(in, out, result);
      return true;
    case Fn::gvirtusStagingWrite:
      write(in, out, result);
      return true;
    case Fn::gvirtusStagingRead:
      read(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
