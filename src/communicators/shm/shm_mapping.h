// An owning shared mapping of a whole file or memfd: unmapped exactly once, by its owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace gvirtus::shm {

class Mapping {
 public:
  Mapping() = default;
  // Maps `bytes` of `fd` read-write and shared; throws Error{kFailed} naming `what`. With `at`,
  // tries that address first (never replacing an existing mapping) and takes any other if taken.
  Mapping(int fd, uint64_t bytes, const std::string& what, void* at = nullptr);
  ~Mapping() { reset(); }
  Mapping(Mapping&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept {
    if (this != &other) {
      reset();
      base_ = std::exchange(other.base_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  void* base() const { return base_; }
  uint64_t bytes() const { return bytes_; }
  void reset();

 private:
  void* base_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace gvirtus::shm
