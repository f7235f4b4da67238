// IPC memory (ipc.h). Another application's allocation, opened here, is device memory by the
// runtime's account, so the copies and kernels of this session may name it (vetting.h); the
// session closes only what it opened, and the size of what it opened goes back to the stub, which
// records the range as device memory as it records its own allocations. The size comes from the
// driver the runtime loaded (cuMemGetAddressRange: the runtime has no such query).
#include "plugins/cudart/backend/ipc.h"

#include <cuda.h>

#include <cstring>
#include <mutex>
#include <set>

#include "backend/services/rejections.h"
#include "plugins/cudart/backend/loaded_driver.h"

namespace gvirtus::cudart {
namespace {

std::mutex opened_mutex;
std::set<const void*> opened;  // one session per worker process

cudaError_t open_memory(WireReader& in, WireWriter& out, size_t at) {
  cudaIpcMemHandle_t handle{};
  const auto bytes = in.get_raw(sizeof handle);
  std::memcpy(&handle, bytes.data(), sizeof handle);
  const auto flags = in.get<uint32_t>();
  in.expect_end();
  void* ptr = nullptr;
  const cudaError_t result = ::cudaIpcOpenMemHandle(&ptr, handle, flags);
  uint64_t size = 0;
  if (result == cudaSuccess) {
    size = loaded_allocation_bytes(ptr);
    const std::lock_guard lock(opened_mutex);
    opened.insert(ptr);
  }
  out.store_at<int32_t>(at, result);
  out.put<uint64_t>(result == cudaSuccess ? reinterpret_cast<uintptr_t>(ptr) : 0);
  out.put<uint64_t>(size);
  return result;
}

cudaError_t close_memory(WireReader& in) {
  const auto ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(in.get<uint64_t>()));
  in.expect_end();
  if (ptr != nullptr) {  // null is the runtime's to judge
    const std::lock_guard lock(opened_mutex);
    if (!opened.contains(ptr)) {
      return static_cast<cudaError_t>(services::refuse(
          cudaErrorInvalidValue, "cudart", "IPC pointer", ptr, "not memory this session opened"));
    }
  }
  const cudaError_t result = ::cudaIpcCloseMemHandle(ptr);
  if (result == cudaSuccess) {
    const std::lock_guard lock(opened_mutex);
    opened.erase(ptr);
  }
  return result;
}

}  // namespace

bool run_ipc(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  if (fn != Fn::cudaIpcOpenMemHandle && fn != Fn::cudaIpcCloseMemHandle) return false;
  const size_t at = out.size();
  out.put<int32_t>(cudaSuccess);  // the result, stored once the call has run
  result = fn == Fn::cudaIpcOpenMemHandle ? open_memory(in, out, at) : close_memory(in);
  out.store_at<int32_t>(at, result);
  return true;
}

void forget_ipc() {
  const std::lock_guard lock(opened_mutex);
  opened.clear();
}

}  // namespace gvirtus::cudart
