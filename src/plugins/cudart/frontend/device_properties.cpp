// cudaGetDeviceProperties and cudaDeviceGetAttribute, cached: a device's properties do not change
// while a program runs, and programs (and libraries) query them often, sometimes before every
// launch. The first successful answer per device (and attribute) in a session is kept; failures
// are not, so they are reported by the runtime every time. A forked child's new session starts
// with an empty cache.
#include <map>
#include <mutex>
#include <utility>

#include "frontend/client.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

struct DeviceCache {
  std::mutex mutex;  // guards everything below
  const void* session = nullptr;
  std::map<int, cudaDeviceProp> properties;
  std::map<std::pair<int, int>, int> attributes;  // (device, attribute) -> value
};

// The current session's cache, locked through `lock`; emptied when the session changed.
DeviceCache& session_cache(std::unique_lock<std::mutex>& lock) {
  static DeviceCache cache;
  lock = std::unique_lock(cache.mutex);
  const void* session = &Client::instance();
  if (cache.session != session) {
    cache.properties.clear();
    cache.attributes.clear();
    cache.session = session;
  }
  return cache;
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
