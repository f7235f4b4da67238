// Graph copies of the application's own memory (host_staging.h).
#include "plugins/cuda/frontend/host_staging.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/log.h"
#include "common/staged_copies.h"
#include "common/staged_nodes.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "frontend/staging_rows.h"
#include "plugins/cuda/frontend/contexts.h"
#include "plugins/cuda/frontend/graph_nodes.h"
#include "plugins/cuda/frontend/memory_ranges.h"
#include "plugins/cuda/frontend/pool_routes.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

using staging::Region;

// What the program gave each staged copy node (never destroyed: exit handlers may still ask).
auto& staged_nodes = *new staging::StagedNodes<CUgraphNode, CUgraph, CUDA_MEMCPY3D>;

using Rows = staging::StubRows<Fn::gvirtusStagingAlloc, Fn::gvirtusStagingWrite,
                               Fn::gvirtusStagingRead, &remote_sync, &remote_async>;

// The stub's host function (frontend/staging_rows.h).
constexpr auto run_transfer = &Rows::run;

bool here(CUmemorytype type, const void* host, CUdeviceptr device) {
  uint32_t bits;
  std::memcpy(&bits, &type, sizeof bits);
  if (bits == CU_MEMORYTYPE_HOST) return shared_device_pointer(host) == 0;
  if (bits != CU_MEMORYTYPE_UNIFIED) return false;
  // An address not mapped here is device memory the stub never saw (another plugin's, in runtime
  // mode): the backend's to vet.
  const void* address = as_pointer(device);
  return !device_ranges().find(address).has_value() && shared_device_pointer(address) == 0 &&
         host_mapped(address, 1);
}

