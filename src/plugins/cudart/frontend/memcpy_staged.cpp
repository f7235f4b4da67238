// cudaMemcpy through pinned staging blocks of the shared arena (memcpy_staged.h;
// common/pinned_staging.h).
#include "plugins/cudart/frontend/memcpy_staged.h"

#include "common/pinned_staging.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// Smaller copies go in one message: staging would save little and costs a lease.
constexpr size_t kStagedMinBytes = size_t{256} << 10;

std::byte* allocate_block(size_t bytes) {
  SharedHostPlacement placement;
  if (shared_host_alloc(bytes, cudaHostAllocDefault, placement) != cudaSuccess ||
      !placement.placed) {
    return nullptr;
  }
  return static_cast<std::byte*>(placement.ptr);
}

staging::PinnedPool& pool() {
  // Never destroyed: copies may run until the process ends.
  static auto& kept = *new staging::PinnedPool(staging::PinnedHooks{
      [] { return static_cast<const void*>(shared_host_arena()); },
      allocate_block,
      [](std::byte* block) { (void)shared_host_free(block); },
      [](const void* block, size_t bytes) { return shared_host_offset(block, bytes); },
  });
  return kept;
}

}  // namespace

std::optional<cudaError_t> copy_staged(void* device, void* host, size_t count,
                                       cudaMemcpyKind kind) {
  if (count < kStagedMinBytes ||
      (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost)) {
    return std::nullopt;
  }
  const staging::PinnedPool::Lease lease = pool().lease();
  if (!lease) return std::nullopt;
  auto* dev = static_cast<char*>(device);
  return static_cast<cudaError_t>(staging::copy_through<RemotePending>(
      lease, static_cast<std::byte*>(host), count, kind == cudaMemcpyHostToDevice,
      [&](int b, size_t at, size_t bytes) {
        return remote_begin(Fn::cudaMemcpyShared, [&](WireWriter& w) {
          put_shared_copy(w, dev + at, lease.offset(b), bytes, kind, nullptr);
        });
      },
      [](const RemotePending& pending) {
        return static_cast<int>(remote_finish(pending, [](WireReader&) {}));
      }));
}

}  // namespace gvirtus::cudart
