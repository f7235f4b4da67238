#include "backend/services/conditional_handles.h"

#include "backend/services/rejections.h"

namespace gvirtus::services {

void ConditionalHandles::made(uint64_t handle, const void* graph) {
  std::lock_guard lock(mutex_);
  graphs_[handle] = graph;
}

int32_t ConditionalHandles::vet(uint64_t handle, const void* graph, int32_t status_ok,
                                int32_t invalid, const char* library) const {
  {
    std::lock_guard lock(mutex_);
    const auto it = graphs_.find(handle);
    if (it != graphs_.end() && it->second == graph) return status_ok;
  }
  return refuse(invalid, library, "conditional handle",
                reinterpret_cast<const void*>(static_cast<uintptr_t>(handle)),
                "not a handle this session made for the node's graph");
}

void ConditionalHandles::graph_gone(const void* graph) {
  std::lock_guard lock(mutex_);
  std::erase_if(graphs_, [&](const auto& entry) { return entry.second == graph; });
}

void ConditionalHandles::clear() {
  std::lock_guard lock(mutex_);
  graphs_.clear();
}

}  // namespace gvirtus::services
