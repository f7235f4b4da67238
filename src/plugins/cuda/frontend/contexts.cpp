// The context functions of the client libcuda.so.1 (contexts.h).
#include "plugins/cuda/frontend/contexts.h"

#include <unistd.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/call_marshal.h"
#include "common/wire.h"
#include "cuda_remote_calls.h"
#include "frontend/frontend_abi.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/frontend/context_answers.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace gvirtus::cuda {
namespace {

// The process's tables are never destroyed: NVIDIA's runtime calls the driver from its exit
// handlers, after this library's static and the main thread's thread_local objects would be gone.
// Each thread's stack is a vector of its own reached through a trivially destructible pointer:
// the main thread's is never freed (for those handlers), any other thread's is freed as the
// thread ends (a program that starts many threads would otherwise leak one per thread). A thread
// that calls the driver again after its own had gone gets one that is never freed.
thread_local std::vector<CUcontext>* thread_stack = nullptr;
thread_local bool stack_freed = false;

struct FreesThreadStack {
  ~FreesThreadStack() {
    delete thread_stack;
    thread_stack = nullptr;
    stack_freed = true;
  }
};

void follow_runtime_context();

std::vector<CUcontext>& this_thread_stack() {
  if (thread_stack == nullptr) {
    thread_stack = new std::vector<CUcontext>;
    if (!stack_freed && ::gettid() != ::getpid()) {
      thread_local FreesThreadStack frees;
      (void)frees;
    }
  }
  follow_runtime_context();
  return *thread_stack;
}

std::mutex& mutex = *new std::mutex;
// Every context the stub was given, with its device; the primary contexts, retained once.
auto& device_of = *new std::unordered_map<CUcontext, CUdevice>;
auto& primary = *new std::unordered_map<CUdevice, CUcontext>;
// Every green context the stub was given, with its device and the context made from it (null
// until cuCtxFromGreenCtx), which goes with it.
struct Green {
  CUdevice device;
  CUcontext context = nullptr;
};
auto& greens = *new std::unordered_map<CUgreenCtx, Green>;

void remember(CUcontext context, CUdevice device) {
  std::lock_guard lock(mutex);
  device_of[context] = device;
}

// Makes `context` current on the backend's executor for this thread, then here. The context
// already current on this thread is current on its executor too: nothing is sent (frameworks set
// their context around every operation, XLA thousands of times in a run, most often the one
// already current).
CUresult make_current(CUcontext context) {
  if (const auto& stack = this_thread_stack();
      stack.empty() ? context == nullptr : stack.back() == context) {
    return forked_child_status();
  }
  const CUresult result = remote::cuCtxSetCurrent(context);
  if (result != CUDA_SUCCESS) return result;
  auto& stack = this_thread_stack();
  if (stack.empty()) {
    stack.push_back(context);
  } else {
    stack.back() = context;
  }
  pool_follow_context(context);
  return CUDA_SUCCESS;
}

// The runtime stub's current context on this thread (frontend_abi.h's gvirtus_runtime_context):
// where the program uses the runtime beside the driver API (runtime mode), NVIDIA's runtime made
// its device's primary context current on the thread, natively the driver's current context too.
// Each setting not followed yet makes that context current here, as cudaSetDevice makes it
// current natively (the stack's top replaced). Set first, so the calls it makes find it followed.
thread_local uint64_t t_followed_runtime = 0;

void follow_runtime_context() {
  int device = 0;
  const uint64_t setting = gvirtus_runtime_context(&device);
  if (setting == 0 || setting == t_followed_runtime) return;
  t_followed_runtime = setting;
  CUcontext context = nullptr;
  if (primary_context(device, &context) == CUDA_SUCCESS) (void)make_current(context);
}

}  // namespace

CUcontext current_context() {
  const auto& stack = this_thread_stack();
  return stack.empty() ? nullptr : stack.back();
}

