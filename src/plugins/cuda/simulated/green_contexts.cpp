// Green contexts on the simulated device (CUDA 12.4's): a device's SMs as a resource, split into
// groups of at least 8 SMs, a multiple of 8 (compute capability 9.0's rule, as cuda.h gives it),
// made into a descriptor and provisioned as a green context, whose context (one of `contexts`)
// and streams work as any other's. Nothing runs on SMs here: a green context only keeps its count.
//
// A resource carries, in the bytes cuda.h leaves to the driver, a mark of ours and its device, so
// that a resource this device did not write is refused (CUDA_ERROR_INVALID_RESOURCE_TYPE for one
// of another type, CUDA_ERROR_INVALID_VALUE for one that is not ours).
#include <algorithm>
#include <cstring>

#include "identity.h"
#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

constexpr unsigned kSmGranularity = 8;  // the smallest group, and the step between sizes
constexpr unsigned kDeviceSms = gvirtus::simulated::kMultiprocessors;
constexpr uint32_t kMark = 0x67765352;  // "gvSR"

struct ResourceTag {
  uint32_t mark;
  int32_t device;
};
static_assert(sizeof(ResourceTag) <= sizeof(CUdevResource::_internal_padding));

void describe(CUdevResource& resource, CUdevice device, unsigned sms) {
  std::memset(&resource, 0, sizeof resource);
  resource.type = CU_DEV_RESOURCE_TYPE_SM;
  const ResourceTag tag{kMark, device};
  std::memcpy(resource._internal_padding, &tag, sizeof tag);
  resource.sm.smCount = sms;
  resource.sm.minSmPartitionSize = kSmGranularity;
  resource.sm.smCoscheduledAlignment = kSmGranularity;
}

