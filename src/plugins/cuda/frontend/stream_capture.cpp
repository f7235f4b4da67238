// Stream capture in the client libcuda.so.1. The backend's driver captures what a stream
// receives, in order (cuStreamBeginCapture and cuStreamEndCapture are remoted); the stub keeps
// which streams it began capturing, because some of its own work cannot happen during a capture:
// waiting for a stream (host functions run on the client after it; device-to-host copies land in
// the client's memory) would end the capture on the backend. Those are refused with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the driver's error for operations a capture cannot hold,
// and the backend's capture is invalidated, as the refusal invalidates it natively
// (refuse_in_capture).
//
// cuStreamGetCaptureInfo asks the backend's driver whether the stream is capturing (which also
// vets the stream). The capture's graph and its dependency nodes live in the backend's process:
// when the caller asks for them during a capture the stub says it cannot give them
// (CUDA_ERROR_NOT_SUPPORTED) rather than inventing them; status and id are answered.
#include <cuda.h>

#include <mutex>
#include <set>

#include "cuda_remote_calls.h"
#include "plugins/cuda/frontend/per_thread.h"
#include "plugins/cuda/frontend/stream_capture.h"

namespace gvirtus::cuda {
namespace {

std::mutex& capturing_mutex = *new std::mutex;
auto& capturing_streams = *new std::set<CUstream>;  // never destroyed: exit handlers may ask

CUresult capture_info(CUstream stream, CUstreamCaptureStatus* status, cuuint64_t* id,
                      CUgraph* graph, const CUgraphNode** dependencies,
                      const CUgraphEdgeData** edges, size_t* count) {
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUstreamCaptureStatus now = CU_STREAM_CAPTURE_STATUS_NONE;
  if (const CUresult r = cuStreamIsCapturing(stream, &now); r != CUDA_SUCCESS) return r;
  if (now != CU_STREAM_CAPTURE_STATUS_NONE) {
    if (graph != nullptr || dependencies != nullptr || edges != nullptr || count != nullptr) {
      return CUDA_ERROR_NOT_SUPPORTED;  // the backend's objects: see above
    }
    *status = now;
    if (id != nullptr) {
      unsigned long long stream_id = 0;  // unique per capture on the driver; the stream's here
      if (const CUresult r = cuStreamGetId(stream, &stream_id); r != CUDA_SUCCESS) return r;
      *id = stream_id;
    }
    return CUDA_SUCCESS;
  }
  *status = now;
  // The rest describe a capture in progress: none.
  if (id != nullptr) *id = 0;
  if (graph != nullptr) *graph = nullptr;
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (count != nullptr) *count = 0;
  return CUDA_SUCCESS;
}

}  // namespace

bool capturing(CUstream stream) {
  std::lock_guard lock(capturing_mutex);
  return capturing_streams.count(stream) != 0;
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
    std::lock_guard lock(cr::capturing_mutex);
    cr::capturing_streams.insert(hStream);
  }
  return result;
}

// Whatever the backend answers, the stream's capture is over (the driver ends it, invalidated
// or not).
GVIRTUS_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  const CUresult result = cr::remote::cuStreamEndCapture(hStream, phGraph);
  std::lock_guard lock(cr::capturing_mutex);
  cr::capturing_streams.erase(hStream);
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
