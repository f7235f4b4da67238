// Objects a library hands out as integers, not as handles (texture and surface objects), that a
// backend session holds (a shared backend service).
//
// Such objects are kept apart from the handle table (handle_table.h): their values are small
// integers of their own spaces (a texture object and a surface object may be equal), and the
// library still looks them up in its tables, so a made-up one must never reach it. Each has an
// owner (what the library tied it to: its device), so that a reset of that device forgets it.
//
// Thread affinity: locked (a session's executors run on several threads).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace gvirtus::services {

class ObjectSet {
 public:
  // `library` and `what` name the objects in refusals ("cudart", "texture object").
  ObjectSet(const char* library, const char* what) : library_(library), what_(what) {}

  void adopt(uint64_t object, int owner);
  // `success` when the session holds `object`; otherwise the refusal (rejections.h) with
  // `invalid_handle`, the library's status for an object it does not know.
  int32_t vet(uint64_t object, int32_t success, int32_t invalid_handle) const;
  void forget(uint64_t object);
  void forget_owner(int owner);

 private:
  const char* library_;
  const char* what_;
  mutable std::mutex mutex_;
  std::map<uint64_t, int> objects_;  // object -> owner
};

}  // namespace gvirtus::services
