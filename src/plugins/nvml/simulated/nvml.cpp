// libgvirtus-simulated-nvml.so: the simulated NVML, a test double for machines without a GPU,
// which the nvml-simulated backend plugin opens in place of NVIDIA's libnvidia-ml.so.1. It
// describes the simulated CUDA devices (GVIRTUS_SIMULATED_DEVICES of them; NVML, unlike CUDA,
// ignores CUDA_VISIBLE_DEVICES) with the same names, PCI buses and UUIDs as the simulated CUDA
// device (plugins/cuda/simulated/identity.h), so a program matches one to the other as it
// matches a GPU's. It measures nothing: memory is all free, utilisation 0, no process runs, and
// sensors (temperature, power, fans), NVLink and fabric are NVML_ERROR_NOT_SUPPORTED, as on a
// GPU that lacks them. Its versions say "simulated". Never GPU evidence.
//
// It keeps NVML's rules that a program can trip over: nothing but nvmlInit works before
// nvmlInit (NVML_ERROR_UNINITIALIZED), init and shutdown are counted, a buffer too small is
// NVML_ERROR_INSUFFICIENT_SIZE, a versioned struct of another version is
// NVML_ERROR_ARGUMENT_VERSION_MISMATCH. Only what the nvml plugin's rows call is exported.
#include <nvml.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "identity.h"
#include "visible_devices.h"

namespace sim = gvirtus::simulated;

#define SIMULATED_EXPORT extern "C" __attribute__((visibility("default")))

// nvml.h declares nvmlDevice_t as a pointer to this incomplete struct: a device here is one.
struct nvmlDevice_st {
  int physical;
};

namespace {

std::mutex lock;
int initialized = 0;  // nvmlInit minus nvmlShutdown, guarded by lock
int device_count = 0;
nvmlDevice_st devices[sim::kMaxDevices];

nvmlReturn_t init() {
  const std::lock_guard guard(lock);
  if (initialized == 0) {
    const sim::VisibleDevices found =
        sim::visible_devices(std::getenv("GVIRTUS_SIMULATED_DEVICES"), nullptr);
    if (!found.error.empty()) {
      std::fprintf(stderr, "gvirtus simulated NVML: %s\n", found.error.c_str());
      return NVML_ERROR_UNKNOWN;
    }
    device_count = static_cast<int>(found.physical.size());
    for (int i = 0; i < device_count; ++i) devices[i].physical = found.physical[i];
  }
  ++initialized;
  return NVML_SUCCESS;
}

bool ready() {
  const std::lock_guard guard(lock);
  return initialized > 0;
}

// The device a handle names, or null (not one of these, or NVML not initialized).
const nvmlDevice_st* device_of(nvmlDevice_t device) {
  const std::lock_guard guard(lock);
  if (initialized == 0) return nullptr;
  for (int i = 0; i < device_count; ++i) {
    if (device == &devices[i]) return device;
  }
  return nullptr;
}

nvmlReturn_t put_text(const std::string& text, char* out, unsigned int length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

// NVML's form of a UUID: "GPU-" and the 16 bytes as 8-4-4-4-12 hex digits.
std::string uuid_text(int physical) {
  char bytes[16];
  sim::device_uuid(physical, bytes);
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(bytes[i]));
    text += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

void fill_pci(int physical, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof *pci);
  pci->domain = 0;
  pci->bus = sim::pci_bus(physical);
  pci->device = 0;
  std::snprintf(pci->busId, sizeof pci->busId, "%08x:%02x:%02x.0", 0u, pci->bus, 0u);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04x:%02x:%02x.0", 0u, pci->bus, 0u);
}

// Runs `body` on the device a query names, with NVML's checks first.
template <typename Body>
nvmlReturn_t query(nvmlDevice_t device, Body body) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  const nvmlDevice_st* d = device_of(device);
  if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return body(d->physical);
}

// A query of one value through `out`: NVML_ERROR_INVALID_ARGUMENT for a null one.
template <typename T>
nvmlReturn_t value(nvmlDevice_t device, T* out, T v) {
  return query(device, [&](int) {
    if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *out = v;
    return NVML_SUCCESS;
  });
}

// A sensor or feature the simulated device lacks.
nvmlReturn_t absent(nvmlDevice_t device) {
  return query(device, [](int) { return NVML_ERROR_NOT_SUPPORTED; });
}

nvmlReturn_t handle_by_index(unsigned int index, nvmlDevice_t* device) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  const std::lock_guard guard(lock);
  if (device == nullptr || index >= static_cast<unsigned>(device_count)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *device = &devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t handle_by_bus_id(const char* bus_id, nvmlDevice_t* device) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  if (bus_id == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  // NVML takes "domain:bus:device.function" with a domain of 4 or 8 digits, or
  // "bus:device.function".
  if (std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4) {
    domain = 0;
    if (std::sscanf(bus_id, "%x:%x.%x", &bus, &slot, &function) != 3) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
  }
  const std::lock_guard guard(lock);
  for (int i = 0; i < device_count; ++i) {
    if (domain == 0 && bus == sim::pci_bus(devices[i].physical) && slot == 0 && function == 0) {
      *device = &devices[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t no_processes(nvmlDevice_t device, unsigned int* count) {
  return query(device, [&](int) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 0;  // the simulated device runs nothing
    return NVML_SUCCESS;
  });
}

}  // namespace

SIMULATED_EXPORT nvmlReturn_t nvmlInit_v2() {
  return init();
}
SIMULATED_EXPORT nvmlReturn_t nvmlInit() {
  return init();
}
SIMULATED_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int) {
  return init();
}

SIMULATED_EXPORT nvmlReturn_t nvmlShutdown() {
  const std::lock_guard guard(lock);
  if (initialized == 0) return NVML_ERROR_UNINITIALIZED;
  --initialized;
  return NVML_SUCCESS;
}

SIMULATED_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  return put_text("0.0.0-simulated", version, length);
}

SIMULATED_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  return put_text("13.0.0-simulated", version, length);
}

