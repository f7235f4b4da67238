#include "plugins/cuda/backend/ipc.h"

#include <cstring>
#include <mutex>
#include <set>

#include "backend/services/rejections.h"
#include "backend/services/session_services.h"
#include "cuda_real.h"
#include "cuda_vetting.h"

namespace gvirtus::cuda {
namespace {

std::mutex opened_mutex;
std::set<CUdeviceptr> opened;  // one session per worker process

services::AllocationLedger& ledger() {
  return services::session_services().allocations;
}

// cuIpcOpenMemHandle_v2: the handle's bytes, u32 flags. Reply: i32 result, u64 device pointer,
// u64 bytes of the opened allocation (both 0 after a failure).
void open_memory(WireReader& in, WireWriter& out, CUresult& result) {
  CUipcMemHandle handle{};
  const auto bytes = in.get_raw(sizeof handle);
  std::memcpy(&handle, bytes.data(), sizeof handle);
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  CUdeviceptr address = 0;
  size_t size = 0;
  result = real().cuIpcOpenMemHandle_v2 == nullptr || real().cuMemGetAddressRange_v2 == nullptr
               ? CUDA_ERROR_NOT_SUPPORTED
               : real().cuIpcOpenMemHandle_v2(&address, handle, flags);
  if (result == CUDA_SUCCESS) {
    CUdeviceptr start = 0;
    // Its size, so that the session's calls may name all of it (and no more).
    if (real().cuMemGetAddressRange_v2(&start, &size, address) != CUDA_SUCCESS ||
        start != address) {
      size = 0;
    }
    const std::lock_guard lock(opened_mutex);
    opened.insert(address);
    const void* at = device_address(address);
    if (size != 0) ledger().owned(at, at, size);
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(result == CUDA_SUCCESS ? address : 0);
  out.put<uint64_t>(result == CUDA_SUCCESS ? size : 0);
}

// cuIpcCloseMemHandle: u64 device pointer. Reply: i32 result.
void close_memory(WireReader& in, WireWriter& out, CUresult& result) {
  const auto address = in.get<uint64_t>();
  in.expect_end();
  // Out of the session's records before the close, back if it fails: once closed, the address
  // may be handed to another executor's open or allocation, which a late erase would forget
  // (allocation_ledger.h).
  services::LedgerWithdrawal withdrawn(ledger());
  {
    const std::lock_guard lock(opened_mutex);
    result = opened.erase(address) == 1
                 ? CUDA_SUCCESS
                 : static_cast<CUresult>(services::refuse(CUDA_ERROR_INVALID_VALUE, "cuda",
                                                          "IPC pointer", device_address(address),
                                                          "not memory this session opened"));
  }
  if (result != CUDA_SUCCESS) {
    out.put<int32_t>(result);
    return;
  }
  withdrawn.owned_by(device_address(address));
  result = real().cuIpcCloseMemHandle != nullptr ? real().cuIpcCloseMemHandle(address)
                                                 : CUDA_ERROR_NOT_SUPPORTED;
  if (result == CUDA_SUCCESS) {
    withdrawn.done();
  } else {
    const std::lock_guard lock(opened_mutex);
    opened.insert(address);
  }
  out.put<int32_t>(result);
}

}  // namespace

bool run_ipc(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuIpcOpenMemHandle_v2:
      open_memory(in, out, result);
      return true;
    case Fn::cuIpcCloseMemHandle:
      close_memory(in, out, result);
      return true;
    default:
      return false;
  }
}

void forget_ipc() {
  const std::lock_guard lock(opened_mutex);
  for (const CUdeviceptr address : opened) ledger().owner_gone(device_address(address));
  opened.clear();
}

}  // namespace gvirtus::cuda
