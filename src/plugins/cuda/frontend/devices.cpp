// Device queries answered by the stub once known: the driver's version, the device count and each
// device's attributes do not change while a process runs, and NVIDIA's runtime asks for about a
// hundred attributes as it starts, so each is asked of the backend once and kept. Failures are
// not kept (a backend that comes back may answer). In a child forked after cuInit, what is kept
// is not answered: the driver refuses there (forked_child_status), the version alone excepted.
#include <cuda.h>

#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/images_for_devices.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// The caches are never destroyed: the runtime asks from its exit handlers too.
std::mutex& mutex = *new std::mutex;
std::optional<int> driver_version;  // trivially destructible
std::optional<int> device_count;
auto& attributes = *new std::map<std::pair<CUdevice, int>, int>;

// Answers from `known`, or asks once: ask(&value) is the remote call.
template <typename Ask>
CUresult cached(std::optional<int>& known, int* value, Ask ask) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  {
    std::lock_guard lock(mutex);
    if (known) {
      *value = *known;
      return CUDA_SUCCESS;
    }
  }
  const CUresult result = ask(value);
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(mutex);
    known = *value;
  }
  return result;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* driverVersion) {
  // Never newer than the driver API this library implements (CUDA_VERSION of its cuda.h): a
  // runtime asks cuGetProcAddress for the versions the driver claims.
  return cr::cached(cr::driver_version, driverVersion, [](int* v) {
    const CUresult result = cr::remote::cuDriverGetVersion(v);
    if (result == CUDA_SUCCESS && *v > CUDA_VERSION) *v = CUDA_VERSION;
    return result;
  });
}

// In a pool, every backend's driver starts, and the devices are the pool's (pool_routes.h).
extern "C" __attribute__((visibility("default"))) CUresult cuInit(unsigned int Flags) {
  if (cr::pooled()) return cr::pool_init(Flags);
  return cr::remote::cuInit(Flags);
}

extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  if (cr::pooled()) {
    const std::vector<cr::PoolDevice>* devices = nullptr;
    if (const CUresult r = cr::pool_devices(&devices); r != CUDA_SUCCESS) return r;
    *count = static_cast<int>(devices->size());
    return CUDA_SUCCESS;
  }
  return cr::cached(cr::device_count, count,
                    [](int* v) { return cr::remote::cuDeviceGetCount(v); });
}

// A CUdevice is its ordinal, for the driver and for the pool.
extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice* device,
                                                                       int ordinal) {
  if (!cr::pooled()) return cr::remote::cuDeviceGet(device, ordinal);
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  const std::vector<cr::PoolDevice>* devices = nullptr;
  if (const CUresult r = cr::pool_devices(&devices); r != CUDA_SUCCESS) return r;
  if (ordinal < 0 || static_cast<size_t>(ordinal) >= devices->size()) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = ordinal;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGetAttribute(
    int* pi, CUdevice_attribute attrib, CUdevice dev) {
  if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  const auto key = std::pair{dev, static_cast<int>(attrib)};
  {
    std::lock_guard lock(cr::mutex);
    if (const auto it = cr::attributes.find(key); it != cr::attributes.end()) {
      *pi = it->second;
      return CUDA_SUCCESS;
    }
  }
  const CUresult result = cr::remote::cuDeviceGetAttribute(pi, attrib, dev);
  if (result == CUDA_SUCCESS) {
    std::lock_guard lock(cr::mutex);
    cr::attributes[key] = *pi;
  }
  return result;
}

// CUDA 9.2's ABI, which runtimes still ask for: the same answer as _v2 outside MIG partitions
// (_v2 names a MIG partition's own UUID; the backend's device is a whole GPU or its partition,
// and _v2 is what it reports). cuda.h maps the name to _v2 by a macro.
#undef cuDeviceGetUuid
extern "C" __attribute__((visibility("default"))) CUresult cuDeviceGetUuid(CUuuid* uuid,
                                                                           CUdevice dev) {
  return cuDeviceGetUuid_v2(uuid, dev);
}

namespace gvirtus::cuda {

// images_for_devices.h. The exports above keep the answers, so asking again costs nothing.
std::vector<int> backend_device_archs() {
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_SUCCESS) return {};
  std::vector<int> archs;
  for (int device = 0; device < count; ++device) {
    int major = 0, minor = 0;
    if (cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) !=
            CUDA_SUCCESS ||
        cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) !=
            CUDA_SUCCESS) {
      return {};  // one device unknown: keep everything for all
    }
    archs.push_back(major * 10 + minor);
  }
  return archs;
}

}  // namespace gvirtus::cuda
