// Graph copies of the application's own memory in the runtime stub (host_staging.h).
#include "plugins/cudart/frontend/host_staging.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "common/host_mapped.h"
#include "common/log.h"
#include "common/staged_copies.h"
#include "common/staged_nodes.h"
#include "frontend/route_scope.h"
#include "frontend/staging_rows.h"
#include "plugins/cudart/frontend/address_ranges.h"
#include "plugins/cudart/frontend/array_info.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

using staging::Region;

// What the program gave each staged copy node (never destroyed: exit handlers may still ask).
auto& staged_nodes = *new staging::StagedNodes<cudaGraphNode_t, cudaGraph_t, cudaMemcpy3DParms>;

using Rows = staging::StubRows<Fn::gvirtusStagingAlloc, Fn::gvirtusStagingWrite,
                               Fn::gvirtusStagingRead, &remote_sync, &remote_async>;

// The stub's host function (frontend/staging_rows.h).
constexpr auto run_transfer = &Rows::run;

// Whether a copy's side is memory of this process's that the backend's GPU cannot reach (memory
// not mapped here is a device address the stub never saw: the backend's to vet).
bool here(const void* ptr, bool host_side) {
  return host_side && ptr != nullptr && !shared_host_offset(ptr, 1).has_value() &&
         host_mapped(ptr, 1);
}

