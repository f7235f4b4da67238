// Stream capture and graphs in the stub (rows 200-217 of cudart_calls.txt; wire:
// common/graph_wire.h). The backend's runtime captures what a stream receives, in order: kernel
// launches, memsets, device-to-device copies, event records and waits, graph launches are
// forwarded as they are (sent ahead where they would be anyway) and captured there. Graphs and
// executable graphs live in the backend's process; the stub hands out the runtime's handles, which
// the backend vets as the session's own.
//
// The stub keeps which streams it began capturing, because some of its own work cannot happen in
// the middle of a capture: a copy from or to the client's ordinary memory travels in the request
// or the reply, so the backend copies from or into a transient buffer of its own, which a captured
// copy would read or write each time the graph runs. Such a copy is refused as CUDA refuses an
// operation a capture cannot hold (refuse_in_capture): the backend's runtime is asked to wait for
// the stream, which it refuses with cudaErrorStreamCaptureUnsupported and invalidates the
// capture, exactly as the illegal operation would natively (its error is the thread's last error,
// cudaStreamEndCapture then reports cudaErrorStreamCaptureInvalidated).
//
// cudaStreamGetCaptureInfo's dependencies and edge data point into memory the runtime owns until
// the next call; the stub keeps them per thread, valid until the thread's next
// cudaStreamGetCaptureInfo.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/call_marshal.h"
#include "common/capturing_streams.h"
#include "plugins/cudart/common/graph_node_wire.h"
#include "plugins/cudart/common/graph_wire.h"
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

auto& capturing_streams = *new CapturingStreams<cudaStream_t>;  // never destroyed: exit handlers

// What the thread's last cudaStreamGetCaptureInfo gave out.
thread_local std::vector<cudaGraphNode_t> capture_dependencies;
thread_local std::vector<cudaGraphEdgeData> capture_edges;

std::vector<cudaGraphNode_t> get_nodes(WireReader& r) {
  const uint32_t n = r.get<uint32_t>();
  if (n > kMaxGraphNodes) raise(ErrorKind::kInvalidInput, "too many graph nodes in a reply");
  std::vector<cudaGraphNode_t> nodes(n);
  for (auto& node : nodes) node = handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
  return nodes;
}

cudaError_t capture_info(cudaStream_t stream, cudaStreamCaptureStatus* status,
                         unsigned long long* id, cudaGraph_t* graph,
                         const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edges,
                         size_t* count) {
  uint8_t wanted = 0;
  if (status != nullptr) wanted |= kCaptureStatus;
  if (id != nullptr) wanted |= kCaptureId;
  if (graph != nullptr) wanted |= kCaptureGraph;
  if (dependencies != nullptr) wanted |= kCaptureDependencies;
  if (edges != nullptr) wanted |= kCaptureEdges;
  if (count != nullptr) wanted |= kCaptureCount;
  return remote_sync(
      Fn::cudaStreamGetCaptureInfo,
      [&](WireWriter& w) {
        w.put<uint64_t>(wire_handle(stream));
        w.put<uint8_t>(wanted);
        w.put<int32_t>(status != nullptr ? gvirtus::marshal::enum_bits(*status)
                                         : static_cast<int32_t>(cudaStreamCaptureStatusNone));
        w.put<uint64_t>(id != nullptr ? *id : 0);
        w.put<uint64_t>(wire_handle(graph != nullptr ? *graph : nullptr));
        w.put<uint64_t>(count != nullptr ? *count : 0);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;               // a failure: the outputs stay as they were
        const int32_t got_status = r.get<int32_t>();  // the runtime's, or the caller's own bits
        const uint64_t got_id = r.get<uint64_t>();
        const auto got_graph = handle_from_wire<cudaGraph_t>(r.get<uint64_t>());
        const uint64_t got_count = r.get<uint64_t>();
        const uint8_t dependencies_state = r.get<uint8_t>();
        std::vector<cudaGraphNode_t> nodes = get_nodes(r);
        const uint8_t edges_state = r.get<uint8_t>();
        const uint32_t m = r.get<uint32_t>();
        if (m > kMaxGraphNodes) raise(ErrorKind::kInvalidInput, "too many graph edges in a reply");
        std::vector<cudaGraphEdgeData> edge_data(m);
        for (auto& e : edge_data) {
          const auto raw = r.get_raw(sizeof e);
          std::memcpy(&e, raw.data(), sizeof e);
        }
        if (status != nullptr) std::memcpy(status, &got_status, sizeof got_status);
        if (id != nullptr) *id = got_id;
        if (graph != nullptr) *graph = got_graph;
        if (count != nullptr) *count = got_count;
        if (dependencies != nullptr && dependencies_state != kPointerUntouched) {
          capture_dependencies = std::move(nodes);
          capture_dependencies.reserve(1);  // an array of no entries is still not null
          *dependencies =
              dependencies_state == kPointerArray ? capture_dependencies.data() : nullptr;
        }
        if (edges != nullptr && edges_state != kPointerUntouched) {
          capture_edges = std::move(edge_data);
          capture_edges.reserve(1);
          *edges = edges_state == kPointerArray ? capture_edges.data() : nullptr;
        }
      });
}

