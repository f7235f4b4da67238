// Graph calls of the client libcuda.so.1 written by hand (wire: common/driver_wire.h): the graph
// lives in the backend's driver; its nodes come back as the driver's handles. Each goes to the
// graph's backend in a pool.
#include <cuda.h>

#include <cstdio>
#include <string>

#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_remote_calls.h"
#include "frontend/route_scope.h"
#include "plugins/cuda/common/driver_wire.h"
#include "plugins/cuda/frontend/pool_routes.h"

namespace cr = gvirtus::cuda;

namespace gvirtus::cuda {
namespace {

// As the driver: without an array, the count; with one, up to *count nodes written, the rest of
// the array nulled and *count the number written.
CUresult graph_nodes(Fn fn, CUgraph graph, CUgraphNode* nodes, size_t* count_inout) {
  if (count_inout == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t capacity = nodes != nullptr ? *count_inout : 0;
  if (nodes != nullptr && capacity == 0) return CUDA_SUCCESS;  // nothing to write
  const stub::RouteScope route(pool_backend_of_handle("graph", graph));
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

// The parameters' upload stream travels as the handle it is, for the backend to vet; the
// instantiation's result and the node it failed at come back into the caller's struct.
extern "C" __attribute__((visibility("default"))) CUresult cuGraphInstantiateWithParams(
    CUgraphExec* phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  if (phGraphExec == nullptr || instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("graph", hGraph));
  CUgraphExec executable = nullptr;
  int32_t instantiated = CUDA_GRAPH_INSTANTIATE_ERROR;
  CUgraphNode failed_at = nullptr;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuGraphInstantiateWithParams,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraph);
        w.put<uint64_t>(instantiateParams->flags);
        gvirtus::marshal::put_value(w, instantiateParams->hUploadStream);
      },
      [&](gvirtus::WireReader& r) {
        executable = gvirtus::marshal::get_value<CUgraphExec>(r);
        instantiated = r.get<int32_t>();
        failed_at = gvirtus::marshal::get_value<CUgraphNode>(r);
      });
  // A result this header does not name (a newer backend driver's) is the general failure.
  const bool known = instantiated >= CUDA_GRAPH_INSTANTIATE_SUCCESS &&
                     instantiated <= CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED;
  instantiateParams->result_out =
      known ? static_cast<CUgraphInstantiateResult>(instantiated) : CUDA_GRAPH_INSTANTIATE_ERROR;
  instantiateParams->hErrNode_out = failed_at;
  if (result == CUDA_SUCCESS) {
    *phGraphExec = executable;
    cr::pool_note_handle("executable graph", executable);
  }
  return result;
}

// The backend's driver writes the description; the stub writes it at the caller's path, on this
// machine, as the driver would (CUDA_ERROR_OPERATING_SYSTEM when it cannot).
extern "C" __attribute__((visibility("default"))) CUresult cuGraphDebugDotPrint(
    CUgraph hGraph, const char* path, unsigned int flags) {
  if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const gvirtus::stub::RouteScope route(cr::pool_backend_of_handle("graph", hGraph));
  std::string text;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuGraphDebugDotPrint,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraph);
        w.put<uint32_t>(flags);
      },
      [&](gvirtus::WireReader& r) { text = r.get_string(cr::kMaxDotBytes); });
  if (result != CUDA_SUCCESS) return result;
  std::FILE* file = std::fopen(path, "wb");
  if (file == nullptr) return CUDA_ERROR_OPERATING_SYSTEM;
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  return std::fclose(file) == 0 && written ? CUDA_SUCCESS : CUDA_ERROR_OPERATING_SYSTEM;
}

// The per-thread default stream variant: a null upload stream is the thread's own.
extern "C" __attribute__((visibility("default"))) CUresult cuGraphInstantiateWithParams_ptsz(
    CUgraphExec* phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS* instantiateParams) {
  if (instantiateParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_GRAPH_INSTANTIATE_PARAMS own = *instantiateParams;
  if (own.hUploadStream == nullptr) own.hUploadStream = CU_STREAM_PER_THREAD;
  const CUresult result = cuGraphInstantiateWithParams(phGraphExec, hGraph, &own);
  instantiateParams->result_out = own.result_out;
  instantiateParams->hErrNode_out = own.hErrNode_out;
  return result;
}
