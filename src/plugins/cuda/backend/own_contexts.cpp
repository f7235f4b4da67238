// Contexts of one's own as owners (own_contexts.h).
#include "plugins/cuda/backend/own_contexts.h"

#include <mutex>
#include <unordered_map>

namespace gvirtus::cuda {
namespace {

std::mutex& mutex = *new std::mutex;
auto& owners = *new std::unordered_map<CUcontext, int>;
int next_owner = kFirstOwnContextOwner;

}  // namespace

void note_own_context(CUcontext context) {
  std::lock_guard lock(mutex);
  owners[context] = next_owner++;
}

std::optional<int> own_context_owner(CUcontext context) {
  std::lock_guard lock(mutex);
  const auto it = owners.find(context);
  return it != owners.end() ? std::optional<int>(it->second) : std::nullopt;
}

std::optional<int> forget_own_context(CUcontext context) {
  std::lock_guard lock(mutex);
  const auto it = owners.find(context);
  if (it == owners.end()) return std::nullopt;
  const int owner = it->second;
  owners.erase(it);
  return owner;
}

}  // namespace gvirtus::cuda
