// Stream capture queries in the client libcuda.so.1. Capture itself (cuStreamBeginCapture and
// graphs) is not remoted yet, so no stream of a session is ever capturing: cuStreamGetCaptureInfo
// asks the backend's driver whether the stream is (which also vets the stream) and describes "not
// capturing" itself. Should the backend ever say a stream is capturing, the stub cannot describe
// that capture's graph and says so (CUDA_ERROR_NOT_SUPPORTED) rather than inventing one.
#include <cuda.h>

#include "cuda_remote_calls.h"

namespace gvirtus::cuda {
namespace {

CUresult capture_info(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id,
                      CUgraph* graph, const CUgraphNode** dependencies,
                      const CUgraphEdgeData** edges, size_t* count) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUstreamCaptureStatus now = CU_STREAM_CAPTURE_STATUS_NONE;
  if (const CUresult r = cuStreamIsCapturing(stream, &now); r != CUDA_SUCCESS) return r;
  if (now != CU_STREAM_CAPTURE_STATUS_NONE) return CUDA_ERROR_NOT_SUPPORTED;
  *status = now;
  // The rest describe a capture in progress: none.
  if (id != nullptr) *id = 0;
  if (graph != nullptr) *graph = nullptr;
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (count != nullptr) *count = 0;
  return CUDA_SUCCESS;
}

// The per-thread default stream variants: their null stream is the thread's own.
CUstream per_thread(CUstream stream) {
  return stream != nullptr ? stream : CU_STREAM_PER_THREAD;
}

}  // namespace
}  // namespace gvirtus::cuda

namespace cr = gvirtus::cuda;

#define GVIRTUS_EXPORT extern "C" __attribute__((visibility("default")))

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
