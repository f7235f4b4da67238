// Stream capture in the client libcuda.so.1. The backend's driver captures what a stream
// receives, in order (cuStreamBeginCapture and cuStreamEndCapture are remoted); the stub keeps
// which streams it began capturing, and while one is, asks the backend's driver about any other
// stream (it may have joined a capture by waiting for an event recorded in it), because some of
// its own work cannot happen during a capture:
// waiting for a stream (device-to-host copies land in the client's memory after it) would end
// the capture on the backend. Those are refused with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the driver's error for operations a capture cannot hold,
// and the backend's capture is invalidated, as the refusal invalidates it natively
// (refuse_in_capture).
//
// cuStreamGetCaptureInfo asks the backend's driver (custom row 256, wire: common/driver_wire.h):
// status and id, and while capturing the capture's graph and its dependency nodes, the backend
// driver's values (calls accept them once cuStreamEndCapture has handed the graph over). The
// arrays are the stub's copies, per stream, valid until the next such call for the stream (the
// driver's are valid until the stream's next call). Outside a capture only the status is
// written, as the driver leaves the rest as they were.
#include <cuda.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "common/call_marshal.h"
#include "common/capturing_streams.h"
#include "common/error.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/common/graph_node_wire.h"
#include "plugins/cuda/frontend/per_thread.h"
#include "plugins/cuda/frontend/pool_routes.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

auto& capturing_streams = *new CapturingStreams<CUstream>;  // never destroyed: exit handlers ask
std::mutex& dependencies_mutex = *new std::mutex;           // guards dependencies_handed_out()

// The dependency arrays cuStreamGetCaptureInfo last handed out for each stream.
struct CaptureDependencies {
  std::vector<CUgraphNode> nodes;
  std::vector<CUgraphEdgeData> edges;
};
std::map<CUstream, CaptureDependencies>& dependencies_handed_out() {
  static auto* const by_stream = new std::map<CUstream, CaptureDependencies>;  // exit handlers
  return *by_stream;
}

CUresult capture_info(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id,
                      CUgraph* graph, const CUgraphNode** dependencies,
                      const CUgraphEdgeData** edges, size_t* count) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (edges != nullptr && dependencies == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (dependencies != nullptr && count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const uint8_t wanted =
      (dependencies != nullptr ? kShapeNodes : 0) | (edges != nullptr ? kShapeEdges : 0);
  CUstreamCaptureStatus now = CU_STREAM_CAPTURE_STATUS_NONE;
  uint64_t capture_id = 0;
  CUgraph capture_graph = nullptr;
  uint64_t driver_count = 0;
  bool edges_given = false;
  CaptureDependencies got;
  const CUresult result = remote_sync(
      Fn::cuStreamGetCaptureInfo_v3,
      [&](WireWriter& w) {
        marshal::put_value(w, stream);
        w.put<uint8_t>(wanted);
      },
      [&](WireReader& r) {
        if (r.remaining() == 0) return;  // a failure: nothing written
        now = static_cast<CUstreamCaptureStatus>(r.get<uint32_t>());
        if (now == CU_STREAM_CAPTURE_STATUS_NONE) return;
        capture_id = r.get<uint64_t>();
        capture_graph = marshal::get_value<CUgraph>(r);
        driver_count = r.get<uint64_t>();
        const uint32_t n = r.get<uint32_t>();
        if (n > driver_count || (dependencies == nullptr && n != 0)) {
          raise(ErrorKind::kInvalidInput, "more capture dependencies than the driver counted");
        }
        got.nodes.resize(n);
        for (auto& node : got.nodes) node = marshal::get_value<CUgraphNode>(r);
        edges_given = r.get_bool();
        if (edges_given) {
          if (edges == nullptr || n == 0) {
            raise(ErrorKind::kInvalidInput, "capture edge data that were not asked for");
          }
          got.edges.resize(n);
          std::memcpy(got.edges.data(), r.get_raw(n * sizeof(CUgraphEdgeData)).data(),
                      n * sizeof(CUgraphEdgeData));
        }
      });
  if (result != CUDA_SUCCESS) return result;
  *status = now;
  if (now == CU_STREAM_CAPTURE_STATUS_NONE) return CUDA_SUCCESS;
  if (id != nullptr) *id = capture_id;
  if (graph != nullptr) *graph = capture_graph;
  if (count != nullptr) *count = dependencies != nullptr ? got.nodes.size() : driver_count;
  if (dependencies == nullptr) return CUDA_SUCCESS;
  std::lock_guard lock(dependencies_mutex);
  CaptureDependencies& kept = dependencies_handed_out()[stream];
  kept = std::move(got);
  *dependencies = kept.nodes.empty() ? nullptr : kept.nodes.data();
  if (edges != nullptr) *edges = edges_given ? kept.edges.data() : nullptr;
  return CUDA_SUCCESS;
}

}  // namespace

