// What the simulated device's exported handles carry (IPC handles, a pool pointer's export data,
// a pool's exported memfd): an 8-byte tag saying what they name, the exporting process, the
// object (an address, an event, a pool) and, for memory, its size. Another process's device
// stands for the object with one of its own, as the bytes are each process's (ipc.cpp,
// shareable.cpp).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace gvirtus::simulated {

struct Named {
  char tag[8];
  uint64_t process;
  uint64_t object;
  uint64_t bytes;
};

inline Named named(const char (&tag)[8], uint64_t object, uint64_t bytes) {
  Named n{};
  std::memcpy(n.tag, tag, sizeof n.tag);
  n.process = static_cast<uint64_t>(::getpid());
  n.object = object;
  n.bytes = bytes;
  return n;
}

// Into an opaque handle of the driver's (its `reserved` bytes), the rest zeroed.
template <typename Handle>
void name(Handle& handle, const char (&tag)[8], uint64_t object, uint64_t bytes) {
  static_assert(sizeof(Named) <= sizeof(handle.reserved));
  handle = Handle{};
  const Named n = named(tag, object, bytes);
  std::memcpy(handle.reserved, &n, sizeof n);
}

// What `handle` names, and whether it is tagged `tag`.
template <typename Handle>
bool read(const Handle& handle, const char (&tag)[8], Named& n) {
  std::memcpy(&n, handle.reserved, sizeof n);
  return std::memcmp(n.tag, tag, sizeof n.tag) == 0;
}

}  // namespace gvirtus::simulated