// The region a copy names on its side here; cudaErrorInvalidValue for a shape the runtime
// refuses too, or memory not mapped in this process. With an array on the other side the extent
// and the position x count its elements (`element` bytes each).
cudaError_t region_of(const cudaMemcpy3DParms& c, bool source, Region& region,
                      uint64_t element = 1) {
  const cudaPitchedPtr& p = source ? c.srcPtr : c.dstPtr;
  const cudaPos& pos = source ? c.srcPos : c.dstPos;
  const unsigned __int128 x = static_cast<unsigned __int128>(pos.x) * element;
  const unsigned __int128 width = static_cast<unsigned __int128>(c.extent.width) * element;
  if (x > UINT64_MAX || width > UINT64_MAX ||
      !staging::region_of(p.ptr, static_cast<uint64_t>(x), pos.y, pos.z, p.pitch, p.ysize,
                          static_cast<uint64_t>(width), c.extent.height, c.extent.depth, region) ||
      !host_mapped(region.first, region.span())) {
    return record_local_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

// The bytes of an element of the array a copy names (1 without one): what its extent counts.
cudaError_t copy_element(const cudaMemcpy3DParms& c, size_t& element) {
  element = 1;
  const cudaArray_t array = c.srcArray != nullptr ? c.srcArray : c.dstArray;
  return array != nullptr ? countable_element_bytes(array, element) : cudaSuccess;
}

// `copy` with its side here replaced by the block, which holds the region's layout from 0: a copy
// between device memory.
cudaMemcpy3DParms on_block(const cudaMemcpy3DParms& copy, bool source, const Region& r,
                           void* block) {
  cudaMemcpy3DParms c = copy;
  const size_t height = r.slices > 1 ? r.slice / r.pitch : r.rows;
  const cudaPitchedPtr pitched{block, r.pitch, r.width, height};
  (source ? c.srcPtr : c.dstPtr) = pitched;
  (source ? c.srcPos : c.dstPos) = cudaPos{0, 0, 0};
  c.kind = cudaMemcpyDeviceToDevice;
  return c;
}

// What a copy with `sides` here runs as: the stub's host function (`host`) and, with one side
// here, `inner`, the copy with that side replaced by its block; with both sides here, the host
// function copying between them alone.
cudaError_t parts_of(const cudaMemcpy3DParms& copy, SidesHere sides, cudaHostNodeParams& host,
                     cudaMemcpy3DParms& inner) {
  if (sides.both()) {
    Region source{}, destination{};
    if (const cudaError_t r = region_of(copy, true, source); r != cudaSuccess) return r;
    if (const cudaError_t r = region_of(copy, false, destination); r != cudaSuccess) return r;
    host = cudaHostNodeParams{staging::run_host_copy, Rows::host_copy(source, destination)};
    return cudaSuccess;
  }
  size_t element = 1;
  if (const cudaError_t r = copy_element(copy, element); r != cudaSuccess) return r;
  Region region{};
  if (const cudaError_t r = region_of(copy, sides.source, region, element); r != cudaSuccess) {
    return r;
  }
  uint64_t block = 0;
  void* transfer = nullptr;
  if (const int r = Rows::stage(region, sides.source, block, transfer); r != cudaSuccess) {
    return static_cast<cudaError_t>(r);
  }
  inner = on_block(copy, sides.source, region, reinterpret_cast<void*>(block));
  host = cudaHostNodeParams{run_transfer, transfer};
  return cudaSuccess;
}

// A new graph of what the copy runs as (parts_of), in the copy's order.
cudaError_t staged_graph(const cudaMemcpy3DParms& copy, SidesHere sides, cudaGraph_t& graph) {
  cudaHostNodeParams host{};
  cudaMemcpy3DParms inner{};
  if (const cudaError_t r = parts_of(copy, sides, host, inner); r != cudaSuccess) return r;
  if (const cudaError_t r = cudaGraphCreate(&graph, 0); r != cudaSuccess) return r;
  cudaGraphNode_t first = nullptr, second = nullptr;
  cudaError_t result = sides.source ? cudaGraphAddHostNode(&first, graph, nullptr, 0, &host)
                                    : cudaGraphAddMemcpyNode(&first, graph, nullptr, 0, &inner);
  if (result == cudaSuccess && !sides.both()) {
    result = sides.source ? cudaGraphAddMemcpyNode(&second, graph, &first, 1, &inner)
                          : cudaGraphAddHostNode(&second, graph, &first, 1, &host);
  }
  if (result != cudaSuccess) {
    (void)cudaGraphDestroy(graph);
    graph = nullptr;
  }
  return result;
}

// The nodes of a staged node's own graph (in `node`, the graph's copy of it): its host node and
// its copy node (none when both sides are here: the host node alone).
cudaError_t inner_nodes(cudaGraphNode_t node, SidesHere sides, cudaGraphNode_t& host,
                        cudaGraphNode_t& copy) {
  cudaGraph_t inner = nullptr;
  if (const cudaError_t r = cudaGraphChildGraphNodeGetGraph(node, &inner); r != cudaSuccess) {
    return r;
  }
  cudaGraphNode_t nodes[2] = {};
  const size_t expected = sides.both() ? 1 : 2;
  size_t count = expected;
  if (const cudaError_t r = cudaGraphGetNodes(inner, nodes, &count); r != cudaSuccess) return r;
  if (count != expected) return record_local_error(cudaErrorInvalidValue);
  cudaGraphNodeType type{};
  if (const cudaError_t r = cudaGraphNodeGetType(nodes[0], &type); r != cudaSuccess) return r;
  const bool host_first = type == cudaGraphNodeTypeHost;
  host = nodes[host_first ? 0 : 1], copy = sides.both() ? nullptr : nodes[host_first ? 1 : 0];
  return cudaSuccess;
}

cudaError_t unsupported_change() {
  static std::once_flag logged;
  std::call_once(logged, [] {
    GVIRTUS_LOG(kWarning) << "libcudart.so.13: a copy node of this process's memory keeps that "
                             "memory on the sides it was on (the node is a host function, and a "
                             "copy in the copy's order): other parameters are not supported";
  });
  return record_local_error(cudaErrorNotSupported);
}

}  // namespace

SidesHere sides_here(const cudaMemcpy3DParms& copy) {
  if (!kind_in_range(copy.kind)) return {};  // kinds the runtime refuses: not staged
  // An array side is the backend's (its pointer, null, is no memory here).
  const cudaMemcpyKind kind = resolve_kind(copy.kind, copy.dstPtr.ptr, copy.srcPtr.ptr);
  return SidesHere{here(copy.srcPtr.ptr, host_is_source(kind)),
                   here(copy.dstPtr.ptr, host_is_destination(kind))};
}

cudaMemcpy3DParms linear_copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy3DParms p{};
  p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), count, count, 1};
  p.dstPtr = cudaPitchedPtr{dst, count, count, 1};
  p.extent = cudaExtent{count, 1, 1};
  p.kind = kind;
  return p;
}