// cudaGraphGetNodes, cudaGraphGetRootNodes: as the runtime, without an array the count; with one,
// up to *count nodes written, the rest of the array nulled.
cudaError_t graph_nodes(Fn fn, cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  uint8_t wanted = 0;
  if (nodes != nullptr) wanted |= kNodesArray;
  if (count != nullptr) wanted |= kNodesCount;
  const uint64_t capacity = nodes != nullptr && count != nullptr ? *count : 0;
  return remote_sync(
      fn,
      [&](WireWriter& w) {
        w.put<uint64_t>(wire_handle(graph));
        w.put<uint8_t>(wanted);
        w.put<uint64_t>(capacity);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;
        const uint64_t got_count = r.get<uint64_t>();
        const std::vector<cudaGraphNode_t> got = get_nodes(r);
        if (got.size() > capacity) raise(ErrorKind::kInvalidInput, "more graph nodes than asked");
        if (nodes != nullptr) {
          std::memcpy(nodes, got.data(), got.size() * sizeof(cudaGraphNode_t));
        }
        if (count != nullptr) *count = got_count;
      });
}

}  // namespace

bool capturing(cudaStream_t stream) {
  return capturing_streams.capturing(stream, {nullptr, cudaStreamLegacy}, [](cudaStream_t asked) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(asked, &status) == cudaSuccess &&
           status != cudaStreamCaptureStatusNone;
  });
}

std::optional<cudaError_t> refuse_in_capture(cudaStream_t stream) {
  const cudaError_t result = cudaStreamSynchronize(stream);
  if (result == cudaSuccess) return std::nullopt;
  return result;
}

}  // namespace gvirtus::cudart

namespace cr = gvirtus::cudart;

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                                         cudaStreamCaptureMode mode) {
  const cudaError_t result = cr::remote::cudaStreamBeginCapture(stream, mode);
  if (result == cudaSuccess) {
    cr::capturing_streams.began(stream);
  }
  return result;
}

namespace {

using gvirtus::WireReader;
using gvirtus::WireWriter;

// A node list and its edge data on the wire (backend/capture_dependencies.cpp).
void put_node_list(WireWriter& w, const cudaGraphNode_t* nodes, const cudaGraphEdgeData* edges,
                   size_t n) {
  w.put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) w.put<uint64_t>(cr::wire_handle(nodes[i]));
  w.put_bool(edges != nullptr);
  if (edges != nullptr && n > 0) w.put_raw(edges, n * sizeof(cudaGraphEdgeData));
}

}  // namespace

// Capturing into a graph of the application's: the capture is the stub's to know of, as
// cudaStreamBeginCapture's.
GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamBeginCaptureToGraph(
    cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
    const cudaGraphEdgeData* dependencyData, size_t numDependencies, cudaStreamCaptureMode mode) {
  if (graph == nullptr || (numDependencies > 0 && dependencies == nullptr) ||
      numDependencies > cr::kMaxNodeEdges) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaStreamBeginCaptureToGraph,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(stream));
        w.put<uint64_t>(cr::wire_handle(graph));
        put_node_list(w, dependencies, dependencyData, numDependencies);
        w.put<uint32_t>(static_cast<uint32_t>(gvirtus::marshal::enum_bits(mode)));
      },
      [](WireReader&) {});
  if (result == cudaSuccess) {
    cr::capturing_streams.began(stream);
  }
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(
    cudaStream_t stream, cudaGraphNode_t* dependencies, const cudaGraphEdgeData* dependencyData,
    size_t numDependencies, unsigned int flags) {
  if ((numDependencies > 0 && dependencies == nullptr) || numDependencies > cr::kMaxNodeEdges) {
    return cr::refuse_locally(cudaErrorInvalidValue);
  }
  return cr::remote_sync(
      cr::Fn::cudaStreamUpdateCaptureDependencies,
      [&](WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(stream));
        put_node_list(w, dependencies, dependencyData, numDependencies);
        w.put<uint32_t>(flags);
      },
      [](WireReader&) {});
}

