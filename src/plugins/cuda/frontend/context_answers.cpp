// The kept answers about contexts (context_answers.h): cuDevicePrimaryCtxGetState, cuCtxGetId and
// cuKernelGetFunction, cuOccupancyMaxActiveBlocksPerMultiprocessor(WithFlags), cuFuncGetAttribute
// and cuKernelGetAttribute, and the calls whose success makes them stale.
#include "plugins/cuda/frontend/context_answers.h"

#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "cuda_remote_calls.h"
#include "frontend/process_session.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/contexts.h"
#include "plugins/cuda/frontend/modules.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

struct PrimaryState {
  unsigned flags;
  int active;
};

// Never destroyed: the runtime asks from its exit handlers too.
struct Answers {
  std::mutex mutex;
  uint64_t generation = 0;  // process_session::device_generation() when they were kept
  std::map<std::tuple<const void*, CUdevice>, PrimaryState> primary_states;
  std::map<std::tuple<const void*, CUcontext>, unsigned long long> context_ids;
  std::map<std::tuple<const void*, CUcontext, CUkernel>, CUfunction> kernel_functions;
  // Blocks per multiprocessor by function, block size, dynamic shared memory and flags.
  std::map<std::tuple<const void*, CUfunction, int, size_t, unsigned>, int> occupancies;
  // Functions' and kernels' attributes by code handle, attribute and device (-1: a function's).
  std::map<std::tuple<const void*, const void*, int, CUdevice>, int> attributes;

  // What the attributes of `code` decide: its answers and those of the same code under its other
  // handles (a kernel and its functions in each context).
  void clear_code(const void* code) {
    std::set<const void*> same{code};
    for (const auto& [key, function] : kernel_functions) {
      const void* kernel = std::get<2>(key);
      if (kernel == code || function == code) same.insert(kernel);
    }
    for (const auto& [key, function] : kernel_functions) {
      if (same.contains(std::get<2>(key))) same.insert(function);
    }
    std::erase_if(occupancies,
                  [&](const auto& kept) { return same.contains(std::get<1>(kept.first)); });
    std::erase_if(attributes,
                  [&](const auto& kept) { return same.contains(std::get<1>(kept.first)); });
  }
  void clear() {
    primary_states.clear();
    context_ids.clear();
    kernel_functions.clear();
    occupancies.clear();
    attributes.clear();
  }
};

Answers& answers() {
  static auto* const kept = new Answers;
  return *kept;
}

// Runs `with(kept)` under the lock, the answers forgotten first if the runtime stub changed a
// device since they were kept.
template <typename With>
auto with_answers(With with) {
  Answers& a = answers();
  std::lock_guard lock(a.mutex);
  if (const uint64_t now = process_session::device_generation(); now != a.generation) {
    a.clear();
    a.generation = now;
  }
  return with(a);
}

// Asks the backend unless an answer is kept: `find(a)` writes the kept one out and says whether
// there was one, `ask()` asks the backend, `keep(a)` keeps (or not) what it answered.
template <typename Find, typename Ask, typename Keep>
CUresult kept_or_asked(Find find, Ask ask, Keep keep) {
  if (const CUresult r = forked_child_status(); r != CUDA_SUCCESS) return r;  // nothing kept holds
  if (with_answers(find)) return CUDA_SUCCESS;
  const uint64_t before = process_session::device_generation();
  const CUresult result = ask();
  // An answer that raced a change the runtime stub made is not kept.
  if (result == CUDA_SUCCESS && process_session::device_generation() == before) {
    with_answers(keep);
  }
  return result;
}

// The answer kept in `map` under `key` into `*value`, or asked (`ask()`) and kept.
template <typename Map, typename Ask>
CUresult kept_in(Map Answers::*map, const typename Map::key_type& key,
                 typename Map::mapped_type* value, Ask ask) {
  return kept_or_asked(
      [&](Answers& a) {
        const auto it = (a.*map).find(key);
        if (it == (a.*map).end()) return false;
        *value = it->second;
        return true;
      },
      ask,
      [&](Answers& a) {
        (a.*map)[key] = *value;
        return 0;
      });
}

// The session whose answer it is: the backend the call goes to (in a pool, the one holding the
// handle or device; else the calling thread's), as its remote call routes it. Handles are each
// backend's own values, which may coincide between backends.
const void* session_of(std::optional<uint32_t> backend) {
  const stub::RouteScope route(backend);
  return process_session::token();
}

// Where an attribute of `code` (a function's, or a kernel's for `device`) is kept.
auto attribute_key(const void* code, CUfunction_attribute attribute, CUdevice device) {
  return std::tuple{session_of(pool_backend_of_handle("code", code)), code,
                    static_cast<int>(attribute), device};
}

// After a call that changes what the answers say: forgotten if it succeeded. Returns `result`.
CUresult forgetting_after(CUresult result) {
  if (result == CUDA_SUCCESS) forget_context_answers();
  return result;
}

}  // namespace

void forget_context_answers() {
  with_answers([](Answers& a) {
    a.clear();
    return 0;
  });
}