// A copy a capturing stream takes, as natively one node of the capture's graph: a copy node -
// staged when a side is this process's memory - after the capture's dependencies, which it then
// replaces (the graph a capture builds is the session's: backend/capture_graphs.h). Dependencies
// with edge data of their own cannot be followed: refused as what the capture cannot hold.
cudaError_t capture_copy_node(cudaStream_t stream, const cudaMemcpy3DParms& copy) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  size_t n = 0;
  if (const cudaError_t r =
          cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies, &edges, &n);
      r != cudaSuccess) {
    return r;
  }
  if (status != cudaStreamCaptureStatusActive || graph == nullptr) {
    return record_local_error(cudaErrorStreamCaptureInvalidated);
  }
  const cudaGraphEdgeData plain{};
  for (size_t i = 0; edges != nullptr && i < n; ++i) {
    if (std::memcmp(&edges[i], &plain, sizeof plain) != 0) {
      if (const auto refused = refuse_in_capture(stream)) return *refused;
      return record_local_error(cudaErrorStreamCaptureUnsupported);
    }
  }
  const std::vector<cudaGraphNode_t> after(dependencies, dependencies + n);
  cudaGraphNode_t node = nullptr;
  if (const cudaError_t r = cudaGraphAddMemcpyNode(&node, graph, after.data(), after.size(), &copy);
      r != cudaSuccess) {
    return r;
  }
  return cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1,
                                             cudaStreamSetCaptureDependencies);
}

cudaError_t add_staged_copy_node(cudaGraphNode_t* node, cudaGraph_t graph,
                                 const cudaGraphNode_t* dependencies, size_t n,
                                 const cudaMemcpy3DParms& copy, SidesHere sides) {
  if (node == nullptr || graph == nullptr) return record_local_error(cudaErrorInvalidValue);
  cudaGraph_t inner = nullptr;
  if (const cudaError_t r = staged_graph(copy, sides, inner); r != cudaSuccess) return r;
  const cudaError_t result = cudaGraphAddChildGraphNode(node, graph, dependencies, n, inner);
  (void)cudaGraphDestroy(inner);
  if (result == cudaSuccess) staged_nodes.add(*node, graph, copy, sides);
  return result;
}

std::optional<cudaError_t> set_staged_copy_node(cudaGraphExec_t executable, cudaGraphNode_t node,
                                                const cudaMemcpy3DParms& copy) {
  const auto staged = staged_nodes.find(node);
  if (!staged) return std::nullopt;
  const SidesHere sides = sides_here(copy);
  if (sides != staged->here) return unsupported_change();
  if (executable != nullptr) {  // the executable graph's copy of the node's own graph, replaced
    cudaGraph_t inner = nullptr;
    if (const cudaError_t r = staged_graph(copy, sides, inner); r != cudaSuccess) return r;
    const cudaError_t result = cudaGraphExecChildGraphNodeSetParams(executable, node, inner);
    (void)cudaGraphDestroy(inner);
    return result;
  }
  cudaGraphNode_t host_node = nullptr, copy_node = nullptr;
  if (const cudaError_t r = inner_nodes(node, sides, host_node, copy_node); r != cudaSuccess) {
    return r;
  }
  cudaHostNodeParams host{};
  cudaMemcpy3DParms inner{};
  if (const cudaError_t r = parts_of(copy, sides, host, inner); r != cudaSuccess) return r;
  if (copy_node != nullptr) {
    if (const cudaError_t r = cudaGraphMemcpyNodeSetParams(copy_node, &inner); r != cudaSuccess) {
      return r;
    }
  }
  if (const cudaError_t r = cudaGraphHostNodeSetParams(host_node, &host); r != cudaSuccess) {
    return r;
  }
  staged_nodes.set_params(node, copy);
  return cudaSuccess;
}

bool staged_copy_params(cudaGraphNode_t node, cudaMemcpy3DParms& copy) {
  const auto staged = staged_nodes.find(node);
  if (!staged) return false;
  copy = staged->params;
  return true;
}

bool is_staged_copy_node(cudaGraphNode_t node) {
  return staged_nodes.contains(node);
}

void staged_copies_cloned(cudaGraph_t original, cudaGraph_t clone) {
  staged_nodes.cloned(original, clone, [&](cudaGraphNode_t node, cudaGraphNode_t* counterpart) {
    return static_cast<int>(cudaGraphNodeFindInClone(counterpart, node, clone));
  });
}

void forget_staged_node(cudaGraphNode_t node) {
  staged_nodes.forget_node(node);
}

void forget_staged_graph(cudaGraph_t graph) {
  staged_nodes.forget_graph(graph);
}

}  // namespace gvirtus::cudart
