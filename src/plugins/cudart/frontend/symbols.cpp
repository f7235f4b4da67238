// __device__ and __constant__ variables: cudaMemcpyToSymbol/FromSymbol (and Async),
// cudaGetSymbolAddress/Size, and graph copy nodes to and from a symbol (the 1D copy nodes at the
// symbol's address, graph_nodes.cpp). A variable is resolved once per session to its address on the
// backend (registry.h); copies then are ordinary copies at that address.
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/registry.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// The backend address of `symbol` in `address`, its size in `bytes`.
cudaError_t resolve(const void* symbol, uint64_t& address, uint64_t& bytes) {
  Variable* variable = find_variable(symbol);
  if (variable == nullptr) {
    const cudaError_t init = runtime_init_status();
    return record_local_error(init != cudaSuccess ? init : cudaErrorInvalidSymbol);
  }
  if (const cudaError_t rc = prepare(*variable); rc != cudaSuccess) return rc;
  address = variable->address;
  bytes = variable->bytes;
  return cudaSuccess;
}

// Validates a symbol copy as the runtime does and gives the device address it touches. The
// symbol's side is device memory whatever the stub recorded, so cudaMemcpyDefault becomes the
// direction to or from `other` (the copy's other pointer) here: resolved later from the two
// addresses, a variable the stub never recorded as an allocation would make it a host-to-host
// copy into a device address (seen on an H200: a crash).
cudaError_t symbol_span(const void* symbol, size_t count, size_t offset, cudaMemcpyKind& kind,
                        const void* other, bool to_symbol, char*& device) {
  uint64_t address = 0, bytes = 0;
  if (const cudaError_t rc = resolve(symbol, address, bytes); rc != cudaSuccess) return rc;
  const cudaMemcpyKind host_side = to_symbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  if (kind != host_side && kind != cudaMemcpyDeviceToDevice && kind != cudaMemcpyDefault) {
    return record_local_error(cudaErrorInvalidMemcpyDirection);
  }
  if (kind == cudaMemcpyDefault) {
    kind = is_device_pointer(other) ? cudaMemcpyDeviceToDevice : host_side;
  }
  if (offset > bytes || count > bytes - offset) return record_local_error(cudaErrorInvalidValue);
  device = reinterpret_cast<char*>(static_cast<uintptr_t>(address)) + offset;
  return cudaSuccess;
}

// A symbol copy checked by symbol_span, then `copy(device, kind)` at the symbol's device address
// with the direction it settled.
template <typename Copy>
cudaError_t at_symbol(const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                      const void* other, bool to_symbol, Copy copy) {
  char* device = nullptr;
  if (const cudaError_t rc = symbol_span(symbol, count, offset, kind, other, to_symbol, device);
      rc != cudaSuccess) {
    return rc;
  }
  return copy(device, kind);
}

// The direction a graph's copy node at a symbol keeps: cudaMemcpyDefault stays so between device
// memory, as natively (the runtime keeps the direction it was given, and new parameters in an
// executable graph may not change it: cudaErrorInvalidValue); a copy of the program's memory
// keeps the direction settled here, by which the stub stages it (host_staging.h).
cudaMemcpyKind node_kind(cudaMemcpyKind given, cudaMemcpyKind settled) {
  return given == cudaMemcpyDefault && settled == cudaMemcpyDeviceToDevice ? given : settled;
}

