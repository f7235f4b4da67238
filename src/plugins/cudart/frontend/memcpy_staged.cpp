#include "plugins/cudart/frontend/memcpy_staged.h"

#include <algorithm>
#include <cstring>

#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/shared_staging.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// Smaller copies go in one message: staging would save little and costs a lease.
constexpr size_t kStagedMinBytes = size_t{256} << 10;

}  // namespace

std::optional<cudaError_t> copy_staged(void* device, void* host, size_t count,
                                       cudaMemcpyKind kind) {
  if (count < kStagedMinBytes ||
      (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost)) {
    return std::nullopt;
  }
  StagingLease lease = lease_staging();
  if (!lease) return std::nullopt;
  const bool to_device = kind == cudaMemcpyHostToDevice;
  constexpr size_t kBlock = StagingLease::kBlockBytes;
  const size_t chunks = (count + kBlock - 1) / kBlock;
  auto bytes_of = [&](size_t k) { return std::min(kBlock, count - k * kBlock); };
  auto* dev = static_cast<char*>(device);
  auto* mem = static_cast<char*>(host);

  struct InFlight {
    size_t chunk;
    RemotePending pending;
  };
  std::optional<InFlight> in_flight[2];  // chunk k uses block k % 2
  cudaError_t first_failure = cudaSuccess;
  auto send = [&](size_t k) {
    const int b = static_cast<int>(k % 2);
    if (to_device) std::memcpy(lease.block(b), mem + k * kBlock, bytes_of(k));
    in_flight[b] = InFlight{k, remote_begin(Fn::cudaMemcpyShared, [&](WireWriter& w) {
                              put_shared_copy(w, dev + k * kBlock, lease.offset(b), bytes_of(k),
                                              kind, nullptr);
                            })};
  };
  // Reads the result of the chunk in block b; from the device, takes its bytes out of the block.
  auto finish = [&](int b) {
    const size_t k = in_flight[b]->chunk;
    const cudaError_t rc = remote_finish(in_flight[b]->pending, [](WireReader&) {});
    in_flight[b].reset();
    if (first_failure != cudaSuccess) return;
    first_failure = rc;
    if (rc == cudaSuccess && !to_device) {
      std::memcpy(mem + k * kBlock, lease.block(b), bytes_of(k));
    }
  };

  if (to_device) {
    // Block k % 2 is filled again once the chunk that used it (k - 2) is done.
    for (size_t k = 0; k < chunks && first_failure == cudaSuccess; ++k) {
      if (in_flight[k % 2]) finish(static_cast<int>(k % 2));
      if (first_failure == cudaSuccess) send(k);
    }
  } else {
    // Two chunks ahead: chunk k + 2 goes into block k % 2 once chunk k has been taken out.
    for (size_t k = 0; k < std::min<size_t>(2, chunks); ++k) send(k);
    for (size_t k = 0; k < chunks && first_failure == cudaSuccess; ++k) {
      finish(static_cast<int>(k % 2));
      if (first_failure == cudaSuccess && k + 2 < chunks) send(k + 2);
    }
  }
  // What is still in flight (the last chunks, or one sent before a failure) is read, oldest
  // first, before the lease goes back: the backend no longer touches the blocks after that.
  while (in_flight[0] || in_flight[1]) {
    const bool zero_first =
        in_flight[0] && (!in_flight[1] || in_flight[0]->chunk < in_flight[1]->chunk);
    finish(zero_first ? 0 : 1);
  }
  return first_failure;
}

}  // namespace gvirtus::cudart
