#include "plugins/cudart/backend/shared_host_memory.h"

#include <map>
#include <mutex>
#include <string>

#include "common/error.h"
#include "common/wire_record.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/marshal.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/common/shared_host_wire.h"

namespace gvirtus::cudart {
namespace {

struct SharedState {
  std::mutex mutex;
  std::span<std::byte> memory;
  std::map<uint64_t, uint64_t> registered;  // offset -> bytes, registered with the GPU
};

SharedState& state() {
  static SharedState s;
  return s;
}

// The shared bytes [offset, offset + bytes), or kInvalidInput: a client that names memory outside
// what it shares is malformed, not merely wrong.
std::byte* shared_range(uint64_t offset, uint64_t bytes, const char* what) {
  const auto memory = state().memory;
  if (memory.empty()) {
    raise(ErrorKind::kInvalidInput,
          std::string(what) + " over a transport that shares no memory with the client");
  }
  if (offset > memory.size() || bytes > memory.size() - offset) {
    raise(ErrorKind::kInvalidInput, std::string(what) + ": bytes " + std::to_string(offset) +
                                        " + " + std::to_string(bytes) + " are outside the " +
                                        std::to_string(memory.size()) + " shared bytes");
  }
  return memory.data() + offset;
}

unsigned register_flags(uint32_t host_alloc_flags) {
  // Mapped always: with unified addressing every page-locked allocation is mapped natively
  // (its device pointer is its host pointer), whatever flags it was allocated with.
  unsigned flags = cudaHostRegisterMapped;
  if (host_alloc_flags & cudaHostAllocPortable) flags |= cudaHostRegisterPortable;
  // Write-combining is a property of how memory is allocated; registered memory has none. It only
  // changes speed, never results.
  return flags;
}

}  // namespace

void set_shared_memory(std::span<std::byte> memory) {
  std::lock_guard lock(state().mutex);
  state().memory = memory;
}

bool in_shared_memory(const void* address) {
  std::lock_guard lock(state().mutex);
  const auto memory = state().memory;
  const auto at = reinterpret_cast<uintptr_t>(address);
  const auto base = reinterpret_cast<uintptr_t>(memory.data());
  return at >= base && at - base < memory.size();  // an empty span holds nothing
}

cudaError_t run_host_register_shared(WireReader& in, WireWriter& out) {
  const auto request = get_record<RegisterShared>(in);
  in.expect_end();
  const uint64_t offset = request.offset, bytes = request.bytes;
  const uint32_t flags = request.flags;
  if (bytes == 0 || offset % kSharedHostAlign != 0 || bytes % kSharedHostAlign != 0) {
    raise(ErrorKind::kInvalidInput, "cudaHostRegisterShared of bytes " + std::to_string(offset) +
                                        " + " + std::to_string(bytes) + ": not whole pages");
  }
  std::byte* host = shared_range(offset, bytes, "cudaHostRegisterShared");
  std::lock_guard lock(state().mutex);
  auto& registered = state().registered;
  // Overlap with a registered range: the client's allocator never does this, so it is malformed.
  auto next = registered.lower_bound(offset);
  const bool overlaps_next = next != registered.end() && next->first < offset + bytes;
  const bool overlaps_prev = next != registered.begin() && [&] {
    auto prev = std::prev(next);
    return prev->first + prev->second > offset;
  }();
  if (overlaps_next || overlaps_prev) {
    raise(ErrorKind::kInvalidInput, "cudaHostRegisterShared of bytes " + std::to_string(offset) +
                                        " + " + std::to_string(bytes) + " overlaps another");
  }
  cudaError_t result = ::cudaHostRegister(host, bytes, register_flags(flags));
  void* device = nullptr;
  if (result == cudaSuccess) {
    result = ::cudaHostGetDevicePointer(&device, host, 0);
    if (result != cudaSuccess) ::cudaHostUnregister(host);
  }
  if (result == cudaSuccess) registered.emplace(offset, bytes);
  out.put<int32_t>(result);
  put_record(out, RegisteredShared{reinterpret_cast<uintptr_t>(device)});
  return result;
}

cudaError_t run_host_unregister_shared(WireReader& in, WireWriter& out) {
  const auto [offset] = get_record<UnregisterShared>(in);
  in.expect_end();
  std::lock_guard lock(state().mutex);
  auto& registered = state().registered;
  const auto it = registered.find(offset);
  if (it == registered.end()) {
    raise(ErrorKind::kInvalidInput,
          "cudaHostUnregisterShared of bytes at " + std::to_string(offset) + ": not registered");
  }
  const cudaError_t result = ::cudaHostUnregister(shared_range(offset, it->second, "unregister"));
  registered.erase(it);
  out.put<int32_t>(result);
  return result;
}

cudaError_t run_memcpy_shared(WireReader& in, WireWriter& out, bool with_stream) {
  const auto request = get_record<SharedCopy>(in);
  in.expect_end();
  auto* device = static_cast<std::byte*>(request.device);
  const uint64_t offset = request.offset;
  const uint64_t count = request.count;
  const cudaMemcpyKind kind = request.kind;
  const cudaStream_t stream = request_stream(request.stream, with_stream, "cudaMemcpyShared");
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost) {
    raise(ErrorKind::kInvalidInput, "cudaMemcpyShared of kind " + std::to_string(kind));
  }
  std::byte* host = shared_range(offset, count, "cudaMemcpyShared");
  std::byte* to = kind == cudaMemcpyHostToDevice ? device : host;
  const std::byte* from = kind == cudaMemcpyHostToDevice ? host : device;
  cudaError_t result =
      first_failure(with_stream ? vet(stream) : cudaSuccess, vet_device_pointer(device, count));
  if (result == cudaSuccess) {
    result = with_stream ? ::cudaMemcpyAsync(to, from, count, kind, stream)
                         : ::cudaMemcpy(to, from, count, kind);
  }
  out.put<int32_t>(result);
  return result;
}

}  // namespace gvirtus::cudart
