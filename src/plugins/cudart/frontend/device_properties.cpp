// cudaGetDeviceProperties, cudaDeviceGetAttribute, cudaGetDeviceCount and the runtime and driver
// versions, cached: none changes while a program runs, and programs (and libraries) query them
// often, sometimes before every launch. The first successful answer per device (and attribute) in
// a session is kept; failures are not, so they are reported by the runtime every time, and null
// output pointers go to the runtime too (for its own error). A forked child's new session starts
// with an empty cache.
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "frontend/process_session.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct DeviceCache {
  std::mutex mutex;  // guards everything below
  const void* session = nullptr;
  std::map<int, cudaDeviceProp> properties;
  std::map<std::pair<int, int>, int> attributes;  // (device, attribute) -> value
  std::optional<int> device_count;
  std::optional<int> runtime_version;
  std::optional<int> driver_version;
};

// The current session's cache, locked through `lock`; emptied when the session changed.
DeviceCache& session_cache(std::unique_lock<std::mutex>& lock) {
  static DeviceCache cache;
  lock = std::unique_lock(cache.mutex);
  const void* session = process_session::token();
  if (cache.session != session) {
    cache.properties.clear();
    cache.attributes.clear();
    cache.device_count.reset();
    cache.runtime_version.reset();
    cache.driver_version.reset();
    cache.session = session;
  }
  return cache;
}

// A value of the session asked for once: `slot` selects it in the cache, `ask` the remote call.
cudaError_t cached_value(int* out, std::optional<int> DeviceCache::*slot,
                         cudaError_t (*ask)(int*)) {
  if (out != nullptr) {
    std::unique_lock<std::mutex> lock;
    auto& cache = session_cache(lock);
    if (const auto& value = cache.*slot) {
      *out = *value;
      return cudaSuccess;
    }
  }
  const cudaError_t rc = ask(out);
  if (rc == cudaSuccess && out != nullptr) {
    std::unique_lock<std::mutex> lock;
    session_cache(lock).*slot = *out;
  }
  return rc;
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (prop != nullptr) {
    std::unique_lock<std::mutex> lock;
    auto& cache = cr::session_cache(lock);
    if (auto it = cache.properties.find(device); it != cache.properties.end()) {
      *prop = it->second;
      return cudaSuccess;
    }
  }
  const cudaError_t rc = cr::remote::cudaGetDeviceProperties(prop, device);
  if (rc == cudaSuccess && prop != nullptr) {
    std::unique_lock<std::mutex> lock;
    cr::session_cache(lock).properties[device] = *prop;
  }
  return rc;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr,
                                                         int device) {
  const auto key = std::make_pair(device, static_cast<int>(attr));
  if (value != nullptr) {
    std::unique_lock<std::mutex> lock;
    auto& cache = cr::session_cache(lock);
    if (auto it = cache.attributes.find(key); it != cache.attributes.end()) {
      *value = it->second;
      return cudaSuccess;
    }
  }
  const cudaError_t rc = cr::remote::cudaDeviceGetAttribute(value, attr, device);
  if (rc == cudaSuccess && value != nullptr) {
    std::unique_lock<std::mutex> lock;
    cr::session_cache(lock).attributes[key] = *value;
  }
  return rc;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  return cr::cached_value(count, &cr::DeviceCache::device_count, cr::remote::cudaGetDeviceCount);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaRuntimeGetVersion(int* version) {
  return cr::cached_value(version, &cr::DeviceCache::runtime_version,
                          cr::remote::cudaRuntimeGetVersion);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaDriverGetVersion(int* version) {
  return cr::cached_value(version, &cr::DeviceCache::driver_version,
                          cr::remote::cudaDriverGetVersion);
}
