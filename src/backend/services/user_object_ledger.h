// The user objects a session may name, and the references it holds to each (a shared backend
// service of the cuda and cudart plugins: CUuserObject, cudaUserObject_t).
//
// A user object's references are the application's (created, retained, released) or a graph's
// (retained from a graph, moved to it, released by it or with it). The library leaves a release
// of references one does not hold, or any use of an object whose references are all released,
// undefined; so the session keeps its own count and refuses such calls before the library sees
// them. The application's references allow every call (it must hold one to use the handle); a
// graph's references only their release, at most as many as that graph got through this
// session. An instantiated graph's references are the library's own: they go with the
// executable graph. An object the session holds no reference to is forgotten: its handle is
// refused from then on, as a handle never handed out is.
//
// A refusal goes through services::refuse (rejections.h): the library's own "invalid value",
// logged and kept as the thread's pending error, as the library never saw the call.
//
// Each change runs the library's call under the ledger's lock and is recorded only when the call
// succeeded (status 0), so two threads cannot both release the last reference. The destructor,
// which the library may run synchronously inside a release, must not use the ledger.
//
// Thread affinity: locked. One session per worker process: forget_all() as a session opens.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "common/function_ref.h"

namespace gvirtus::services {

class UserObjectLedger {
 public:
  using LibraryCall = FunctionRef<int32_t()>;
  // `invalid_value`: the library's status for a refused call; `library`: its name in the log.
  UserObjectLedger(int32_t invalid_value, const char* library)
      : invalid_value_(invalid_value), library_(library) {}

  // `create` makes the object (returning it through `made`) with `count` references.
  int32_t create(uint32_t count, FunctionRef<int32_t(const void*& made)> create);
  int32_t retain(const void* object, uint32_t count, LibraryCall call);
  int32_t release(const void* object, uint32_t count, LibraryCall call);
  // `move`: the references go from the application to the graph; otherwise new ones are made.
  int32_t graph_retain(const void* graph, const void* object, uint32_t count, bool move,
                       LibraryCall call);
  int32_t graph_release(const void* graph, const void* object, uint32_t count, LibraryCall call);
  // A destroyed graph's references went with it.
  void forget_graph(const void* graph);
  void forget_all();

  // Whether the session holds a reference to `object` (for tests and status).
  bool holds(const void* object) const;

 private:
  struct Entry {
    uint64_t own = 0;                          // the application's references
    std::map<const void*, uint64_t> by_graph;  // each graph's, got through this session
  };
  void drop_if_unheld(std::unordered_map<const void*, Entry>::iterator it);
  int32_t refuse(const void* object) const;

  const int32_t invalid_value_;
  const char* const library_;
  mutable std::mutex mutex_;
  std::unordered_map<const void*, Entry> objects_;
};

}  // namespace gvirtus::services
