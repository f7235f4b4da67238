#include "backend/gpu_inventory.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <string>

namespace gvirtus {
namespace {

// The few NVML types used here, as nvml.h declares them (their layout is part of NVML's stable
// ABI; the toolkit may not ship the header).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
constexpr unsigned kNvmlNameBytes = 96;
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlUtilization {
  unsigned gpu, memory;
};
struct NvmlPciInfo {  // nvmlPciInfo_t (v3)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct NvmlProcessInfoV2 {  // nvmlProcessInfo_v2_t
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

struct DlClose {
  void operator()(void* handle) const { ::dlclose(handle); }
};

class Nvml {
 public:
  // Throws nothing; `error()` says why NVML cannot be used.
  Nvml() {
    lib_.reset(::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL));
    if (!lib_) {
      const char* why = ::dlerror();
      // NVML ships with the driver: without it there is no usable GPU here.
      error_ = std::string("no NVIDIA driver: NVML cannot be loaded: ") +
               (why ? why : "libnvidia-ml.so.1");
      return;
    }
    if (!bind(init_, "nvmlInit_v2") || !bind(shutdown_, "nvmlShutdown") ||
        !bind(error_string_, "nvmlErrorString") || !bind(count_, "nvmlDeviceGetCount_v2") ||
        !bind(handle_, "nvmlDeviceGetHandleByIndex_v2") || !bind(name_, "nvmlDeviceGetName") ||
        !bind(memory_, "nvmlDeviceGetMemoryInfo") ||
        !bind(utilization_, "nvmlDeviceGetUtilizationRates") ||
        !bind(pci_, "nvmlDeviceGetPciInfo_v3") ||
        !bind(processes_, "nvmlDeviceGetComputeRunningProcesses_v2")) {
      return;
    }
    const NvmlReturn r = init_();
    if (r != kNvmlSuccess) {
      error_ = "NVML failed to initialise: " + describe(r);
      return;
    }
    initialised_ = true;
  }
  ~Nvml() {
    if (initialised_) shutdown_();
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& error() const { return error_; }

  void read(GpuInventory& out) {
    unsigned count = 0;
    if (NvmlReturn r = count_(&count); r != kNvmlSuccess) {
      out.error = "NVML cannot count the GPUs: " + describe(r);
      return;
    }
    for (unsigned i = 0; i < count && i < kMaxStatusGpus; ++i) {
      NvmlDevice device = nullptr;
      GpuStatus gpu;
      gpu.index = i;
      if (NvmlReturn r = handle_(i, &device); r != kNvmlSuccess) {
        gpu.name = "(unreadable: " + describe(r) + ")";
        out.gpus.push_back(std::move(gpu));
        continue;
      }
      char name[kNvmlNameBytes] = {};
      if (name_(device, name, sizeof name) == kNvmlSuccess) {
        gpu.name = std::string(name, strnlen(name, sizeof name));
      }
      NvmlPciInfo pci{};
      if (pci_(device, &pci) == kNvmlSuccess) {
        gpu.bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
      }
      NvmlMemory memory{};
      if (memory_(device, &memory) == kNvmlSuccess) {
        gpu.memory_used_bytes = memory.used;
        gpu.memory_total_bytes = memory.total;
      }
      NvmlUtilization utilization{};
      if (utilization_(device, &utilization) == kNvmlSuccess) {
        gpu.utilization_percent = utilization.gpu;
      }
      add_processes(device, out.memory_by_pid);
      out.gpus.push_back(std::move(gpu));
    }
  }

 private:
  template <typename Fn>
  bool bind(Fn*& fn, const char* symbol) {
    fn = reinterpret_cast<Fn*>(::dlsym(lib_.get(), symbol));
    if (fn == nullptr) error_ = std::string("NVML lacks ") + symbol + ": driver too old";
    return fn != nullptr;
  }

  std::string describe(NvmlReturn r) const {
    const char* text = error_string_ ? error_string_(r) : nullptr;
    return (text ? std::string(text) : "error") + " (NVML " + std::to_string(r) + ")";
  }

  void add_processes(NvmlDevice device, std::map<pid_t, uint64_t>& memory_by_pid) {
    std::unique_ptr<NvmlProcessInfoV2[]> list;
    unsigned count = 0;
    NvmlReturn r = processes_(device, &count, nullptr);
    // The list can grow between the two calls: retry a few times with room to spare.
    for (int attempt = 0; attempt < 4 && r == kNvmlInsufficientSize; ++attempt) {
      count += 8;
      list = std::make_unique<NvmlProcessInfoV2[]>(count);
      r = processes_(device, &count, list.get());
    }
    if (r != kNvmlSuccess || !list) return;
    for (unsigned i = 0; i < count; ++i) {
      if (list[i].used_gpu_memory == kNvmlValueNotAvailable) continue;
      memory_by_pid[static_cast<pid_t>(list[i].pid)] += list[i].used_gpu_memory;
    }
  }

  std::unique_ptr<void, DlClose> lib_;
  std::string error_;
  bool initialised_ = false;
  NvmlReturn (*init_)() = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  const char* (*error_string_)(NvmlReturn) = nullptr;
  NvmlReturn (*count_)(unsigned*) = nullptr;
  NvmlReturn (*handle_)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*name_)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*memory_)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*pci_)(NvmlDevice, NvmlPciInfo*) = nullptr;
  NvmlReturn (*processes_)(NvmlDevice, unsigned*, NvmlProcessInfoV2*) = nullptr;
};

}  // namespace

GpuInventory read_gpu_inventory() {
  GpuInventory out;
  Nvml nvml;
  if (!nvml.error().empty()) {
    out.error = nvml.error();
    return out;
  }
  nvml.read(out);
  return out;
}

}  // namespace gvirtus
