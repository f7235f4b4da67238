// Questions about graphs in the client libcuda.so.1 (wire: common/driver_wire.h). The graph lives
// in the backend's driver; its nodes come back as the driver's handles.
#include <cuda.h>

#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"

namespace cr = gvirtus::cuda;

namespace gvirtus::cuda {
namespace {

// As the driver: without an array, the count; with one, up to *count nodes written, the rest of
// the array nulled and *count the number written.
CUresult graph_nodes(Fn fn, CUgraph graph, CUgraphNode* nodes, size_t* count_inout) {
  if (count_inout == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t capacity = nodes != nullptr ? *count_inout : 0;
  if (nodes != nullptr && capacity == 0) return CUDA_SUCCESS;  // nothing to write
  uint64_t count = 0;
  const CUresult result = remote_sync(
      fn,
      [&](WireWriter& w) {
        marshal::put_value(w, graph);
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        count = r.get<uint64_t>();
        if (capacity == 0) return;
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity || n > count)
          raise(ErrorKind::kInvalidInput, "more graph nodes than asked for");
        for (uint32_t i = 0; i < n; ++i) nodes[i] = marshal::get_value<CUgraphNode>(r);
        for (uint64_t i = n; i < capacity; ++i) nodes[i] = nullptr;
        count = n;
      });
  if (result == CUDA_SUCCESS) *count_inout = count;
  return result;
}

}  // namespace
}  // namespace gvirtus::cuda

extern "C" __attribute__((visibility("default"))) CUresult cuGraphGetNodes(CUgraph hGraph,
                                                                           CUgraphNode* nodes,
                                                                           size_t* numNodes) {
  return cr::graph_nodes(cr::Fn::cuGraphGetNodes, hGraph, nodes, numNodes);
}

// The nodes without dependencies.
extern "C" __attribute__((visibility("default"))) CUresult cuGraphGetRootNodes(
    CUgraph hGraph, CUgraphNode* rootNodes, size_t* numRootNodes) {
  return cr::graph_nodes(cr::Fn::cuGraphGetRootNodes, hGraph, rootNodes, numRootNodes);
}
