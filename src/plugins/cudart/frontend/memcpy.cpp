// cudaMemcpy: host data travels in the request (to the device) or in the reply (from it).
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "common/wire_record.h"
#include "plugins/cudart/common/memcpy_wire.h"
#include "plugins/cudart/frontend/host_staging.h"
#include "plugins/cudart/frontend/memcpy_kind.h"
#include "plugins/cudart/frontend/memcpy_staged.h"
#include "plugins/cudart/frontend/shared_host.h"
#include "plugins/cudart/frontend/stream_capture.h"
#include "plugins/cudart/frontend/stub_call.h"

namespace gvirtus::cudart {
namespace {

// One chunk of a copy, on the wire.
struct Chunk {
  char* dst;
  const char* src;
  size_t count;
  cudaMemcpyKind kind;
  const cudaStream_t* stream;  // present for cudaMemcpyAsync

  void encode(WireWriter& w) const {
    put_record(w, MemcpyRequest{dst, src, count, kind, stream != nullptr ? *stream : nullptr});
  }
  // The request's data, sent from the application's buffer as it is (no copy into the request).
  ByteView data() const {
    if (!host_is_source(kind)) return {};
    return {reinterpret_cast<const std::byte*>(src), count};
  }
  // Where the reply's data may land: straight in the application's buffer, after the result
  // (i32) and the blob's length (u64).
  process_session::Landing landing() const {
    return {dst, count, sizeof(int32_t) + sizeof(uint64_t), 0};
  }
  bool brings_data() const { return host_is_destination(kind) && count > 0; }
  void decode(WireReader& r, bool landed) const {
    if (!host_is_destination(kind) || r.remaining() == 0) return;  // no data after a failure
    if (landed) {
      if (r.get<uint64_t>() != count) raise(ErrorKind::kInvalidInput, "short cudaMemcpy reply");
      return;
    }
    const auto data = r.get_blob(count);
    if (data.size() != count) raise(ErrorKind::kInvalidInput, "short cudaMemcpy reply");
    std::memcpy(dst, data.data(), count);
  }
  // cudaMemcpyAsync's copies that bring no data back, into memory the stub knows is a device
  // allocation, are sent without waiting; every other chunk waits for its result.
  bool waits() const {
    if (stream == nullptr || host_is_destination(kind)) return true;
    const bool device_side_known =
        within_device_allocation(dst, count) &&
        (kind == cudaMemcpyHostToDevice || within_device_allocation(src, count));
    return !device_side_known;
  }
};

// The chunks of a large copy, pipelined: the next chunk's request leaves before the previous
// chunk's reply is read, so the backend copies one chunk while the client sends (to the device)
// or takes in (from it) the next, and a copy costs about one round trip however many chunks it
// has. Two chunks are in flight at most: memory stays bounded and a failure stops the copy one
// chunk later at worst (its result is read and dropped; the first failure is returned, and the
// backend's runtime has recorded it as the last error, as natively). Data travels from and lands
// in the application's buffer directly (Chunk::data, Chunk::landing).
cudaError_t copy_chunks(const Chunk& whole) {
  // A copy of 0 bytes is still one call: the runtime checks its arguments all the same.
  const size_t chunks =
      std::max<size_t>(1, (whole.count + kMemcpyChunkBytes - 1) / kMemcpyChunkBytes);
  auto chunk = [&](size_t k) {
    Chunk c = whole;
    c.dst += k * kMemcpyChunkBytes;
    c.src += k * kMemcpyChunkBytes;
    c.count = std::min(kMemcpyChunkBytes, whole.count - k * kMemcpyChunkBytes);
    return c;
  };
  if (!whole.waits()) {
    for (size_t k = 0; k < chunks; ++k) {
      const Chunk c = chunk(k);
      const cudaError_t rc = remote_async(
          Fn::cudaMemcpyAsync, [&](WireWriter& w) { c.encode(w); }, c.data());
      if (rc != cudaSuccess) return rc;
    }
    return cudaSuccess;
  }
  const Fn fn = whole.stream == nullptr ? Fn::cudaMemcpy : Fn::cudaMemcpyAsync;
  struct InFlight {
    Chunk chunk;
    RemotePending pending;
  };
  // Chunk k's landing is landings[k % 2]: it stays put while the chunk is in flight.
  process_session::Landing landings[2];
  std::optional<InFlight> in_flight;
  size_t in_flight_slot = 0;
  auto finish = [&]() {
    const Chunk& c = in_flight->chunk;
    // Read in the decoder: the reply, and so whether it landed, is known only then.
    const process_session::Landing& landing = landings[in_flight_slot];
    const cudaError_t rc =
        remote_finish(in_flight->pending, [&](WireReader& r) { c.decode(r, landing.landed != 0); });
    in_flight.reset();
    return rc;
  };
  for (size_t k = 0; k < chunks; ++k) {
    const Chunk c = chunk(k);
    process_session::Landing* landing = nullptr;
    if (c.brings_data()) {
      landings[k % 2] = c.landing();
      landing = &landings[k % 2];
    }
    RemotePending sent = remote_begin(
        fn, [&](WireWriter& w) { c.encode(w); }, c.data(), landing);
    if (in_flight) {
      if (const cudaError_t rc = finish(); rc != cudaSuccess) {
        (void)remote_finish(sent, [](WireReader& r) { (void)r.get_raw(r.remaining()); });
        return rc;
      }
    }
    in_flight.emplace(InFlight{c, sent});
    in_flight_slot = k % 2;
  }
  return finish();
}

// A copy between the device and page-locked memory in the shared arena: the backend's runtime
// reads or writes that memory itself, so no bytes travel and no chunking is needed. As natively,
// an asynchronous one completes with its stream, and the application synchronises before it reads.
cudaError_t copy_shared(void* device, uint64_t offset, size_t count, cudaMemcpyKind kind,
                        const cudaStream_t* stream) {
  auto encode = [&](WireWriter& w) { put_shared_copy(w, device, offset, count, kind, stream); };
  if (stream == nullptr) return remote_sync(Fn::cudaMemcpyShared, encode, [](WireReader&) {});
  if (!within_device_allocation(device, count)) {
    return remote_sync(Fn::cudaMemcpySharedAsync, encode, [](WireReader&) {});
  }
  return remote_async(Fn::cudaMemcpySharedAsync, encode);
}

cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                 const cudaStream_t* stream) {
  if (!kind_in_range(kind)) return cudaErrorInvalidMemcpyDirection;
  kind = resolve_kind(kind, dst, src);
  if (const cudaError_t rc = check_host_side(dst, src, count, kind); rc != cudaSuccess) return rc;
  if (kind == cudaMemcpyHostToDevice) {
    if (const auto offset = shared_host_offset(src, count)) {
      return copy_shared(dst, *offset, count, kind, stream);
    }
  } else if (kind == cudaMemcpyDeviceToHost) {
    if (const auto offset = shared_host_offset(dst, count)) {
      return copy_shared(const_cast<void*>(src), *offset, count, kind, stream);
    }
  }
  // Ordinary client memory on a capturing stream: the copy is captured staged through a block on
  // the backend, so the graph reads or writes the program's memory each time it runs; a copy
  // between host memory, as the stub's host function copying here when the graph reaches it
  // (host_staging.h). Copies between device memory are captured as they are.
  if (stream != nullptr && kind != cudaMemcpyDeviceToDevice && capturing(*stream)) {
    if (count == 0) return cudaSuccess;
    return capture_copy_node(*stream, linear_copy(dst, src, count, kind));
  }
  // Ordinary client memory, synchronously: through pinned staging in the arena when there is one.
  if (stream == nullptr && (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost)) {
    const bool to_device = kind == cudaMemcpyHostToDevice;
    if (const auto rc = copy_staged(to_device ? dst : const_cast<void*>(src),
                                    const_cast<void*>(to_device ? src : dst), count, kind)) {
      return *rc;
    }
  }
  return copy_chunks(
      Chunk{static_cast<char*>(dst), static_cast<const char*>(src), count, kind, stream});
}

}  // namespace
}  // namespace gvirtus::cudart

// Managed memory at the destination is the backend's new bytes once the copy is sent (the send
// flushed the host's writes first): the mirror's clean copy of it goes (docs/managed-memory.md).
GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                             cudaMemcpyKind kind) {
  const cudaError_t result = gvirtus::cudart::copy(dst, src, count, kind, nullptr);
  gvirtus::process_session::managed_invalidate_range(reinterpret_cast<uintptr_t>(dst), count);
  return result;
}

GVIRTUS_CUDART_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                                  cudaMemcpyKind kind, cudaStream_t stream) {
  const cudaError_t result = gvirtus::cudart::copy(dst, src, count, kind, &stream);
  gvirtus::process_session::managed_invalidate_range(reinterpret_cast<uintptr_t>(dst), count);
  return result;
}