SIMULATED_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *version = 13000;  // the simulated CUDA device's cuDriverGetVersion (the toolkit's CUDA_VERSION)
  return NVML_SUCCESS;
}

SIMULATED_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return nvmlSystemGetCudaDriverVersion(version);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::lock_guard guard(lock);
  *count = static_cast<unsigned>(device_count);
  return NVML_SUCCESS;
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) {
  return nvmlDeviceGetCount_v2(count);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                            nvmlDevice_t* device) {
  return handle_by_index(index, device);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return handle_by_index(index, device);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!ready()) return NVML_ERROR_UNINITIALIZED;
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::lock_guard guard(lock);
  for (int i = 0; i < device_count; ++i) {
    if (uuid_text(devices[i].physical) == uuid) {
      *device = &devices[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* id,
                                                               nvmlDevice_t* device) {
  return handle_by_bus_id(id, device);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* id, nvmlDevice_t* device) {
  return handle_by_bus_id(id, device);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                unsigned int length) {
  return query(device, [&](int p) { return put_text(sim::device_name(p), name, length); });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                unsigned int length) {
  return query(device, [&](int p) { return put_text(uuid_text(p), uuid, length); });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial,
                                                  unsigned int length) {
  return query(device,
               [&](int p) { return put_text("simulated-" + std::to_string(p), serial, length); });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return query(device, [&](int) {
    if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = static_cast<unsigned>(device - devices);
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return query(device, [&](int p) {
    if (minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *minor = static_cast<unsigned>(p);
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* type) {
  return value(device, type, NVML_BRAND_NVIDIA);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                        nvmlDeviceArchitecture_t* arch) {
  return value(device, arch, nvmlDeviceArchitecture_t{NVML_DEVICE_ARCH_HOPPER});
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return query(device, [&](int p) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci(p, pci);
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                                 int* minor) {
  return query(device, [&](int) {
    if (major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *major = sim::kComputeMajor;
    *minor = sim::kComputeMinor;
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return query(device, [&](int) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *memory = nvmlMemory_t{sim::kDeviceBytes, sim::kDeviceBytes, 0};  // total, free, used
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device,
                                                         nvmlMemory_v2_t* memory) {
  return query(device, [&](int) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = sim::kDeviceBytes;
    memory->reserved = 0;
    memory->free = sim::kDeviceBytes;
    memory->used = 0;
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                            nvmlUtilization_t* utilization) {
  return value(device, utilization, nvmlUtilization_t{0, 0});
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                      unsigned int* count,
                                                                      nvmlProcessInfo_t*) {
  return no_processes(device, count);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                                       unsigned int* count,
                                                                       nvmlProcessInfo_t*) {
  return no_processes(device, count);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                                   unsigned int* count,
                                                                   nvmlProcessInfo_v1_t*) {
  return no_processes(device, count);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                     unsigned int* clock) {
  if (type != NVML_CLOCK_GRAPHICS && type != NVML_CLOCK_SM) return absent(device);
  return value(device, clock, sim::kClockMhz);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                        unsigned int* clock) {
  return nvmlDeviceGetClockInfo(device, type, clock);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device,
                                                            nvmlPstates_t* state) {
  return value(device, state, NVML_PSTATE_0);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device,
                                                       nvmlComputeMode_t* mode) {
  return value(device, mode, NVML_COMPUTEMODE_DEFAULT);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device,
                                                           nvmlEnableState_t* mode) {
  return value(device, mode, NVML_FEATURE_DISABLED);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                                   unsigned int* pending) {
  return query(device, [&](int) {
    if (current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
  });
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device,
                                                          unsigned int* is_mig) {
  return value(device, is_mig, 0u);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                                     nvmlGpuP2PCapsIndex_t,
                                                     nvmlGpuP2PStatus_t* status) {
  if (device_of(device2) == nullptr)
    return ready() ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;
  return value(device1, status, NVML_P2P_STATUS_NOT_SUPPORTED);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1,
                                                                  nvmlDevice_t device2,
                                                                  nvmlGpuTopologyLevel_t* level) {
  if (device_of(device2) == nullptr)
    return ready() ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_UNINITIALIZED;
  return value(device1, level, device1 == device2 ? NVML_TOPOLOGY_INTERNAL : NVML_TOPOLOGY_SYSTEM);
}

SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                       nvmlFieldValue_t* values) {
  return query(device, [&](int) {
    if (count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < count; ++i) values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
  });
}

// Sensors, power, fans, NVLink and fabric: not on the simulated device.
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                                       nvmlTemperatureSensors_t, unsigned int*) {
  return absent(device);
}
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t*) {
  return absent(device);
}
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int*) {
  return absent(device);
}
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int*) {
  return absent(device);
}
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int,
                                                       nvmlEnableState_t*) {
  return absent(device);
}
SIMULATED_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
                                                          nvmlGpuFabricInfoV_t*) {
  return absent(device);
}