CUresult primary_context(CUdevice device, CUcontext* context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = forked_child_status(); r != CUDA_SUCCESS) return r;
  {
    std::lock_guard lock(mutex);
    if (const auto it = primary.find(device); it != primary.end()) {
      *context = it->second;
      return CUDA_SUCCESS;
    }
  }
  CUcontext retained = nullptr;
  const CUresult result = remote::cuDevicePrimaryCtxRetain(&retained, device);
  if (result != CUDA_SUCCESS) return result;
  std::lock_guard lock(mutex);
  device_of[retained] = device;
  *context = primary.emplace(device, retained).first->second;
  return CUDA_SUCCESS;
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

extern "C" __attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx,
                                                                                    CUdevice dev) {
  const CUresult result = cr::remote::cuDevicePrimaryCtxRetain(pctx, dev);
  if (result == CUDA_SUCCESS && pctx != nullptr) cr::remember(*pctx, dev);
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext ctx) {
  return cr::make_current(ctx);
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxGetCurrent(CUcontext* pctx) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  *pctx = cr::current_context();
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const CUresult result = cr::remote::cuCtxSetCurrent(ctx);
  if (result == CUDA_SUCCESS) {
    cr::this_thread_stack().push_back(ctx);
    cr::pool_follow_context(ctx);
  }
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  auto& stack = cr::this_thread_stack();
  if (stack.empty() || stack.back() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const CUcontext below = stack.size() > 1 ? stack[stack.size() - 2] : nullptr;
  const CUresult result = cr::remote::cuCtxSetCurrent(below);
  if (result != CUDA_SUCCESS) return result;
  if (pctx != nullptr) *pctx = stack.back();
  stack.pop_back();
  cr::pool_follow_context(below);
  return CUDA_SUCCESS;
}

// The device of `ctx`, or of the current context when it is null (CUDA 13's form).
extern "C" __attribute__((visibility("default"))) CUresult cuCtxGetDevice_v2(CUdevice* device,
                                                                             CUcontext ctx) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = cr::forked_child_status(); r != CUDA_SUCCESS) return r;
  const CUcontext context = ctx != nullptr ? ctx : cr::current_context();
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(cr::mutex);
  const auto it = cr::device_of.find(context);
  if (it == cr::device_of.end()) return CUDA_ERROR_INVALID_CONTEXT;
  *device = it->second;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxGetDevice(CUdevice* device) {
  return cuCtxGetDevice_v2(device, nullptr);
}

// The primary context functions' CUDA 7 ABIs, which runtimes still ask for: the same calls (the
// _v2 forms differ only in leaving the context's state alone when it is still in use elsewhere,
// which the backend's driver judges). cuda.h maps the names to _v2 by macros.
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
extern "C" __attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return cuDevicePrimaryCtxRelease_v2(dev);
}

extern "C" __attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxReset(CUdevice dev) {
  return cuDevicePrimaryCtxReset_v2(dev);
}

