// A graph's shape, kernel nodes' attributes, destroying nodes and graphs (graph_node_calls.h).
// Every node a query lists becomes one the session may name: it lies in a graph the session holds.
#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/services/session_services.h"
#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_enums.h"
#include "cuda_real.h"
#include "cuda_vetting.h"
#include "plugins/cuda/backend/capture_graphs.h"
#include "plugins/cuda/backend/graph_node_calls.h"
#include "plugins/cuda/backend/graph_nodes.h"
#include "plugins/cuda/backend/request_checks.h"
#include "plugins/cuda/backend/user_objects.h"
#include "plugins/cuda/common/graph_node_wire.h"

namespace gvirtus::cuda {
namespace {

using services::first_failure;

CUresult vet_present_node(CUgraphNode node) {
  return node != nullptr ? vet_node(node) : CUDA_ERROR_INVALID_VALUE;
}

void put_nodes(WireWriter& out, const CUgraphNode* nodes, size_t n) {
  for (size_t i = 0; i < n; ++i) marshal::put_value(out, nodes[i]);
}

void put_edges(WireWriter& out, bool given, const CUgraphEdgeData* edges, size_t n) {
  out.put<uint8_t>(given ? 1 : 0);
  if (given && n > 0) out.put_raw(edges, n * sizeof(CUgraphEdgeData));
}

// The head of a shape query: which outputs the caller gave, and its array's capacity (bounded by
// what a reply carries, whatever the caller's array).
struct ShapeQuery {
  uint8_t wanted;
  uint64_t capacity;
  size_t room() const { return static_cast<size_t>(std::min<uint64_t>(capacity, kMaxNodeEdges)); }
  bool nodes() const { return (wanted & kShapeNodes) != 0; }
  bool edges() const { return (wanted & kShapeEdges) != 0; }
  bool count() const { return (wanted & kShapeCount) != 0; }
};

ShapeQuery get_shape_query(WireReader& in) {
  ShapeQuery q{in.get<uint8_t>(), in.get<uint64_t>()};
  if ((q.wanted & ~(kShapeNodes | kShapeEdges | kShapeCount)) != 0) {
    raise(ErrorKind::kInvalidInput, "a shape query wanting " + std::to_string(q.wanted));
  }
  return q;
}

// cuGraphNodeGetDependencies_v2, cuGraphNodeGetDependentNodes_v2.
void neighbours(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto node = marshal::get_value<CUgraphNode>(in);
  const ShapeQuery q = get_shape_query(in);
  in.expect_end();
  const auto query = fn == Fn::cuGraphNodeGetDependencies_v2
                         ? real().cuGraphNodeGetDependencies_v2
                         : real().cuGraphNodeGetDependentNodes_v2;
  result = first_failure(CUDA_SUCCESS, vet_present_node(node), lacks(query));
  std::vector<CUgraphNode> nodes(q.nodes() ? q.room() : 0);
  std::vector<CUgraphEdgeData> edges(q.edges() ? std::max<size_t>(q.room(), 1) : 0);
  size_t count = q.nodes() ? nodes.size() : 0;
  if (result == CUDA_SUCCESS) {
    result = query(node, q.nodes() ? nodes.data() : nullptr, q.edges() ? edges.data() : nullptr,
                   q.count() ? &count : nullptr);
  }
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  const size_t n = q.nodes() ? std::min(count, nodes.size()) : 0;
  adopt_nodes(nodes.data(), n, graph_of(node));
  out.put<uint64_t>(count);
  out.put<uint32_t>(static_cast<uint32_t>(n));
  put_nodes(out, nodes.data(), n);
  put_edges(out, q.edges() && n > 0, edges.data(), n);
}

// cuGraphGetEdges_v2.
void edges_of(WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  const ShapeQuery q = get_shape_query(in);
  in.expect_end();
  const auto query = real().cuGraphGetEdges_v2;
  result = first_failure(CUDA_SUCCESS, graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
                         lacks(query));
  std::vector<CUgraphNode> from(q.nodes() ? q.room() : 0), to(from.size());
  std::vector<CUgraphEdgeData> edges(q.edges() ? std::max<size_t>(q.room(), 1) : 0);
  size_t count = from.size();
  if (result == CUDA_SUCCESS) {
    result = query(graph, q.nodes() ? from.data() : nullptr, q.nodes() ? to.data() : nullptr,
                   q.edges() ? edges.data() : nullptr, q.count() ? &count : nullptr);
  }
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  const size_t n = q.nodes() ? std::min(count, from.size()) : 0;
  adopt_nodes(from.data(), n, graph);
  adopt_nodes(to.data(), n, graph);
  out.put<uint64_t>(count);
  out.put<uint32_t>(static_cast<uint32_t>(n));
  put_nodes(out, from.data(), n);
  put_nodes(out, to.data(), n);
  put_edges(out, q.edges() && n > 0, edges.data(), n);
}

// cuGraphAddDependencies_v2, cuGraphRemoveDependencies_v2.
void dependencies(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  const auto n = in.get<uint32_t>();
  if (n > kMaxNodeEdges || in.remaining() < uint64_t{n} * 2 * sizeof(uint64_t)) {
    raise(ErrorKind::kInvalidInput, "a list of " + std::to_string(n) + " edges");
  }
  std::vector<CUgraphNode> from(n), to(n);
  for (auto& node : from) node = marshal::get_value<CUgraphNode>(in);
  for (auto& node : to) node = marshal::get_value<CUgraphNode>(in);
  std::vector<CUgraphEdgeData> edges;
  if (in.get_bool()) {
    edges.resize(n);
    if (n > 0)
      std::memcpy(edges.data(), in.get_raw(n * sizeof(CUgraphEdgeData)).data(),
                  n * sizeof(CUgraphEdgeData));
  }
  in.expect_end();
  const auto change = fn == Fn::cuGraphAddDependencies_v2 ? real().cuGraphAddDependencies_v2
                                                          : real().cuGraphRemoveDependencies_v2;
  result = first_failure(CUDA_SUCCESS, graph != nullptr ? vet(graph) : CUDA_ERROR_INVALID_VALUE,
                         vet_nodes(from.data(), n), vet_nodes(to.data(), n), lacks(change));
  if (result == CUDA_SUCCESS) {
    result = change(graph, n > 0 ? from.data() : nullptr, n > 0 ? to.data() : nullptr,
                    edges.empty() ? nullptr : edges.data(), n);
  }
  out.put<int32_t>(result);
}

// cuGraphKernelNodeGetAttribute, cuGraphKernelNodeSetAttribute: any attribute id of the header's
// range (the driver judges which apply); a value's event is the session's.
void kernel_attribute(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto node = marshal::get_value<CUgraphNode>(in);
  const auto attribute = marshal::get_value<CUlaunchAttributeID>(in);
  const bool set = fn == Fn::cuGraphKernelNodeSetAttribute;
  CUlaunchAttributeValue value{};
  if (set) std::memcpy(&value, in.get_raw(sizeof value).data(), sizeof value);
  in.expect_end();
  CUresult vetted = CUDA_SUCCESS;
  const uint32_t id = marshal::enum_bits(attribute);
  if (set && id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) {
    vetted = vet(value.programmaticEvent.event);
  } else if (set && id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT) {
    vetted = vet(value.launchCompletionEvent.event);
  }
  const CUresult available = set ? lacks(real().cuGraphKernelNodeSetAttribute)
                                 : lacks(real().cuGraphKernelNodeGetAttribute);
  result = first_failure(CUDA_SUCCESS, vet_present_node(node), vetted, available);
  if (result == CUDA_SUCCESS) {
    result = set ? real().cuGraphKernelNodeSetAttribute(node, attribute, &value)
                 : real().cuGraphKernelNodeGetAttribute(node, attribute, &value);
  }
  out.put<int32_t>(result);
  if (set) return;
  if (result != CUDA_SUCCESS) value = CUlaunchAttributeValue{};
  out.put_raw(&value, sizeof value);
}

// cuGraphDestroy: a graph a child node owns goes with its node, never by itself.
void destroy_graph(WireReader& in, WireWriter& out, CUresult& result) {
  const auto graph = marshal::get_value<CUgraph>(in);
  in.expect_end();
  if (is_child_graph(graph)) {
    result = static_cast<CUresult>(services::refuse(
        CUDA_ERROR_INVALID_VALUE, "cuda", "graph", graph,
        "owned by a child graph node: it goes when its node or its node's graph does"));
    out.put<int32_t>(result);
    return;
  }
  if (capture_graphs().building(graph)) {
    result = static_cast<CUresult>(
        services::refuse(CUDA_ERROR_INVALID_VALUE, "cuda", "graph", graph,
                         "a capture is building it: it is handed over when the capture ends"));
    out.put<int32_t>(result);
    return;
  }
  auto graph_release = release(graph);
  // The memory its allocation nodes placed leaves the ledger before the destroy, and comes back
  // if it fails (allocation_ledger.h says why first) - unless an executable graph was
  // instantiated from it, whose launches place that memory, where it stays until freed: then it
  // is kept, as graph memory whose graph is gone (graph_nodes.h).
  auto& ledger = services::session_services().allocations;
  const bool instantiated_from = was_instantiated(graph);
  services::LedgerWithdrawal withdrawn(ledger);
  result = first_failure(CUDA_SUCCESS, graph_release.vetted(), lacks(real().cuGraphDestroy));
  if (result == CUDA_SUCCESS) {
    if (!instantiated_from) withdrawn.owned_by(graph);
    result = real().cuGraphDestroy(graph);
  }
  out.put<int32_t>(result);
  if (result != CUDA_SUCCESS) return;
  if (instantiated_from) ledger.hand_over(graph, kept_graph_memory());
  graph_release.destroyed();
  withdrawn.done();
  forget_conditional_handles(graph);
  forget_graph_nodes(graph);
  forget_user_object_references(graph);
}

}  // namespace

bool run_graph_shape_call(Fn fn, WireReader& in, WireWriter& out, CUresult& result) {
  const auto& d = real();
  switch (fn) {
    case Fn::cuGraphNodeGetType: {
      const auto node = marshal::get_value<CUgraphNode>(in);
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, vet_present_node(node), lacks(d.cuGraphNodeGetType));
      CUgraphNodeType type{};
      if (result == CUDA_SUCCESS) result = d.cuGraphNodeGetType(node, &type);
      out.put<int32_t>(result);
      out.put<int32_t>(result == CUDA_SUCCESS ? marshal::enum_bits(type) : 0);
      return true;
    }
    case Fn::cuGraphDestroyNode: {
      const auto node = marshal::get_value<CUgraphNode>(in);
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, vet_present_node(node), lacks(d.cuGraphDestroyNode));
      if (result == CUDA_SUCCESS) result = d.cuGraphDestroyNode(node);
      if (result == CUDA_SUCCESS) forget_node(node);
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cuGraphNodeFindInClone: {
      const auto original = marshal::get_value<CUgraphNode>(in);
      const auto clone = marshal::get_value<CUgraph>(in);
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, vet_present_node(original),
                             clone != nullptr ? vet(clone) : CUDA_ERROR_INVALID_VALUE,
                             lacks(d.cuGraphNodeFindInClone));
      CUgraphNode found = nullptr;
      if (result == CUDA_SUCCESS) result = d.cuGraphNodeFindInClone(&found, original, clone);
      if (result == CUDA_SUCCESS) adopt_node(found, clone);
      out.put<int32_t>(result);
      marshal::put_value(out, result == CUDA_SUCCESS ? found : nullptr);
      return true;
    }
    case Fn::cuGraphNodeGetEnabled:
    case Fn::cuGraphNodeSetEnabled: {
      const auto executable = marshal::get_value<CUgraphExec>(in);
      const auto node = marshal::get_value<CUgraphNode>(in);
      const bool set = fn == Fn::cuGraphNodeSetEnabled;
      unsigned enabled = set ? in.get<uint32_t>() : 0;
      in.expect_end();
      result = first_failure(CUDA_SUCCESS,
                             executable != nullptr ? vet(executable) : CUDA_ERROR_INVALID_VALUE,
                             vet_present_node(node),
                             set ? lacks(d.cuGraphNodeSetEnabled) : lacks(d.cuGraphNodeGetEnabled));
      if (result == CUDA_SUCCESS) {
        result = set ? d.cuGraphNodeSetEnabled(executable, node, enabled)
                     : d.cuGraphNodeGetEnabled(executable, node, &enabled);
      }
      out.put<int32_t>(result);
      if (!set) out.put<uint32_t>(result == CUDA_SUCCESS ? enabled : 0);
      return true;
    }
    case Fn::cuGraphGetEdges_v2:
      edges_of(in, out, result);
      return true;
    case Fn::cuGraphNodeGetDependencies_v2:
    case Fn::cuGraphNodeGetDependentNodes_v2:
      neighbours(fn, in, out, result);
      return true;
    case Fn::cuGraphAddDependencies_v2:
    case Fn::cuGraphRemoveDependencies_v2:
      dependencies(fn, in, out, result);
      return true;
    case Fn::cuGraphKernelNodeGetAttribute:
    case Fn::cuGraphKernelNodeSetAttribute:
      kernel_attribute(fn, in, out, result);
      return true;
    case Fn::cuGraphKernelNodeCopyAttributes: {
      const auto destination = marshal::get_value<CUgraphNode>(in);
      const auto source = marshal::get_value<CUgraphNode>(in);
      in.expect_end();
      result = first_failure(CUDA_SUCCESS, vet_present_node(destination), vet_present_node(source),
                             lacks(d.cuGraphKernelNodeCopyAttributes));
      if (result == CUDA_SUCCESS) result = d.cuGraphKernelNodeCopyAttributes(destination, source);
      out.put<int32_t>(result);
      return true;
    }
    case Fn::cuGraphDestroy:
      destroy_graph(in, out, result);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cuda
