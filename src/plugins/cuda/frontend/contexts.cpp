// The context functions of the client libcuda.so.1 (contexts.h).
#include "plugins/cuda/frontend/contexts.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "cuda_remote_calls.h"

namespace gvirtus::cuda {
namespace {

thread_local std::vector<CUcontext> stack;  // back(): the current context

std::mutex mutex;
std::unordered_map<CUcontext, CUdevice> device_of;  // every context the stub was given
std::unordered_map<CUdevice, CUcontext> primary;    // retained once, for primary_context()

void remember(CUcontext context, CUdevice device) {
  std::lock_guard lock(mutex);
  device_of[context] = device;
}

// Makes `context` current on the backend's executor for this thread, then here.
CUresult make_current(CUcontext context) {
  const CUresult result = remote::cuCtxSetCurrent(context);
  if (result != CUDA_SUCCESS) return result;
  if (stack.empty()) {
    stack.push_back(context);
  } else {
    stack.back() = context;
  }
  return CUDA_SUCCESS;
}

}  // namespace

CUcontext current_context() {
  return stack.empty() ? nullptr : stack.back();
}

CUresult primary_context(CUdevice device, CUcontext* context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
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
  *pctx = cr::current_context();
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const CUresult result = cr::remote::cuCtxSetCurrent(ctx);
  if (result == CUDA_SUCCESS) cr::stack.push_back(ctx);
  return result;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  if (cr::stack.empty() || cr::stack.back() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  const CUcontext below = cr::stack.size() > 1 ? cr::stack[cr::stack.size() - 2] : nullptr;
  const CUresult result = cr::remote::cuCtxSetCurrent(below);
  if (result != CUDA_SUCCESS) return result;
  if (pctx != nullptr) *pctx = cr::stack.back();
  cr::stack.pop_back();
  return CUDA_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) CUresult cuCtxGetDevice(CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const CUcontext current = cr::current_context();
  if (current == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(cr::mutex);
  const auto it = cr::device_of.find(current);
  if (it == cr::device_of.end()) return CUDA_ERROR_INVALID_CONTEXT;
  *device = it->second;
  return CUDA_SUCCESS;
}
