// User objects on the simulated device: an object counts its references, the caller's and its
// graphs' (a graph's copies - clones, instantiations, child nodes' graphs - take references of
// their own, as the driver's do), and runs its destructor as soon as the last one goes, on the
// releasing thread (the driver runs it later, on a thread of its own; a destructor may not wait
// for it either way: CU_USER_OBJECT_NO_DESTRUCTOR_SYNC). A release of more references than
// the caller or the graph holds is CUDA_ERROR_INVALID_VALUE, where the driver's behaviour is
// undefined.
#include <climits>
#include <memory>

#include "state.h"

namespace sim = gvirtus::simulated;

namespace {

struct UserObject {
  void* ptr;
  CUhostFn destroy;
  uint64_t references;  // all of them: the callers' and the graphs'
  uint64_t callers;     // the callers'
};

// Under the state's lock (every export runs in guarded(); graphs are destroyed under it).
std::map<CUuserObject, std::unique_ptr<UserObject>>& objects() {
  static auto* const kept = new std::map<CUuserObject, std::unique_ptr<UserObject>>;
  return *kept;
}

UserObject* find(CUuserObject handle) {
  const auto found = objects().find(handle);
  return found != objects().end() ? found->second.get() : nullptr;
}

bool valid_count(unsigned int count) {
  return count >= 1 && count <= INT_MAX;
}

void drop(CUuserObject handle, uint64_t count) {
  UserObject* object = find(handle);
  if (object == nullptr) return;
  object->references -= std::min(count, object->references);
  if (object->references != 0) return;
  const auto destroy = object->destroy;
  void* const ptr = object->ptr;
  objects().erase(handle);
  destroy(ptr);
}

}  // namespace

namespace gvirtus::simulated {

void retain_user_objects(const std::map<CUuserObject, uint64_t>& references) {
  for (const auto& [handle, count] : references) {
    if (UserObject* object = find(handle)) object->references += count;
  }
}

void release_user_objects(const std::map<CUuserObject, uint64_t>& references) {
  for (const auto& [handle, count] : references) drop(handle, count);
}

}  // namespace gvirtus::simulated

GVIRTUS_SIMULATED_EXPORT CUresult cuUserObjectCreate(CUuserObject* object_out, void* ptr,
                                                     CUhostFn destroy, unsigned int initialRefcount,
                                                     unsigned int flags) {
  return sim::guarded([&](sim::State&) {
    if (object_out == nullptr || destroy == nullptr || !valid_count(initialRefcount) ||
        flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    auto object =
        std::make_unique<UserObject>(UserObject{ptr, destroy, initialRefcount, initialRefcount});
    const auto handle = reinterpret_cast<CUuserObject>(object.get());
    objects().emplace(handle, std::move(object));
    *object_out = handle;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  return sim::guarded([&](sim::State&) {
    UserObject* o = find(object);
    if (o == nullptr || !valid_count(count)) return CUDA_ERROR_INVALID_VALUE;
    o->references += count;
    o->callers += count;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  return sim::guarded([&](sim::State&) {
    UserObject* o = find(object);
    if (o == nullptr || !valid_count(count) || o->callers < count) return CUDA_ERROR_INVALID_VALUE;
    o->callers -= count;
    drop(object, count);
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object,
                                                          unsigned int count, unsigned int flags) {
  return sim::guarded([&](sim::State& s) {
    sim::Graph* g = sim::find_graph(s, graph);
    UserObject* o = find(object);
    const bool move = flags == CU_GRAPH_USER_OBJECT_MOVE;
    if (g == nullptr || o == nullptr || !valid_count(count) || (flags != 0 && !move) ||
        (move && o->callers < count)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (move) {
      o->callers -= count;  // the references change hands
    } else {
      o->references += count;
    }
    g->user_objects[object] += count;
    return CUDA_SUCCESS;
  });
}

GVIRTUS_SIMULATED_EXPORT CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object,
                                                           unsigned int count) {
  return sim::guarded([&](sim::State& s) {
    sim::Graph* g = sim::find_graph(s, graph);
    if (g == nullptr || !valid_count(count)) return CUDA_ERROR_INVALID_VALUE;
    const auto held = g->user_objects.find(object);
    if (held == g->user_objects.end() || held->second < count) return CUDA_ERROR_INVALID_VALUE;
    held->second -= count;
    if (held->second == 0) g->user_objects.erase(held);
    drop(object, count);
    return CUDA_SUCCESS;
  });
}
