// Graph nodes' parameters checked as the driver checks them (graph_node_params.h).
#include "graph_node_params.h"

#include <cstdint>
#include <utility>

#include "state.h"

namespace gvirtus::simulated {

CUresult kernel_node(State& s, const CUDA_KERNEL_NODE_PARAMS& params, KernelNode& out) {
  // kern is looked at only without func (as is ctx): a kernel handle launches as its function.
  const CUfunction handle =
      params.func != nullptr ? params.func : reinterpret_cast<CUfunction>(params.kern);
  const Function* function = handle != nullptr ? function_of(s, handle) : nullptr;
  if (function == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (params.func == nullptr && params.ctx != nullptr && !known_context(s, params.ctx)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  KernelLaunch launch;
  if (const CUresult r =
          pack_launch(*function, {params.gridDimX, params.gridDimY, params.gridDimZ},
                      {params.blockDimX, params.blockDimY, params.blockDimZ}, params.sharedMemBytes,
                      params.kernelParams, params.extra, launch);
      r != CUDA_SUCCESS) {
    return r;
  }
  launch.function = handle;
  out.launch = std::move(launch);
  out.func = params.func;
  out.kern = params.kern;
  out.ctx = params.ctx;
  out.param_pointers.clear();  // they pointed into the parameters replaced
  return CUDA_SUCCESS;
}

CUresult memcpy_node(State& s, const CUDA_MEMCPY3D& copy, CUcontext ctx, MemcpyNode& out) {
  if (ctx != nullptr && !known_context(s, ctx)) return CUDA_ERROR_INVALID_VALUE;
  if (const CUresult r = check_box(s, copy); r != CUDA_SUCCESS) return r;
  out = MemcpyNode{copy, ctx};
  return CUDA_SUCCESS;
}

std::byte* memset_target(State& s, const CUDA_MEMSET_NODE_PARAMS& m) {
  const uint64_t element = m.elementSize;
  if ((element != 1 && element != 2 && element != 4) || m.width == 0 || m.height == 0 ||
      m.dst % element != 0 || m.width > UINT64_MAX / element) {
    return nullptr;
  }
  const uint64_t row = m.width * element;
  if (m.height > 1 && (m.pitch < row || m.height - 1 > (UINT64_MAX - row) / m.pitch)) {
    return nullptr;
  }
  const uint64_t span = (m.height - 1) * uint64_t{m.height > 1 ? m.pitch : 0} + row;
  return device_range(s, m.dst, span);
}

CUresult memset_node(State& s, const CUDA_MEMSET_NODE_PARAMS& memset, CUcontext ctx,
                     MemsetNode& out) {
  if (ctx != nullptr && !known_context(s, ctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (memset_target(s, memset) == nullptr) return CUDA_ERROR_INVALID_VALUE;
  out = MemsetNode{memset, ctx};
  return CUDA_SUCCESS;
}

bool known_event(const State& s, CUevent event) {
  return s.events.count(event) != 0;
}

Node* node_of_type(State& s, CUgraphNode handle, CUgraphNodeType type) {
  Node* node = find_node(s, handle);
  return node != nullptr && node->type == type ? node : nullptr;
}

}  // namespace gvirtus::simulated
