#include "plugins/cuda/backend/graph_queries.h"

#include <algorithm>
#include <vector>

#include "common/call_marshal.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/common/driver_wire.h"

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

}  // namespace

bool run_graph_query(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  switch (fn) {
    case Fn::cuGraphGetNodes:
    case Fn::cuGraphGetRootNodes:
      graph_nodes(fn, in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