bool capturing(CUstream stream) {
  return capturing_streams.capturing(stream, {nullptr, CU_STREAM_LEGACY}, [](CUstream asked) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    return cuStreamIsCapturing(asked, &status) == CUDA_SUCCESS &&
           status != CU_STREAM_CAPTURE_STATUS_NONE;
  });
}

CUresult refuse_in_capture(CUstream stream) {
  (void)cuStreamQuery(stream);  // refused by the backend's driver, which invalidates the capture
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

GVIRTUS_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  const CUresult result = cr::remote::cuStreamBeginCapture_v2(hStream, mode);
  if (result == CUDA_SUCCESS) {
    cr::capturing_streams.began(hStream);
  }
  return result;
}

// Whatever the backend answers, the stream's capture is over (the driver ends it, invalidated
// or not).
GVIRTUS_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  const CUresult result = cr::remote::cuStreamEndCapture(hStream, phGraph);
  cr::capturing_streams.ended(hStream);
  std::lock_guard lock(cr::dependencies_mutex);
  cr::dependencies_handed_out().erase(hStream);  // they described the capture
  return result;
}

GVIRTUS_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return cuStreamBeginCapture_v2(cr::per_thread(hStream), mode);
}

GVIRTUS_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return cuStreamEndCapture(cr::per_thread(hStream), phGraph);
}

// CUDA 11.3's form: status and id. cuda.h maps the name to _v3 by a macro.
#undef cuStreamGetCaptureInfo
GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo(CUstream hStream,
                                               CUstreamCaptureStatus* captureStatus_out,
                                               cuuint64_t* id_out) {
  return cr::capture_info(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr);
}

GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream,
                                                    CUstreamCaptureStatus* captureStatus_out,
                                                    cuuint64_t* id_out) {
  return cr::capture_info(cr::per_thread(hStream), captureStatus_out, id_out, nullptr, nullptr,
                          nullptr, nullptr);
}

// CUDA 11.3's second form: with the capture's graph and dependencies.
GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream,
                                                  CUstreamCaptureStatus* captureStatus_out,
                                                  cuuint64_t* id_out, CUgraph* graph_out,
                                                  const CUgraphNode** dependencies_out,
                                                  size_t* numDependencies_out) {
  return cr::capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr,
                          numDependencies_out);
}

GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                       CUstreamCaptureStatus* captureStatus_out,
                                                       cuuint64_t* id_out, CUgraph* graph_out,
                                                       const CUgraphNode** dependencies_out,
                                                       size_t* numDependencies_out) {
  return cr::capture_info(cr::per_thread(hStream), captureStatus_out, id_out, graph_out,
                          dependencies_out, nullptr, numDependencies_out);
}

// CUDA 12.3's form: with the dependencies' edge data.
GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                                  CUstreamCaptureStatus* captureStatus_out,
                                                  cuuint64_t* id_out, CUgraph* graph_out,
                                                  const CUgraphNode** dependencies_out,
                                                  const CUgraphEdgeData** edgeData_out,
                                                  size_t* numDependencies_out) {
  return cr::capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                          edgeData_out, numDependencies_out);
}

GVIRTUS_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                       CUstreamCaptureStatus* captureStatus_out,
                                                       cuuint64_t* id_out, CUgraph* graph_out,
                                                       const CUgraphNode** dependencies_out,
                                                       const CUgraphEdgeData** edgeData_out,
                                                       size_t* numDependencies_out) {
  return cr::capture_info(cr::per_thread(hStream), captureStatus_out, id_out, graph_out,
                          dependencies_out, edgeData_out, numDependencies_out);
}