// The region a copy names on its side here; CUDA_ERROR_INVALID_VALUE for a shape the driver
// refuses too, or memory not mapped in this process (a device address the stub never saw).
CUresult region_of(const CUDA_MEMCPY3D& c, bool source, Region& region) {
  uint32_t bits;
  std::memcpy(&bits, source ? &c.srcMemoryType : &c.dstMemoryType, sizeof bits);
  const void* host = source ? c.srcHost : c.dstHost;
  if (bits == CU_MEMORYTYPE_UNIFIED) host = as_pointer(source ? c.srcDevice : c.dstDevice);
  const bool shaped =
      source ? staging::region_of(host, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch, c.srcHeight,
                                  c.WidthInBytes, c.Height, c.Depth, region)
             : staging::region_of(host, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch, c.dstHeight,
                                  c.WidthInBytes, c.Height, c.Depth, region);
  if (!shaped || !host_mapped(region.first, region.span())) return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

// `copy` with its side here replaced by the block, which holds the region's layout from 0.
CUDA_MEMCPY3D on_block(const CUDA_MEMCPY3D& copy, bool source, const Region& r, CUdeviceptr block) {
  CUDA_MEMCPY3D c = copy;
  const uint64_t height = r.slices > 1 ? r.slice / r.pitch : r.rows;
  if (source) {
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = block, c.srcHost = nullptr;
    c.srcXInBytes = c.srcY = c.srcZ = 0, c.srcPitch = r.pitch, c.srcHeight = height;
  } else {
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = block, c.dstHost = nullptr;
    c.dstXInBytes = c.dstY = c.dstZ = 0, c.dstPitch = r.pitch, c.dstHeight = height;
  }
  return c;
}

// What a copy with `sides` here runs as: the stub's host function (`host`) and, with one side
// here, `inner`, the copy with that side replaced by its block; with both sides here, the host
// function copying between them alone.
CUresult parts_of(const CUDA_MEMCPY3D& copy, SidesHere sides, CUDA_HOST_NODE_PARAMS& host,
                  CUDA_MEMCPY3D& inner) {
  if (sides.both()) {
    Region source{}, destination{};
    if (const CUresult r = region_of(copy, true, source); r != CUDA_SUCCESS) return r;
    if (const CUresult r = region_of(copy, false, destination); r != CUDA_SUCCESS) return r;
    host = CUDA_HOST_NODE_PARAMS{staging::run_host_copy, Rows::host_copy(source, destination)};
    return CUDA_SUCCESS;
  }
  Region region{};
  if (const CUresult r = region_of(copy, sides.source, region); r != CUDA_SUCCESS) return r;
  uint64_t block = 0;
  void* transfer = nullptr;
  if (const int r = Rows::stage(region, sides.source, block, transfer); r != CUDA_SUCCESS) {
    return static_cast<CUresult>(r);
  }
  inner = on_block(copy, sides.source, region, block);
  host = CUDA_HOST_NODE_PARAMS{run_transfer, transfer};
  return CUDA_SUCCESS;
}

// A new graph of what the copy runs as (parts_of), in the copy's order.
CUresult staged_graph(const CUDA_MEMCPY3D& copy, CUcontext context, SidesHere sides,
                      CUgraph& graph) {
  CUDA_HOST_NODE_PARAMS host{};
  CUDA_MEMCPY3D inner{};
  if (const CUresult r = parts_of(copy, sides, host, inner); r != CUDA_SUCCESS) return r;
  if (const CUresult r = cuGraphCreate(&graph, 0); r != CUDA_SUCCESS) return r;
  CUgraphNode first = nullptr, second = nullptr;
  CUresult result = sides.source ? add_host_node(&first, graph, nullptr, 0, &host)
                                 : add_memcpy_node(&first, graph, nullptr, 0, &inner, context);
  if (result == CUDA_SUCCESS && !sides.both()) {
    result = sides.source ? add_memcpy_node(&second, graph, &first, 1, &inner, context)
                          : add_host_node(&second, graph, &first, 1, &host);
  }
  if (result != CUDA_SUCCESS) {
    (void)cuGraphDestroy(graph);
    graph = nullptr;
  }
  return result;
}

// The nodes of a staged node's own graph (in `node`, the graph's copy of it): its host node and
// its copy node (none when both sides are here: the host node alone).
CUresult inner_nodes(CUgraphNode node, SidesHere sides, CUgraphNode& host, CUgraphNode& copy) {
  CUgraph inner = nullptr;
  if (const CUresult r = cuGraphChildGraphNodeGetGraph(node, &inner); r != CUDA_SUCCESS) return r;
  CUgraphNode nodes[2] = {};
  const size_t expected = sides.both() ? 1 : 2;
  size_t count = expected;
  if (const CUresult r = cuGraphGetNodes(inner, nodes, &count); r != CUDA_SUCCESS) return r;
  if (count != expected) return CUDA_ERROR_INVALID_VALUE;
  CUgraphNodeType type{};
  if (const CUresult r = cuGraphNodeGetType(nodes[0], &type); r != CUDA_SUCCESS) return r;
  const bool host_first = type == CU_GRAPH_NODE_TYPE_HOST;
  host = nodes[host_first ? 0 : 1], copy = sides.both() ? nullptr : nodes[host_first ? 1 : 0];
  return CUDA_SUCCESS;
}

void log_unsupported_change() {
  static std::once_flag logged;
  std::call_once(logged, [] {
    GVIRTUS_LOG(kWarning) << "libcuda.so.1: a copy node of this process's memory keeps that "
                             "memory on the sides it was on (the node is a host function, and a "
                             "copy in the copy's order): other parameters are not supported";
  });
}

}  // namespace

SidesHere sides_here(const CUDA_MEMCPY3D& copy) {
  return SidesHere{here(copy.srcMemoryType, copy.srcHost, copy.srcDevice),
                   here(copy.dstMemoryType, copy.dstHost, copy.dstDevice)};
}

namespace {

// A linear copy between device memory and this process's memory.
CUDA_MEMCPY3D linear(CUdeviceptr device, const void* host, size_t bytes, bool to_device) {
  CUDA_MEMCPY3D c{};
  c.WidthInBytes = bytes, c.Height = 1, c.Depth = 1;
  if (to_device) {
    c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = host;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE, c.dstDevice = device;
  } else {
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE, c.srcDevice = device;
    c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = const_cast<void*>(host);
  }
  return c;
}

}  // namespace

// A copy a capturing stream takes, as natively one node of the capture's graph: a copy node -
// staged when a side is this process's memory - after the capture's dependencies, which it then
// replaces (capture_graphs.h: the graph a capture builds is the session's). Dependencies with edge
// data of their own cannot be followed: refused as what the capture cannot hold.
CUresult capture_copy_node(CUstream stream, const CUDA_MEMCPY3D& copy) {
  const stub::RouteScope route(pool_backend_of_handle("stream", stream));
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  const CUgraphNode* dependencies = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 0;
  if (const CUresult r =
          cuStreamGetCaptureInfo_v3(stream, &status, nullptr, &graph, &dependencies, &edges, &n);
      r != CUDA_SUCCESS) {
    return r;
  }
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || graph == nullptr) {
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  const CUgraphEdgeData plain{};
  for (size_t i = 0; edges != nullptr && i < n; ++i) {
    if (std::memcmp(&edges[i], &plain, sizeof plain) != 0) return refuse_in_capture(stream);
  }
  const std::vector<CUgraphNode> after(dependencies, dependencies + n);
  CUgraphNode node = nullptr;
  if (const CUresult r =
          add_memcpy_node(&node, graph, after.data(), after.size(), &copy, current_context());
      r != CUDA_SUCCESS) {
    return r;
  }
  return cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1,
                                              CU_STREAM_SET_CAPTURE_DEPENDENCIES);
}

