// The simulated devices and their primary contexts: devices of compute capability 9.0, whose
// attributes are plausible figures of such a GPU (not any real one's), named so that nobody
// mistakes one for a GPU. Each has an identity of its own, from its physical index p (its place
// among GVIRTUS_SIMULATED_DEVICES, whatever CUDA_VISIBLE_DEVICES made its ordinal): its name, its
// PCI bus (p + 1) and its UUID, so that a test tells which device it sees.
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log.h"
#include "plugins/cuda/common/array_formats.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

bool valid_device(CUdevice dev) {
  return sim::valid_device(sim::state(), dev);  // under the state's lock: called in guarded()
}

// The physical index of a valid ordinal.
int physical(CUdevice dev) {
  return sim::state().devices[static_cast<size_t>(dev)];
}

std::string device_name(CUdevice dev) {
  return sim::device_name(physical(dev));
}

std::string pci_bus_id(CUdevice dev) {
  return sim::pci_bus_id(physical(dev));
}

// Each attribute's value; 0 for features the simulated device does not offer.
int attribute(CUdevice_attribute attribute, CUdevice dev) {
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
      return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
      return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      return static_cast<int>(sim::kClockMhz * 1000);  // kHz
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
      return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return static_cast<int>(sim::kMultiprocessors);
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
      return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT:
      return 512;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return physical(dev) + 1;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
      return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return 50 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return sim::kComputeMajor;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return sim::kComputeMinor;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
      return 0;
    case CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO:
      return 2;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
      return 32 << 20;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE:
      return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      return 1;
    // Virtual memory management is simulated (virtual_memory.cpp), its physical allocations
    // exportable as POSIX descriptors (shareable.cpp); XLA refuses a device without it.
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      return 1;
    default:
      return 0;
  }
}

// What a device's primary context held, destroyed with it (by a reset, or by the release of its
// last reference): the allocations, modules (not libraries'), streams, arrays and events it made
// (not those of contexts of one's own), and peer access from and to it.
void destroy_primary(sim::State& s, CUdevice dev) {
  const CUcontext primary = sim::primary_context(dev);
  const auto doomed = [&](const void* object) { return sim::owning_context(s, object) == primary; };
  for (auto it = s.allocations.begin(); it != s.allocations.end();) {
    const uintptr_t address = it->first;
    if (!doomed(sim::memory_key(address))) {
      ++it;
      continue;
    }
    if (s.module_memory.erase(address) == 0) s.allocated -= s.allocation_bytes.at(address);
    s.allocation_bytes.erase(address);
    s.graph_allocations.erase(address);  // gone: not the graph's to free any more
    sim::disown(s, sim::memory_key(address));
    it = s.allocations.erase(it);
  }
  sim::forget_functions_if(s, [&](const sim::Function& f) {
    const auto module = s.modules.find(f.module);
    return module == s.modules.end() || (!module->second->library && doomed(f.module));
  });
  std::erase_if(s.modules, [&](const auto& m) {
    if (m.second->library || !doomed(m.first)) return false;
    sim::disown(s, m.first);
    return true;
  });
  // A library's variables were the memory of the context that placed them: placed afresh when
  // next asked for.
  for (auto& [handle, module] : s.modules) {
    std::erase_if(module->placed,
                  [&](const auto& v) { return s.allocations.count(v.second) == 0; });
  }
  const auto erase_doomed = [&](auto& objects) {
    std::erase_if(objects, [&](const auto& o) {
      if (!doomed(o.first)) return false;
      sim::disown(s, o.first);
      return true;
    });
  };
  std::erase_if(s.stream_attributes, [&](const auto& a) { return doomed(a.first); });
  erase_doomed(s.streams);
  erase_doomed(s.arrays);
  erase_doomed(s.events);
  std::erase_if(s.peer_access,
                [&](const auto& pair) { return pair.first == primary || pair.second == primary; });
}

}  // namespace

