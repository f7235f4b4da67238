// The simulated device's shared state (state.h).
#include "state.h"

namespace gvirtus::simulated {

State& state() {
  static State* const instance = new State;  // never destroyed: exports may run at exit
  return *instance;
}

CUcontext primary_context() {
  static int context_object;
  return reinterpret_cast<CUcontext>(&context_object);
}

std::byte* device_range(State& s, CUdeviceptr address, uint64_t bytes) {
  auto it = s.allocation_bytes.upper_bound(address);
  if (it == s.allocation_bytes.begin()) return nullptr;
  --it;
  const uint64_t offset = address - it->first;
  if (offset > it->second || it->second - offset < bytes) return nullptr;
  return s.allocations.at(it->first).get() + offset;
}

bool known_stream(const State& s, CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD ||
         s.streams.count(stream) != 0;
}

}  // namespace gvirtus::simulated
