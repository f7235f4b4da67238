#include "backend/services/handle_table.h"

#include <iterator>

namespace gvirtus::services {

const HandleTable::Entry* HandleTable::Slot::find(uint16_t kind) const {
  for (size_t i = 0; i < count; ++i) {
    if (entries[i].kind == kind) return &entries[i];
  }
  return nullptr;
}

template <typename Gone>
bool HandleTable::remove_if(Slot& slot, Gone gone) {
  size_t kept = 0;
  for (size_t i = 0; i < slot.count; ++i) {
    if (!gone(slot.entries[i])) slot.entries[kept++] = slot.entries[i];
  }
  slot.count = kept;
  return kept == 0;
}

bool HandleTable::aliases(uint16_t a, uint16_t b) const {
  return a < 64 && b < 64 && ((alias_masks_[a] >> b) & 1) != 0;
}

void HandleTable::allow_alias(uint16_t a, uint16_t b) {
  if (a >= 64 || b >= 64) return;
  std::lock_guard lock(mutex_);
  alias_masks_[a] |= uint64_t{1} << b;
  alias_masks_[b] |= uint64_t{1} << a;
}

void HandleTable::adopt(uint16_t kind, const void* handle, int owner) {
  std::lock_guard lock(mutex_);
  Slot& slot = handles_[handle];
  // What the address held of this kind, or of a kind that cannot share it, is gone.
  remove_if(slot, [&](const Entry& e) { return e.kind == kind || !aliases(e.kind, kind); });
  slot.entries[slot.count++] = Entry{kind, owner, ++adoptions_};
}

int HandleTable::release(uint16_t kind, const void* handle) {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  if (it == handles_.end()) return kNotHeld;
  const Entry* entry = it->second.find(kind);
  if (entry == nullptr) return kNotHeld;
  const int owner = entry->owner;
  if (remove_if(it->second, [&](const Entry& e) { return e.kind == kind; })) handles_.erase(it);
  return owner;
}

template <typename Gone>
void HandleTable::forget_if(Gone gone) {
  for (auto it = handles_.begin(); it != handles_.end();) {
    it = remove_if(it->second, gone) ? handles_.erase(it) : std::next(it);
  }
}

void HandleTable::forget_owner(int owner, uint64_t every_owner_kinds) {
  std::lock_guard lock(mutex_);
  forget_if([&](const Entry& e) {
    return e.owner == owner || (e.kind < 64 && (every_owner_kinds >> e.kind) & 1);
  });
}

void HandleTable::forget_owned(int owner, uint64_t kinds) {
  std::lock_guard lock(mutex_);
  forget_if([&](const Entry& e) {
    return e.owner == owner && e.kind < 64 && ((kinds >> e.kind) & 1) != 0;
  });
}

bool HandleTable::holds(uint16_t kind, const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  return it != handles_.end() && it->second.find(kind) != nullptr;
}

HandleTable::Adoption HandleTable::adoption(const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  if (it == handles_.end()) return {};
  const Slot& slot = it->second;
  const Entry* latest = &slot.entries[0];
  for (size_t i = 1; i < slot.count; ++i) {
    if (slot.entries[i].generation > latest->generation) latest = &slot.entries[i];
  }
  return Adoption{latest->kind, latest->generation};
}

uint64_t HandleTable::generation(uint16_t kind, const void* handle) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(handle);
  if (it == handles_.end()) return 0;
  const Entry* entry = it->second.find(kind);
  return entry != nullptr ? entry->generation : 0;
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