bool attribute_already(const void* code, CUdevice device, CUfunction_attribute attribute,
                       int value) {
  const auto key = attribute_key(code, attribute, device);
  return with_answers([&](Answers& a) {
    const auto it = a.attributes.find(key);
    return it != a.attributes.end() && it->second == value;
  });
}

void attribute_set(const void* code, CUdevice device, CUfunction_attribute attribute, int value) {
  const auto key = attribute_key(code, attribute, device);
  with_answers([&](Answers& a) {
    a.clear_code(code);
    a.attributes[key] = value;
    return 0;
  });
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

// Kept while active: an inactive primary context becomes active through calls of other libraries
// too (NVIDIA's runtime retains it through this stub; the runtime stub through its own plugin).
GVIRTUS_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto key = std::tuple{cr::session_of(cr::pool_backend_of_device(dev)), dev};
  return cr::kept_or_asked(
      [&](cr::Answers& a) {
        const auto it = a.primary_states.find(key);
        if (it == a.primary_states.end()) return false;
        *flags = it->second.flags;
        *active = it->second.active;
        return true;
      },
      [&] { return cr::remote::cuDevicePrimaryCtxGetState(dev, flags, active); },
      [&](cr::Answers& a) {
        if (*active != 0) a.primary_states[key] = {*flags, *active};
        return 0;
      });
}

GVIRTUS_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // A null context is the calling thread's current one.
  const CUcontext context = ctx != nullptr ? ctx : cr::current_context();
  if (context == nullptr) return cr::remote::cuCtxGetId(ctx, ctxId);  // the driver's answer
  const auto key =
      std::tuple{cr::session_of(cr::pool_backend_of_handle("context", context)), context};
  return cr::kept_in(&cr::Answers::context_ids, key, ctxId,
                     [&] { return cr::remote::cuCtxGetId(ctx, ctxId); });
}

// The kernel's function in the calling thread's current context.
GVIRTUS_EXPORT CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUcontext context = cr::current_context();
  if (context == nullptr) return cr::remote::cuKernelGetFunction(pFunc, kernel);
  const auto key =
      std::tuple{cr::session_of(cr::pool_backend_of_handle("kernel", kernel)), context, kernel};
  return cr::kept_in(&cr::Answers::kernel_functions, key, pFunc,
                     [&] { return cr::remote::cuKernelGetFunction(pFunc, kernel); });
}

// The release of the last reference destroys the context with its modules: what the stub learnt
// of their functions goes too (their addresses are the driver's to give again).
GVIRTUS_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  const CUresult result = cr::remote::cuDevicePrimaryCtxRelease_v2(dev);
  if (result == CUDA_SUCCESS) {
    unsigned flags = 0;
    int active = 1;
    if (cr::remote::cuDevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS && !active) {
      cr::forget_launch_facts();
    }
  }
  return cr::forgetting_after(result);
}

GVIRTUS_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return cr::forgetting_after(cr::remote::cuDevicePrimaryCtxSetFlags_v2(dev, flags));
}

GVIRTUS_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags) {
  if (numBlocks == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto key = std::tuple{cr::session_of(cr::pool_backend_of_handle("function", func)), func,
                              blockSize, dynamicSMemSize, flags};
  return cr::kept_in(&cr::Answers::occupancies, key, numBlocks, [&] {
    return cr::remote::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, func, blockSize, dynamicSMemSize, flags);
  });
}

GVIRTUS_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func,
                                                                    int blockSize,
                                                                    size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      numBlocks, func, blockSize, dynamicSMemSize, CU_OCCUPANCY_DEFAULT);
}

// What occupancy depends on besides the launch's shape: the caches' split.
GVIRTUS_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return cr::forgetting_after(cr::remote::cuFuncSetCacheConfig(hfunc, config));
}

GVIRTUS_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  return cr::forgetting_after(cr::remote::cuKernelSetCacheConfig(kernel, config, dev));
}

// The current context's new flags change what the primary context's state says.
GVIRTUS_EXPORT CUresult cuCtxSetFlags(unsigned int flags) {
  return cr::forgetting_after(cr::remote::cuCtxSetFlags(flags));
}

GVIRTUS_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config) {
  return cr::forgetting_after(cr::remote::cuCtxSetCacheConfig(config));
}

// A function's or kernel's attribute (`device` -1 for a function), kept once asked.
template <typename Ask>
CUresult kept_attribute(int* value, const void* code, CUfunction_attribute attribute,
                        CUdevice device, Ask ask) {
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const auto key = cr::attribute_key(code, attribute, device);
  return cr::kept_in(&cr::Answers::attributes, key, value, ask);
}

GVIRTUS_EXPORT CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return kept_attribute(pi, hfunc, attrib, -1,
                        [&] { return cr::remote::cuFuncGetAttribute(pi, attrib, hfunc); });
}

GVIRTUS_EXPORT CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel,
                                             CUdevice dev) {
  return kept_attribute(pi, kernel, attrib, dev,
                        [&] { return cr::remote::cuKernelGetAttribute(pi, attrib, kernel, dev); });
}
