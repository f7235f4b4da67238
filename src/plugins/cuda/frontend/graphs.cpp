// Questions about graphs in the client libcuda.so.1 (wire: common/driver_wire.h). The graph lives
// in the backend's driver; its nodes come back as the driver's handles.
#include <cuda.h>

#include "common/call_marshal.h"
#include "common/error.h"
#include "cuda_remote_calls.h"
#include "plugins/cuda/common/driver_wire.h"

namespace cr = gvirtus::cuda;

// As the driver: without an array, the count; with one, up to *numNodes nodes written, the rest
// of the array nulled and *numNodes the number written.
extern "C" __attribute__((visibility("default"))) CUresult cuGraphGetNodes(CUgraph hGraph,
                                                                           CUgraphNode* nodes,
                                                                           size_t* numNodes) {
  if (numNodes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const uint64_t capacity = nodes != nullptr ? *numNodes : 0;
  if (nodes != nullptr && capacity == 0) return CUDA_SUCCESS;  // nothing to write
  uint64_t count = 0;
  const CUresult result = cr::remote_sync(
      cr::Fn::cuGraphGetNodes,
      [&](gvirtus::WireWriter& w) {
        gvirtus::marshal::put_value(w, hGraph);
        w.put<uint64_t>(capacity);
      },
      [&](gvirtus::WireReader& r) {
        count = r.get<uint64_t>();
        if (capacity == 0) return;
        const uint32_t n = r.get<uint32_t>();
        if (n > capacity || n > count) {
          gvirtus::raise(gvirtus::ErrorKind::kInvalidInput, "more graph nodes than asked for");
        }
        for (uint32_t i = 0; i < n; ++i) {
          nodes[i] = gvirtus::marshal::get_value<CUgraphNode>(r);
        }
        for (uint64_t i = n; i < capacity; ++i) nodes[i] = nullptr;
        count = n;
      });
  if (result == CUDA_SUCCESS) *numNodes = count;
  return result;
}
