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
#include <string>

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

}  // namespace gvirtus