// Capturing into a graph of the application's (row 272) and a capture's dependencies (row 273;
// wire: backend/capture_dependencies.h).
namespace gvirtus::cuda {
namespace {

bool put_node_list(WireWriter& w, const CUgraphNode* nodes, const CUgraphEdgeData* edges,
                   size_t n) {
  if ((n > 0 && nodes == nullptr) || n > kMaxNodeEdges) return false;
  w.put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) marshal::put_value(w, nodes[i]);
  w.put_bool(edges != nullptr);
  if (edges != nullptr && n > 0) w.put_raw(edges, n * sizeof(CUgraphEdgeData));
  return true;
}

CUresult begin_capture_to_graph(CUstream stream, CUgraph graph, const CUgraphNode* dependencies,
                                const CUgraphEdgeData* edges, size_t n, CUstreamCaptureMode mode) {
  if ((n > 0 && dependencies == nullptr) || n > kMaxNodeEdges) return CUDA_ERROR_INVALID_VALUE;
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
  const CUresult result = remote_sync(
      Fn::cuStreamBeginCaptureToGraph,
      [&](WireWriter& w) {
        marshal::put_value(w, stream);
        marshal::put_value(w, graph);
        put_node_list(w, dependencies, edges, n);
        w.put<uint32_t>(static_cast<uint32_t>(marshal::enum_bits(mode)));
      },
      [](WireReader&) {});
  if (result == CUDA_SUCCESS) {
    capturing_streams.began(stream);
  }
  return result;
}

CUresult update_dependencies(CUstream stream, CUgraphNode* nodes, const CUgraphEdgeData* edges,
                             size_t n, unsigned int flags) {
  if ((n > 0 && nodes == nullptr) || n > kMaxNodeEdges) return CUDA_ERROR_INVALID_VALUE;
  return remote_sync(
      Fn::cuStreamUpdateCaptureDependencies_v2,
      [&](WireWriter& w) {
        marshal::put_value(w, stream);
        put_node_list(w, nodes, edges, n);
        w.put<uint32_t>(flags);
      },
      [](WireReader&) {});
}

}  // namespace
}  // namespace gvirtus::cuda

#undef cuStreamBeginCaptureToGraph
#undef cuStreamUpdateCaptureDependencies
#undef cuStreamUpdateCaptureDependencies_v2

GVIRTUS_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                                    const CUgraphNode* dependencies,
                                                    const CUgraphEdgeData* dependencyData,
                                                    size_t numDependencies,
                                                    CUstreamCaptureMode mode) {
  return cr::begin_capture_to_graph(hStream, hGraph, dependencies, dependencyData, numDependencies,
                                    mode);
}

GVIRTUS_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                         const CUgraphNode* dependencies,
                                                         const CUgraphEdgeData* dependencyData,
                                                         size_t numDependencies,
                                                         CUstreamCaptureMode mode) {
  return cr::begin_capture_to_graph(cr::per_thread(hStream), hGraph, dependencies, dependencyData,
                                    numDependencies, mode);
}

GVIRTUS_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream,
                                                             CUgraphNode* dependencies,
                                                             const CUgraphEdgeData* dependencyData,
                                                             size_t numDependencies,
                                                             unsigned int flags) {
  return cr::update_dependencies(hStream, dependencies, dependencyData, numDependencies, flags);
}

GVIRTUS_EXPORT CUresult cuStreamUpdateCaptureDependencies_v2_ptsz(
    CUstream hStream, CUgraphNode* dependencies, const CUgraphEdgeData* dependencyData,
    size_t numDependencies, unsigned int flags) {
  return cr::update_dependencies(cr::per_thread(hStream), dependencies, dependencyData,
                                 numDependencies, flags);
}

// CUDA 11.3's form, without edge data: cuda.h names the current one by this name.
GVIRTUS_EXPORT CUresult cuStreamUpdateCaptureDependencies(CUstream hStream,
                                                          CUgraphNode* dependencies,
                                                          size_t numDependencies,
                                                          unsigned int flags) {
  return cr::update_dependencies(hStream, dependencies, nullptr, numDependencies, flags);
}

GVIRTUS_EXPORT CUresult cuStreamUpdateCaptureDependencies_ptsz(CUstream hStream,
                                                               CUgraphNode* dependencies,
                                                               size_t numDependencies,
                                                               unsigned int flags) {
  return cr::update_dependencies(cr::per_thread(hStream), dependencies, nullptr, numDependencies,
                                 flags);
}
