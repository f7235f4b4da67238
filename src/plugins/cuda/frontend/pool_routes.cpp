// The pool's device list and the owners of handles and addresses (pool_routes.h).
#include "plugins/cuda/frontend/pool_routes.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

#include "common/device_selection.h"
#include "common/error.h"
#include "common/log.h"
#include "cuda_remote_calls.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"

namespace gvirtus::cuda {
namespace {

// Nothing here is ever destroyed: NVIDIA's runtime calls the driver from its exit handlers.
std::shared_mutex& mutex = *new std::shared_mutex;
auto& devices = *new std::vector<PoolDevice>;
bool devices_known = false;  // guarded by mutex
auto& handle_owners = *new std::unordered_map<uint64_t, uint32_t>;
struct Owned {
  uint64_t bytes;
  uint32_t backend;
  uint64_t noted;  // the allocation clock's when it was noted
};
auto& address_owners = *new std::map<CUdeviceptr, Owned>;  // by start, disjoint
// The calling thread's last refused allocation (pool_note_address).
thread_local std::optional<PoolCollision> pending_collision;

uint32_t this_route() {
  return process_session::route();
}

// The pool's device selection (gvirtus_pool_device_selection) applied to the devices found, as
// CUDA_VISIBLE_DEVICES to a machine's GPUs: the selected ones, in the order given. As for one
// backend, a selection naming a device the pool lacks is refused, not shortened.
CUresult select(std::vector<PoolDevice>& found) {
  const std::string text = process_session::pool_device_selection();
  std::optional<std::vector<uint32_t>> selection;
  try {
    selection = parse_device_selection(text, "the pool's device selection");
  } catch (const Error& e) {
    GVIRTUS_LOG(kError) << e.what();  // the pool checked it already: not expected
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!selection) return CUDA_SUCCESS;
  if (selection->empty()) return CUDA_ERROR_NO_DEVICE;  // "none", as CUDA_VISIBLE_DEVICES=""
  std::vector<PoolDevice> selected;
  for (uint32_t index : *selection) {
    if (index >= found.size()) {
      GVIRTUS_LOG(kError) << "the device selection \"" << text << "\" names device " << index
                          << ", and the pool's backends have " << found.size() << " device(s)";
      return CUDA_ERROR_INVALID_DEVICE;
    }
    selected.push_back(found[index]);
  }
  found = std::move(selected);
  return CUDA_SUCCESS;
}

}  // namespace

bool pooled() {
  return stub::pooled_process();
}

CUresult pool_init(unsigned int flags) {
  const uint32_t backends = process_session::pool_size();
  std::optional<CUresult> first_failure;
  std::vector<PoolDevice> found;
  bool any_answered = false;
  for (uint32_t b = 0; b < backends; ++b) {
    const stub::RouteScope route(b);
    CUresult result = remote::cuInit(flags);
    int count = 0;
    if (result == CUDA_SUCCESS) result = remote::cuDeviceGetCount(&count);
    if (result != CUDA_SUCCESS) {
      GVIRTUS_LOG(kWarning) << "pool backend " << b << " (\"" << gvirtus_pool_backend_name(b)
                            << "\") adds no device: CUDA error " << static_cast<int>(result);
      if (!first_failure) first_failure = result;
      continue;
    }
    any_answered = true;
    for (int local = 0; local < count; ++local) found.push_back(PoolDevice{b, local});
  }
  if (!any_answered) return first_failure.value_or(CUDA_ERROR_NO_DEVICE);
  if (const CUresult r = select(found); r != CUDA_SUCCESS) return r;
  std::unique_lock lock(mutex);
  if (!devices_known) {  // a second cuInit keeps the list the first made
    devices = std::move(found);
    devices_known = true;
  }
  return CUDA_SUCCESS;
}

CUresult pool_devices(const std::vector<PoolDevice>** list) {
  std::shared_lock lock(mutex);
  if (!devices_known) return CUDA_ERROR_NOT_INITIALIZED;
  *list = &devices;  // never changes once known
  return CUDA_SUCCESS;
}

std::optional<uint32_t> pool_backend_of_device(CUdevice device) {
  if (!pooled()) return std::nullopt;
  std::shared_lock lock(mutex);
  if (device < 0 || static_cast<size_t>(device) >= devices.size()) return std::nullopt;
  return devices[static_cast<size_t>(device)].backend;
}

CUdevice pool_local_device(CUdevice device) {
  if (!pooled()) return device;
  std::shared_lock lock(mutex);
  if (device < 0 || static_cast<size_t>(device) >= devices.size()) return -1;
  const PoolDevice& d = devices[static_cast<size_t>(device)];
  return d.backend == this_route() ? d.local : -1;
}

CUdevice pool_global_device(CUdevice local) {
  if (!pooled()) return local;
  const uint32_t backend = this_route();
  std::shared_lock lock(mutex);
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].backend == backend && devices[i].local == local) return static_cast<CUdevice>(i);
  }
  return -1;
}

