// A device's asynchronous over-budget notifications as the test doubles send them (the simulated
// device's cuDeviceRegisterAsyncNotification, the accepting device's cudaDevice... form): callbacks
// registered by device; when the device's allocations pass the budget an environment variable
// sets (in bytes; unset, 0 or not a number: none), every registration's callback is told by how
// much, on a thread of its own, as a driver sends them. Info is the library's notification
// struct; kOverBudget its type's value. Thread-safe.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace gvirtus {

template <typename Callback, typename Info, typename Handle, auto kOverBudget>
class OverBudgetNotifier {
 public:
  explicit OverBudgetNotifier(const char* budget_variable) {
    const char* text = std::getenv(budget_variable);
    char* end = nullptr;
    const unsigned long long value = text != nullptr ? std::strtoull(text, &end, 10) : 0;
    budget_ = text != nullptr && end != text && *end == '\0' ? value : 0;
  }

  Handle add(int device, Callback function, void* data) {
    std::lock_guard lock(mutex_);
    const uintptr_t handle = next_handle_++;
    registered_[handle] = {device, function, data};
    return reinterpret_cast<Handle>(handle);
  }

  // False when `handle` is no registration of `device`.
  bool remove(int device, Handle handle) {
    std::lock_guard lock(mutex_);
    const auto it = registered_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == registered_.end() || it->second.device != device) return false;
    registered_.erase(it);
    return true;
  }

  // After an allocation: past the budget, every registration is told. Never throws.
  void notify_if_over(uint64_t allocated) noexcept {
    if (budget_ == 0 || allocated <= budget_) return;
    try {
      std::vector<std::pair<uintptr_t, Registration>> told;
      {
        std::lock_guard lock(mutex_);
        told.assign(registered_.begin(), registered_.end());
      }
      if (told.empty()) return;
      std::thread([told = std::move(told), over = allocated - budget_] {
        for (const auto& [handle, registration] : told) {
          Info info{};
          info.type = kOverBudget;
          info.info.overBudget.bytesOverBudget = over;
          registration.function(&info, registration.data, reinterpret_cast<Handle>(handle));
        }
      }).detach();
    } catch (...) {
      // The notification is lost, as a driver's may be.
    }
  }

 private:
  struct Registration {
    int device;
    Callback function;
    void* data;
  };

  uint64_t budget_ = 0;
  std::mutex mutex_;
  std::map<uintptr_t, Registration> registered_;
  uintptr_t next_handle_ = 1;
};

}  // namespace gvirtus
