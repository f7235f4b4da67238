#include "backend/services/handle_table.h"

namespace gvirtus::services {

void HandleTable::adopt(uint16_t kind, const void* handle, int owner) {
  std::lock_guard lock(mutex_);
  handles_[handle] = Entry{kind, owner, ++adoptions_};
}

int HandleTable::release(uint16_t kind, const void* handle) {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  if (it == handles_.end() || it->second.kind != kind) return kNotHeld;
  const int owner = it->second.owner;
  handles_.erase(it);
  return owner;
}

void HandleTable::forget_owner(int owner, uint64_t every_owner_kinds) {
  std::lock_guard lock(mutex_);
  std::erase_if(handles_, [&](const auto& item) {
    const Entry& e = item.second;
    return e.owner == owner || (e.kind < 64 && (every_owner_kinds >> e.kind) & 1);
  });
}

void HandleTable::forget_owned(int owner, uint64_t kinds) {
  std::lock_guard lock(mutex_);
  std::erase_if(handles_, [&](const auto& item) {
    const Entry& e = item.second;
    return e.owner == owner && e.kind < 64 && ((kinds >> e.kind) & 1) != 0;
  });
}

bool HandleTable::holds(uint16_t kind, const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  return it != handles_.end() && it->second.kind == kind;
}

HandleTable::Adoption HandleTable::adoption(const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  return it != handles_.end() ? Adoption{it->second.kind, it->second.generation} : Adoption{};
}

uint64_t HandleTable::generation(uint16_t kind, const void* handle) const {
  const Adoption a = adoption(handle);
  return a.kind == kind ? a.generation : 0;
}

size_t HandleTable::size() const {
  std::lock_guard lock(mutex_);
  return handles_.size();
}

void HandleTable::clear() {
  std::lock_guard lock(mutex_);
  handles_.clear();
}

HandleRelease::HandleRelease(HandleTable& table, uint16_t kind, const void* handle)
    : table_(table), kind_(kind), handle_(handle), owner_(table.release(kind, handle)) {}

HandleRelease::~HandleRelease() {
  if (owner_ != HandleTable::kNotHeld) table_.adopt(kind_, handle_, owner_);
}

}  // namespace gvirtus::services