extern "C" __attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxSetFlags(
    CUdevice dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

// Contexts of one's own (cuCtxCreate in each of its ABIs): created on the backend, where the
// driver makes the new context current on the calling thread's executor, and pushed here on the
// thread's stack, as the driver pushes it. Affinity and CIG parameters name the client's memory
// and resources of its machine: refused.
extern "C" __attribute__((visibility("default"))) CUresult cuCtxCreate_v4(
    CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ctxCreateParams != nullptr &&
      (ctxCreateParams->execAffinityParams != nullptr ||
       ctxCreateParams->numExecAffinityParams != 0 || ctxCreateParams->cigParams != nullptr)) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  CUcontext created = nullptr;
  {
    const gvirtus::stub::RouteScope route(cr::pool_backend_of_device(dev));
    const CUresult result = cr::remote_sync(
        cr::Fn::cuCtxCreate_v4,
        [&](gvirtus::WireWriter& w) {
          w.put<uint32_t>(flags);
          w.put<int32_t>(cr::pool_local_device(dev));
        },
        [&](gvirtus::WireReader& r) { created = gvirtus::marshal::get_value<CUcontext>(r); });
    if (result != CUDA_SUCCESS) return result;
    cr::pool_note_handle("context", created);
  }
  cr::remember(created, dev);
  cr::this_thread_stack().push_back(created);
  cr::pool_follow_context(created);
  *pctx = created;
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxCreate_v3(
    CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
    CUdevice dev) {
  if (paramsArray != nullptr || numParams != 0) return CUDA_ERROR_NOT_SUPPORTED;
  return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxCreate_v2(CUcontext* pctx,
                                                                          unsigned int flags,
                                                                          CUdevice dev) {
  return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}

// Destroyed on the backend; popped here if it is the calling thread's current context, as the
// driver pops it (the next context down becomes current on the executor too).
extern "C" __attribute__((visibility("default"))) CUresult cuCtxDestroy_v2(CUcontext ctx) {
  const CUresult result = cr::remote::cuCtxDestroy_v2(ctx);
  if (result != CUDA_SUCCESS) return result;
  cr::forget_context_answers();
  {
    std::lock_guard lock(cr::mutex);
    cr::device_of.erase(ctx);
  }
  auto& stack = cr::this_thread_stack();
  if (!stack.empty() && stack.back() == ctx) {
    stack.pop_back();
    if (!stack.empty()) {
      cr::pool_follow_context(stack.back());
      return cr::remote::cuCtxSetCurrent(stack.back());
    }
  }
  return CUDA_SUCCESS;
}

// The CUDA 4.0 ABIs of both, which runtimes may still ask for. cuda.h maps the names by macros.
#undef cuCtxCreate
#undef cuCtxDestroy
extern "C" __attribute__((visibility("default"))) CUresult cuCtxCreate(CUcontext* pctx,
                                                                       unsigned int flags,
                                                                       CUdevice dev) {
  return cuCtxCreate_v4(pctx, nullptr, flags, dev);
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxDestroy(CUcontext ctx) {
  return cuCtxDestroy_v2(ctx);
}

// Green contexts: created and destroyed on the backend; the stub keeps each one's device, so that
// the context made from it is known with its device as any other (cuCtxGetDevice, routing).
extern "C" __attribute__((visibility("default"))) CUresult cuGreenCtxCreate(CUgreenCtx* phCtx,
                                                                            CUdevResourceDesc desc,
                                                                            CUdevice dev,
                                                                            unsigned int flags) {
  const CUresult result = cr::remote::cuGreenCtxCreate(phCtx, desc, dev, flags);
  if (result == CUDA_SUCCESS && phCtx != nullptr) {
    std::lock_guard lock(cr::mutex);
    cr::greens[*phCtx] = cr::Green{dev};
  }
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxFromGreenCtx(CUcontext* pContext,
                                                                             CUgreenCtx hCtx) {
  const CUresult result = cr::remote::cuCtxFromGreenCtx(pContext, hCtx);
  if (result != CUDA_SUCCESS || pContext == nullptr) return result;
  std::lock_guard lock(cr::mutex);
  if (const auto it = cr::greens.find(hCtx); it != cr::greens.end()) {
    it->second.context = *pContext;
    cr::device_of[*pContext] = it->second.device;
  }
  return result;
}

// The green context's own context goes with it.
extern "C" __attribute__((visibility("default"))) CUresult cuGreenCtxDestroy(CUgreenCtx hCtx) {
  const CUresult result = cr::remote::cuGreenCtxDestroy(hCtx);
  if (result != CUDA_SUCCESS) return result;
  cr::forget_context_answers();
  std::lock_guard lock(cr::mutex);
  if (const auto it = cr::greens.find(hCtx); it != cr::greens.end()) {
    if (it->second.context != nullptr) cr::device_of.erase(it->second.context);
    cr::greens.erase(it);
  }
  return result;
}
