// The conditional handles a backend session made (cuGraphConditionalHandleCreate,
// cudaGraphConditionalHandleCreate), each with the graph it was made for: a conditional node may
// name only a handle the session made for the node's own graph - any other value reaches the
// library never (a shared backend service; the cuda and cudart plugins each keep one).
//
// Thread affinity: locked (a session's executors run on several threads).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace gvirtus::services {

class ConditionalHandles {
 public:
  void made(uint64_t handle, const void* graph);
  // `status_ok` when `handle` is one made for `graph`; otherwise `invalid`, refused in the
  // library's name (services::refuse says why).
  int32_t vet(uint64_t handle, const void* graph, int32_t status_ok, int32_t invalid,
              const char* library) const;
  // Forgets the handles of `graph` (destroyed).
  void graph_gone(const void* graph);
  void clear();

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, const void*> graphs_;  // handle -> its graph
};

}  // namespace gvirtus::services