// The devices are found once, by the first cuInit that succeeds: GVIRTUS_SIMULATED_DEVICES and
// CUDA_VISIBLE_DEVICES as the process has them then (what selects devices sets it before).
// An invalid count is refused (CUDA_ERROR_INVALID_VALUE), and no visible device is
// CUDA_ERROR_NO_DEVICE, as the driver answers CUDA_VISIBLE_DEVICES="": both leave the library
// uninitialised, so that every later call says so.
GVIRTUS_SIMULATED_EXPORT CUresult cuInit(unsigned int Flags) {
  return sim::guarded(
      [&](sim::State& s) {
        if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
        if (s.initialized) return CUDA_SUCCESS;
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        sim::VisibleDevices found =
            sim::visible_devices(std::getenv("GVIRTUS_SIMULATED_DEVICES"), visible);
        if (!found.error.empty()) {
          GVIRTUS_LOG(kError) << "simulated CUDA device (no GPU): cuInit refused: " << found.error;
          return CUDA_ERROR_INVALID_VALUE;
        }
        if (const std::string refused = sim::configure_device_memory(); !refused.empty()) {
          GVIRTUS_LOG(kError) << "simulated CUDA device (no GPU): cuInit refused: " << refused;
          return CUDA_ERROR_INVALID_VALUE;
        }
        if (found.physical.empty()) {
          GVIRTUS_LOG(kNotice) << "simulated CUDA device (no GPU): CUDA_VISIBLE_DEVICES=\""
                               << visible << "\" leaves no device";
          return CUDA_ERROR_NO_DEVICE;
        }
        s.devices = std::move(found.physical);
        s.primaries.assign(s.devices.size(), sim::Primary{});
        s.current_pools.assign(s.devices.size(), nullptr);
        std::string list;
        for (const int p : s.devices) list += (list.empty() ? "" : ",") + std::to_string(p);
        GVIRTUS_LOG(kNotice) << "simulated CUDA device (no GPU): allocations live in host "
                                "memory, launches are recorded, not executed; "
                             << s.devices.size() << " visible device(s), physical " << list;
        s.initialized = true;
        return CUDA_SUCCESS;
      },
      false);
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetCount(int* count) {
  return sim::guarded([&](sim::State& s) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = static_cast<int>(s.devices.size());
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return sim::guarded([&](sim::State&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::strncpy(name, device_name(dev).c_str(), static_cast<size_t>(len) - 1);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    sim::device_uuid(physical(dev), uuid->bytes);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = sim::kDeviceBytes;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib,
                                                       CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (pi == nullptr || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pi = attribute(attrib, dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    sim::Primary& primary = s.primaries[static_cast<size_t>(dev)];
    ++primary.references;
    primary.active = true;
    *pctx = sim::primary_context(dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    sim::Primary& primary = s.primaries[static_cast<size_t>(dev)];
    if (primary.references == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--primary.references == 0) {
      // The last reference destroys the context and what it held, as the driver's does; its
      // flags stay for the next one.
      const unsigned flags = primary.flags;
      destroy_primary(s, dev);
      s.primaries[static_cast<size_t>(dev)] = sim::Primary{0, flags, false};
    }
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags,
                                                             int* active) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    const sim::Primary& primary = s.primaries[static_cast<size_t>(dev)];
    *flags = primary.flags;
    *active = primary.active ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if ((flags & ~0x1fu) != 0) return CUDA_ERROR_INVALID_VALUE;
    s.primaries[static_cast<size_t>(dev)].flags = flags;
    return CUDA_SUCCESS;
  });
}

// A reset frees what the device's contexts made, as natively: its memory, modules (with their
// functions), streams, events and arrays, and the variables its contexts placed of libraries;
// libraries (context-independent) and their functions stay, and so does what other devices made.
GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    destroy_primary(s, dev);
    s.primaries[static_cast<size_t>(dev)] = sim::Primary{};
    return CUDA_SUCCESS;
  });
}

// The calling thread's current context (the stub sends every change of its thread's stack).
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    if (ctx != nullptr && !sim::known_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    sim::current_context() = ctx;
    return CUDA_SUCCESS;
  });
}