std::optional<uint32_t> pool_backend_of_value(uint64_t value) {
  // Null and the predefined streams (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are every backend's.
  if (!pooled() || value <= 2) return std::nullopt;
  std::shared_lock lock(mutex);
  const auto it = handle_owners.find(value);
  if (it == handle_owners.end()) return std::nullopt;
  return it->second;
}

void pool_note_value(uint64_t value) {
  if (!pooled() || value <= 2) return;
  const uint32_t backend = this_route();
  std::unique_lock lock(mutex);
  const auto [it, added] = handle_owners.try_emplace(value, backend);
  if (!added && it->second != backend) {
    // Two backends' drivers gave the same value: calls on it go to the later one's.
    GVIRTUS_LOG(kWarning) << "pool backends " << it->second << " and " << backend
                          << " both gave handle 0x" << std::hex << value
                          << "; it now names backend " << std::dec << backend << "'s";
    it->second = backend;
  }
}

void pool_forget_value(uint64_t value) {
  if (!pooled()) return;
  std::unique_lock lock(mutex);
  handle_owners.erase(value);
}

std::optional<uint32_t> pool_backend_of_address(CUdeviceptr address) {
  if (!pooled() || address == 0) return std::nullopt;
  std::shared_lock lock(mutex);
  auto it = address_owners.upper_bound(address);
  if (it == address_owners.begin()) return std::nullopt;
  --it;
  const bool inside = address - it->first < it->second.bytes || address == it->first;
  return inside ? std::optional<uint32_t>(it->second.backend) : std::nullopt;
}

bool pool_note_address(CUdeviceptr address, uint64_t bytes, uint64_t noted) {
  if (!pooled() || address == 0) return true;
  const uint32_t backend = this_route();
  const uint64_t end = address + std::max<uint64_t>(bytes, 1);
  std::unique_lock lock(mutex);
  // Ranges held are disjoint, so the last one starting before `end` is the only one that can
  // reach into [address, end).
  auto it = address_owners.lower_bound(end);
  while (it != address_owners.begin()) {
    --it;
    if (it->first + std::max<uint64_t>(it->second.bytes, 1) <= address) break;
    if (it->second.backend != backend) {
      pending_collision = PoolCollision{address, backend};
      return false;
    }
    // The same backend's: one it freed without our knowing (a reset); it is gone.
    it = address_owners.erase(it);
  }
  address_owners[address] = Owned{bytes, backend, noted};
  return true;
}

void pool_forget_address(CUdeviceptr address, uint64_t noted_by) {
  if (!pooled()) return;
  const uint32_t backend = this_route();
  std::unique_lock lock(mutex);
  const auto it = address_owners.find(address);
  if (it != address_owners.end() && it->second.backend == backend && it->second.noted <= noted_by) {
    address_owners.erase(it);
  }
}

std::optional<PoolCollision> pool_take_collision() {
  return std::exchange(pending_collision, std::nullopt);
}

void pool_follow_context(CUcontext context) {
  if (const auto backend = pool_backend_of_value(handle_value(context))) {
    process_session::set_route(*backend);
  }
}

}  // namespace gvirtus::cuda
