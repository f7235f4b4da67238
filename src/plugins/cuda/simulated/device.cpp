// The simulated device and its primary context: one device of compute capability 9.0, whose
// attributes are plausible figures of such a GPU (not any real one's), named so that nobody
// mistakes it for a GPU.
#include <cstring>

#include "common/log.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr char kName[] = "gvirtus simulated device (no GPU)";

bool valid_device(CUdevice dev) {
  return dev == 0;
}

// Each attribute's value; 0 for features the simulated device does not offer.
int attribute(CUdevice_attribute attribute) {
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
      return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
      return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return 132;
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
      return 0;
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
      return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return 0;
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
    default:
      return 0;
  }
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuInit(unsigned int Flags) {
  return sim::guarded(
      [&](sim::State& s) {
        if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
        if (!s.initialized) {
          GVIRTUS_LOG(kNotice) << "simulated CUDA device (no GPU): allocations live in host "
                                  "memory, launches are recorded, not executed";
        }
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
  return sim::guarded([&](sim::State&) {
    if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *count = 1;
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
    std::strncpy(name, kName, static_cast<size_t>(len) - 1);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return sim::guarded([&](sim::State&) {
    if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::memcpy(uuid->bytes, "gvirtus-simulate", sizeof uuid->bytes);
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
    *pi = attribute(attrib);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    ++s.primary_references;
    s.primary_active = true;
    *pctx = sim::primary_context();
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (s.primary_references == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--s.primary_references == 0) s.primary_active = false;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags,
                                                             int* active) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *flags = s.primary_flags;
    *active = s.primary_active ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if ((flags & ~0x1fu) != 0) return CUDA_ERROR_INVALID_VALUE;
    s.primary_flags = flags;
    return CUDA_SUCCESS;
  });
}

// A reset frees what the context held, as natively: libraries (context-independent) and their
// functions stay.
GVIRTUS_SIMULATED_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    s.allocations.clear();
    s.allocation_bytes.clear();
    s.module_memory.clear();
    s.allocated = 0;
    sim::forget_functions_if(s, [&](const sim::Function& f) {
      const auto module = s.modules.find(f.module);
      return module == s.modules.end() || !module->second->library;
    });
    std::erase_if(s.modules, [](const auto& m) { return !m.second->library; });
    // A library's variables were the context's memory: placed afresh when next asked for.
    for (auto& [handle, module] : s.modules) module->placed.clear();
    s.streams.clear();
    s.stream_attributes.clear();
    s.arrays.clear();
    s.events.clear();
    s.primary_references = 0;
    s.primary_active = false;
    s.primary_flags = 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    return ctx == nullptr || sim::known_context(s, ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
  });
}

// Every context is the one device's.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  return sim::guarded([&](sim::State&) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
  });
}

// A context of one's own: a handle of its own over the one device (memory, modules and streams
// are the device's, as the simulated device keeps one state).
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params,
                                                 unsigned int flags, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pctx == nullptr || params != nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    (void)flags;
    auto* context = reinterpret_cast<CUcontext>(new char);  // a distinct address, ours
    s.contexts.insert(context);
    *pctx = context;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
  return sim::guarded([&](sim::State& s) {
    if (s.contexts.erase(ctx) == 0) return CUDA_ERROR_INVALID_CONTEXT;
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
    std::strncpy(pciBusId, "0000:00:00.0", static_cast<size_t>(len) - 1);
    pciBusId[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return sim::guarded([&](sim::State&) {
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx != nullptr && ctx != sim::primary_context()) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;  // the context API version every CUDA since 3.2 reports
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetFlags(unsigned int* flags) {
  return sim::guarded([&](sim::State& s) {
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = s.primary_flags;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetStreamPriorityRange(int* leastPriority,
                                                              int* greatestPriority) {
  return sim::guarded([&](sim::State&) {
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = -5;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  return sim::guarded([&](sim::State&) {
    return ctx == nullptr || ctx == sim::primary_context() ? CUDA_SUCCESS
                                                           : CUDA_ERROR_INVALID_CONTEXT;
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

// One device: it has no peer.
GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev,
                                                        CUdevice peerDev) {
  return sim::guarded([&](sim::State&) {
    if (canAccessPeer == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev) || !valid_device(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = 0;
    return CUDA_SUCCESS;
  });
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
    *value = 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return sim::guarded([&](sim::State&) {
    if (dev == nullptr || pciBusId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (std::strcmp(pciBusId, "0000:00:00.0") != 0 && std::strcmp(pciBusId, "00:00.0") != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *dev = 0;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxResetPersistingL2Cache() {
  return sim::guarded([&](sim::State&) { return CUDA_SUCCESS; });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return sim::guarded([&](sim::State&) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    // The only context is the current one's own: no peer.
    return peerContext == sim::primary_context() ? CUDA_ERROR_INVALID_DEVICE
                                                 : CUDA_ERROR_INVALID_CONTEXT;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
  return sim::guarded([&](sim::State&) {
    return peerContext == sim::primary_context() ? CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
                                                 : CUDA_ERROR_INVALID_CONTEXT;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return sim::guarded([&](sim::State&) {
    if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx != nullptr && ctx != sim::primary_context()) return CUDA_ERROR_INVALID_CONTEXT;
    *ctxId = 1;
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
    *pool_out = sim::device_pool();
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return sim::guarded([&](sim::State& s) {
    if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pool = s.current_pool != nullptr ? s.current_pool : sim::device_pool();
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return sim::guarded([&](sim::State& s) {
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (!sim::known_pool(s, pool)) return CUDA_ERROR_INVALID_VALUE;
    s.current_pool = pool;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  (void)minBytesToKeep;  // freed memory goes back at once: nothing is kept to trim
  return sim::guarded([&](sim::State& s) {
    return sim::known_pool(s, pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

// Pools of one's own: pinned device memory of the one device, served like the device's pool.
GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool,
                                                  const CUmemPoolProps* poolProps) {
  return sim::guarded([&](sim::State& s) {
    if (pool == nullptr || poolProps == nullptr ||
        poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        !valid_device(poolProps->location.id)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto* created = reinterpret_cast<CUmemoryPool>(new char);  // a distinct address, ours
    s.own_pools.insert(created);
    *pool = created;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  return sim::guarded([&](sim::State& s) {
    if (s.own_pools.erase(pool) == 0) return CUDA_ERROR_INVALID_VALUE;
    s.pool_attributes.erase(pool);
    if (s.current_pool == pool) s.current_pool = nullptr;
    delete reinterpret_cast<char*>(pool);
    return CUDA_SUCCESS;
  });
}

// The one device reads and writes every pool: access can be granted, never to another device.
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