// at_symbol for a graph's copy node: `copy(device, kind)` gets the direction the node keeps.
template <typename Copy>
cudaError_t node_at_symbol(const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind,
                           const void* other, bool to_symbol, Copy copy) {
  return at_symbol(
      symbol, count, offset, kind, other, to_symbol,
      [&](char* device, cudaMemcpyKind settled) { return copy(device, node_kind(kind, settled)); });
}

}  // namespace
}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src,
                                                     size_t count, size_t offset,
                                                     cudaMemcpyKind kind) {
  return cr::at_symbol(symbol, count, offset, kind, src, true, [&](char* device, cudaMemcpyKind k) {
    return cudaMemcpy(device, src, count, k);
  });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count,
                                                       size_t offset, cudaMemcpyKind kind) {
  return cr::at_symbol(
      symbol, count, offset, kind, dst, false,
      [&](char* device, cudaMemcpyKind k) { return cudaMemcpy(dst, device, count, k); });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src,
                                                          size_t count, size_t offset,
                                                          cudaMemcpyKind kind,
                                                          cudaStream_t stream) {
  return cr::at_symbol(symbol, count, offset, kind, src, true, [&](char* device, cudaMemcpyKind k) {
    return cudaMemcpyAsync(device, src, count, k, stream);
  });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol,
                                                            size_t count, size_t offset,
                                                            cudaMemcpyKind kind,
                                                            cudaStream_t stream) {
  return cr::at_symbol(symbol, count, offset, kind, dst, false,
                       [&](char* device, cudaMemcpyKind k) {
                         return cudaMemcpyAsync(dst, device, count, k, stream);
                       });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetSymbolAddress(void** address, const void* symbol) {
  uint64_t at = 0, bytes = 0;
  if (const cudaError_t rc = cr::resolve(symbol, at, bytes); rc != cudaSuccess) return rc;
  if (address == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  *address = reinterpret_cast<void*>(static_cast<uintptr_t>(at));
  return cudaSuccess;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  uint64_t at = 0, bytes = 0;
  if (const cudaError_t rc = cr::resolve(symbol, at, bytes); rc != cudaSuccess) return rc;
  if (size == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  *size = bytes;
  return cudaSuccess;
}

// Graph copy nodes to and from a symbol: 1D copy nodes at the symbol's address, checked as the
// copies above (the direction, the range within the symbol).

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemcpyNodeToSymbol(
    cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
    size_t numDependencies, const void* symbol, const void* src, size_t count, size_t offset,
    cudaMemcpyKind kind) {
  return cr::node_at_symbol(
      symbol, count, offset, kind, src, true, [&](char* device, cudaMemcpyKind k) {
        return cudaGraphAddMemcpyNode1D(pGraphNode, graph, pDependencies, numDependencies, device,
                                        src, count, k);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphAddMemcpyNodeFromSymbol(
    cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
    size_t numDependencies, void* dst, const void* symbol, size_t count, size_t offset,
    cudaMemcpyKind kind) {
  return cr::node_at_symbol(
      symbol, count, offset, kind, dst, false, [&](char* device, cudaMemcpyKind k) {
        return cudaGraphAddMemcpyNode1D(pGraphNode, graph, pDependencies, numDependencies, dst,
                                        device, count, k);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node,
                                                                       const void* symbol,
                                                                       const void* src,
                                                                       size_t count, size_t offset,
                                                                       cudaMemcpyKind kind) {
  return cr::node_at_symbol(symbol, count, offset, kind, src, true,
                            [&](char* device, cudaMemcpyKind k) {
                              return cudaGraphMemcpyNodeSetParams1D(node, device, src, count, k);
                            });
}

GVIRTUS_CUDART_EXPORT cudaError_t
cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void* dst, const void* symbol,
                                       size_t count, size_t offset, cudaMemcpyKind kind) {
  return cr::node_at_symbol(symbol, count, offset, kind, dst, false,
                            [&](char* device, cudaMemcpyKind k) {
                              return cudaGraphMemcpyNodeSetParams1D(node, dst, device, count, k);
                            });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, const void* symbol, const void* src,
    size_t count, size_t offset, cudaMemcpyKind kind) {
  return cr::node_at_symbol(
      symbol, count, offset, kind, src, true, [&](char* device, cudaMemcpyKind k) {
        return cudaGraphExecMemcpyNodeSetParams1D(hGraphExec, node, device, src, count, k);
      });
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(
    cudaGraphExec_t hGraphExec, cudaGraphNode_t node, void* dst, const void* symbol, size_t count,
    size_t offset, cudaMemcpyKind kind) {
  return cr::node_at_symbol(
      symbol, count, offset, kind, dst, false, [&](char* device, cudaMemcpyKind k) {
        return cudaGraphExecMemcpyNodeSetParams1D(hGraphExec, node, dst, device, count, k);
      });
}
