// The backend's handlers of the custom graph rows (202, 206, 212, 213, 217 of cudart_calls.txt;
// wire: common/graph_wire.h), called by run_custom. Graphs, executable graphs and streams are
// vetted as the session's (cudart_vetting.h) before they reach the runtime; the graph nodes listed
// become the session's (graph_nodes.h), and so do an active capture's graph and dependencies
// (capture_graphs.h).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "plugins/cudart/backend/capture_graphs.h"
#include "plugins/cudart/backend/graph_nodes.h"
#include "plugins/cudart/backend/handlers.h"
#include "plugins/cudart/backend/vetting.h"
#include "plugins/cudart/common/graph_wire.h"

namespace gvirtus::cudart {
namespace {

void put_nodes(WireWriter& out, const cudaGraphNode_t* nodes, size_t n) {
  out.put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) out.put<uint64_t>(wire_handle(nodes[i]));
}

// What a dependencies or edge data pointer says after the call (graph_wire.h).
template <typename T>
uint8_t pointer_state(const T* pointer, const T* untouched) {
  if (pointer == untouched) return kPointerUntouched;
  return pointer != nullptr ? kPointerArray : kPointerNull;
}

// cudaStreamGetCaptureInfo: the runtime's outputs, only those the caller asked for, starting
// from the caller's values (what the runtime leaves alone goes back as it came).
cudaError_t run_capture_info(WireReader& in, WireWriter& out) {
  const auto stream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
  const uint8_t wanted = in.get<uint8_t>();
  // The caller's status bits: set into the enum object by copy, never loaded as it.
  const int32_t status_bits = in.get<int32_t>();
  cudaStreamCaptureStatus status{};
  static_assert(sizeof status == sizeof status_bits);
  std::memcpy(&status, &status_bits, sizeof status);
  unsigned long long id = in.get<uint64_t>();
  auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  size_t count = in.get<uint64_t>();
  in.expect_end();
  static const cudaGraphNode_t untouched_nodes[1] = {};
  static const cudaGraphEdgeData untouched_edges[1] = {};
  const cudaGraphNode_t* dependencies = untouched_nodes;
  const cudaGraphEdgeData* edges = untouched_edges;
  cudaError_t result = vet(stream);
  if (result == cudaSuccess) {
    result =
        ::cudaStreamGetCaptureInfo(stream, (wanted & kCaptureStatus) != 0 ? &status : nullptr,
                                   (wanted & kCaptureId) != 0 ? &id : nullptr,
                                   (wanted & kCaptureGraph) != 0 ? &graph : nullptr,
                                   (wanted & kCaptureDependencies) != 0 ? &dependencies : nullptr,
                                   (wanted & kCaptureEdges) != 0 ? &edges : nullptr,
                                   (wanted & kCaptureCount) != 0 ? &count : nullptr);
  }
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  // The graph an active capture builds, and its dependency nodes, become the session's
  // (capture_graphs.h).
  const bool active = (wanted & kCaptureStatus) != 0 && status == cudaStreamCaptureStatusActive;
  if (active && (wanted & kCaptureGraph) != 0) capture_graphs().handed_out(stream, graph);
  out.put<int32_t>(marshal::enum_bits(status));
  out.put<uint64_t>(id);
  out.put<uint64_t>(wire_handle(graph));
  out.put<uint64_t>(count);
  // The arrays are as long as the count says (the caller must ask for the count to read them).
  const size_t listed =
      std::min<uint64_t>((wanted & kCaptureCount) != 0 ? count : 0, kMaxGraphNodes);
  const uint8_t nodes_state = pointer_state(dependencies, &untouched_nodes[0]);
  if (active && (wanted & kCaptureGraph) != 0 && nodes_state == kPointerArray) {
    adopt_nodes(dependencies, listed, graph);
  }
  out.put<uint8_t>(nodes_state);
  put_nodes(out, dependencies, nodes_state == kPointerArray ? listed : 0);
  const uint8_t edges_state = pointer_state(edges, &untouched_edges[0]);
  out.put<uint8_t>(edges_state);
  const size_t edge_count = edges_state == kPointerArray ? listed : 0;
  out.put<uint32_t>(static_cast<uint32_t>(edge_count));
  if (edge_count > 0) out.put_raw(edges, edge_count * sizeof(cudaGraphEdgeData));
  return result;
}

// cudaGraphInstantiateWithParams: the upload stream is the runtime's business only with the
// upload flag (it ignores it otherwise), so it is vetted then only.
cudaError_t run_instantiate_with_params(WireReader& in, WireWriter& out) {
  const bool exec_wanted = in.get<uint8_t>() != 0;
  auto exec = handle_from_wire<cudaGraphExec_t>(in.get<uint64_t>());
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const bool params_given = in.get<uint8_t>() != 0;
  cudaGraphInstantiateParams params{};
  params.flags = in.get<uint64_t>();
  params.uploadStream = handle_from_wire<cudaStream_t>(in.get<uint64_t>());
  params.errNode_out = handle_from_wire<cudaGraphNode_t>(in.get<uint64_t>());
  const cudaGraphNode_t caller_error_node = params.errNode_out;
  // The caller's result_out travels so that an untouched output stays as it was: its bits go in
  // and come out without ever being loaded as the enum (they may be any value).
  const int32_t result_bits = in.get<int32_t>();
  static_assert(sizeof params.result_out == sizeof result_bits);
  std::memcpy(&params.result_out, &result_bits, sizeof result_bits);
  in.expect_end();
  const bool uploads = params_given && (params.flags & cudaGraphInstantiateFlagUpload) != 0;
  cudaError_t result = first_failure(vet(graph), uploads ? vet(params.uploadStream) : cudaSuccess);
  if (result == cudaSuccess) {
    result = ::cudaGraphInstantiateWithParams(exec_wanted ? &exec : nullptr, graph,
                                              params_given ? &params : nullptr);
    if (result == cudaSuccess && exec_wanted) adopt(exec);
    // The node the runtime blames is the graph's; one it left alone is the caller's own value.
    if (params.errNode_out != caller_error_node) adopt_node(params.errNode_out, graph);
  }
  out.put<int32_t>(result);
  out.put<uint64_t>(wire_handle(exec));
  out.put<uint64_t>(wire_handle(params.errNode_out));
  out.put<int32_t>(marshal::enum_bits(params.result_out));
  return result;
}

// cudaGraphGetNodes, cudaGraphGetRootNodes: no more nodes than a reply carries, however large
// the caller's array; the runtime nulls what it does not fill.
cudaError_t run_graph_nodes(Fn fn, WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const uint8_t wanted = in.get<uint8_t>();
  const uint64_t capacity = in.get<uint64_t>();
  in.expect_end();
  const bool with_array = (wanted & kNodesArray) != 0;
  const bool with_count = (wanted & kNodesCount) != 0;
  // An array of no room is still an array (the runtime writes nothing into it).
  const size_t room = with_array ? std::min(capacity, kMaxGraphNodes) : 0;
  std::vector<cudaGraphNode_t> nodes(std::max<size_t>(room, 1));
  size_t count = room;
  cudaError_t result = vet(graph);
  if (result == cudaSuccess) {
    auto* array = with_array ? nodes.data() : nullptr;
    size_t* counted = with_count ? &count : nullptr;
    result = fn == Fn::cudaGraphGetNodes ? ::cudaGraphGetNodes(graph, array, counted)
                                         : ::cudaGraphGetRootNodes(graph, array, counted);
  }
  out.put<int32_t>(result);
  if (result != cudaSuccess) return result;
  adopt_nodes(nodes.data(), std::min<size_t>(room, count), graph);
  out.put<uint64_t>(count);
  put_nodes(out, nodes.data(), room);
  return result;
}

// cudaGraphDebugDotPrint: into a file of the worker's, removed once read back. A null path is
// the runtime's to refuse.
cudaError_t run_dot_print(WireReader& in, WireWriter& out) {
  const auto graph = handle_from_wire<cudaGraph_t>(in.get<uint64_t>());
  const bool path_given = in.get<uint8_t>() != 0;
  const uint32_t flags = in.get<uint32_t>();
  in.expect_end();
  cudaError_t result = vet(graph);
  std::string contents;
  if (result == cudaSuccess && !path_given) {
    result = ::cudaGraphDebugDotPrint(graph, nullptr, flags);
  } else if (result == cudaSuccess) {
    const char* dir = std::getenv("TMPDIR");
    std::string path =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/gvirtus-graph-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
      result = cudaErrorUnknown;
    } else {
      result = ::cudaGraphDebugDotPrint(graph, path.c_str(), flags);
      if (result == cudaSuccess) {
        char buffer[1 << 16];
        ssize_t n;
        while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
          contents.append(buffer, static_cast<size_t>(n));
          if (contents.size() > kMaxDotBytes) break;
        }
        if (n < 0) result = cudaErrorUnknown;
        if (contents.size() > kMaxDotBytes) result = cudaErrorNotSupported;
      }
      ::close(fd);
      ::unlink(path.c_str());
    }
  }
  out.put<int32_t>(result);
  if (result == cudaSuccess) out.put_blob(contents.data(), contents.size());
  return result;
}

}  // namespace

bool run_graph_call(Fn fn, WireReader& in, WireWriter& out, cudaError_t& result) {
  switch (fn) {
    case Fn::cudaStreamGetCaptureInfo:
      result = run_capture_info(in, out);
      return true;
    case Fn::cudaGraphInstantiateWithParams:
      result = run_instantiate_with_params(in, out);
      return true;
    case Fn::cudaGraphGetNodes:
    case Fn::cudaGraphGetRootNodes:
      result = run_graph_nodes(fn, in, out);
      return true;
    case Fn::cudaGraphDebugDotPrint:
      result = run_dot_print(in, out);
      return true;
    default:
      return false;
  }
}

}  // namespace gvirtus::cudart
