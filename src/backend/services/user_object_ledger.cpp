#include "backend/services/user_object_ledger.h"

#include <climits>

#include "backend/services/rejections.h"

namespace gvirtus::services {
namespace {

// The library takes counts from 1 to INT_MAX.
bool valid_count(uint32_t count) {
  return count >= 1 && count <= INT_MAX;
}

}  // namespace

int32_t UserObjectLedger::refuse(const void* object) const {
  return services::refuse(invalid_value_, library_, "user object", object,
                          "a count out of range, or more references than the session holds");
}

void UserObjectLedger::drop_if_unheld(std::unordered_map<const void*, Entry>::iterator it) {
  if (it->second.own == 0 && it->second.by_graph.empty()) objects_.erase(it);
}

int32_t UserObjectLedger::create(uint32_t count, FunctionRef<int32_t(const void*& made)> create) {
  if (!valid_count(count)) return refuse(nullptr);
  std::lock_guard lock(mutex_);
  const void* made = nullptr;
  const int32_t result = create(made);
  if (result == 0 && made != nullptr) objects_[made].own += count;
  return result;
}

int32_t UserObjectLedger::retain(const void* object, uint32_t count, LibraryCall call) {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(object);
  if (!valid_count(count) || it == objects_.end() || it->second.own == 0) return refuse(object);
  const int32_t result = call();
  if (result == 0) it->second.own += count;
  return result;
}

int32_t UserObjectLedger::release(const void* object, uint32_t count, LibraryCall call) {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(object);
  if (!valid_count(count) || it == objects_.end() || it->second.own < count) return refuse(object);
  const int32_t result = call();
  if (result == 0) {
    it->second.own -= count;
    drop_if_unheld(it);
  }
  return result;
}

int32_t UserObjectLedger::graph_retain(const void* graph, const void* object, uint32_t count,
                                       bool move, LibraryCall call) {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(object);
  if (!valid_count(count) || it == objects_.end() || it->second.own < (move ? count : 1)) {
    return refuse(object);
  }
  const int32_t result = call();
  if (result == 0) {
    if (move) it->second.own -= count;
    it->second.by_graph[graph] += count;
  }
  return result;
}

int32_t UserObjectLedger::graph_release(const void* graph, const void* object, uint32_t count,
                                        LibraryCall call) {
  std::lock_guard lock(mutex_);
  const auto it = objects_.find(object);
  if (!valid_count(count) || it == objects_.end()) return refuse(object);
  const auto held = it->second.by_graph.find(graph);
  if (held == it->second.by_graph.end() || held->second < count) return refuse(object);
  const int32_t result = call();
  if (result == 0) {
    held->second -= count;
    if (held->second == 0) it->second.by_graph.erase(held);
    drop_if_unheld(it);
  }
  return result;
}

void UserObjectLedger::forget_graph(const void* graph) {
  std::lock_guard lock(mutex_);
  for (auto it = objects_.begin(); it != objects_.end();) {
    it->second.by_graph.erase(graph);
    if (it->second.own == 0 && it->second.by_graph.empty()) {
      it = objects_.erase(it);
    } else {
      ++it;
    }
  }
}

void UserObjectLedger::forget_all() {
  std::lock_guard lock(mutex_);
  objects_.clear();
}

bool UserObjectLedger::holds(const void* object) const {
  std::lock_guard lock(mutex_);
  return objects_.contains(object);
}

}  // namespace gvirtus::services