// The calling thread's current context (what the backend asks to tell whose handles it makes,
// and after every call, to keep it per client thread). Answered without the state's lock: the
// answer is the calling thread's own, and a graph's host node holds the lock while it waits for
// the client, whose next gate request the backend follows with this question. Only the backend
// asks (the stub answers the application itself), so no check of cuInit either.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pctx = sim::current_context();
  return CUDA_SUCCESS;
}

// The device of the current context (device 0 for a thread that has none: effective_context()).
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  return sim::guarded([&](sim::State& s) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUdevice dev = sim::context_device(s, sim::effective_context());
    if (dev < 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;  // destroyed by another thread
    *device = dev;
    return CUDA_SUCCESS;
  });
}

// A context of one's own: a handle of its own over device `dev` (memory, modules and streams are
// shared, as the simulated devices keep one state), made current on the calling thread, as the
// driver makes it.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params,
                                                 unsigned int flags, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pctx == nullptr || params != nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    auto* context = reinterpret_cast<CUcontext>(new char);  // a distinct address, ours
    s.contexts.emplace(context, sim::OwnContext{dev, flags, s.next_context_id++});
    sim::current_context() = context;
    *pctx = context;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    if (s.contexts.erase(ctx) == 0) return CUDA_ERROR_INVALID_CONTEXT;
    std::erase_if(s.peer_access,
                  [&](const auto& pair) { return pair.first == ctx || pair.second == ctx; });
    if (sim::current_context() == ctx) sim::current_context() = nullptr;
    delete reinterpret_cast<char*>(ctx);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSynchronize() {
  return sim::guarded([&](sim::State&) { return CUDA_SUCCESS; });  // everything ran at once
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  return sim::guarded([&](sim::State& s) {
    if (pvalue == nullptr || limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    const auto it = s.limits.find(limit);
    *pvalue = it != s.limits.end() ? it->second : (limit == CU_LIMIT_STACK_SIZE ? 1024 : 0);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  return sim::guarded([&](sim::State& s) {
    if (limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    s.limits[limit] = value;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::strncpy(pciBusId, pci_bus_id(dev).c_str(), static_cast<size_t>(len) - 1);
    pciBusId[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return sim::guarded([&](sim::State& s) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx != nullptr && !sim::known_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;  // the context API version every CUDA since 3.2 reports
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUcontext ctx = sim::effective_context();
    if (const auto own = s.contexts.find(ctx); own != s.contexts.end()) {
      *flags = own->second.flags;
      return CUDA_SUCCESS;
    }
    const CUdevice dev = sim::context_device(s, ctx);
    if (dev < 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *flags = s.primaries[static_cast<size_t>(dev)].flags;
    return CUDA_SUCCESS;
  });
}

// The current context's flags, as cuCtxGetFlags reports them: the scheduling and map-host bits
// (CU_CTX_FLAGS_MASK), nothing the driver keeps for itself.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetFlags(unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if ((flags & ~unsigned{CU_CTX_FLAGS_MASK}) != 0) return CUDA_ERROR_INVALID_VALUE;
    const CUcontext ctx = sim::effective_context();
    if (const auto own = s.contexts.find(ctx); own != s.contexts.end()) {
      own->second.flags = flags;
      return CUDA_SUCCESS;
    }
    s.primaries[static_cast<size_t>(sim::context_device(s, ctx))].flags = flags;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetStreamPriorityRange(int* leastPriority,
                                                              int* greatestPriority) {
  return sim::guarded([&](sim::State&) {
    if (leastPriority != nullptr) *leastPriority = sim::kLeastStreamPriority;
    if (greatestPriority != nullptr) *greatestPriority = sim::kGreatestStreamPriority;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    return ctx == nullptr || sim::known_context(s, ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  return sim::guarded([&](sim::State& s) {
    if (pconfig == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pconfig = static_cast<CUfunc_cache>(s.cache_config);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  return sim::guarded([&](sim::State& s) {
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    s.cache_config = config;
    return CUDA_SUCCESS;
  });
}

// The deprecated shared memory bank size: four bytes, fixed, as on every current GPU, where a
// setting is accepted and does nothing.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) {
  if (pConfig == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
  return CUDA_SUCCESS;
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config) {
  return config >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE &&
                 config <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_VALUE;
}

// Distinct devices are peers (they share host memory); a device is not its own peer.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev,
                                                        CUdevice peerDev) {
  return sim::guarded([&](sim::State&) {
    if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || !valid_device(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = dev != peerDev ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

// The widest 1D texture over linear memory, in elements of the format: 2^28 bytes (the 1D linear
// texture attribute's limit) divided by the element's size.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetTexture1DLinearMaxWidth(size_t* maxWidthInElements,
                                                                     CUarray_format format,
                                                                     unsigned numChannels,
                                                                     CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (maxWidthInElements == nullptr ||
        (numChannels != 1 && numChannels != 2 && numChannels != 4)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    const size_t element = gvirtus::cuda::channel_bytes(format);
    if (element == 0) return CUDA_ERROR_INVALID_VALUE;
    *maxWidthInElements = (size_t{1} << 28) / (element * numChannels);
    return CUDA_SUCCESS;
  });
}

namespace {

// Whether every operation is one CUatomicOperation names (the application's values, which may be
// any int).
bool known_operations(const CUatomicOperation* operations, unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    const int operation = operations[i];
    if (operation < CU_ATOMIC_OPERATION_INTEGER_ADD || operation > CU_ATOMIC_OPERATION_FLOAT_MAX) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Atomics between a simulated device and the host, as over PCIe: integer operations of 32 and
// 64 bits, signed and unsigned; no floating-point ones.
GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceGetHostAtomicCapabilities(unsigned int* capabilities, const CUatomicOperation* operations,
                                  unsigned int count, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (capabilities == nullptr || operations == nullptr || count == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (!known_operations(operations, count)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < count; ++i) {
      capabilities[i] =
          operations[i] >= CU_ATOMIC_OPERATION_FLOAT_ADD
              ? 0u
              : unsigned{CU_ATOMIC_CAPABILITY_SIGNED | CU_ATOMIC_CAPABILITY_UNSIGNED |
                         CU_ATOMIC_CAPABILITY_SCALAR_32 | CU_ATOMIC_CAPABILITY_SCALAR_64};
    }
    return CUDA_SUCCESS;
  });
}

// Atomics between two simulated devices (peers in one memory, as their P2P attributes say):
// every operation, of every width, as NVLink peers have; a device and itself are no pair.
GVIRTUS_SIMULATED_EXPORT CUresult
cuDeviceGetP2PAtomicCapabilities(unsigned int* capabilities, const CUatomicOperation* operations,
                                 unsigned int count, CUdevice srcDevice, CUdevice dstDevice) {
  return sim::guarded([&](sim::State&) {
    if (capabilities == nullptr || operations == nullptr || count == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (!valid_device(srcDevice) || !valid_device(dstDevice) || srcDevice == dstDevice) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    if (!known_operations(operations, count)) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < count; ++i) {
      capabilities[i] = unsigned{CU_ATOMIC_CAPABILITY_SIGNED | CU_ATOMIC_CAPABILITY_UNSIGNED |
                                 CU_ATOMIC_CAPABILITY_SCALAR_32 | CU_ATOMIC_CAPABILITY_SCALAR_64};
    }
    return CUDA_SUCCESS;
  });
}

// Graph memory the device keeps for graphs' allocations: none here, so nothing to trim.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) {
  return sim::guarded(
      [&](sim::State&) { return valid_device(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib,
                                                          CUdevice srcDevice, CUdevice dstDevice) {
  return sim::guarded([&](sim::State&) {
    if (value == nullptr || attrib < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ||
        attrib > CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // A device and itself are no pair, as natively.
    if (!valid_device(srcDevice) || !valid_device(dstDevice) || srcDevice == dstDevice) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    // Peers in one memory: access and atomics are supported, arrays are not reached by
    // peers, and every pair ranks the same.
    switch (attrib) {
      case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
      case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
        *value = 1;
        break;
      default:
        *value = 0;
    }
    return CUDA_SUCCESS;
  });
}

// "[domain:]bus:device.function" in hexadecimal, of a visible device: its ordinal.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return sim::guarded([&](sim::State&) {
    if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    int end = 0;
    const bool with_domain =
        std::sscanf(pciBusId, "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &end) == 4;
    if (!with_domain) {
      domain = 0;
      end = 0;
      if (std::sscanf(pciBusId, "%x:%x.%x%n", &bus, &device, &function, &end) != 3) {
        return CUDA_ERROR_INVALID_VALUE;
      }
    }
    if (pciBusId[end] != '\0') return CUDA_ERROR_INVALID_VALUE;
    for (CUdevice ordinal = 0; valid_device(ordinal); ++ordinal) {
      if (domain == 0 && bus == static_cast<unsigned>(physical(ordinal)) + 1 && device == 0 &&
          function == 0) {
        *dev = ordinal;
        return CUDA_SUCCESS;
      }
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxResetPersistingL2Cache() {
  return sim::guarded([&](sim::State&) { return CUDA_SUCCESS; });
}

// Execution affinity: the SM count is a type every device of the simulation answers, and a
// context (no MPS client limits it) may use all of its device's SMs.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetExecAffinitySupport(int* pi, CUexecAffinityType type,
                                                                 CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (pi == nullptr || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pi = 1;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetExecAffinity(CUexecAffinityParam* pExecAffinity,
                                                       CUexecAffinityType type) {
  return sim::guarded([&](sim::State& s) {
    if (pExecAffinity == nullptr || type != CU_EXEC_AFFINITY_TYPE_SM_COUNT) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (sim::context_device(s, sim::effective_context()) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    *pExecAffinity = CUexecAffinityParam{};
    pExecAffinity->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    pExecAffinity->param.smCount.val = static_cast<unsigned>(sim::kMultiprocessors);
    return CUDA_SUCCESS;
  });
}

// GPUDirect RDMA writes into the current context: none reach a simulated device, so a flush of
// either scope has nothing to wait for.
GVIRTUS_SIMULATED_EXPORT CUresult cuFlushGPUDirectRDMAWrites(
    CUflushGPUDirectRDMAWritesTarget target, CUflushGPUDirectRDMAWritesScope scope) {
  return sim::guarded([&](sim::State& s) {
    if (target != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX ||
        (scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER &&
         scope != CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_ALL_DEVICES)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (sim::context_device(s, sim::effective_context()) < 0) return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
  });
}

// Peer access from the current context to a context of another device (a context of its own
// device is no peer: CUDA_ERROR_INVALID_DEVICE, as natively).
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return sim::guarded([&](sim::State& s) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const CUdevice peer = sim::context_device(s, peerContext);
    if (peer < 0) return CUDA_ERROR_INVALID_CONTEXT;
    const CUcontext ctx = sim::effective_context();
    const CUdevice dev = sim::context_device(s, ctx);
    if (dev < 0) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (dev == peer) return CUDA_ERROR_INVALID_DEVICE;
    return s.peer_access.emplace(ctx, peerContext).second ? CUDA_SUCCESS
                                                          : CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_context(s, peerContext)) return CUDA_ERROR_INVALID_CONTEXT;
    return s.peer_access.erase({sim::effective_context(), peerContext}) != 0
               ? CUDA_SUCCESS
               : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
  });
}

// Primary contexts are numbered 1.. by ordinal, contexts of one's own after them.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return sim::guarded([&](sim::State& s) {
    if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const CUcontext context = ctx != nullptr ? ctx : sim::effective_context();
    if (const auto own = s.contexts.find(context); own != s.contexts.end()) {
      *ctxId = own->second.id;
      return CUDA_SUCCESS;
    }
    const CUdevice dev = sim::context_device(s, context);
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    *ctxId = static_cast<unsigned long long>(dev) + 1;
    return CUDA_SUCCESS;
  });
}

// Profiling brackets: nothing to profile on the simulated device.
GVIRTUS_SIMULATED_EXPORT CUresult cuProfilerStart() {
  return sim::guarded([&](sim::State&) { return CUDA_SUCCESS; });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuProfilerStop() {
  return sim::guarded([&](sim::State&) { return CUDA_SUCCESS; });
}

// The device's memory pool: one per device, a handle of ours. Stream-ordered allocations are
// served from it at once (streams complete in order), as plain allocations.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pool_out = sim::device_pool(dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    const CUmemoryPool current = s.current_pools[static_cast<size_t>(dev)];
    *pool = current != nullptr ? current : sim::device_pool(dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (!sim::known_pool(s, pool)) return CUDA_ERROR_INVALID_VALUE;
    s.current_pools[static_cast<size_t>(dev)] = pool;
    return CUDA_SUCCESS;
  });
}

// CUDA 13's pools by location: a device's, as cuDeviceGet(Default)MemPool; pinned device
// memory only (no host pools here).
namespace {

CUresult device_location(const CUmemLocation* location, CUmemAllocationType type, CUdevice& dev) {
  if (location == nullptr || type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;
  if (!valid_device(location->id)) return CUDA_ERROR_INVALID_DEVICE;
  dev = location->id;
  return CUDA_SUCCESS;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool* pool_out,
                                                         CUmemLocation* location,
                                                         CUmemAllocationType type) {
  return sim::guarded([&](sim::State&) {
    CUdevice dev = 0;
    if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = device_location(location, type, dev); r != CUDA_SUCCESS) return r;
    *pool_out = sim::device_pool(dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemGetMemPool(CUmemoryPool* pool, CUmemLocation* location,
                                                  CUmemAllocationType type) {
  return sim::guarded([&](sim::State& s) {
    CUdevice dev = 0;
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (const CUresult r = device_location(location, type, dev); r != CUDA_SUCCESS) return r;
    const CUmemoryPool current = s.current_pools[static_cast<size_t>(dev)];
    *pool = current != nullptr ? current : sim::device_pool(dev);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemSetMemPool(CUmemLocation* location, CUmemAllocationType type,
                                                  CUmemoryPool pool) {
  return sim::guarded([&](sim::State& s) {
    CUdevice dev = 0;
    if (const CUresult r = device_location(location, type, dev); r != CUDA_SUCCESS) return r;
    if (!sim::known_pool(s, pool)) return CUDA_ERROR_INVALID_VALUE;
    s.current_pools[static_cast<size_t>(dev)] = pool;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  (void)minBytesToKeep;  // freed memory goes back at once: nothing is kept to trim
  return sim::guarded([&](sim::State& s) {
    return sim::known_pool(s, pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

// Pools of one's own: pinned device memory of a visible device, served like the device's pool.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool,
                                                  const CUmemPoolProps* poolProps) {
  return sim::guarded([&](sim::State& s) {
    if (pool == nullptr || poolProps == nullptr ||
        poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        !valid_device(poolProps->location.id)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // A POSIX descriptor may be asked for; no fabric (a GPU without one answers the same).
    if ((poolProps->handleTypes & ~CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    auto* created = reinterpret_cast<CUmemoryPool>(new char);  // a distinct address, ours
    s.own_pools.insert(created);
    if (poolProps->handleTypes != CU_MEM_HANDLE_TYPE_NONE) s.exportable_pools.insert(created);
    *pool = created;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  return sim::guarded([&](sim::State& s) {
    if (s.own_pools.erase(pool) == 0) return CUDA_ERROR_INVALID_VALUE;
    s.pool_attributes.erase(pool);
    s.exportable_pools.erase(pool);
    s.imported_pools.erase(pool);
    for (CUmemoryPool& current : s.current_pools) {
      if (current == pool) current = nullptr;
    }
    delete reinterpret_cast<char*>(pool);
    return CUDA_SUCCESS;
  });
}

// Every visible device reads and writes every pool (they share one memory): access can be granted
// to any of them, never to anything else.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc* map,
                                                     size_t count) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::known_pool(s, pool) || (count != 0 && map == nullptr)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < count; ++i) {
      if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
          !valid_device(map[i].location.id) || map[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
        return CUDA_ERROR_INVALID_DEVICE;
      }
    }
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags* flags, CUmemoryPool memPool,
                                                     CUmemLocation* location) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr || location == nullptr || !sim::known_pool(s, memPool)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const bool device = location->type == CU_MEM_LOCATION_TYPE_DEVICE && valid_device(location->id);
    *flags = device ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return CUDA_SUCCESS;
  });
}