CUresult capture_staged_to_device(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  return capture_copy_node(stream, linear(dst, src, bytes, true));
}

CUresult capture_staged_to_host(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  return capture_copy_node(stream, linear(src, dst, bytes, false));
}

CUresult capture_host_copy(void* dst, const void* src, size_t bytes, CUstream stream) {
  CUDA_MEMCPY3D c{};
  c.WidthInBytes = bytes, c.Height = 1, c.Depth = 1;
  c.srcMemoryType = CU_MEMORYTYPE_HOST, c.srcHost = src;
  c.dstMemoryType = CU_MEMORYTYPE_HOST, c.dstHost = dst;
  return capture_copy_node(stream, c);
}

CUresult add_staged_copy_node(CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
                              size_t n, const CUDA_MEMCPY3D& copy, CUcontext context,
                              SidesHere sides) {
  if (node == nullptr || graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  CUgraph inner = nullptr;
  if (const CUresult r = staged_graph(copy, context, sides, inner); r != CUDA_SUCCESS) return r;
  const CUresult result =
      add_child_node(node, graph, dependencies, n, inner, CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE);
  (void)cuGraphDestroy(inner);
  if (result == CUDA_SUCCESS) staged_nodes.add(*node, graph, copy, sides);
  return result;
}

std::optional<CUresult> set_staged_copy_node(CUgraphExec executable, CUgraphNode node,
                                             const CUDA_MEMCPY3D& copy, CUcontext context) {
  const auto staged = staged_nodes.find(node);
  if (!staged) return std::nullopt;
  const SidesHere sides = sides_here(copy);
  if (sides != staged->here) {
    log_unsupported_change();
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const stub::RouteScope route(pool_backend_of_handle("graph", staged->graph));
  if (executable != nullptr) {  // the executable graph's copy of the node's own graph, replaced
    CUgraph inner = nullptr;
    if (const CUresult r = staged_graph(copy, context, sides, inner); r != CUDA_SUCCESS) return r;
    const CUresult result = set_child_node(executable, node, inner);
    (void)cuGraphDestroy(inner);
    return result;
  }
  CUgraphNode host_node = nullptr, copy_node = nullptr;
  if (const CUresult r = inner_nodes(node, sides, host_node, copy_node); r != CUDA_SUCCESS) {
    return r;
  }
  CUDA_HOST_NODE_PARAMS host{};
  CUDA_MEMCPY3D inner{};
  if (const CUresult r = parts_of(copy, sides, host, inner); r != CUDA_SUCCESS) return r;
  if (copy_node != nullptr) {
    if (const CUresult r = set_memcpy_node(nullptr, copy_node, &inner, context);
        r != CUDA_SUCCESS) {
      return r;
    }
  }
  if (const CUresult r = set_host_node(nullptr, host_node, &host); r != CUDA_SUCCESS) return r;
  staged_nodes.set_params(node, copy);
  return CUDA_SUCCESS;
}

bool staged_copy_params(CUgraphNode node, CUDA_MEMCPY3D& copy) {
  const auto staged = staged_nodes.find(node);
  if (!staged) return false;
  copy = staged->params;
  return true;
}

bool is_staged_copy_node(CUgraphNode node) {
  return staged_nodes.contains(node);
}

void staged_copies_cloned(CUgraph original, CUgraph clone) {
  staged_nodes.cloned(original, clone, [&](CUgraphNode node, CUgraphNode* counterpart) {
    return static_cast<int>(cuGraphNodeFindInClone(counterpart, node, clone));
  });
}

void forget_staged_node(CUgraphNode node) {
  staged_nodes.forget_node(node);
}

void forget_staged_graph(CUgraph graph) {
  staged_nodes.forget_graph(graph);
}

}  // namespace gvirtus::cuda
