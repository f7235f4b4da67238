#include "plugins/cuda/backend/graph_queries.h"

#include <algorithm>
#include <vector>

#include "common/call_marshal.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/capture_graphs.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::cuda {
namespace {

// cuGraphGetNodes, cuGraphGetRootNodes: u64 graph, u64 capacity (common/driver_wire.h).
void graph_nodes(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  const auto capacity = in.get<uint64_t>();
  in.expect_end();
  result = vet(graph);
  const auto query =
      fn == Fn::cuGraphGetNodes ? real().cuGraphGetNodes : real().cuGraphGetRootNodes;
  if (result == CUDA_SUCCESS && query == nullptr) result = CUDA_ERROR_NOT_SUPPORTED;
  // However large the client's array, no more nodes than a reply holds.
  std::vector<CUgraphNode> nodes(std::min<uint64_t>(capacity, kMaxGraphNodes));
  size_t count = nodes.size();
  if (result == CUDA_SUCCESS) {
    result = query(graph, capacity == 0 ? nullptr : nodes.data(), &count);
  }
  if (result != CUDA_SUCCESS) count = 0;
  out.put<int32_t>(result);
  out.put<uint64_t>(count);
  if (capacity == 0) return;  // the count alone
  count = std::min<size_t>(count, nodes.size());
  adopt_nodes(nodes.data(), count, graph);  // nodes the session may name from now on
  out.put<uint32_t>(static_cast<uint32_t>(count));
  for (size_t i = 0; i < count; ++i) marshal::put_value(out, nodes[i]);
}

// cuStreamGetCaptureInfo_v3: u64 stream, u8 wanted (common/driver_wire.h). An active capture's
// graph and its dependency nodes become the session's (capture_graphs.h): the program may add
// nodes to the graph and make conditional handles on it while the capture lasts.
void capture_info(WireReader& in, WireWriter& out, CUresult& result) {
  const auto stream = marshal::get_value<CUstream>(in);
  const auto wanted = in.get<uint8_t>();
  in.expect_end();
  const bool want_nodes = (wanted & kShapeNodes) != 0;
  const bool want_edges = want_nodes && (wanted & kShapeEdges) != 0;
  result = vet(stream);
  if (result == CUDA_SUCCESS && real().cuStreamGetCaptureInfo_v3 == nullptr) {
    result = CUDA_ERROR_NOT_SUPPORTED;
  }
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* nodes = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t count = 0;
  if (result == CUDA_SUCCESS) {
    result = real().cuStreamGetCaptureInfo_v3(stream, &status, &id, &graph,
                                              want_nodes ? &nodes : nullptr,
                                              want_edges ? &edges : nullptr, &count);
  }
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  out.put<uint32_t>(static_cast<uint32_t>(status));
  if (status == CU_STREAM_CAPTURE_STATUS_NONE) return;
  const size_t n = want_nodes && nodes != nullptr ? std::min<uint64_t>(count, kMaxGraphNodes) : 0;
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE && graph != nullptr) {
    capture_graphs().handed_out(stream, graph);
    adopt_nodes(nodes, n, graph);
  }
  out.put<uint64_t>(id);
  marshal::put_value(out, graph);
  out.put<uint64_t>(count);
  out.put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) marshal::put_value(out, nodes[i]);
  const bool edges_given = want_edges && edges != nullptr && n > 0;
  out.put_bool(edges_given);
  if (edges_given) out.put_raw(edges, n * sizeof(CUgraphEdgeData));
}

}  // namespace

bool run_graph_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuGraphGetNodes:
    case Fn::cuGraphGetRootNodes:
      graph_nodes(fn, in, out, result);
      return true;
    case Fn::cuStreamGetCaptureInfo_v3:
      capture_info(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
