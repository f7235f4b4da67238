// The current context per client thread (thread_contexts.h).
#include "plugins/cuda/backend/thread_contexts.h"

#include <cuda.h>

#include "backend/services/client_threads.h"
#include "cuda_real.h"

namespace gvirtus::cuda {
namespace {

void set_current(CUcontext context) {
  if (real().cuCtxSetCurrent != nullptr) real().cuCtxSetCurrent(context);
}

services::ClientThreads<CUcontext>& contexts() {
  static auto& threads = *new services::ClientThreads<CUcontext>(set_current, nullptr);
  return threads;
}

}  // namespace

void before_call(uint32_t client_thread) {
  contexts().before_call(client_thread);
}

void note_thread_context() {
  CUcontext current = nullptr;
  if (real().cuCtxGetCurrent == nullptr || real().cuCtxGetCurrent(&current) != CUDA_SUCCESS) return;
  contexts().note(current);
}

void forget_thread_contexts() {
  contexts().reset();
}

}  // namespace gvirtus::cuda