// Whatever the backend answers, the stream's capture is over (the runtime ends it, invalidated
// or not), unless the stream was not capturing at all.
GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  const cudaError_t result = cr::remote::cudaStreamEndCapture(stream, pGraph);
  cr::capturing_streams.ended(stream);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaStreamGetCaptureInfo(
    cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out, unsigned long long* id_out,
    cudaGraph_t* graph_out, const cudaGraphNode_t** dependencies_out,
    const cudaGraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return cr::capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                          edgeData_out, numDependencies_out);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes,
                                                    size_t* numNodes) {
  return cr::graph_nodes(cr::Fn::cudaGraphGetNodes, graph, nodes, numNodes);
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph,
                                                        cudaGraphNode_t* pRootNodes,
                                                        size_t* pNumRootNodes) {
  return cr::graph_nodes(cr::Fn::cudaGraphGetRootNodes, graph, pRootNodes, pNumRootNodes);
}

// The parameters' upload stream is vetted by the backend when the flags ask for an upload. The
// outputs travel both ways (the runtime sets the error node and the instantiation result on a
// failure too), so what the runtime leaves alone stays as the caller left it.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphInstantiateWithParams(
    cudaGraphExec_t* pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams* instantiateParams) {
  cudaGraphInstantiateParams none{};
  cudaGraphInstantiateParams& params = instantiateParams != nullptr ? *instantiateParams : none;
  return cr::remote_sync(
      cr::Fn::cudaGraphInstantiateWithParams,
      [&](gvirtus::WireWriter& w) {
        w.put<uint8_t>(pGraphExec != nullptr);
        w.put<uint64_t>(cr::wire_handle(pGraphExec != nullptr ? *pGraphExec : nullptr));
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint8_t>(instantiateParams != nullptr);
        w.put<uint64_t>(params.flags);
        w.put<uint64_t>(cr::wire_handle(params.uploadStream));
        w.put<uint64_t>(cr::wire_handle(params.errNode_out));
        w.put<int32_t>(gvirtus::marshal::enum_bits(params.result_out));  // any bits the caller left
      },
      [&](gvirtus::WireReader& r) {
        const auto exec = cr::handle_from_wire<cudaGraphExec_t>(r.get<uint64_t>());
        const auto error_node = cr::handle_from_wire<cudaGraphNode_t>(r.get<uint64_t>());
        const int32_t outcome = r.get<int32_t>();  // the runtime's value, or the caller's own bits
        if (pGraphExec != nullptr) *pGraphExec = exec;
        params.errNode_out = error_node;
        static_assert(sizeof params.result_out == sizeof outcome);
        std::memcpy(&params.result_out, &outcome, sizeof outcome);
      });
}

// The per-thread default stream form: a null upload stream is the calling thread's own.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t* pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams* instantiateParams) {
  if (instantiateParams == nullptr || instantiateParams->uploadStream != nullptr) {
    return cudaGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
  }
  instantiateParams->uploadStream = cudaStreamPerThread;
  const cudaError_t result = cudaGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
  instantiateParams->uploadStream = nullptr;
  return result;
}

// The runtime writes the DOT description on the backend (graph_wire.h); the stub writes what
// comes back at the caller's path. A path the client cannot write is cudaErrorInvalidValue.
GVIRTUS_CUDART_EXPORT cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path,
                                                         unsigned int flags) {
  std::string contents;
  const cudaError_t result = cr::remote_sync(
      cr::Fn::cudaGraphDebugDotPrint,
      [&](gvirtus::WireWriter& w) {
        w.put<uint64_t>(cr::wire_handle(graph));
        w.put<uint8_t>(path != nullptr);
        w.put<uint32_t>(flags);
      },
      [&](gvirtus::WireReader& r) {
        if (r.remaining() == 0) return;
        const auto blob = r.get_blob(cr::kMaxDotBytes);
        contents.assign(reinterpret_cast<const char*>(blob.data()), blob.size());
      });
  if (result != cudaSuccess || path == nullptr) return result;
  std::FILE* file = std::fopen(path, "wb");
  if (file == nullptr) return cr::record_local_error(cudaErrorInvalidValue);
  const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  if (std::fclose(file) != 0 || !written) return cr::record_local_error(cudaErrorInvalidValue);
  return cudaSuccess;
}