// The share a resource describes, or why it cannot be used.
CUresult share_of(const sim::State& s, const CUdevResource* resource, sim::State::SmShare& share) {
  if (resource == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (resource->type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  ResourceTag tag{};
  std::memcpy(&tag, resource->_internal_padding, sizeof tag);
  if (tag.mark != kMark || !sim::valid_device(s, tag.device) || resource->sm.smCount == 0 ||
      resource->sm.smCount > kDeviceSms) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  share = {tag.device, resource->sm.smCount};
  return CUDA_SUCCESS;
}

CUresult describe_share(CUdevResource* resource, CUdevResourceType type,
                        const sim::State::SmShare& share) {
  if (resource == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_RESOURCE_TYPE;
  describe(*resource, share.device, share.sms);
  return CUDA_SUCCESS;
}

const sim::State::GreenContext* green(const sim::State& s, CUgreenCtx handle) {
  const auto it = s.green_contexts.find(handle);
  return it != s.green_contexts.end() ? &it->second : nullptr;
}

// The green context a context was made for, if it was.
const sim::State::GreenContext* green_of_context(const sim::State& s, CUcontext context) {
  for (const auto& [handle, g] : s.green_contexts) {
    if (g.context == context) return &g;
  }
  return nullptr;
}

}  // namespace

GVIRTUS_SIMULATED_EXPORT CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource* resource,
                                                         CUdevResourceType type) {
  return sim::guarded([&](sim::State& s) {
    if (!sim::valid_device(s, device)) return CUDA_ERROR_INVALID_DEVICE;
    return describe_share(resource, type, {device, kDeviceSms});
  });
}

// A green context's own context has its share; any other context its device's SMs.
GVIRTUS_SIMULATED_EXPORT CUresult cuCtxGetDevResource(CUcontext hCtx, CUdevResource* resource,
                                                      CUdevResourceType type) {
  return sim::guarded([&](sim::State& s) {
    const CUcontext context = hCtx != nullptr ? hCtx : sim::current_context();
    if (context == nullptr || !sim::known_context(s, context)) return CUDA_ERROR_INVALID_CONTEXT;
    if (const auto* g = green_of_context(s, context))
      return describe_share(resource, type, g->share);
    return describe_share(resource, type, {sim::context_device(s, context), kDeviceSms});
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxGetDevResource(CUgreenCtx hCtx, CUdevResource* resource,
                                                           CUdevResourceType type) {
  return sim::guarded([&](sim::State& s) {
    const auto* g = green(s, hCtx);
    if (g == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    return describe_share(resource, type, g->share);
  });
}

// Groups of minCount SMs rounded up to the granularity (at least one granule), as many as the
// input holds and `nbGroups` asks for; with no `result`, only how many there would be.
GVIRTUS_SIMULATED_EXPORT CUresult cuDevSmResourceSplitByCount(
    CUdevResource* result, unsigned int* nbGroups, const CUdevResource* input,
    CUdevResource* remaining, unsigned int useFlags, unsigned int minCount) {
  return sim::guarded([&](sim::State& s) {
    constexpr unsigned kKnownFlags = CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING |
                                     CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE;
    if (nbGroups == nullptr || (useFlags & ~kKnownFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    sim::State::SmShare whole{};
    if (const CUresult r = share_of(s, input, whole); r != CUDA_SUCCESS) return r;
    const unsigned group = minCount <= kSmGranularity
                               ? kSmGranularity
                               : (minCount + kSmGranularity - 1) / kSmGranularity * kSmGranularity;
    const unsigned possible = whole.sms / group;
    if (possible == 0) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    const unsigned made = result == nullptr ? possible : std::min(*nbGroups, possible);
    if (result != nullptr) {
      for (unsigned i = 0; i < made; ++i) describe(result[i], whole.device, group);
    }
    *nbGroups = made;
    if (remaining != nullptr) {
      const unsigned left = whole.sms - made * group;
      describe(*remaining, whole.device, left);
      if (left == 0) remaining->type = CU_DEV_RESOURCE_TYPE_INVALID;  // nothing is left
    }
    return CUDA_SUCCESS;
  });
}

// One device's resources together, at most its SMs.
GVIRTUS_SIMULATED_EXPORT CUresult cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc,
                                                            CUdevResource* resources,
                                                            unsigned int nbResources) {
  return sim::guarded([&](sim::State& s) {
    if (phDesc == nullptr || resources == nullptr || nbResources == 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    sim::State::SmShare total{-1, 0};
    for (unsigned i = 0; i < nbResources; ++i) {
      sim::State::SmShare one{};
      if (const CUresult r = share_of(s, &resources[i], one); r != CUDA_SUCCESS) return r;
      if (total.device >= 0 && one.device != total.device) return CUDA_ERROR_INVALID_VALUE;
      total = {one.device, total.sms + one.sms};
    }
    if (total.sms > kDeviceSms) return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    auto* handle = reinterpret_cast<CUdevResourceDesc>(new char);  // a distinct address, ours
    s.resource_descriptors.emplace(handle, total);
    *phDesc = handle;
    return CUDA_SUCCESS;
  });
}

// A green context retains its device's primary context, as the driver's does, and gets a context
// of its own (cuCtxFromGreenCtx's, at the green context's address), with the next context id.
GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc,
                                                   CUdevice dev, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    if (phCtx == nullptr || flags != CU_GREEN_CTX_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::valid_device(s, dev)) return CUDA_ERROR_INVALID_DEVICE;
    const auto found = s.resource_descriptors.find(desc);
    if (found == s.resource_descriptors.end() || found->second.device != dev) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto* context = reinterpret_cast<CUcontext>(new char);
    const unsigned long long id = s.next_context_id++;
    s.contexts.emplace(context, sim::OwnContext{dev, 0, id});
    // The driver hands out a green context and the context made from it at one address (seen on
    // an H200 with driver 580): so does the simulated device, so that the session's table holds
    // both (services::HandleTable::allow_alias).
    auto* handle = reinterpret_cast<CUgreenCtx>(context);
    s.green_contexts.emplace(handle, sim::State::GreenContext{found->second, context, id});
    ++s.primaries[static_cast<size_t>(dev)].references;
    *phCtx = handle;
    return CUDA_SUCCESS;
  });
}

// Its context goes with it; streams made in it stay, as the driver leaves them to be destroyed.
GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxDestroy(CUgreenCtx hCtx) {
  return sim::guarded([&](sim::State& s) {
    const auto it = s.green_contexts.find(hCtx);
    if (it == s.green_contexts.end()) return CUDA_ERROR_INVALID_HANDLE;
    const CUcontext context = it->second.context;
    auto& primary = s.primaries[static_cast<size_t>(it->second.share.device)];
    if (primary.references > 0) --primary.references;
    s.contexts.erase(context);
    if (sim::current_context() == context) sim::current_context() = nullptr;
    delete reinterpret_cast<char*>(context);
    std::erase_if(s.green_streams, [&](const auto& entry) { return entry.second == hCtx; });
    s.green_contexts.erase(it);  // hCtx is the context's address: deleted with it
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuCtxFromGreenCtx(CUcontext* pContext, CUgreenCtx hCtx) {
  return sim::guarded([&](sim::State& s) {
    if (pContext == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto* g = green(s, hCtx);
    if (g == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *pContext = g->context;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxGetId(CUgreenCtx greenCtx,
                                                  unsigned long long* greenCtxId) {
  return sim::guarded([&](sim::State& s) {
    if (greenCtxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const auto* g = green(s, greenCtx);
    if (g == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    *greenCtxId = g->id;
    return CUDA_SUCCESS;
  });
}

// Its streams must be non-blocking, as cuda.h says.
GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx,
                                                         unsigned int flags, int priority) {
  return sim::guarded([&](sim::State& s) {
    if (green(s, greenCtx) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (flags != CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
    const CUresult r = sim::create_stream(s, phStream, flags, priority);
    if (r == CUDA_SUCCESS) s.green_streams[*phStream] = greenCtx;
    return r;
  });
}

// Null for a stream of no green context.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetGreenCtx(CUstream hStream, CUgreenCtx* phCtx) {
  return sim::guarded([&](sim::State& s) {
    if (phCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto it = s.green_streams.find(hStream);
    *phCtx = it != s.green_streams.end() ? it->second : nullptr;
    return CUDA_SUCCESS;
  });
}

// A green context's stream: the green context, and its device's primary context; any other: the
// thread's context, and no green context.
GVIRTUS_SIMULATED_EXPORT CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx,
                                                    CUgreenCtx* pGreenCtx) {
  return sim::guarded([&](sim::State& s) {
    if (pCtx == nullptr && pGreenCtx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!sim::known_stream(s, hStream)) return CUDA_ERROR_INVALID_HANDLE;
    const auto it = s.green_streams.find(hStream);
    const auto* g = it != s.green_streams.end() ? green(s, it->second) : nullptr;
    if (pCtx != nullptr) {
      *pCtx = g != nullptr ? sim::primary_context(g->share.device) : sim::effective_context();
    }
    if (pGreenCtx != nullptr) *pGreenCtx = g != nullptr ? it->second : nullptr;
    return CUDA_SUCCESS;
  });
}

// A green context's work, recorded into an event or waited on: the simulated streams have none
// left, as for a context's (streams_events.cpp).
GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    if (green(s, hCtx) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    const auto e = s.events.find(hEvent);
    if (e == s.events.end()) return CUDA_ERROR_INVALID_HANDLE;
    e->second->recorded = true;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGreenCtxWaitEvent(CUgreenCtx hCtx, CUevent hEvent) {
  return sim::guarded([&](sim::State& s) {
    if (green(s, hCtx) == nullptr || s.events.count(hEvent) == 0) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
  });
}
