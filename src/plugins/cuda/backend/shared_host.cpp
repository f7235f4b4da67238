// Page-locked host memory in shared memory (shared_host.h). A block the client names must be
// whole pages inside the shared memory, and not registered already (anything else is malformed:
// no stub sends it); the driver registers it mapped and portable, so its device pointer reaches
// the same pages the client writes. Its device range is then the session's for every other
// call (the allocation ledger's, owned by the block: not counted as device memory), until it is
// unregistered.
#include "plugins/cuda/backend/shared_host.h"

#include <mutex>
#include <span>
#include <string>

#include "common/address_ranges.h"
#include "common/error.h"
#include "common/wire_record.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/common/driver_wire.h"

namespace gvirtus::cuda {
namespace {

std::mutex shared_mutex;
std::span<std::byte> shared_memory;
AddressRanges registered;  // the blocks registered, by their address here

// The shared bytes of a block, or kInvalidInput.
std::byte* shared_block(uint64_t offset, uint64_t bytes) {
  if (shared_memory.empty()) {
    raise(ErrorKind::kInvalidInput, "shared host memory over a transport that shares none");
  }
  if (bytes == 0 || offset % kSharedHostPage != 0 || bytes % kSharedHostPage != 0 ||
      offset > shared_memory.size() || bytes > shared_memory.size() - offset) {
    raise(ErrorKind::kInvalidInput, "shared host block " + std::to_string(offset) + " + " +
                                        std::to_string(bytes) + " of " +
                                        std::to_string(shared_memory.size()) + " shared bytes");
  }
  return shared_memory.data() + offset;
}

void register_block(WireReader& in, WireWriter& out, CUresult& result) {
  const auto request = get_record<SharedHostRequest>(in);
  in.expect_end();
  std::lock_guard lock(shared_mutex);
  std::byte* host = shared_block(request.offset, request.bytes);
  if (registered.overlaps(host, request.bytes)) {
    raise(ErrorKind::kInvalidInput, "shared host block " + std::to_string(request.offset) +
                                        " overlaps one registered already");
  }
  CUdeviceptr device = 0;
  result = real().cuMemHostRegister_v2 != nullptr && real().cuMemHostGetDevicePointer_v2 != nullptr
               ? CUDA_SUCCESS
               : CUDA_ERROR_NOT_SUPPORTED;
  // Mapped and portable whatever the flags: with unified addressing every page-locked allocation
  // is mapped in every context natively. Write-combining changes speed only.
  if (result == CUDA_SUCCESS) {
    result = real().cuMemHostRegister_v2(
        host, request.bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
  }
  if (result == CUDA_SUCCESS) {
    result = real().cuMemHostGetDevicePointer_v2(&device, host, 0);
    if (result != CUDA_SUCCESS) real().cuMemHostUnregister(host);
  }
  if (result == CUDA_SUCCESS) {
    registered.add(host, request.bytes, request.flags);
    services::session_services().allocations.owned(
        host, reinterpret_cast<const void*>(static_cast<uintptr_t>(device)), request.bytes);
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? device : 0);
}

void unregister_block(WireReader& in, WireWriter& out, CUresult& result) {
  const auto offset = in.get<uint64_t>();
  in.expect_end();
  std::lock_guard lock(shared_mutex);
  std::byte* host = offset < shared_memory.size() ? shared_memory.data() + offset : nullptr;
  const auto block = host != nullptr ? registered.find(host) : std::nullopt;
  if (!block || block->start != reinterpret_cast<uintptr_t>(host)) {
    raise(ErrorKind::kInvalidInput,
          "shared host block " + std::to_string(offset) + " is not registered");
  }
  result = real().cuMemHostUnregister != nullptr ? real().cuMemHostUnregister(host)
                                                 : CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    registered.remove(host);
    services::session_services().allocations.owner_gone(host);
  }
  out.put<int32_t>(result);
}

}  // namespace

void open_shared_memory(const SessionInfo& session) {
  std::lock_guard lock(shared_mutex);
  shared_memory = session.shared_memory;  // one session per worker process: nothing registered
}

std::byte* registered_shared_span(uint64_t offset, uint64_t bytes) {
  std::lock_guard lock(shared_mutex);
  if (shared_memory.empty() || bytes == 0 || offset > shared_memory.size() ||
      bytes > shared_memory.size() - offset) {
    raise(ErrorKind::kInvalidInput, "a copy of shared host memory " + std::to_string(offset) +
                                        " + " + std::to_string(bytes) + " outside the " +
                                        std::to_string(shared_memory.size()) + " shared bytes");
  }
  std::byte* host = shared_memory.data() + offset;
  const auto block = registered.find(host);
  if (!block || bytes > block->bytes ||
      reinterpret_cast<uintptr_t>(host) - block->start > block->bytes - bytes) {
    raise(ErrorKind::kInvalidInput, "a copy of shared host memory " + std::to_string(offset) +
                                        " + " + std::to_string(bytes) +
                                        " outside every block registered");
  }
  return host;
}

bool run_shared_host(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuMemHostRegister_v2:
      register_block(in, out, result);
      return true;
    case Fn::cuMemHostUnregister:
      unregister_block(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
