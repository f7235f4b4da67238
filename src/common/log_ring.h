// A library's error log as the test doubles keep it (the simulated device's cuLogs*, the
// accepting device's cudaLogs*), with the semantics NVIDIA documents for the driver's: the last
// kKeptBytes of whole lines, an iterator being the count of bytes written before the message it
// points at; a dump from it (or from all that is kept) gives as many of the newest whole lines as
// the buffer holds with its NUL, and advances it. Not thread-safe: the caller locks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gvirtus {

class LogRing {
 public:
  static constexpr size_t kKeptBytes = 25600;

  void append(const std::string& line) {
    kept_ += line + "\n";
    written_ += line.size() + 1;
    if (kept_.size() > kKeptBytes) kept_.erase(0, kept_.find('\n', kept_.size() - kKeptBytes) + 1);
  }

  unsigned current() const { return static_cast<unsigned>(written_); }

  // False (and *size 0) when there are lines and none fits the buffer.
  bool dump(unsigned* iterator, char* buffer, size_t* size) const {
    const uint64_t kept_from = written_ - kept_.size();
    const uint64_t from =
        std::clamp<uint64_t>(iterator != nullptr ? *iterator : kept_from, kept_from, written_);
    std::string text = kept_.substr(static_cast<size_t>(from - kept_from));
    while (!text.empty() && text.size() + 1 > *size) {
      const size_t next = text.find('\n');
      text.erase(0, next == std::string::npos ? text.size() : next + 1);
    }
    if (text.empty() && from != written_) {
      *size = 0;
      return false;
    }
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    *size = text.size();
    if (iterator != nullptr) *iterator = current();
    return true;
  }

 private:
  std::string kept_;
  uint64_t written_ = 0;
};

// A LogRing with the library's callbacks (Callback: void(void* data, Level, char*, size_t)),
// each line written handed to every registered one at kLevel. Thread-safe.
template <typename Callback, auto kLevel>
class CallbackLog {
 public:
  void write(const std::string& line) {
    std::vector<std::pair<Callback, void*>> callbacks;
    {
      std::lock_guard lock(mutex_);
      ring_.append(line);
      for (const auto& [handle, callback] : callbacks_) callbacks.push_back(callback);
    }
    std::string message = line;  // the callbacks' own copy: they may write into it
    for (const auto& [function, data] : callbacks) {
      function(data, kLevel, message.data(), message.size());
    }
  }

  uintptr_t add(Callback function, void* data) {
    std::lock_guard lock(mutex_);
    const uintptr_t handle = next_handle_++;
    callbacks_[handle] = {function, data};
    return handle;
  }
  bool remove(uintptr_t handle) {
    std::lock_guard lock(mutex_);
    return callbacks_.erase(handle) != 0;
  }
  unsigned current() {
    std::lock_guard lock(mutex_);
    return ring_.current();
  }
  bool dump(unsigned* iterator, char* buffer, size_t* size) {
    std::lock_guard lock(mutex_);
    return ring_.dump(iterator, buffer, size);
  }

 private:
  std::mutex mutex_;
  LogRing ring_;
  std::map<uintptr_t, std::pair<Callback, void*>> callbacks_;
  uintptr_t next_handle_ = 1;
};

}  // namespace gvirtus
