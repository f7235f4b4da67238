// nvmlInit_v2, nvmlInitWithFlags and nvmlInit (the nvml plugin's wrapped rows): what the backend
// says, but a backend that cannot serve NVML answers as NVML answers natively on a machine that
// cannot: a backend machine without libnvidia-ml.so.1 (the plugin refused: its calls are "not
// supported") as a missing library, an unreachable backend as a driver that is not loaded. So a
// program that probes NVML (PyTorch, JAX, pynvml) falls back as it does without a GPU.
#include <nvml.h>

#include <atomic>

#include "common/log.h"
#include "nvml_remote_calls.h"

namespace {

nvmlReturn_t as_native(nvmlReturn_t result) {
  static std::atomic<bool> said{false};
  switch (result) {
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      if (!said.exchange(true)) {
        GVIRTUS_LOG(kWarning) << "the backend does not serve NVML (its machine has no "
                                 "libnvidia-ml.so.1, or its configuration names no nvml "
                                 "plugin): nvmlInit answers NVML_ERROR_LIBRARY_NOT_FOUND";
      }
      return NVML_ERROR_LIBRARY_NOT_FOUND;
    case NVML_ERROR_GPU_IS_LOST:  // the backend cannot be reached (the stub's log says why)
      return NVML_ERROR_DRIVER_NOT_LOADED;
    default:
      return result;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  return as_native(gvirtus::nvml::remote::nvmlInit_v2());
}

extern "C" __attribute__((visibility("default"))) nvmlReturn_t nvmlInitWithFlags(
    unsigned int flags) {
  return as_native(gvirtus::nvml::remote::nvmlInitWithFlags(flags));
}

extern "C" __attribute__((visibility("default"))) nvmlReturn_t nvmlInit() {
  return as_native(gvirtus::nvml::remote::nvmlInit());
}
