#include "backend/services/object_set.h"

#include "backend/services/rejections.h"

namespace gvirtus::services {

void ObjectSet::adopt(uint64_t object, int owner) {
  const std::lock_guard lock(mutex_);
  objects_[object] = owner;
}

int32_t ObjectSet::vet(uint64_t object, int32_t success, int32_t invalid_handle) const {
  {
    const std::lock_guard lock(mutex_);
    if (objects_.contains(object)) return success;
  }
  return refuse(invalid_handle, library_, what_,
                reinterpret_cast<const void*>(static_cast<uintptr_t>(object)),
                "not an object this session holds (never created, destroyed or reset)");
}

void ObjectSet::forget(uint64_t object) {
  const std::lock_guard lock(mutex_);
  objects_.erase(object);
}

void ObjectSet::forget_owner(int owner) {
  const std::lock_guard lock(mutex_);
  std::erase_if(objects_, [&](const auto& entry) { return entry.second == owner; });
}

}  // namespace gvirtus::services
